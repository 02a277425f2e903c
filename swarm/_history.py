"""What each agent sees of the shared log. Pure functions, no I/O.

The rules, in order:
1. scope: every agent sees the caller's messages and every agent's spoken
   replies; system messages, tool calls, tool outputs and `execute`
   instructions are private to the agent that made them;
2. a `flush` or `rescue` marker of the agent hides everything before it;
3. the last `keep` messages are kept;
4. tool calls without an output, and outputs without a call, are dropped, so
   a window cut in the middle of a tool exchange is still valid for any API;
5. each call's output follows its call, before any other message: a model that
   made two calls at once, the first of which spoke, left its words between the
   two outputs, and OpenAI's API refuses that order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from swarm._messages import Message, Mode, Role


def _visible_to(message: Message, agent: str) -> Message | None:
    own = message.agent == agent
    if message.role is Role.USER:
        return message if message.mode is Mode.USER or own else None
    if message.role is Role.ASSISTANT:
        if not message.content and not message.tool_calls:
            return None  # a reply revised to nothing: the caller heard none of it
        if own or not message.tool_calls:
            return message
        # Another agent's call belongs to its scope; its words still belong to the caller.
        return replace(message, tool_calls=()) if message.content else None
    if message.is_marker or message.role in (Role.SYSTEM, Role.TOOL):
        return message if own else None
    return None


def drop_orphan_tool_messages(messages: Iterable[Message]) -> list[Message]:
    """Remove tool calls that never got an output and outputs that have no call."""
    items = list(messages)
    answered = {m.tool_call_id for m in items if m.role is Role.TOOL}
    out: list[Message] = []
    called: set[str] = set()
    for message in items:
        if message.role is Role.ASSISTANT and message.tool_calls:
            kept = tuple(c for c in message.tool_calls if c.id in answered)
            called.update(c.id for c in kept)
            if kept or message.content:
                out.append(replace(message, tool_calls=kept))
        elif message.role is Role.TOOL:
            if message.tool_call_id in called:
                out.append(message)
        else:
            out.append(message)
    return out


def outputs_after_calls(messages: Sequence[Message]) -> list[Message]:
    """The messages in order, except that each tool output is moved up to follow the
    message that made its call, with the other outputs of that message, in call order.

    A call takes the first output with its id after it: ids are not unique over a
    conversation (code's counters start again at 1 when a gateway restarts)."""
    out: list[Message] = []
    placed: set[int] = set()  # positions of outputs already moved up
    for index, message in enumerate(messages):
        if message.role is Role.TOOL:
            if index not in placed:
                out.append(message)  # no call before it: left where it is
            continue
        out.append(message)
        if message.role is not Role.ASSISTANT:
            continue
        for call in message.tool_calls:
            answer = next(
                (
                    later
                    for later in range(index + 1, len(messages))
                    if later not in placed
                    and messages[later].role is Role.TOOL
                    and messages[later].tool_call_id == call.id
                ),
                None,
            )
            if answer is not None:
                placed.add(answer)
                out.append(messages[answer])
    return out


def agent_view(log: Sequence[Message], agent: str, keep: int) -> list[Message]:
    """The messages `agent` is shown, oldest first, markers removed."""
    scoped = [v for m in log if (v := _visible_to(m, agent)) is not None]
    for index in range(len(scoped) - 1, -1, -1):
        if scoped[index].is_marker:
            scoped = scoped[index + 1 :]
            break
    window = scoped[-keep:] if keep > 0 else []
    return outputs_after_calls(drop_orphan_tool_messages(window))


def user_messages(log: Sequence[Message]) -> list[Message]:
    """What the caller really said: `execute` instructions are not the caller's."""
    return [m for m in log if m.role is Role.USER and m.mode is Mode.USER]


def assistant_messages(log: Sequence[Message]) -> list[Message]:
    """Spoken replies only: a bare tool-call message is not something the caller heard."""
    return [m for m in log if m.role is Role.ASSISTANT and m.content]


def last_content(messages: Sequence[Message]) -> str | None:
    return messages[-1].content if messages else None
