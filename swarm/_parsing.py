"""Lenient parsing of tool calls that models leave in their text, and leak detection.

Small local models rarely fill `tool_calls`. Measured here, Qwen2.5-Coder wrote
bare JSON, doubled braces (`{{"name": …}}}`) and `<tools>` wrappers; Hermes
templates use `<tool_call>` tags. Everything here is pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

_TAG_BLOCK = re.compile(
    r"<(?P<tag>tool_call|tools|function_call|tool_calls)>\s*(?P<body>.*?)\s*(?:</(?P=tag)>|$)",
    re.DOTALL | re.IGNORECASE,
)
_FENCE = re.compile(r"```(?:json|tool_call)?\s*(?P<body>.*?)```", re.DOTALL | re.IGNORECASE)
_XML_TAG = re.compile(r"</?\s*[A-Za-z_][\w:.-]*(?:\s[^<>]*)?/?>")
_JSON_START = re.compile(r"[{\[]\s*[\"{\[]|\{\s*\}")


@dataclass(frozen=True, slots=True)
class ParsedCall:
    name: str
    arguments: dict[str, Any]


def _loads_lenient(text: str) -> Any:
    text = text.strip()
    for candidate in (text, text.replace("{{", "{").replace("}}", "}")):
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            pass
        try:
            # Trailing garbage such as an extra "}" after a doubled-brace call.
            value, _ = json.JSONDecoder().raw_decode(candidate)
            return value
        except json.JSONDecodeError:
            continue
    return None


def _as_calls(value: Any) -> list[ParsedCall] | None:
    """Interpret a decoded JSON value as tool calls, or None if it is not one."""
    if isinstance(value, list):
        calls = [_as_calls(item) for item in value]
        if value and all(c is not None for c in calls):
            return [call for group in calls if group for call in group]
        return None
    if not isinstance(value, dict):
        return None
    if "function" in value and isinstance(value["function"], dict):
        return _as_calls(value["function"])
    if "tool_calls" in value:
        return _as_calls(value["tool_calls"])
    name = value.get("name") or value.get("tool") or value.get("function_name")
    if not isinstance(name, str) or not name:
        return None
    arguments = value.get("arguments", value.get("parameters", value.get("args", {})))
    if isinstance(arguments, str):
        arguments = _loads_lenient(arguments) if arguments.strip() else {}
    if not isinstance(arguments, dict):
        arguments = {}
    return [ParsedCall(name=name, arguments=arguments)]


def _json_spans(text: str) -> Iterable[tuple[int, int, Any]]:
    """Every top-level JSON object or array in the text, doubled braces included."""
    index = 0
    decoder = json.JSONDecoder()
    while index < len(text):
        start = min(
            (p for p in (text.find("{", index), text.find("[", index)) if p >= 0), default=-1
        )
        if start < 0:
            return
        end = start
        value: Any = None
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            # Doubled braces: collapse them inside the candidate, then skip extra closers.
            depth_text = text[start:]
            collapsed = depth_text.replace("{{", "{").replace("}}", "}")
            try:
                value, consumed = decoder.raw_decode(collapsed)
            except json.JSONDecodeError:
                index = start + 1
                continue
            end = start + _original_length(depth_text, consumed)
            while end < len(text) and text[end] == "}":
                end += 1
        yield start, end, value
        index = end


def _original_length(original: str, collapsed_length: int) -> int:
    """Map a length in the brace-collapsed string back to the original string."""
    o = c = 0
    while c < collapsed_length and o < len(original):
        if original.startswith("{{", o) or original.startswith("}}", o):
            o += 2
        else:
            o += 1
        c += 1
    return o


_HALVES = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    """`text` without lone UTF-16 halves: a model's JSON can say "\ud800", and no
    socket, voice or database takes it (a text caller's socket closed on one)."""
    return _HALVES.sub("", text) if _HALVES.search(text) else text


def extract_tool_calls(text: str) -> tuple[str, list[ParsedCall]]:
    """Split a model's text into the words meant for the caller and embedded tool calls."""
    calls: list[ParsedCall] = []
    remaining = text

    def take_block(match: re.Match[str]) -> str:
        found = _as_calls(_loads_lenient(match.group("body")))
        if found is None:
            found = [
                c for _, _, v in _json_spans(match.group("body")) for c in (_as_calls(v) or [])
            ]
        if found:
            calls.extend(found)
            return " "
        return match.group(0)

    remaining = _TAG_BLOCK.sub(take_block, remaining)
    remaining = _FENCE.sub(take_block, remaining)

    pieces: list[str] = []
    cursor = 0
    for start, end, value in list(_json_spans(remaining)):
        found = _as_calls(value)
        if found:
            calls.extend(found)
            pieces.append(remaining[cursor:start])
            cursor = end
    pieces.append(remaining[cursor:])
    clean = re.sub(r"[ \t]{2,}", " ", "".join(pieces)).strip()
    return clean, calls


def find_leak(text: str, tool_names: Iterable[str] = ()) -> str | None:
    """Name what in `text` must never be spoken: 'xml', 'json' or 'tool_name'; None if clean."""
    if _XML_TAG.search(text):
        return "xml"
    if _JSON_START.search(text):
        return "json"
    if any(isinstance(value, (dict, list)) for _, _, value in _json_spans(text)):
        return "json"
    lowered = text.lower()
    for name in tool_names:
        # A one-word name ("search") is also plain English; only identifiers are leaks.
        if "_" not in name and not re.search(r"[a-z][A-Z]", name):
            continue
        words = re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").lower()
        # The identifier, or the same words spoken ("Navigate to sales"), with nothing else
        # around them beyond punctuation: a model reading out the call it wanted to make.
        if re.search(rf"(?<![\w]){re.escape(name.lower())}(?![\w])", lowered):
            return "tool_name"
        if re.fullmatch(rf"\W*{re.escape(words)}\W*", lowered):
            return "tool_name"
    return None
