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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from pydantic_settings import BaseSettings
from sqlalchemy.engine import Engine as Database

# Consent is part of what an agency may use: code, not the model, decides it.
from callswarm.consent import nothing_but_consent as nothing_but_consent
from callswarm.consent import read_back_answer as read_back_answer
from swarm import CompletionBackend, Engine
from swarm.backends.embed import Embedder

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
    # Sentence vectors for an agency's own classifiers (the pharmacy's safety probe);
    # None when `CALLSWARM_SAFETY_PROBE=false`.
    embedder: Embedder | None = None


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
    # Whether its build reads `AgencyBuild.embedder`: otherwise the gateway loads no
    # embedding model for it.
    embeds: bool = False
    # Reads what a caller's first turn would otherwise read (word lists, tables built
    # from its data), in a worker thread of the warm-up while the voice loads. A failure
    # is logged and leaves the reading to that turn.
    warm: Callable[[Database], None] | None = None

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
