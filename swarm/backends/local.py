"""In-process completions with llama.cpp (llama-cpp-python): offline, no key.

Prompt reuse: llama.cpp only reuses the KV cache for the prefix shared with the
previous call on the same instance. Agents have different system prompts, so
one instance serving triage and sales would re-read its whole prompt at every
hand-off (3–10 s measured here). Each agent gets its own instance instead: the
weights are memory-mapped and shared, only the KV cache is per agent, so each
agent's prompt prefix stays warm whichever caller it serves.

Two cores cannot run two inferences faster than one, so one lock serialises
all of them; each runs in a worker thread, never on the event loop.

Warming: a gateway serves before its agents' prompts are read. `begin_warm_up`
reads them in the background (or loads them from `llama_state`, seconds faster),
and `ready(agent)` lets a caller's turn wait for its agent rather than for the
whole set. Between two agents the warm-up lets waiting callers go first.

Over ~400 lines on purpose: loading, warming, saved states, sampling and the one lock
are one lifecycle around llama.cpp instances that share their weights.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import logging
import os
import re
import threading
import time
import weakref
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarm._completion import CompletionArgs, CompletionChunk, TextDelta
from swarm._messages import AssistantMessage
from swarm.backends.llama_sampling import check_grammar_second
from swarm.backends.llama_state import StateCache, file_sha256
from swarm.errors import CompletionError

log = logging.getLogger("swarm.local")


@dataclass(frozen=True, slots=True)
class LocalModelOptions:
    n_ctx: int = 4096
    n_threads: int | None = None
    n_batch: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 200
    seed: int = 0
    chat_format: str | None = None
    # Constrain decoding to plain speech or exactly one valid tool call (GBNF).
    constrain: bool = True


# Speech may not start or contain anything that opens JSON, markup, code or an identifier.
_SPEECH_RULE = "speech ::= [A-Za-z0-9] [^{}<>\\[\\]`_|\\\\]*"


def output_grammar(tools: Sequence[Mapping[str, Any]]) -> str:
    """GBNF: either plain speech, or one call to one of `tools` with schema-valid arguments."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    if not tools:
        return "root ::= speech\n" + _SPEECH_RULE + "\n"
    alternatives = [
        {
            "type": "object",
            "properties": {
                "name": {"const": tool["function"]["name"]},
                "arguments": tool["function"].get("parameters") or {"type": "object"},
            },
            "required": ["name", "arguments"],
        }
        for tool in tools
    ]
    calls = json_schema_to_gbnf(json.dumps({"anyOf": alternatives}), ["name", "arguments"])
    calls = re.sub(r"^root ::=", "call ::=", calls, flags=re.M)
    return "root ::= call | speech\n" + calls + "\n" + _SPEECH_RULE + "\n"


class _KeepStreams:
    """Stands in for llama-cpp-python's `suppress_stdout_stderr`, which silences a model's
    load by pointing file descriptors 1 and 2 at /dev/null for the whole process. In a
    gateway that serves while it loads, that swallowed other threads' log lines and
    `callswarm chat`'s replies. llama.cpp's own messages already pass through
    llama-cpp-python's log callback, which drops all but errors when `verbose=False`."""

    def __init__(self, disable: bool = True) -> None:
        pass

    def __enter__(self) -> _KeepStreams:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


_GGML_LOG_ERROR = 3
_llama_log: Any = None  # the ctypes callback, kept alive for as long as llama.cpp may call it
_llama_log_lock = threading.Lock()


def route_llama_logs() -> None:
    """No fd swapping, and llama.cpp's messages through our log: its errors at INFO (a
    failed load raises as well; what it calls errors at a good load are model quirks, such
    as Qwen's `</s>` token), the rest (the load report) dropped."""
    global _llama_log
    with _llama_log_lock:  # the chat model and the safety probe's load on two threads
        if _llama_log is None:
            _llama_log = _route_llama_logs()


