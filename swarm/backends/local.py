"""In-process completions with llama.cpp (llama-cpp-python): offline, no key.

Prompt reuse: llama.cpp only reuses the KV cache for the prefix shared with the
previous call on the same instance. Agents have different system prompts, so
one instance serving triage and sales would re-read its whole prompt at every
hand-off (3–10 s measured here). Each agent gets its own instance instead: the
weights are memory-mapped and shared, only the KV cache is per agent, so each
agent's prompt prefix stays warm whichever caller it serves.

Two cores cannot run two inferences faster than one, so one lock serialises
all of them; each runs in a worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarm._completion import CompletionArgs, CompletionChunk, TextDelta
from swarm._messages import AssistantMessage
from swarm.backends.llama_sampling import check_grammar_second
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


def _shown_tools(args: CompletionArgs) -> list[dict[str, Any]] | None:
    return list(args.prompt_tools or args.tools) or None


class LlamaCppBackend:
    def __init__(self, model_path: Path, options: LocalModelOptions | None = None) -> None:
        self.model_path = Path(model_path)
        self.options = options or LocalModelOptions()
        self._instances: dict[str, Any] = {}
        self._grammars: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.stats: dict[str, list[float]] = {}

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
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise CompletionError(
                "llama-cpp-python is not installed; install callswarm with its `local` extra",
                completion="local",
            ) from exc
        started = time.perf_counter()
        try:
            llama = Llama(
                model_path=str(self.model_path),
                n_ctx=self.options.n_ctx,
                # llama-cpp-python's default is half the cores: one thread on a 2-core box.
                n_threads=self.options.n_threads or os.cpu_count(),
                n_batch=self.options.n_batch,
                seed=self.options.seed,
                chat_format=self.options.chat_format,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise CompletionError(
                f"llama.cpp could not load {self.model_path}: {exc}", completion="local"
            ) from exc
        log.info(
            "local_model_loaded agent=%s path=%s ms=%.0f",
            agent,
            self.model_path.name,
            (time.perf_counter() - started) * 1000,
        )
        check_grammar_second(llama)
        self._instances[agent] = llama
        return llama

    async def warm_up(self, prefixes: Sequence[CompletionArgs]) -> None:
        """Load each agent's instance and read its prompt prefix once, before the first caller."""

        def work() -> None:
            for args in prefixes:
                with self._lock:
                    started = time.perf_counter()
                    self._instance(args.agent_name).create_chat_completion(
                        messages=list(args.messages), tools=_shown_tools(args), max_tokens=1
                    )
                    log.info(
                        "local_warmed agent=%s ms=%.0f",
                        args.agent_name,
                        (time.perf_counter() - started) * 1000,
                    )

        await asyncio.to_thread(work)

    def _grammar(self, tools: Sequence[Mapping[str, Any]]) -> Any:
        if not self.options.constrain:
            return None
        key = json.dumps(tools, sort_keys=True)
        grammar = self._grammars.get(key)
        if grammar is None:
            from llama_cpp import LlamaGrammar

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
            await asyncio.shield(worker)

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
