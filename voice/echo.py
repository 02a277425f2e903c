"""The reply's own echo, taken off the caller's line before the VAD hears it.

On a speakerphone the reply comes back into the caller's microphone, a few tens to a few
hundred milliseconds late and quieter. Browsers and phones cancel most of it; what gets
through used to reach the VAD as speech over the reply, hold it, and be read (`overlap.py`)
fragment by fragment: the reply stuttered, and a fragment heard as a word of its own
("Take." for "stock today") cut it.

An echo is the reply's samples again, so each 20 ms frame of the line is compared,
sample by sample, with the reply audio that went out in the last `max_delay_s`: a frame
whose last 80 ms match some stretch of it (normalised cross-correlation ≥ `threshold`)
is echo: the VAD takes it for silence (the audio itself is kept, for the transcript). The
caller's own voice matches the reply's by chance far below that, and a caller speaking
over the echo breaks the match, so they are still heard.
An echo that a loudspeaker or a codec has changed too much to match is left to
`overlap.py`'s checks, as before.
"""

from __future__ import annotations

from collections import deque

import numpy as np

# Measured on the reply against itself 40 to 600 ms late at 0.3 to 0.5 gain, wide and
# through the telephone band, and against 12 lines in 9 voices, alone and over that echo:
# at 0.8 over 80 ms, all 1,116 of the echo's loud frames are taken and 8 of 5,999 of the
# callers' own. Over 40 ms at 0.7, 192 of theirs (some callers speak in Piper's voice,
# the reply's own).
THRESHOLD = 0.8
WINDOW_S = 0.08
MAX_DELAY_S = 0.8
# Quieter than this, a frame is left alone. Not higher: webrtcvad hears speech at any
# level, and the soft end of a word's echo (an RMS of 1 to 5), left in, started turns.
QUIET_RMS = 0.5


def _band_taps(rate: int, low: float = 300.0, high: float = 3400.0, taps: int = 63) -> np.ndarray:
    """A windowed-sinc band-pass: the telephone's band."""
    t = np.arange(taps) - (taps - 1) / 2

    def lowpass(cut: float) -> np.ndarray:
        return np.asarray(2 * cut / rate * np.sinc(2 * cut / rate * t))

    return np.asarray((lowpass(high) - lowpass(low)) * np.hamming(taps))


class _Band:
    """16 kHz PCM in, the telephone band out, a frame at a time; the filter's state
    carries over, so both sides of the comparison are delayed alike."""

    def __init__(self, rate: int = 16000) -> None:
        self._taps = _band_taps(rate)
        self._tail = np.zeros(self._taps.size - 1)

    def process(self, pcm: bytes) -> np.ndarray:
        samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
        if not samples.size:
            return samples  # np.convolve would swap its arguments and return a stray sample
        joined = np.concatenate((self._tail, samples))
        self._tail = joined[-(self._taps.size - 1) :]
        return np.convolve(joined, self._taps, mode="valid")


def correlation(near: np.ndarray, far: np.ndarray) -> float:
    """The best normalised cross-correlation of `near` with any stretch of `far`."""
    if far.size < near.size or not near.size:
        return 0.0
    near, far = near - near.mean(), far - far.mean()
    n = far.size + near.size
    dots = np.fft.irfft(np.fft.rfft(far, n) * np.conj(np.fft.rfft(near, n)), n)
    dots = dots[: far.size - near.size + 1]
    squares = np.concatenate(([0.0], np.cumsum(far * far)))
    energy = squares[near.size :] - squares[: far.size - near.size + 1]
    spread = np.sqrt(np.maximum(energy, 0.0)) * np.linalg.norm(near)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(spread > 1e-6, dots / spread, 0.0)
    return float(r.max())


