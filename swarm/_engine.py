"""The engine: registries, the table of live sessions, and the background tasks it owns."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from pydantic import BaseModel

from swarm._agency import TALK_TO_AGENT_TOOL, system_prompt, tool_names_for
from swarm._completion import (
    CompletionArgs,
    CompletionBackend,
    CompletionTiming,
    FunctionBackend,
    GetCompletion,
)
from swarm._connection import Connection, Send
from swarm._events import EventBus
from swarm._handle import SessionHandle
from swarm._registry import (
    DEFAULT_PLACEHOLDER,
    DEFAULT_RESCUE,
    AgentSpec,
    Anticipate,
    Fallback,
    IsAvailable,
    Registry,
    RescueStep,
    RoutedCall,
    RoutedReply,
    Screen,
    SwarmSpec,
    ToolCall,
    ToolSpec,
    as_tuple,
    unique,
)
from swarm._session import Session
from swarm._store import MemoryStore, SessionStore
from swarm._turn import Budget
from swarm.errors import ConfigurationError

log = logging.getLogger("swarm.engine")


class Engine:
    """Holds everything one process's swarms need; sessions are looked up by client id."""

    def __init__(
        self,
        *,
        store: SessionStore | None = None,
        bus: EventBus | None = None,
        deps: Any = None,
        completion_timeout: float = 120.0,
        max_nested: int = 20,
        max_model_calls: int | None = None,
        turn_deadline: float | None = None,
        argument_retries: int = 1,
        idle_timeout: float | None = None,
        on_completion: Callable[[CompletionTiming], None] | None = None,
    ) -> None:
        self.registry = Registry()
        # Told of every completion's duration (metrics); the swarm itself keeps none.
        self.on_completion = on_completion
        self.store: SessionStore = store or MemoryStore()
        self.bus = bus or EventBus()
        self.deps = deps
        self.completion_timeout = completion_timeout
        self.max_nested = max_nested
        # A caller waits on every turn: past these, the swarm's fallback answers in code.
        self.max_model_calls = max_model_calls
        self.turn_deadline = turn_deadline
        self.argument_retries = argument_retries
        self.idle_timeout = idle_timeout
        self.rescue_counts: Counter[str] = Counter()
        self._sessions: dict[str, Session] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self.registry.tools[TALK_TO_AGENT_TOOL.name] = TALK_TO_AGENT_TOOL

    # --- registration ------------------------------------------------------------------------

    def add_completion(self, name: str, get_completion: GetCompletion | CompletionBackend) -> str:
        unique("completion", name, self.registry.completions)
        backend = (
            get_completion
            if isinstance(get_completion, CompletionBackend)
            else FunctionBackend(get_completion)
        )
        self.registry.completions[name] = backend
        return name

    def add_tool(
        self,
        name: str,
        description: str,
        parameters: type[BaseModel],
        call: ToolCall,
        is_available: IsAvailable | None = None,
    ) -> str:
        unique("tool", name, self.registry.tools)
        if not (isinstance(parameters, type) and issubclass(parameters, BaseModel)):
            raise ConfigurationError([f"tool {name!r}: parameters must be a pydantic model class"])
        self.registry.tools[name] = ToolSpec(name, description, parameters, call, is_available)
        return name

    def add_agent(
        self,
        name: str,
        completion: str,
        prompt: str,
        tools: Sequence[str] = (),
        system: Sequence[str] = (),
        keep_messages: int = 25,
        *,
        rescue: Sequence[RescueStep] = DEFAULT_RESCUE,
        placeholder: str = DEFAULT_PLACEHOLDER,
        description: str = "",
        reminder: str = "",
        router: Callable[[str], RoutedCall | RoutedReply | None] | None = None,
        money_from_tools: bool = False,
    ) -> str:
        unique("agent", name, self.registry.agents)
        self.registry.agents[name] = AgentSpec(
            name=name,
            completion=completion,
            prompt=prompt,
            tools=as_tuple(tools),
            system=as_tuple(system),
            keep_messages=keep_messages,
            rescue=tuple(rescue),
            placeholder=placeholder,
            description=description,
            reminder=reminder,
            router=router,
            money_from_tools=money_from_tools,
        )
        return name

    def add_swarm(
        self,
        name: str,
        agents: Sequence[str],
        default_agent: str,
        *,
        mission: str = "",
        communication: Sequence[tuple[str, str]] = (),
        screen: Screen | None = None,
        fallback: Fallback | None = None,
        anticipate: Anticipate | None = None,
    ) -> str:
        unique("swarm", name, self.registry.swarms)
        self.registry.swarms[name] = SwarmSpec(
            name=name,
            agents=as_tuple(agents),
            default_agent=default_agent,
            mission=mission,
            communication=tuple((s, r) for s, r in communication),
            screen=screen,
            fallback=fallback,
            anticipate=anticipate,
        )
        return name

    def validate(self) -> None:
        self.registry.validate()

    def new_budget(self) -> Budget:
        deadline = None if self.turn_deadline is None else time.monotonic() + self.turn_deadline
        return Budget(max_model_calls=self.max_model_calls, deadline=deadline)

    def prefix_args(self, swarm_name: str, agent_name: str) -> CompletionArgs:
        """What every call of an agent starts with (system prompt and tools), to warm caches."""
        swarm = self.registry.swarms[swarm_name]
        agent = self.registry.agents[agent_name]
        tools = tuple(self.registry.tools[t].schema() for t in tool_names_for(swarm, agent))
        return CompletionArgs(
            client_id="warm-up",
            agent_name=agent_name,
            messages=({"role": "system", "content": system_prompt(swarm, agent)},),
            tools=tools,
            prompt_tools=tools,
        )

    # --- sessions ----------------------------------------------------------------------------

    def session(self, client_id: str, swarm_name: str) -> Session:
        """The live session of `client_id`, created (or resumed from the store) if need be."""
        if not client_id:
            raise ValueError("client_id must not be empty")
        existing = self._sessions.get(client_id)
        if existing is not None:
            if existing.swarm.name != swarm_name:
                raise ConfigurationError(
                    [
                        f"client {client_id!r} is in swarm {existing.swarm.name!r}, not {swarm_name!r}"
                    ]
                )
            return existing
        swarm = self.registry.swarms.get(swarm_name)
        if swarm is None:
            raise ConfigurationError([f"unknown swarm {swarm_name!r}"])
        created = Session(self, client_id, swarm)
        self._sessions[client_id] = created
        return created

    def get_session(self, client_id: str) -> Session:
        try:
            return self._sessions[client_id]
        except KeyError:
            raise LookupError(f"no live session for client {client_id!r}") from None

    @property
    def sessions(self) -> dict[str, Session]:
        return dict(self._sessions)

    def make_connection(
        self, client_id: str, swarm_name: str, send: Send, *, debounce: float | None = None
    ) -> Connection:
        return Connection(self.session(client_id, swarm_name), send, debounce=debounce)

    async def aclose(self) -> None:
        for session in list(self._sessions.values()):
            await session.dispose(final=True)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for backend in self.registry.completions.values():
            close = getattr(backend, "aclose", None)
            if close is not None:
                await close()

    def forget(self, session: SessionHandle) -> None:
        """For `Session.dispose` only: the session leaves the table, and the next
        `session()` loads afresh. A live session forgotten would have a twin."""
        if self._sessions.get(session.client_id) is session:
            del self._sessions[session.client_id]

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        """For the engine's sessions: a task of the engine's own (an idle session's
        disposal), awaited on close."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
