"""The records that make up a session's history.

A session's history is one append-only list of `Message`. Markers (`flush`,
`rescue`) are messages too, so the log alone explains what every agent saw.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"
    # Markers never reach a model: they only hide what came before them.
    FLUSH = "flush"
    RESCUE = "rescue"


class Mode(StrEnum):
    """Who a message really came from: the caller, or the engine on a tool's behalf."""

    USER = "user"
    TOOL = "tool"


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(self.arguments)},
        }


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """What a completion backend returns: text, tool calls, or both."""

    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    # Token counts when the backend reports them; the bench sums them.
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str
    agent: str
    mode: Mode = Mode.USER
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    seq: int = 0
    time: float = field(default_factory=time.time)

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI-style dict every backend receives."""
        out: dict[str, Any] = {"role": self.role.value, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        if self.role is Role.TOOL:
            out["tool_call_id"] = self.tool_call_id
            out["name"] = self.tool_name
        return out

    @property
    def is_marker(self) -> bool:
        return self.role in (Role.FLUSH, Role.RESCUE)
