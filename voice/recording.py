"""A call's recording: the caller's and the assistant's audio as two time-aligned tracks.

Both tracks run on the wall clock of the call. Audio that arrives about when the
track expects it is appended, so jitter never opens gaps; audio after a silence
(push-to-talk released, a phone suppressing silence, the assistant waiting for the
model) is placed where it happened. The result is one stereo WAV: caller left,
assistant right, which any browser plays and any editor splits.
"""

from __future__ import annotations

import time
import wave
from collections.abc import Callable
from pathlib import Path

import numpy as np

from voice.frames import AudioFrame
from voice.resample import StreamResampler

RATE = 16000  # the voice loop's own rate (its VAD's): caller audio arrives at it
# Further behind the clock than this, a track jumps forward instead of appending.
_SLACK_S = 0.25


class _Track:
    def __init__(self, max_samples: int) -> None:
        self.pcm = bytearray()
        self.max_bytes = max_samples * 2
        self._resamplers: dict[int, StreamResampler] = {}

    @property
    def cursor(self) -> float:
        return len(self.pcm) / 2 / RATE

    def add(self, frame: AudioFrame, at: float) -> None:
        resampler = self._resamplers.setdefault(
            frame.sample_rate, StreamResampler(frame.sample_rate, RATE)
        )
        pcm = resampler.process(frame.pcm)
        start = at - frame.duration
        if start - self.cursor > _SLACK_S:
            self.pcm += bytes(int((start - self.cursor) * RATE) * 2)
        self._append(pcm)

    def finish(self) -> None:
        """Take what the resamplers still hold (their filter delay, tens of ms)."""
        for resampler in self._resamplers.values():
            self._append(resampler.process(b"", last=True))
        self._resamplers.clear()

    def _append(self, pcm: bytes) -> None:
        room = self.max_bytes - len(self.pcm)
        if room > 0:
            self.pcm += pcm[:room]

    def cut(self, at: float) -> None:
        """Drop what was queued but never heard (a barge-in)."""
        keep = int(at * RATE) * 2
        if keep < len(self.pcm):
            del self.pcm[keep:]


class Recording:
    def __init__(self, *, max_s: float = 3600, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._start = clock()
        self.caller = _Track(int(max_s * RATE))
        self.assistant = _Track(int(max_s * RATE))

    def _now(self) -> float:
        return self._clock() - self._start

    def heard(self, frame: AudioFrame) -> None:
        self.caller.add(frame, self._now())

    def said(self, frame: AudioFrame) -> None:
        self.assistant.add(frame, self._now())

    def interrupted(self) -> None:
        self.assistant.cut(self._now())

    @property
    def duration(self) -> float:
        return max(self.caller.cursor, self.assistant.cursor)

    def stereo(self) -> bytes:
        """Both tracks, interleaved; the call is over (resamplers are flushed)."""
        self.caller.finish()
        self.assistant.finish()
        length = max(len(self.caller.pcm), len(self.assistant.pcm)) // 2
        both = np.zeros((length, 2), dtype="<i2")
        for channel, track in enumerate((self.caller, self.assistant)):
            samples = np.frombuffer(bytes(track.pcm), dtype="<i2")
            both[: len(samples), channel] = samples
        return both.tobytes()

    def save(self, path: Path) -> None:
        """Write the stereo WAV (blocking: call it off the event loop)."""
        tmp = path.with_suffix(".part")
        with wave.open(str(tmp), "wb") as w:
            w.setnchannels(2)
            w.setsampwidth(2)
            w.setframerate(RATE)
            w.writeframes(self.stereo())
        tmp.replace(path)
