"""Named specs of completions, tools, agents and swarms, and their validation."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from swarm._completion import CompletionBackend
from swarm._handle import SessionHandle, ToolContext
from swarm.errors import ConfigurationError

ToolCall = Callable[[ToolContext, Any], Awaitable[Any]]
# (session, agent_name): may read the session's history to offer a tool only when it can apply.
IsAvailable = Callable[[SessionHandle, str], bool | Awaitable[bool]]
RescueStep = Literal["recomplete", "flush"] | Callable[..., Awaitable[str | None]]
# Code's look at the caller's words before any agent's router or model, whichever agent
# holds the caller: a business's rules that no model may override (safety, consent).
Screen = Callable[[SessionHandle, str], Awaitable["RoutedCall | RoutedReply | None"]]
# What code says when a turn has used its model calls or its time: words from facts,
# a clarifying question, or the offer of a person, never a model's guess.
Fallback = Callable[[SessionHandle, str], Awaitable[str]]
# What the caller has most likely said, before their turn is sure to be over (a voice
# loop knows the words of a pause before it knows the pause ends the turn): the screen's
# slow readings can start early. Nothing it does may be seen by the caller or kept.
Anticipate = Callable[[SessionHandle, str], Awaitable[None]]

USER = "user"  # the caller's pseudo-agent in a communication graph
DEFAULT_RESCUE: tuple[RescueStep, ...] = ("recomplete", "flush")
DEFAULT_PLACEHOLDER = "Sorry, I missed that. Could you say it again?"


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    parameters: type[BaseModel]
    call: ToolCall
    is_available: IsAvailable | None = None

    def schema(self) -> dict[str, Any]:
        """The OpenAI-style function spec the model is shown."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": _compact_schema(self.parameters.model_json_schema()),
            },
        }


def _compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's titles: they only cost prompt tokens on small models."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if isinstance(value, dict):
            value = (
                _compact_schema(value)
                if key != "properties"
                else {k: _compact_schema(v) for k, v in value.items()}
            )
        out[key] = value
    if out.get("type") == "object":
        out.setdefault("properties", {})
    return out


@dataclass(frozen=True, slots=True)
class AgentSpec:
    name: str
    completion: str
    prompt: str
    tools: tuple[str, ...] = ()
    system: tuple[str, ...] = ()
    keep_messages: int = 25
    rescue: tuple[RescueStep, ...] = DEFAULT_RESCUE
    placeholder: str = DEFAULT_PLACEHOLDER
    description: str = ""
    # A system message placed after the history on every call that offers tools: small
    # models follow what they read last far better than the top of a long prompt.
    reminder: str = ""
    # Code's first look at the caller's words, before any model call: when it names a
    # tool call (a routing agent hearing "I'd like paracetamol"), that call is made as if
    # the model had chosen it, checked the same way, and the model is not asked. When it
    # names prepared words (a question the agent must decline), they are the reply.
    router: Callable[[str], RoutedCall | RoutedReply | None] | None = None
    # Every amount of money the agent's own words state must have been said by a tool
    # or code before: a price the model made up or worked out is rescued, never spoken.
    money_from_tools: bool = False


@dataclass(frozen=True, slots=True)
class RoutedCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RoutedReply:
    text: str


@dataclass(frozen=True, slots=True)
class SwarmSpec:
    name: str
    agents: tuple[str, ...]
    default_agent: str
    mission: str = ""
    # Directed edges (sender, recipient); USER as sender marks whom the caller may address.
    communication: tuple[tuple[str, str], ...] = ()
    screen: Screen | None = None
    fallback: Fallback | None = None
    anticipate: Anticipate | None = None

    def may_talk(self, sender: str, recipient: str) -> bool:
        return (sender, recipient) in self.communication

    def recipients_of(self, sender: str) -> tuple[str, ...]:
        return tuple(r for s, r in self.communication if s == sender)


@dataclass
class Registry:
    completions: dict[str, CompletionBackend] = field(default_factory=dict)
    tools: dict[str, ToolSpec] = field(default_factory=dict)
    agents: dict[str, AgentSpec] = field(default_factory=dict)
    swarms: dict[str, SwarmSpec] = field(default_factory=dict)

    def validate(self) -> None:
        """Raise ConfigurationError naming every dangling reference at once."""
        problems: list[str] = []
        for agent in self.agents.values():
            if agent.completion not in self.completions:
                problems.append(f"agent {agent.name!r}: unknown completion {agent.completion!r}")
            for tool in agent.tools:
                if tool not in self.tools:
                    problems.append(f"agent {agent.name!r}: unknown tool {tool!r}")
            if agent.keep_messages < 1:
                problems.append(f"agent {agent.name!r}: keep_messages must be at least 1")
        for swarm in self.swarms.values():
            for name in swarm.agents:
                if name not in self.agents:
                    problems.append(f"swarm {swarm.name!r}: unknown agent {name!r}")
            if swarm.default_agent not in swarm.agents:
                problems.append(
                    f"swarm {swarm.name!r}: default agent {swarm.default_agent!r} is not in it"
                )
            for sender, recipient in swarm.communication:
                for end in (sender, recipient):
                    if end != USER and end not in swarm.agents:
                        problems.append(f"swarm {swarm.name!r}: edge names unknown agent {end!r}")
                if recipient == USER:
                    problems.append(f"swarm {swarm.name!r}: the user cannot be a recipient")
        if problems:
            raise ConfigurationError(problems)


def unique(kind: str, name: str, table: dict[str, Any]) -> None:
    if not name:
        raise ConfigurationError([f"a {kind} needs a name"])
    if name in table:
        raise ConfigurationError([f"{kind} {name!r} is already registered"])


def as_tuple(values: Sequence[str] | str) -> tuple[str, ...]:
    return (values,) if isinstance(values, str) else tuple(values)