class EchoGate:
    """Tells which frames of the caller's line are the reply coming back."""

    def __init__(
        self,
        rate: int = 16000,
        *,
        max_delay_s: float = MAX_DELAY_S,
        threshold: float = THRESHOLD,
        window_s: float = WINDOW_S,
        lead_s: float = 0.1,
    ) -> None:
        self.threshold = threshold
        self.max_delay_s = max_delay_s
        # The reply as it went out, band-passed: the longest delay, plus the transport's
        # lead and the window.
        self._far: deque[np.ndarray] = deque()
        self._far_samples = 0
        self._far_limit = int(rate * (max_delay_s + 0.2 + window_s))
        self._rate = rate
        self._lead_s = lead_s
        # Both sides through the telephone's band: only what an echo through a phone still
        # has is compared. (Averaging pairs of samples instead let the reply's "s" alias
        # into the band, where its echo through a phone had nothing to match.)
        self._far_band = _Band()
        self._window = int(rate * window_s)
        # The caller's line as it came: the window and the filter's reach (62 samples)
        # before it, from silence. Band-passed only when `is_echo` asks, which most
        # frames never are (no reply within `max_delay_s`, or not voice): the same
        # samples as filtering every frame as it comes, for a fifth of the event loop's
        # per-frame cost.
        self._taps = _band_taps(rate)
        self._near_raw = bytearray(2 * (self._taps.size - 1))
        self._near_limit = 2 * (self._window + self._taps.size - 1)
        self._last_frame = b""
        self._last_sent: float | None = None

    def played(self, pcm: bytes, now: float) -> None:
        """Reply audio went out to the caller at `now` (the clock `is_echo` is given)."""
        samples = self._far_band.process(pcm)
        if not samples.size:
            return
        # Nothing went out for longer than the transport's lead (a reply's start, a hold):
        # the caller's loudspeaker ran dry, so the echo of that time is silence. A shorter
        # wait is absorbed by the audio queued ahead, and the echo has no gap.
        if self._last_sent is None:
            idle = self._far_limit
        else:
            idle = int((now - self._last_sent - self._lead_s) * self._rate)
        if idle > 0:
            self._far.append(np.zeros(min(idle, self._far_limit)))
            self._far_samples += self._far[-1].size
        self._far.append(samples)
        self._far_samples += samples.size
        while self._far_samples - self._far[0].size >= self._far_limit:
            self._far_samples -= self._far.popleft().size
        self._last_sent = now

    def heard(self, frame: bytes) -> None:
        """The next frame of the caller's line: every one, so that `is_echo` can judge the last."""
        if len(frame) % 2:
            # Kept raw, half a sample would shift every sample after it.
            raise ValueError(f"a PCM16 frame has an even number of bytes, not {len(frame)}")
        self._near_raw += frame
        del self._near_raw[: -self._near_limit]
        self._last_frame = frame

    def _near(self) -> np.ndarray:
        """The last `window_s` of the caller's line, band-passed."""
        samples = np.frombuffer(self._near_raw, dtype="<i2").astype(np.float64)
        return np.convolve(samples, self._taps, mode="valid")

    def is_echo(self, now: float) -> bool:
        """Whether the caller's last frame (`heard`) is the reply's echo. The costly part,
        1.4 ms a frame: asked only of frames the VAD would take for voice."""
        samples = np.frombuffer(self._last_frame, dtype="<i2").astype(np.float64)
        if (
            self._last_sent is None
            or now - self._last_sent > self.max_delay_s
            or not samples.size
            or np.sqrt(np.mean(samples * samples)) < QUIET_RMS
        ):
            return False
        # Compared at 8 kHz, half the cost. An echo late by an odd number of samples
        # falls between the far side's even samples, so both halves of it are tried.
        far, near = np.concatenate(self._far), self._near()[::2]
        return max(correlation(near, far[0::2]), correlation(near, far[1::2])) >= self.threshold


# The echo by its sound, for speech over a held reply (`voice.overlap`): the gate above
# takes the echo off the line as it comes, this reads an utterance the gate let through.
HOP_S = 0.01
# How far behind the reply its echo may come back: the transport's lead, the network
# and the caller's loudspeaker.
MAX_DELAY_S = 0.8
# Echo follows the reply band by band (measured: 0.83 to 0.98 through gain, delay and
# the phone band); a caller's own words only by chance (0.19 to 0.62 on espeak voices, 0.78
# for "okay" in the reply's own Piper voice).
ECHO_LIKENESS = 0.8
_MIN_LOUD_HOPS = 15


# Bands below the telephone line's 4 kHz, so that an echo through a phone still matches.
_BANDS_HZ = ((100, 500), (500, 1000), (1000, 2000), (2000, 3800))


def _envelope(pcm: bytes, rate: int) -> np.ndarray:
    """Log energy per 10 ms hop in each band: (hops, bands)."""
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    hop = int(rate * HOP_S)
    size = 2 * hop
    if samples.size < size:
        return np.zeros((0, len(_BANDS_HZ)))
    frames = np.lib.stride_tricks.sliding_window_view(samples, size)[::hop] * np.hanning(size)
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    freqs = np.fft.rfftfreq(size, 1 / rate)
    bands = [power[:, (freqs >= lo) & (freqs < hi)].sum(axis=1) for lo, hi in _BANDS_HZ]
    return np.log10(np.stack(bands, axis=1) + 1.0)


def echo_likeness(heard: bytes, played: bytes, rate: int = 16000) -> float:
    """How closely the sound of `heard`, band by band, follows some stretch of `played`
    (the reply audio that went out, ending now), 0 to 1. Only the loud part of `heard`
    counts. A caller's own syllables follow the reply's loudness by chance (0.5 to 0.7
    measured on one band); across four bands, much less."""
    # Only the end of the reply can have come back: its envelope alone is computed, from
    # a whole number of hops in, so its frames fall where they would over all of it.
    hop = int(rate * HOP_S)
    reach = 2 * (len(heard) // 2 + int(MAX_DELAY_S * rate) + 4 * hop)
    start = max(0, len(played) - reach) // (2 * hop) * (2 * hop)
    h, p = _envelope(heard, rate), _envelope(played[start:], rate)
    if not h.size or not p.size:
        return 0.0
    total = h.sum(axis=1)
    loud = np.flatnonzero(total > total.max() - 3.0 * len(_BANDS_HZ))
    if loud.size < _MIN_LOUD_HOPS:
        return 0.0
    h = h[loud[0] : loud[-1] + 1]
    # Where in the reply the echo may come from: up to MAX_DELAY_S before the hold.
    window = p[-(len(h) + int(MAX_DELAY_S / HOP_S)) :]
    if len(window) < len(h):
        return 0.0
    h = (h - h.mean(axis=0)).ravel()
    views = np.lib.stride_tricks.sliding_window_view(window, h.size // len(_BANDS_HZ), axis=0)
    views = views.transpose(0, 2, 1)  # (offsets, hops, bands)
    centred = (views - views.mean(axis=1, keepdims=True)).reshape(len(views), -1)
    spread = np.linalg.norm(centred, axis=1) * np.linalg.norm(h)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (centred @ h) / spread
    return float(np.nanmax(r)) if np.isfinite(r).any() else 0.0
