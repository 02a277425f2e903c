"""Streaming resampling with soxr: no clicks at chunk boundaries, because the filter state carries over."""

from __future__ import annotations

import numpy as np
import soxr


class StreamResampler:
    def __init__(self, in_rate: int, out_rate: int) -> None:
        self.in_rate, self.out_rate = in_rate, out_rate
        self._stream = (
            None
            if in_rate == out_rate
            else soxr.ResampleStream(in_rate, out_rate, 1, dtype="int16")
        )

    def process(self, pcm: bytes, *, last: bool = False) -> bytes:
        if self._stream is None:
            return pcm
        samples = np.frombuffer(pcm, dtype="<i2")
        out: np.ndarray = self._stream.resample_chunk(samples, last=last)
        return out.astype("<i2").tobytes()


def resample(pcm: bytes, in_rate: int, out_rate: int) -> bytes:
    """Resample a whole buffer at once."""
    return StreamResampler(in_rate, out_rate).process(pcm, last=True)
