"""One caller's session: its log, active agent, navigation stack, threads and turns.

Longer than our ~400-line guide on purpose: every verb here must decide the same
two things (is this call inside the running turn, and does it need the lock), and
keeping them beside the state they guard is what keeps that decision uniform.
The model calls, tools, agency threads and store retries live in their own modules.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import suppress
from contextvars import ContextVar
from enum import Enum
from typing import Any

from swarm import _history as history
from swarm._agency import (
    MainConversation,
    ThreadState,
    ThreadView,
    caller_log,
    talk,
    tool_names_for,
)
from swarm._completion import CompletionTiming
from swarm._events import (
    AgentChanged,
    ErrorOccurred,
    Rescued,
    SwarmEvent,
)
from swarm._handle import OnText
from swarm._log import ConversationLog
from swarm._messages import Message, Mode, Role
from swarm._registry import AgentSpec, Registry, SwarmSpec
from swarm._runner import Runner
from swarm._store import ThreadInfo
from swarm._turn import EngineHost, Turn
from swarm._writer import StoreWriter
from swarm.errors import NavigationError, RecursionLimitExceeded, SessionClosed, SwarmError

log = logging.getLogger("swarm.session")

# A disposal the store could not complete is tried again after this, doubling up to the max.
DISPOSE_RETRY_S = 5.0
DISPOSE_RETRY_MAX_S = 120.0

# The runner of the turn being executed in this task, so verbs called from inside a
# tool join that turn instead of waiting for the lock the turn itself holds.
_current_runner: ContextVar[Runner | None] = ContextVar("swarm_runner", default=None)


class SessionState(Enum):
    NEW = "new"
    OPEN = "open"
    CLOSED = "closed"


class Session:
    def __init__(self, engine: EngineHost, client_id: str, swarm: SwarmSpec) -> None:
        self.client_id = client_id
        self.swarm = swarm
        self.state = SessionState.NEW
        self.rescue_count = 0
        self.tokens = 0
        self._engine = engine
        self._lock = asyncio.Lock()
        self._load_lock = asyncio.Lock()
        # The caller's conversation. Read it through the `get_*` verbs: appending here
        # (the engine's agency module does) bypasses the turn lock.
        self.messages = self._main_log(())
        self._active = swarm.default_agent
        self._stack: list[str] = []
        self._threads: dict[str, ThreadState] = {}
        self._event_seq = 0
        self._writer = StoreWriter(
            client_id, lambda exc: self.publish(ErrorOccurred, error=repr(exc), where="store")
        )
        self._idle: asyncio.TimerHandle | None = None
        self._holders = 0
        self.notes: deque[str] = deque(maxlen=64)  # the engine's, for the echo guard
        self._unsaved_disposals = 0
        self._main = MainConversation(self)
        self.closed = asyncio.Event()

    # --- what the runner reads -------------------------------------------------------------

    @property
    def registry(self) -> Registry:
        return self._engine.registry

    @property
    def deps(self) -> Any:
        return self._engine.deps

    @property
    def completion_timeout(self) -> float:
        return self._engine.completion_timeout

    @property
    def argument_retries(self) -> int:
        return self._engine.argument_retries

    def completion_took(self, timing: CompletionTiming) -> None:
        observe = self._engine.on_completion
        if observe is not None:
            try:
                observe(timing)
            except Exception:
                log.exception("completion_observer_failed client_id=%s", self.client_id)

    def agent_spec(self, name: str | None = None) -> AgentSpec:
        return self.registry.agents[name or self._active]

    def tool_names_for(self, agent: AgentSpec) -> tuple[str, ...]:
        return tool_names_for(self.swarm, agent)

    # --- lifecycle -------------------------------------------------------------------------

    async def _ensure_open(self) -> None:
        if self.state is SessionState.CLOSED:
            raise SessionClosed(self.client_id)
        if self.state is SessionState.OPEN:
            return
        async with self._load_lock:
            if self.state is not SessionState.NEW:
                return
            snapshot = await self._engine.store.load(self.client_id)
            if snapshot is not None and snapshot.active_agent in self.swarm.agents:
                self.messages = self._main_log(snapshot.messages)
                self._active = snapshot.active_agent
                self._stack = [a for a in snapshot.nav_stack if a in self.swarm.agents]
                for info, messages in snapshot.threads:
                    self._threads[info.id] = self._thread(info, messages)
                log.info(
                    "session_resumed client_id=%s agent=%s messages=%d",
                    self.client_id,
                    self._active,
                    len(self.messages),
                )
            else:
                await self._save_state()
                log.info("session_opened client_id=%s agent=%s", self.client_id, self._active)
            self.state = SessionState.OPEN
            self._touch()

    async def dispose(self, *, final: bool = False, unless_held: bool = False) -> None:
        """Close the session; a later `session()` for the same client resumes from the store.

        `unless_held`: not if a call holds it by the time the turn lock is had (a caller
        ringing back as their last call is closed, or an operator's thread message).

        Writes the store could not take stay with the session: it stays open and tries
        again later (a forgotten session's queue was lost, and with it the last turn of a
        call that ended while the database was away). `final` (the engine closing) closes
        it whatever is left unsaved, and says how much."""
        async with self._lock:
            if self.state is SessionState.CLOSED:
                return  # an earlier disposal got there while this one waited
            if unless_held and self._holders:
                return
            if self._idle:
                self._idle.cancel()
            saved = await self._writer.flush()
            if not saved and not final:
                self._unsaved_disposals += 1
                delay = min(
                    DISPOSE_RETRY_MAX_S, DISPOSE_RETRY_S * 2 ** (self._unsaved_disposals - 1)
                )
                log.error(
                    "session_dispose_deferred client_id=%s pending=%d retry_s=%g",
                    self.client_id,
                    self._writer.pending,
                    delay,
                )
                self._idle = asyncio.get_running_loop().call_later(delay, self._idle_expired)
                return
            if not saved:
                log.error(
                    "session_unsaved client_id=%s pending=%d", self.client_id, self._writer.pending
                )
            self.state = SessionState.CLOSED
        self._engine.forget(self)
        self.closed.set()
        log.info("session_disposed client_id=%s", self.client_id)

    def hold(self) -> None:
        """A live call speaks through this session: it is not disposed for idleness (a
        caller quiet past the timeout, an operator's long takeover) until `release`."""
        self._holders += 1

    def release(self) -> None:
        self._holders = max(0, self._holders - 1)
        self._touch()

    def _touch(self) -> None:
        timeout = self._engine.idle_timeout
        if timeout is None or self.state is SessionState.CLOSED:
            return
        if self._idle:
            self._idle.cancel()
        self._idle = asyncio.get_running_loop().call_later(timeout, self._idle_expired)

    def _idle_expired(self) -> None:
        if self._lock.locked() or self._holders:
            self._touch()
            return
        log.info("session_idle client_id=%s", self.client_id)
        self._engine.spawn(self.dispose(), name=f"dispose-{self.client_id}")

    # --- turns -----------------------------------------------------------------------------

    async def _in_turn(
        self,
        body: Callable[[Runner], Awaitable[object]],
        on_text: OnText | None = None,
        *,
        rescue: bool = False,
    ) -> str:
        """`rescue`: a caller's turn, answered with the fallback if code around the models
        fails; anything else (an operator's words, an instruction) fails to its caller."""
        runner = _current_runner.get()
        if runner is not None and runner.session is self:
            await body(runner)
            return ""
        await self._ensure_open()
        async with self._lock:
            if self.state is SessionState.CLOSED:
                raise SessionClosed(self.client_id)
            turn = Turn(
                entered={self._active},
                max_steps=self._engine.max_nested,
                on_text=on_text,
                budget=self._engine.new_budget(),
            )
            runner = Runner(self, self._main, turn)
            token = _current_runner.set(runner)
            started = time.perf_counter()
            try:
                await body(runner)
            except RecursionLimitExceeded as exc:
                self.publish(ErrorOccurred, error=str(exc), where="turn")
                await runner.rescue_recursion()
            except SwarmError:
                raise
            except Exception as exc:
                if not rescue:
                    raise
                # Not the models' fault, and not the caller's: their turn is answered
                # (measured: PostgreSQL restarting mid-call dropped the caller's socket).
                log.error("turn_error client_id=%s error=%r", self.client_id, exc)
                self.publish(ErrorOccurred, error=repr(exc)[:500], where="turn")
                await runner.rescue_failure()
            finally:
                _current_runner.reset(token)
                self._touch()
        log.info(
            "turn_done client_id=%s agent=%s steps=%d ms=%.0f",
            self.client_id,
            self._active,
            turn.steps,
            (time.perf_counter() - started) * 1000,
        )
        return turn.output

    async def complete(self, content: str, *, on_text: OnText | None = None) -> str:
        """Answer one caller message; turns of one session run one at a time, in order."""

        async def body(runner: Runner) -> None:
            await self._main.commit(Message(role=Role.USER, content=content, agent=self._active))
            await runner.run()

        return await self._in_turn(body, on_text, rescue=True)

    async def stream(self, content: str) -> AsyncIterator[str]:
        """Like `complete`, yielding reply text as it is written. Closing the iterator cancels the turn."""
        queue: asyncio.Queue[str | None] = asyncio.Queue()

        async def on_text(text: str) -> None:
            queue.put_nowait(text)

        task = asyncio.create_task(self.complete(content, on_text=on_text))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (text := await queue.get()) is not None:
                yield text
            await task
        finally:
            if not task.done():
                task.cancel()
                with suppress(asyncio.CancelledError):
                    await task

    async def anticipate(self, content: str) -> None:
        """The caller has most likely said `content`, and the turn may not be over yet
        (`SwarmSpec.anticipate`). Nothing is committed, and a failure is only logged:
        the turn, if it comes, does its own work."""
        anticipate = self.swarm.anticipate
        if anticipate is None or self.state is SessionState.CLOSED:
            return
        try:
            await anticipate(self, content)
        except Exception as exc:
            log.warning("anticipate_failed client_id=%s error=%r", self.client_id, exc)

    async def execute(self, instruction: str, *, agent_name: str | None = None) -> str:
        """Make the active agent speak first, following an instruction the caller never sees."""
        if self._stale(agent_name):
            return ""
        return await self._in_turn(lambda runner: runner.execute(instruction))

    async def emit(
        self, text: str, *, agent_name: str | None = None, author: str | None = None
    ) -> str:
        """Say prepared text without the model; it joins the history as the agent's reply.

        `author` names a person who speaks in the agents' place (an operator)."""
        if self._stale(agent_name):
            return ""
        return await self._in_turn(lambda runner: runner.emit(text, author=author))

    async def revise_reply(self, spoken: str) -> None:
        """After a barge-in: the reply to the last caller message keeps only what was heard.

        Replies fully heard stay; the one cut short keeps the heard words; later ones
        are emptied. A reply cancelled before it was committed is committed with the
        heard words. The one edit the log allows.
        """
        await self._ensure_open()
        async with self._lock:
            last_user = max(
                (m.seq for m in self.messages if m.role is Role.USER and m.mode is Mode.USER),
                default=0,
            )
            replies = [
                (i, m)
                for i, m in enumerate(self.messages)
                if m.seq > last_user and m.role is Role.ASSISTANT and m.content
            ]
            if not replies:
                if spoken:
                    await self._main.commit(
                        Message(role=Role.ASSISTANT, content=spoken, agent=self._active)
                    )
                return
            heard = spoken.strip()
            for index, message in replies:
                if heard.startswith(message.content):
                    heard = heard[len(message.content) :].strip()
                    continue
                self.messages.revise(index, heard)
                await self._persist(
                    self._engine.store.revise_message, self.client_id, message.seq, heard
                )
                log.info(
                    "reply_revised client_id=%s seq=%d chars=%d",
                    self.client_id,
                    message.seq,
                    len(heard),
                )
                heard = ""

    # --- commits ---------------------------------------------------------------------------

    async def _commit(self, message: Message, agent_name: str | None) -> None:
        if self._stale(agent_name):
            return
        runner = _current_runner.get()
        if runner is not None and runner.session is self:
            await runner.conversation.commit(message)
            return
        await self._ensure_open()
        async with self._lock:
            await self._main.commit(message)

    async def commit_user_message(self, content: str, *, agent_name: str | None = None) -> None:
        """Record what the caller said without answering (bursts, operator notes)."""
        await self._commit(Message(role=Role.USER, content=content, agent=self._active), agent_name)

    async def commit_system_message(self, content: str, *, agent_name: str | None = None) -> None:
        await self._commit(
            Message(role=Role.SYSTEM, content=content, agent=self._active), agent_name
        )

    async def commit_tool_output(
        self, tool_id: str, content: str, *, agent_name: str | None = None
    ) -> None:
        call = next(
            (c for m in reversed(self.messages) for c in m.tool_calls if c.id == tool_id), None
        )
        message = Message(
            role=Role.TOOL,
            content=content,
            agent=agent_name or self._active,
            tool_call_id=tool_id,
            tool_name=call.name if call else None,
        )
        await self._commit(message, agent_name)

    async def commit_flush(self, *, agent_name: str | None = None) -> None:
        """Hide everything before now from the active agent."""
        await self._commit(Message(role=Role.FLUSH, content="", agent=self._active), agent_name)

    def _running_turn(self) -> Turn | None:
        runner = _current_runner.get()
        return runner.turn if runner is not None and runner.session is self else None

    async def commit_stop_tools(self, *, agent_name: str | None = None) -> None:
        turn = self._running_turn()
        if turn is not None and not self._stale(agent_name):
            turn.stop_tools = True

    async def cancel_output(self, *, agent_name: str | None = None) -> None:
        """End the running turn early; its `complete` returns an empty string."""
        turn = self._running_turn()
        if turn is not None and not self._stale(agent_name):
            turn.cancelled = True

    # --- navigation ------------------------------------------------------------------------

    async def change_to_agent(self, name: str) -> None:
        await self._navigate(name, [*self._stack, self._active])

    async def change_to_prev_agent(self) -> None:
        target = self._stack[-1] if self._stack else self.swarm.default_agent
        await self._navigate(target, self._stack[:-1])

    async def change_to_default_agent(self) -> None:
        await self._navigate(self.swarm.default_agent, [])

    async def _navigate(self, target: str, stack: list[str]) -> None:
        if target not in self.swarm.agents:
            raise NavigationError(f"there is no agent called {target!r}")
        runner = _current_runner.get()
        if runner is not None and runner.session is self:
            if runner.conversation.in_thread:
                raise NavigationError("agents cannot be changed from inside a thread")
            if target == self._active:
                return
            if target in runner.turn.entered:
                raise NavigationError(
                    f"{target} already spoke in this turn; answer the caller instead of transferring"
                )
            runner.turn.entered.add(target)
            await self._switch(target, stack)
            return
        await self._ensure_open()
        async with self._lock:
            if target != self._active:
                await self._switch(target, stack)

    async def _switch(self, target: str, stack: list[str]) -> None:
        previous, self._active, self._stack = self._active, target, stack
        await self._save_state()
        self.publish(AgentChanged, agent=target, previous=previous, current=target)
        log.info("agent_changed client_id=%s from=%s to=%s", self.client_id, previous, target)

    # --- reads -----------------------------------------------------------------------------

    async def get_agent_name(self) -> str:
        await self._ensure_open()
        return self._active

    async def get_navigation_stack(self) -> tuple[str, ...]:
        await self._ensure_open()
        return tuple(self._stack)

    async def get_raw_history(self) -> list[Message]:
        await self._ensure_open()
        return list(self.messages)

    async def get_agent_history(self, agent_name: str | None = None) -> list[Message]:
        await self._ensure_open()
        spec = self.agent_spec(agent_name)
        return history.agent_view(self.messages, spec.name, spec.keep_messages)

    async def get_user_history(self) -> list[Message]:
        return history.user_messages(await self.get_raw_history())

    async def get_assistant_history(self) -> list[Message]:
        return history.assistant_messages(await self.get_raw_history())

    async def get_last_user_message(self) -> str | None:
        return history.last_content(await self.get_user_history())

    async def get_last_assistant_message(self) -> str | None:
        return history.last_content(await self.get_assistant_history())

    async def get_last_system_message(self) -> str | None:
        log_ = await self.get_raw_history()
        return history.last_content([m for m in log_ if m.role is Role.SYSTEM])

    async def threads(self) -> list[ThreadView]:
        """Every thread of this session, the caller's own (user → agents) first."""
        await self._ensure_open()
        spoken = [
            m
            for m in self.messages
            if m.role in (Role.USER, Role.ASSISTANT) and m.content and m.mode is Mode.USER
        ]
        user = ThreadView(
            id=f"{self.client_id}/user",
            sender="user",
            recipient=self._active,
            messages=tuple(spoken),
        )
        return [user] + [t.view() for t in self._threads.values()]

    async def talk(self, sender: str, recipient: str, text: str) -> str:
        """Send `text` over the sender → recipient thread and return the recipient's reply."""
        runner = _current_runner.get()
        if runner is None or runner.session is not self:
            return await self._in_turn_result(lambda r: talk(self, r.turn, sender, recipient, text))
        return await talk(self, runner.turn, sender, recipient, text)

    async def _in_turn_result(self, body: Callable[[Runner], Awaitable[str]]) -> str:
        result: list[str] = []

        async def run(runner: Runner) -> None:
            result.append(await body(runner))

        await self._in_turn(run)
        return result[0] if result else ""

    # --- writes, events, counters ----------------------------------------------------------

    def _stale(self, agent_name: str | None) -> bool:
        """Verbs naming an agent that is no longer active are ignored, as in agent-swarm-kit."""
        if agent_name is None or agent_name == self._active:
            return False
        runner = _current_runner.get()
        if runner is not None and runner.session is self and runner.conversation.in_thread:
            return False
        log.info(
            "verb_ignored client_id=%s agent=%s active=%s", self.client_id, agent_name, self._active
        )
        return True

    def _main_log(self, messages: Iterable[Message]) -> ConversationLog:
        store = self._engine.store
        return caller_log(
            messages,
            persist=lambda m: self._persist(store.append_message, self.client_id, m),
            publish=self.publish,
        )

    def _thread(self, info: ThreadInfo, messages: Iterable[Message]) -> ThreadState:
        store = self._engine.store
        return ThreadState.of(
            info,
            messages,
            persist=lambda m: self._persist(
                store.append_thread_message, self.client_id, info.id, m
            ),
            publish=self.publish,
        )

    async def open_thread(self, sender: str, recipient: str) -> ThreadState:
        """The sender → recipient thread, made (and stored) on first use. For the
        engine's agency module; code outside the engine calls `talk`."""
        thread_id = f"{self.client_id}/{sender}->{recipient}"
        thread = self._threads.get(thread_id)
        if thread is None:
            thread = self._threads[thread_id] = self._thread(
                ThreadInfo(thread_id, sender, recipient), ()
            )
            await self._persist(self._engine.store.save_thread, self.client_id, thread.info)
        return thread

    async def _save_state(self) -> None:
        await self._persist(
            self._engine.store.save_state,
            self.client_id,
            swarm=self.swarm.name,
            active_agent=self._active,
            nav_stack=tuple(self._stack),
        )

    async def _persist(self, op: Callable[..., Awaitable[None]], *args: Any, **kwargs: Any) -> None:
        await self._writer.write(op, *args, **kwargs)

    @property
    def unsaved_writes(self) -> int:
        return self._writer.pending

    def publish(self, kind: type[SwarmEvent], *, agent: str | None = None, **fields: Any) -> None:
        """For the engine's modules (runner, tools, agency): one event of this session."""
        self._event_seq += 1
        event = kind(
            session_id=self.client_id,
            agent=agent or self._active,
            seq=self._event_seq,
            time=time.time(),
            **fields,
        )
        self._engine.bus.publish(event)

    def count_rescue(self, agent: str, reason: str, strategy: str, detail: str) -> None:
        """For the engine's runner: a rescued model output, counted and told."""
        self.rescue_count += 1
        self._engine.rescue_counts[reason] += 1
        self.publish(Rescued, agent=agent, reason=reason, strategy=strategy, detail=detail)
        log.warning(
            "rescue client_id=%s agent=%s reason=%s strategy=%s",
            self.client_id,
            agent,
            reason,
            strategy,
        )
