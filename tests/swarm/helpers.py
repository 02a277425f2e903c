"""Small builders shared by the swarm tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel

from swarm import AssistantMessage, CompletionArgs, Engine, Rule, ScriptedBackend, ToolCall


class NoArgs(BaseModel):
    pass


class Query(BaseModel):
    query: str


def scripted_engine(rules: Sequence[Rule], **engine_options: Any) -> Engine:
    """Two agents, triage (default) and sales, on one scripted completion."""
    engine = Engine(**engine_options)
    engine.add_completion("scripted", ScriptedBackend(rules))
    return engine


def tool_call(name: str, **arguments: Any) -> AssistantMessage:
    return AssistantMessage(tool_calls=(ToolCall(id=f"id_{name}", name=name, arguments=arguments),))


class Sequenced:
    """A function completion that answers from a list, one output per call, and records the args."""

    def __init__(
        self, outputs: Sequence[AssistantMessage | Exception | Callable[[], Awaitable[Any]]]
    ):
        self.outputs = list(outputs)
        self.seen: list[CompletionArgs] = []

    async def __call__(self, args: CompletionArgs) -> AssistantMessage:
        self.seen.append(args)
        if not self.outputs:
            return AssistantMessage(content="(no more scripted outputs)")
        out = self.outputs.pop(0)
        if isinstance(out, Exception):
            raise out
        if callable(out):
            return await out()
        return out