def _route_llama_logs() -> Any:
    import ctypes

    import llama_cpp
    import llama_cpp._internals
    import llama_cpp.llama

    llama_cpp._internals.suppress_stdout_stderr = _KeepStreams  # type: ignore[assignment,attr-defined]
    llama_cpp.llama.suppress_stdout_stderr = _KeepStreams  # type: ignore[assignment,attr-defined]

    @llama_cpp.llama_log_callback
    def forward(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        if level == _GGML_LOG_ERROR:
            log.info("llama_cpp_error message=%r", text.decode("utf-8", "replace").strip())

    llama_cpp.llama_log_set(forward, ctypes.c_void_p(0))
    return forward


def open_llama(path: Path, completion: str, **options: Any) -> Any:
    """A llama.cpp model, its messages through our log; a missing library or a file it
    cannot load is a CompletionError naming `completion`."""
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise CompletionError(
            "llama-cpp-python is not installed; install callswarm with its `local` extra",
            completion=completion,
        ) from exc
    route_llama_logs()
    try:
        llama = Llama(model_path=str(path), verbose=False, **options)
    except (ValueError, RuntimeError) as exc:
        raise CompletionError(
            f"llama.cpp could not load {path}: {exc}", completion=completion
        ) from exc
    _opened.add(llama)
    return llama


# Every model still open when the interpreter exits is closed while its modules are
# there: a model kept for the process (the embedder's) was otherwise freed by
# llama-cpp's own __del__ during shutdown, after llama_cpp's globals were cleared, which
# printed a TypeError at the end of most test runs. atexit runs after every non-daemon
# thread is joined (the executors' workers among them), and no daemon thread here calls
# llama.cpp, so no call is under way. The sampler a completion leaves on the model is
# not freed by its close(), and would fail the same way.
_opened: weakref.WeakSet[Any] = weakref.WeakSet()


@atexit.register
def _close_opened() -> None:
    for llama in list(_opened):
        with contextlib.suppress(Exception):
            sampler = getattr(llama, "_sampler", None)
            if sampler is not None:
                sampler.close()
            llama.close()


def _set_from_thread(loop: asyncio.AbstractEventLoop, event: asyncio.Event) -> None:
    with contextlib.suppress(RuntimeError):  # the loop is gone: the process is stopping
        loop.call_soon_threadsafe(event.set)


def _shown_tools(args: CompletionArgs) -> list[dict[str, Any]] | None:
    return list(args.prompt_tools or args.tools) or None


class LlamaCppBackend:
    def __init__(
        self,
        model_path: Path | Callable[[], Path],
        options: LocalModelOptions | None = None,
        *,
        state_dir: Path | None = None,
        model_sha256: str | None = None,
    ) -> None:
        """`model_path` may be a function, called once in the background: assembling the
        bundled model on a first start takes seconds the gateway need not wait for.
        `state_dir`: where warmed prompts are saved; None saves nothing."""
        self._model_path = model_path if callable(model_path) else Path(model_path)
        self.options = options or LocalModelOptions()
        self._state_dir, self._model_sha256 = state_dir, model_sha256
        self._states: StateCache | None = None
        self._instances: dict[str, Any] = {}
        self._grammars: dict[str, Any] = {}
        self._lock = threading.Lock()
        # Callers inside `_generate` (waiting for the lock or holding it): the warm-up
        # waits for none before its next agent.
        # Callers' completions under way, and turns waiting in `ready` per agent: while
        # any are, the warm-up (and the gateway's other loading) waits.
        self._demand = 0
        self._gated: Counter[str] = Counter()
        self._handed = 0  # let through by `ready`, not yet in `stream`
        self._quiet = threading.Condition()
        self._warming: dict[str, asyncio.Event] = {}
        self._warm_failed: set[str] = set()
        self._warmed: set[str] = set()  # warm-ups over, as the worker knows it first
        self._warm_tasks: list[asyncio.Task[None]] = []
        self._closing = threading.Event()
        self.stats: dict[str, list[float]] = {}

    @property
    def model_path(self) -> Path:
        if callable(self._model_path):
            self._model_path = Path(self._model_path())
        return self._model_path

    # --- loading ------------------------------------------------------------------------------

    def _instance(self, agent: str) -> Any:
        llama = self._instances.get(agent)
        if llama is not None:
            return llama
        if not self.model_path.is_file():
            raise CompletionError(
                f"model file {self.model_path} is missing; run `callswarm model install`",
                completion="local",
            )
        started = time.perf_counter()
        llama = open_llama(
            self.model_path,
            "local",
            n_ctx=self.options.n_ctx,
            # llama-cpp-python's default is half the cores: one thread on a 2-core box.
            n_threads=self.options.n_threads or os.cpu_count(),
            n_batch=self.options.n_batch,
            seed=self.options.seed,
            chat_format=self.options.chat_format,
        )
        log.info(
            "local_model_loaded agent=%s path=%s ms=%.0f",
            agent,
            self.model_path.name,
            (time.perf_counter() - started) * 1000,
        )
        check_grammar_second(llama)
        self._instances[agent] = llama
        return llama

    def begin_warm_up(
        self,
        prefixes: Sequence[CompletionArgs],
        before: Callable[[str], None] | None = None,
    ) -> asyncio.Task[None]:
        """Read (or load) each agent's prompt prefix in the background, in the order given;
        until an agent's is done, `ready(agent)` waits. `before(agent)` is called in the
        worker first, and may block: the caller's way to put other loading in between."""
        for args in prefixes:
            self._warming.setdefault(args.agent_name, asyncio.Event())
        task = asyncio.get_running_loop().create_task(self.warm_up(prefixes, before))
        self._warm_tasks.append(task)
        return task

    async def aclose(self) -> None:
        """Stop warming after the agent in hand (a prompt being read cannot be cut)."""
        self._closing.set()
        with self._quiet:
            self._quiet.notify_all()
        await asyncio.gather(*self._warm_tasks, return_exceptions=True)

    async def ready(self, agent: str) -> bool:
        """Return once `agent`'s prompt is warm, or its warm-up failed (then False)."""
        event = self._warming.get(agent)
        if event is not None and not event.is_set():
            with self._quiet:
                self._gated[agent] += 1
            try:
                await event.wait()
            except BaseException:  # the turn was cancelled (a hang-up): no stream follows
                with self._quiet:
                    self._gated[agent] -= 1
                    self._quiet.notify_all()
                raise
            with self._quiet:
                # Handed over to `stream` in the same step: a loading thread never sees
                # the gap between this caller's wait and its completion.
                self._gated[agent] -= 1
                self._handed += 1
                self._quiet.notify_all()
        return agent not in self._warm_failed

    async def warmed(self, agent: str) -> bool:
        """`ready` for an observer, not a caller: counts as nobody waiting."""
        event = self._warming.get(agent)
        if event is not None:
            await event.wait()
        return agent not in self._warm_failed

    def wait_idle(self, timeout: float) -> None:
        """Block (a loading thread) while callers are being answered, or about to be: two
        cores shared with a load made a 0.8 s answer take 2.4 s. Bounded, so a busy line
        cannot hold the loading off for good."""
        with self._quiet:
            self._quiet.wait_for(self._idle, timeout)

    def _idle(self) -> bool:
        released = sum(n for agent, n in self._gated.items() if agent in self._warmed)
        busy = self._demand or released or self._handed
        return not busy or self._closing.is_set()

    async def warm_up(
        self,
        prefixes: Sequence[CompletionArgs],
        before: Callable[[str], None] | None = None,
    ) -> None:
        """Load each agent's instance and read its prompt prefix once, before its first caller."""
        loop = asyncio.get_running_loop()
        events = [self._warming.setdefault(a.agent_name, asyncio.Event()) for a in prefixes]

        def work() -> None:
            for args, event in zip(prefixes, events, strict=True):
                if self._closing.is_set():
                    _set_from_thread(loop, event)
                    continue
                try:
                    if before is not None:
                        before(args.agent_name)
                    with self._lock:
                        self._warm_one(args)
                except Exception as exc:  # the agent's first turn meets it again, and rescues
                    self._warm_failed.add(args.agent_name)
                    log.warning("local_warm_failed agent=%s error=%r", args.agent_name, exc)
                finally:
                    with self._quiet:
                        self._warmed.add(args.agent_name)
                    _set_from_thread(loop, event)
                # The callers this agent released go first, and any others under way.
                if args is not prefixes[-1]:
                    self.wait_idle(timeout=30)

        await asyncio.to_thread(work)

    def _warm_one(self, args: CompletionArgs) -> None:
        started = time.perf_counter()
        llama = self._instance(args.agent_name)
        tools = _shown_tools(args)
        states, path = self._state_cache(), self._state_path(args)
        if states is not None and path is not None:
            tokens = states.load(llama, path)
            if tokens is not None:
                log.info(
                    "local_state_loaded agent=%s tokens=%d ms=%.0f",
                    args.agent_name,
                    tokens,
                    (time.perf_counter() - started) * 1000,
                )
                return
        llama.create_chat_completion(messages=list(args.messages), tools=tools, max_tokens=1)
        log.info(
            "local_warmed agent=%s tokens=%d ms=%.0f",
            args.agent_name,
            llama.n_tokens,
            (time.perf_counter() - started) * 1000,
        )
        if states is not None and path is not None:
            try:
                size = states.save(llama, path)
            except OSError as exc:  # a full or read-only disk: warm, just not saved
                log.warning("local_state_not_saved agent=%s error=%s", args.agent_name, exc)
            else:
                log.info("local_state_saved agent=%s bytes=%d", args.agent_name, size)

    def has_saved_state(self, args: CompletionArgs) -> bool:
        """Whether warming `args.agent_name` would load a saved state (well under a second)
        rather than read its prompt (seconds); from a worker thread (may hash the model)."""
        path = self._state_path(args)
        return path is not None and path.is_file()

    def _state_path(self, args: CompletionArgs) -> Path | None:
        states = self._state_cache()
        if states is None:
            return None
        settings = {
            "n_ctx": self.options.n_ctx,
            "n_batch": self.options.n_batch,
            "chat_format": self.options.chat_format,
        }
        return states.path(args.agent_name, states.key(args.messages, _shown_tools(args), settings))

    def _state_cache(self) -> StateCache | None:
        if self._state_dir is None:
            return None
        if self._states is None:
            sha = self._model_sha256 or file_sha256(self.model_path, memo_dir=self._state_dir)
            self._states = StateCache(self._state_dir, sha)
        return self._states

    def _grammar(self, tools: Sequence[Mapping[str, Any]]) -> Any:
        if not self.options.constrain:
            return None
        key = json.dumps(tools, sort_keys=True)
        grammar = self._grammars.get(key)
        if grammar is None:
            from llama_cpp.llama_grammar import LlamaGrammar

            grammar = LlamaGrammar.from_string(output_grammar(tools), verbose=False)
            self._grammars[key] = grammar
        return grammar

    # --- completion ---------------------------------------------------------------------------

    async def stream(self, args: CompletionArgs) -> AsyncIterator[CompletionChunk]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[CompletionChunk | BaseException | None] = asyncio.Queue()
        cancelled = threading.Event()

        def put(item: CompletionChunk | BaseException | None) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, item)

        def work() -> None:
            try:
                put(self._generate(args, cancelled, put))
            except BaseException as exc:  # handed to the event loop, re-raised there
                put(exc)
            finally:
                put(None)

        # Counted here, on the loop and with no await since `ready`: a loading thread
        # never sees a released caller as gone before it has started.
        with self._quiet:
            self._demand += 1
            self._handed = max(0, self._handed - 1)
        worker = asyncio.ensure_future(asyncio.to_thread(work))
        try:
            while (item := await queue.get()) is not None:
                if isinstance(item, BaseException):
                    if isinstance(item, CompletionError):
                        raise item
                    raise CompletionError(
                        f"llama.cpp failed: {item!r}", completion="local"
                    ) from item
                yield item
        finally:
            # A barge-in or timeout stops generation at the next token, not at the end.
            cancelled.set()
            try:
                await asyncio.shield(worker)
            finally:
                with self._quiet:
                    self._demand -= 1
                    self._quiet.notify_all()

    def _generate(
        self, args: CompletionArgs, cancelled: threading.Event, put: Any
    ) -> AssistantMessage:
        with self._lock:
            llama = self._instance(args.agent_name)
            started = time.perf_counter()
            first_token: float | None = None
            text: list[str] = []
            generated = 0
            chunks = llama.create_chat_completion(
                messages=list(args.messages),
                # The prompt shows the agent's whole, stable tool list so llama.cpp can
                # reuse its cached prefix; the grammar allows only the available ones.
                tools=_shown_tools(args),
                temperature=self.options.temperature,
                top_p=self.options.top_p,
                max_tokens=self.options.max_tokens,
                seed=self.options.seed,
                grammar=self._grammar(args.tools),
                stream=True,
            )
            for chunk in chunks:
                if cancelled.is_set():
                    break
                generated += 1
                delta = chunk["choices"][0].get("delta") or {}
                piece = delta.get("content") or ""
                if piece:
                    if first_token is None:
                        first_token = time.perf_counter()
                    text.append(piece)
                    put(TextDelta(piece))
            elapsed = time.perf_counter() - started
            self.stats.setdefault(args.agent_name, []).append(elapsed)
            log.info(
                "local_completion client_id=%s agent=%s ms=%.0f first_token_ms=%.0f chars=%d",
                args.client_id,
                args.agent_name,
                elapsed * 1000,
                ((first_token or time.perf_counter()) - started) * 1000,
                len("".join(text)),
            )
            # llama-cpp-python leaves tool calls as JSON in the text; the session parses them.
            return AssistantMessage(
                content="".join(text),
                prompt_tokens=max(0, llama.n_tokens - generated),
                completion_tokens=generated,
            )
