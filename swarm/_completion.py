"""The completion contract every LLM backend implements."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from swarm._messages import AssistantMessage, ToolCall


@dataclass(frozen=True, slots=True)
class CompletionTiming:
    """How long one completion took, first request to last chunk, and whether it answered."""

    completion: str
    agent: str
    seconds: float
    ok: bool


@dataclass(frozen=True, slots=True)
class CompletionArgs:
    client_id: str
    agent_name: str
    messages: tuple[dict[str, Any], ...]  # OpenAI-style, system prompt first
    tools: tuple[dict[str, Any], ...]  # OpenAI-style {"type": "function", "function": {...}}
    # Every tool of the agent, available now or not, in a fixed order. A backend whose
    # prompt cache needs an unchanging prefix may show these and still call only `tools`.
    prompt_tools: tuple[dict[str, Any], ...] = ()

    @property
    def tool_names(self) -> frozenset[str]:
        return frozenset(t["function"]["name"] for t in self.tools)


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of reply text, streamed as the model writes it."""

    text: str


CompletionChunk = TextDelta | AssistantMessage


@runtime_checkable
class CompletionBackend(Protocol):
    def stream(self, args: CompletionArgs) -> AsyncIterator[CompletionChunk]:
        """Stream one completion.

        Yield any number of `TextDelta` while text arrives, then exactly one
        `AssistantMessage` holding the whole output (text and tool calls).
        Tool calls a server leaves inside the text may stay there: the session
        parses them. Raise `CompletionError` (or `CompletionTimeout`) for any
        failure, translating the client library's exception with `from`.
        """
        ...


@runtime_checkable
class WarmingBackend(Protocol):
    """A backend that may still be warming an agent when the first caller arrives."""

    async def ready(self, agent: str) -> bool:
        """Return once a completion for `agent` would not wait for a warm-up: True if it
        warmed, False if the warm-up failed (its completions will say why)."""
        ...


GetCompletion = Callable[[CompletionArgs], Awaitable["AssistantMessage | Mapping[str, Any]"]]


def assistant_from_dict(data: Mapping[str, Any]) -> AssistantMessage:
    """Accept an OpenAI-style assistant dict where a function completion returns one."""
    calls = []
    for index, raw in enumerate(data.get("tool_calls") or ()):
        function = raw.get("function", raw)
        arguments = function.get("arguments") or {}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError:
                arguments = {"__unparsed__": arguments}
        calls.append(
            ToolCall(
                id=str(raw.get("id") or f"call_{index}"),
                name=str(function.get("name", "")),
                arguments=dict(arguments) if isinstance(arguments, dict) else {},
            )
        )
    return AssistantMessage(content=str(data.get("content") or ""), tool_calls=tuple(calls))


class FunctionBackend:
    """Adapts `add_completion(name, get_completion)`'s plain async function to the protocol."""

    def __init__(self, get_completion: GetCompletion) -> None:
        self._get_completion = get_completion

    async def stream(self, args: CompletionArgs) -> AsyncIterator[CompletionChunk]:
        result = await self._get_completion(args)
        message = result if isinstance(result, AssistantMessage) else assistant_from_dict(result)
        if message.content:
            yield TextDelta(message.content)
        yield message
