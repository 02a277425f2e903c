"""A call's recording: the caller's and the assistant's audio as two time-aligned tracks.

Both tracks run on the wall clock of the call. Audio that arrives about when the
track expects it is appended, so jitter never opens gaps; audio after a silence
(push-to-talk released, a phone suppressing silence, the assistant waiting for the
model) is placed where it happened. The result is one stereo WAV: caller left,
assistant right, which any browser plays and any editor splits.
"""

from __future__ import annotations

import tempfile
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
    """One side of the call, kept in an anonymous temporary file: an hour-long call
    must not hold its audio in memory, and a crash leaves nothing behind."""

    def __init__(self, max_samples: int, folder: Path | None) -> None:
        self._file = tempfile.TemporaryFile(dir=folder)
        self.length = 0  # bytes
        # The disk filled (or failed) under the track: the call goes on, unrecorded.
        self.failed: OSError | None = None
        self.max_bytes = max_samples * 2
        self._resamplers: dict[int, StreamResampler] = {}

    @property
    def cursor(self) -> float:
        return self.length / 2 / RATE

    def add(self, frame: AudioFrame, at: float) -> None:
        resampler = self._resamplers.setdefault(
            frame.sample_rate, StreamResampler(frame.sample_rate, RATE)
        )
        pcm = resampler.process(frame.pcm)
        start = at - frame.duration
        if start - self.cursor > _SLACK_S:
            self._append(bytes(int((start - self.cursor) * RATE) * 2))
        self._append(pcm)

    def finish(self) -> None:
        """Take what the resamplers still hold (their filter delay, tens of ms)."""
        for resampler in self._resamplers.values():
            self._append(resampler.process(b"", last=True))
        self._resamplers.clear()

    def _append(self, pcm: bytes) -> None:
        room = self.max_bytes - self.length
        if room > 0 and self.failed is None:
            try:
                self._file.write(pcm[:room])
            except OSError as exc:
                # Called from the voice loop: a full disk must cost the recording only.
                self.failed = exc
                return
            self.length += min(room, len(pcm))

    def cut(self, at: float) -> None:
        """Drop what was queued but never heard (a barge-in)."""
        keep = int(at * RATE) * 2
        if keep < self.length and self.failed is None:
            try:
                self._file.truncate(keep)
                self._file.seek(keep)
            except OSError as exc:
                self.failed = exc
                return
            self.length = keep

    def read(self, offset: int, size: int) -> bytes:
        self._file.flush()
        self._file.seek(offset)
        data = self._file.read(size)
        self._file.seek(self.length)
        return data

    def close(self) -> None:
        try:
            self._file.close()
        except OSError:  # its buffer could not be flushed: the disk is full, it is lost
            pass


class Recording:
    def __init__(
        self,
        *,
        max_s: float = 3600,
        folder: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self._start = clock()
        self.caller = _Track(int(max_s * RATE), folder)
        self.assistant = _Track(int(max_s * RATE), folder)

    def _now(self) -> float:
        return self._clock() - self._start

    def heard(self, frame: AudioFrame) -> None:
        self.caller.add(frame, self._now())

    def said(self, frame: AudioFrame) -> None:
        self.assistant.add(frame, self._now())

    def interrupted(self) -> None:
        self.assistant.cut(self._now())

    @property
    def failed(self) -> OSError | None:
        """Why the recording could not be kept (a track's disk filled), or None."""
        return self.caller.failed or self.assistant.failed

    @property
    def duration(self) -> float:
        return max(self.caller.cursor, self.assistant.cursor)

    def save(self, path: Path) -> None:
        """Write the stereo WAV, a second at a time (blocking: call it off the event loop,
        once the call is over)."""
        tracks = (self.caller, self.assistant)
        for track in tracks:
            track.finish()
        length = max(track.length for track in tracks) // 2
        tmp = path.with_suffix(".part")
        with wave.open(str(tmp), "wb") as w:
            w.setnchannels(2)
            w.setsampwidth(2)
            w.setframerate(RATE)
            for start in range(0, length, RATE):
                both = np.zeros((min(RATE, length - start), 2), dtype="<i2")
                for channel, track in enumerate(tracks):
                    samples = np.frombuffer(track.read(start * 2, len(both) * 2), dtype="<i2")
                    both[: len(samples), channel] = samples
                w.writeframes(both.tobytes())
        tmp.replace(path)

    def close(self) -> None:
        self.caller.close()
        self.assistant.close()

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
