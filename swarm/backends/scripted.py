"""Deterministic completions from rules: demos, tests, and the bench's control group.

A rule fires on the last message the agent sees: the caller's words (or an
`execute` instruction), or a tool's output. The first rule that matches answers,
with text or with one tool call. Templates fill `{input}`, `{1}`…, and named
groups `{name}` from the match; other braces are left alone, so a rule can
also reproduce a model's broken output.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from swarm._completion import CompletionArgs, CompletionChunk, TextDelta
from swarm._messages import AssistantMessage, ToolCall

Respond = Callable[[CompletionArgs, "re.Match[str]"], AssistantMessage]
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_ids = itertools.count(1)


@dataclass(frozen=True)
class Rule:
    pattern: str = r".*"
    reply: str | None = None
    tool: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    agent: str | None = None
    on: Literal["user", "tool", "any"] = "user"
    after_tool: str | None = None
    respond: Respond | None = None

    def __post_init__(self) -> None:
        if sum(x is not None for x in (self.reply, self.tool, self.respond)) != 1:
            raise ValueError("a rule gives exactly one of reply, tool or respond")

    def match(self, agent: str, kind: str, tool: str | None, text: str) -> re.Match[str] | None:
        if self.agent is not None and self.agent != agent:
            return None
        if self.on != "any" and self.on != kind:
            return None
        if self.after_tool is not None and self.after_tool != tool:
            return None
        return re.search(self.pattern, text, re.IGNORECASE | re.DOTALL)


def _fill(template: Any, match: re.Match[str], text: str) -> Any:
    if not isinstance(template, str):
        return template
    values: dict[str, str] = {"input": text, "0": match.group(0)}
    values.update({str(i): g or "" for i, g in enumerate(match.groups(), start=1)})
    values.update({k: v or "" for k, v in match.groupdict().items()})
    whole = _PLACEHOLDER.fullmatch(template)
    if whole and whole.group(1) in values:
        return values[whole.group(1)]
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def _trigger(messages: Sequence[Mapping[str, Any]]) -> tuple[str, str | None, str]:
    """The kind, tool name and text of the last non-system message."""
    for message in reversed(messages):
        role = message.get("role")
        if role == "system":
            continue
        if role == "tool":
            return "tool", message.get("name"), str(message.get("content") or "")
        if role == "user":
            return "user", None, str(message.get("content") or "")
        return "assistant", None, str(message.get("content") or "")
    return "none", None, ""


class ScriptedBackend:
    def __init__(
        self,
        rules: Sequence[Rule],
        *,
        default: str = "I'm sorry, I didn't catch that. Could you put it another way?",
    ) -> None:
        self.rules = tuple(rules)
        self.default = default
        self.calls = 0

    def answer(self, args: CompletionArgs) -> AssistantMessage:
        self.calls += 1
        kind, tool, text = _trigger(args.messages)
        for rule in self.rules:
            match = rule.match(args.agent_name, kind, tool, text)
            if match is None:
                continue
            if rule.respond is not None:
                return rule.respond(args, match)
            if rule.tool is not None:
                arguments = {k: _fill(v, match, text) for k, v in rule.arguments.items()}
                call = ToolCall(id=f"scripted_{next(_ids)}", name=rule.tool, arguments=arguments)
                return AssistantMessage(tool_calls=(call,))
            return AssistantMessage(content=str(_fill(rule.reply, match, text)))
        return AssistantMessage(content=self.default)

    async def stream(self, args: CompletionArgs) -> AsyncIterator[CompletionChunk]:
        message = self.answer(args)
        for word in re.findall(r"\S+\s*", message.content):
            yield TextDelta(word)
        yield message
