"""The functional façade: agent-swarm-kit's verbs in snake_case, over one default engine.

Only registries live at module level; per-caller state stays in the engine's
sessions, which every verb looks up by client id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from swarm._completion import CompletionBackend, GetCompletion
from swarm._connection import Connection, Send
from swarm._engine import Engine
from swarm._messages import Message
from swarm._registry import IsAvailable, ToolCall
from swarm._session import Session

_engine = Engine()


def get_engine() -> Engine:
    return _engine


def set_engine(engine: Engine) -> Engine:
    """Replace the default engine (the CLI does this once, with settings applied)."""
    global _engine
    _engine = engine
    return engine


def add_completion(name: str, get_completion: GetCompletion | CompletionBackend) -> str:
    return _engine.add_completion(name, get_completion)


def add_tool(
    name: str,
    description: str,
    parameters: type[BaseModel],
    call: ToolCall,
    is_available: IsAvailable | None = None,
) -> str:
    return _engine.add_tool(name, description, parameters, call, is_available)


def add_agent(
    name: str,
    completion: str,
    prompt: str,
    tools: Sequence[str] = (),
    system: Sequence[str] = (),
    keep_messages: int = 25,
    **options: Any,
) -> str:
    return _engine.add_agent(name, completion, prompt, tools, system, keep_messages, **options)


def add_swarm(name: str, agents: Sequence[str], default_agent: str, **options: Any) -> str:
    return _engine.add_swarm(name, agents, default_agent, **options)


def validate() -> None:
    _engine.validate()


def session(client_id: str, swarm_name: str) -> Session:
    return _engine.session(client_id, swarm_name)


def make_connection(
    client_id: str, swarm_name: str, send: Send, *, debounce: float | None = None
) -> Connection:
    return _engine.make_connection(client_id, swarm_name, send, debounce=debounce)


def _live(client_id: str) -> Session:
    return _engine.get_session(client_id)


async def complete(client_id: str, content: str) -> str:
    return await _live(client_id).complete(content)


async def execute(client_id: str, instruction: str, agent_name: str | None = None) -> str:
    return await _live(client_id).execute(instruction, agent_name=agent_name)


async def emit(client_id: str, content: str, agent_name: str | None = None) -> str:
    return await _live(client_id).emit(content, agent_name=agent_name)


async def commit_tool_output(
    client_id: str, tool_id: str, content: str, agent_name: str | None = None
) -> None:
    await _live(client_id).commit_tool_output(tool_id, content, agent_name=agent_name)


async def commit_system_message(
    client_id: str, content: str, agent_name: str | None = None
) -> None:
    await _live(client_id).commit_system_message(content, agent_name=agent_name)


async def commit_user_message(client_id: str, content: str, agent_name: str | None = None) -> None:
    await _live(client_id).commit_user_message(content, agent_name=agent_name)


async def commit_flush(client_id: str, agent_name: str | None = None) -> None:
    await _live(client_id).commit_flush(agent_name=agent_name)


async def commit_stop_tools(client_id: str, agent_name: str | None = None) -> None:
    await _live(client_id).commit_stop_tools(agent_name=agent_name)


async def cancel_output(client_id: str, agent_name: str | None = None) -> None:
    await _live(client_id).cancel_output(agent_name=agent_name)


async def change_to_agent(client_id: str, agent_name: str) -> None:
    await _live(client_id).change_to_agent(agent_name)


async def change_to_prev_agent(client_id: str) -> None:
    await _live(client_id).change_to_prev_agent()


async def change_to_default_agent(client_id: str) -> None:
    await _live(client_id).change_to_default_agent()


async def get_agent_name(client_id: str) -> str:
    return await _live(client_id).get_agent_name()


async def get_raw_history(client_id: str) -> list[Message]:
    return await _live(client_id).get_raw_history()


async def get_agent_history(client_id: str, agent_name: str | None = None) -> list[Message]:
    return await _live(client_id).get_agent_history(agent_name)


async def get_user_history(client_id: str) -> list[Message]:
    return await _live(client_id).get_user_history()


async def get_assistant_history(client_id: str) -> list[Message]:
    return await _live(client_id).get_assistant_history()


async def get_last_user_message(client_id: str) -> str | None:
    return await _live(client_id).get_last_user_message()


async def get_last_assistant_message(client_id: str) -> str | None:
    return await _live(client_id).get_last_assistant_message()


async def get_last_system_message(client_id: str) -> str | None:
    return await _live(client_id).get_last_system_message()
