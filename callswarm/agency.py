"""An agency as a plug-in: what a business's line hands the gateway, and how one is found.

A gateway serves one agency, named by `CALLSWARM_AGENCY`: the name of an entry point
in the `callswarm.agencies` group, or a module path `package.module[:NAME]` whose
`NAME` (by default `AGENCY`) is an `Agency`. The gateway knows agencies only through
this module: nothing outside an agency's folder imports it or names its agents
(tests/test_layers.py checks). docs/agency.md shows how to write one.

This module imports nothing of callswarm's wiring, so an agency can import it without
a cycle: the wiring imports the agency by name, at run time.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from pydantic_settings import BaseSettings
from rapidfuzz.fuzz import ratio
from sqlalchemy.engine import Engine as Database

from swarm import CompletionBackend, Engine, Message, Mode, Role

GROUP = "callswarm.agencies"


@dataclass(frozen=True, slots=True)
class Business:
    """Who answers: said in greetings, prompts and facts. Every field may be set by
    `CALLSWARM_SHOP_*`; the agency gives the defaults."""

    name: str
    address: str
    hours: str
    currency: str = "USD"
    emergency_number: str = "911"
    crisis_line: str = "988"


@dataclass(frozen=True, slots=True)
class AgencyBuild:
    """What the gateway hands an agency when it registers the agency's swarm."""

    engine: Engine
    db: Database
    business: Business
    # The completion registered for each of the agency's agents.
    completions: Mapping[str, str]
    # Agents on a hosted model (Ollama, OpenAI-compatible): able to choose among more tools.
    hosted: frozenset[str] = frozenset()
    # False leaves out every rule of code before the models: only the bench uses it,
    # to measure a model alone.
    routers: bool = True
    # The agency's own settings (`Agency.settings`), built once by the gateway.
    options: BaseSettings | None = None


@dataclass(frozen=True, slots=True)
class Agency:
    """A business's line: its swarm, the words code says for it, its data and its bench."""

    name: str
    # Every agent of its swarm, the one who answers first first.
    agents: tuple[str, ...]
    # Registers the tools, agents and swarm on `AgencyBuild.engine`; returns the swarm's name.
    build: Callable[[AgencyBuild], str]
    business: Business
    greeting: Callable[[Business], str]
    # The rules the `scripted` provider runs: demos, deterministic tests, the bench's
    # control group.
    scripted: Callable[[Business], CompletionBackend]
    # The tool that asks for a person, and what the caller hears when they do (by
    # voice, or by pressing 0 on a phone).
    transfer_tool: str
    transfer_words: str
    # Fills an empty database (its catalogue) on the first start; must be idempotent.
    prepare: Callable[[Database], None]
    # Words speech recognition is biased toward, most important first (a budget cuts
    # the tail).
    vocabulary: Callable[[Database], list[str]]
    # `callswarm bench` scenarios: the daily set, and a quarter held out of the daily loop.
    scenarios: Path
    heldout: Path | None = None
    # The agency's own settings class (pydantic-settings, its own env prefix), or None.
    settings: type[BaseSettings] | None = None

    def __post_init__(self) -> None:
        if not self.agents:
            raise ValueError(f"agency {self.name!r} names no agent")


class AgencyNotFound(LookupError):
    """`CALLSWARM_AGENCY` names nothing that is an Agency."""


def load_agency(spec: str) -> Agency:
    """The agency `spec` names: an entry point of `callswarm.agencies`, or a module path."""
    found = [ep for ep in entry_points(group=GROUP) if ep.name == spec]
    if found:
        value = found[0].load()
    else:
        module_name, _, attribute = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            known = sorted(ep.name for ep in entry_points(group=GROUP))
            raise AgencyNotFound(
                f"CALLSWARM_AGENCY={spec!r}: no such agency ({', '.join(known)}) "
                f"and no module: {exc}"
            ) from exc
        value = getattr(module, attribute or "AGENCY", None)
    if not isinstance(value, Agency):
        raise AgencyNotFound(f"CALLSWARM_AGENCY={spec!r} is not an Agency (got {type(value)})")
    return value


def installed_agencies() -> list[str]:
    return sorted(ep.name for ep in entry_points(group=GROUP))


# --- consent: code, not the model, decides that the caller said yes to an order ---

# What may stand beside a yes that places an order: politeness, and words that only
# say the yes again ("yes please, go ahead and place it, thanks"). Any other word makes
# the answer unclear and the order is read back again: a hedge keeps its yes-word
# ("okay, let me think about it first", "sure, I'll call back to decide", "right, that's
# too expensive"), and no list of hedges can be complete, so this lists what may stay.
CONSENT_ONLY = frozenset(
    """please thanks thank you ta cheers lovely great perfect brilliant fine good
    wonderful excellent fab fantastic super cool grand alright all everything that that's
    thats it it's is the order place put through book take go on then and so oh um uh er
    erm ah well just that'd that'll would will be i i'd i'll let's love dear mate very
    much me to for with happy exactly indeed of course can you do now lot done deal mm hmm
    mhm huh""".split()
)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def nothing_but_consent(rest: str, order: Iterable[str] = ()) -> bool:
    """Whether `rest`, the caller's answer with its yes taken out, holds only politeness
    or agreement (`CONSENT_ONLY`), or words close to `order`'s: the words that describe
    the order read back ("yes please, the paracetamol")."""
    described = [w.lower() for w in order]
    return all(
        word in CONSENT_ONLY or any(ratio(word, other) >= 85 for other in described)
        for word in _WORD.findall(rest.lower().replace("\u2019", "'"))
    )


def read_back_answer(
    log: Sequence[Message], read_back_seq: int | None, question: str
) -> str | None:
    """The caller's reply to the order's read-back (the message `read_back_seq`), if
    their latest words are exactly that reply and they heard the read-back to its
    `question`: a barge-in revises a reply to the words played, and a yes to "Your order
    is" is not a yes to the order."""
    if read_back_seq is None:
        return None
    read_back = next((m for m in log if m.seq == read_back_seq), None)
    if read_back is None or not read_back.content.rstrip().endswith(question):
        return None
    replies = [
        m for m in log if m.role is Role.USER and m.mode is Mode.USER and m.seq > read_back_seq
    ]
    return replies[0].content if len(replies) == 1 else None
