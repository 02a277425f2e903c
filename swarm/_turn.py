"""One turn's state, and what each layer of the engine needs of the one above it.

`Runner` (swarm._runner) and the tool machinery (swarm._tools) are typed against
`TurnHost` and `ToolDriver` here, and `Session` against `EngineHost`, never against
`Session`, `Runner` or `Engine` themselves: each stays below what drives it, with no
import cycle, `TYPE_CHECKING` included (tests/test_layers.py).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol

from swarm._completion import CompletionTiming
from swarm._events import EventBus, SwarmEvent
from swarm._handle import OnText, SessionHandle
from swarm._messages import Message
from swarm._registry import AgentSpec, Registry, SwarmSpec
from swarm._store import SessionStore


@dataclass
class Budget:
    """What one caller turn may spend on models, shared by its threads between agents."""

    max_model_calls: int | None = None
    deadline: float | None = None  # time.monotonic() by which the caller must hear an answer
    model_calls: int = 0

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def postpone(self, seconds: float) -> None:
        """The caller's wait for a model that was still warming is not the model's slowness."""
        if self.deadline is not None:
            self.deadline += seconds

    @property
    def spent(self) -> bool:
        left = self.remaining()
        calls = self.max_model_calls is not None and self.model_calls >= self.max_model_calls
        return calls or (left is not None and left <= 0)


@dataclass
class Turn:
    """State that lives exactly as long as one caller turn (or one `execute` from outside)."""

    entered: set[str]
    max_steps: int
    on_text: OnText | None = None
    steps: int = 0
    spoken: list[str] = field(default_factory=list)
    stop_tools: bool = False
    cancelled: bool = False
    argument_failures: Counter[str] = field(default_factory=Counter)
    routed: set[str] = field(default_factory=set)  # agents whose router has had its look
    budget: Budget = field(default_factory=Budget)
    screened: bool = False
    screen_handed_on: bool = False  # the screen's call was not the first agent's to make

    @property
    def output(self) -> str:
        return "" if self.cancelled else " ".join(t for t in self.spoken if t)


class Conversation(Protocol):
    in_thread: bool

    def agent(self) -> AgentSpec: ...

    def view(self, agent: AgentSpec) -> list[Message]: ...

    def system_prompt(self, agent: AgentSpec) -> str: ...

    async def commit(self, message: Message) -> Message: ...


class TurnHost(SessionHandle, Protocol):
    """The session, as a turn's runner and tools use it."""

    swarm: SwarmSpec
    # The engine's own notes to the model (a refused transfer, invalid arguments): never
    # for the caller's ears, in this turn or a later one, while the note is in the model's
    # history. A tool's own ToolError text is written for the caller.
    notes: deque[str]

    @property
    def registry(self) -> Registry: ...

    @property
    def completion_timeout(self) -> float: ...

    @property
    def argument_retries(self) -> int: ...

    def completion_took(self, timing: CompletionTiming) -> None: ...

    def agent_spec(self, name: str | None = None) -> AgentSpec: ...

    def tool_names_for(self, agent: AgentSpec) -> tuple[str, ...]: ...

    def publish(
        self, kind: type[SwarmEvent], *, agent: str | None = None, **fields: Any
    ) -> None: ...

    def count_rescue(self, agent: str, reason: str, strategy: str, detail: str) -> None: ...


class ToolDriver(Protocol):
    """The runner, as a tool call uses it."""

    session: TurnHost
    conversation: Conversation
    turn: Turn

    async def execute(self, instruction: str) -> None: ...

    async def emit(self, text: str, *, author: str | None = None) -> Message: ...


class EngineHost(Protocol):
    """The engine, as its sessions use it (`swarm.Engine` is the one)."""

    registry: Registry
    store: SessionStore
    bus: EventBus
    deps: Any
    completion_timeout: float
    argument_retries: int
    max_nested: int
    idle_timeout: float | None
    rescue_counts: Counter[str]
    on_completion: Callable[[CompletionTiming], None] | None

    def new_budget(self) -> Budget: ...

    def forget(self, session: SessionHandle) -> None: ...

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]: ...
