"""Sentence vectors from a local llama.cpp model: the mean of its last hidden states.

An agency's classifiers read these, not a model's words. Asked "is this an
emergency?", the bundled 0.5B flags nearly every line; a linear probe trained on its
hidden states separates phrasings it never saw (the pharmacy's safety probe,
docs/agents.md). The port is `Embedder`; `HashingEmbedder` is the fake beside it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from swarm.backends.local import open_llama
from swarm.errors import CompletionError

log = logging.getLogger("swarm.embed")


class Embedder(Protocol):
    # Which weights made the vectors: a probe trained on other weights must be refused.
    @property
    def model_id(self) -> str: ...

    async def embed(self, text: str) -> Sequence[float]: ...


class _Loaded:
    """One model in embedding mode, and the lock its context needs."""

    def __init__(self, llama: Any) -> None:
        self.llama = llama
        self.lock = threading.Lock()

    def embed(self, text: str) -> list[float]:
        with self.lock:
            # A ramble longer than the context is cut to its start; a lone surrogate,
            # which UTF-8 cannot carry, is replaced rather than raised.
            text = text.encode("utf-8", "replace").decode("utf-8")
            return [float(x) for x in self.llama.embed(text, truncate=True)]


# One load per model a process: a gateway builds its services once, but the bench and
# the tests build many, and each load costs half a second.
_models: dict[tuple[str, int, int], _Loaded] = {}
_models_lock = threading.Lock()


def _load(path: Path, n_threads: int, n_ctx: int) -> _Loaded:
    key = (str(path), n_threads, n_ctx)
    with _models_lock:
        loaded = _models.get(key)
        if loaded is not None:
            return loaded
        started = time.perf_counter()
        llama = open_llama(
            path,
            "embed",
            embedding=True,
            pooling_type=1,  # LLAMA_POOLING_TYPE_MEAN, without importing llama_cpp first
            n_ctx=n_ctx,
            n_batch=n_ctx,
            n_threads=n_threads,
        )
        log.info(
            "embedder_loaded path=%s ms=%.0f", path.name, (time.perf_counter() - started) * 1000
        )
        loaded = _models[key] = _Loaded(llama)
        return loaded


class LlamaCppEmbedder:
    """Mean-pooled embeddings of one GGUF model, loaded once per process, used from
    worker threads. A second instance of a model the chat backend also runs costs
    little memory: the weights are memory-mapped and shared through the page cache."""

    def __init__(
        self,
        model_path: Path | Callable[[], Path],
        model_id: str,
        *,
        n_threads: int | None = None,
        n_ctx: int = 128,
    ) -> None:
        self._model_path = model_path
        self._model_id = model_id
        self._n_threads = n_threads or os.cpu_count() or 1
        self._n_ctx = n_ctx
        self._loaded: _Loaded | None = None
        self._failed: CompletionError | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._model_id

    def load(self) -> None:
        """Blocking: the gateway's warm-up calls it, so no caller's turn waits for it."""
        self._model()

    def _model(self) -> _Loaded:
        with self._lock:
            # A load that failed fails at once from then on: no caller's turn copies or
            # reloads half a gigabyte again.
            if self._failed is not None:
                raise self._failed
            if self._loaded is None:
                path = self._model_path
                try:
                    self._loaded = _load(
                        Path(path()) if callable(path) else path, self._n_threads, self._n_ctx
                    )
                except Exception as exc:
                    self._failed = CompletionError(f"no embedding model: {exc}", completion="embed")
                    log.error("embedder_unavailable error=%r", exc)
                    raise self._failed from exc
            return self._loaded

    def embed_now(self, text: str) -> list[float]:
        """Blocking; for scripts that embed a corpus."""
        return self._model().embed(text)

    async def embed(self, text: str) -> list[float]:
        # Its own thread: callers queued on the model must not hold the default pool's
        # threads, which the database work of every session shares.
        return await asyncio.get_running_loop().run_in_executor(_worker, self.embed_now, text)


# One model computes one line at a time anyway.
_worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")


_TOKEN = re.compile(r"[a-z0-9']+")


class HashingEmbedder:
    """The fake: each word hashed to one of `size` signed buckets, then normalised.
    Deterministic and instant, so a test can build a probe on it in microseconds."""

    def __init__(self, size: int = 256) -> None:
        self._size = size

    @property
    def model_id(self) -> str:
        return f"hashing-{self._size}"

    def embed_now(self, text: str) -> list[float]:
        vector = [0.0] * self._size
        for word in _TOKEN.findall(text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self._size
            vector[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        return [x / norm for x in vector]

    async def embed(self, text: str) -> list[float]:
        return self.embed_now(text)
