"""Turn-taking with webrtcvad: when the caller starts and stops speaking.

A state machine over 10/20/30 ms frames, in stream time (seconds of audio fed,
not wall time), so tests and benchmarks are exact:

- silence: the last `preroll_ms` are kept, so first syllables are not cut;
- voiced frames start a *candidate*; it becomes speech only after
  `min_speech_ms` of voice (a cough never starts a turn or barges in);
- speech ends after `stop_ms` of silence (a caller pausing for less keeps the
  turn), or at `max_utterance_s`;
- room noise under the caller (a road, a hum, a television) is silence, by its level
  and a second model's opinion (`voice.linenoise`).

webrtcvad adapts to its input and, after a loud burst, took a second of steady
hiss for speech (a test caught it). A frame also has to be spectrally uneven to
count as voice: measured here, voiced speech has a median spectral flatness of
0.001 to 0.025, white noise 0.556.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import webrtcvad

from voice.linenoise import LineNoise
from voice.voiced import SpeechGauge

log = logging.getLogger("voice.vad")

VAD_RATES = (8000, 16000, 32000, 48000)
GAUGE_RATE = 16000


@lru_cache(maxsize=8)
def _window(size: int) -> np.ndarray:
    return np.hanning(size)


def spectral_flatness(frame: bytes) -> float:
    """Geometric over arithmetic mean of the power spectrum: near 1 for hiss, near 0 for voice."""
    samples = np.frombuffer(frame, dtype="<i2").astype(np.float64)
    power = np.abs(np.fft.rfft(samples * _window(samples.size))) ** 2 + 1e-9
    return float(np.exp(np.mean(np.log(power))) / np.mean(power))


@dataclass(frozen=True, slots=True)
class VadConfig:
    aggressiveness: int = 2
    frame_ms: int = 20
    preroll_ms: int = 300
    min_speech_ms: int = 200
    stop_ms: int = 500
    max_utterance_s: float = 15.0
    # After this much silence the utterance so far is offered for speculative decoding
    # (`SpeechPaused`); voice before `stop_ms` withdraws it (`SpeechResumed`). 0: never.
    early_ms: int = 150
    # With an end-of-turn model (voice/turn.py), asked at `early_ms`: a turn it judges
    # incomplete ends anyway after this much silence. Callers pause mid-sentence for up
    # to about a second and a quarter to think of a word; past that, reply.
    hold_ms: int = 1600
    # A turn the model and the words both judge over ends after this much silence, or
    # when judged if that is later. Not sooner: callers pause 0.3-0.4 s after words that
    # sound finished ("I wanted to check ..."). On 450 paused sentences written after
    # this was built, 250 ms answered 111 too soon, 400 ms 83, the 500 ms stop 78
    # (docs/voice.md). Frames are 20 ms: this and `early_ms` act at 420 and 160 ms.
    done_ms: int = 400
    # A pause still silent after this long is offered again (`SpeechStillPaused`), for
    # a turn held as mid-sentence to be judged again with the silence heard. 0: never.
    recheck_ms: int = 0
    max_flatness: float = 0.45
    # A frame this loud keeps a turn open even when not judged voiced: the fading tail
    # of a word ("like") must not count as the caller's pause. It never starts a turn.
    sustain_rms: float = 500.0
    # Steady room noise (a road, a hum) is voice to webrtcvad, so a turn under it never
    # fell silent and ended only at `max_utterance_s`. Inside a confirmed turn, a frame
    # it takes for voice, or loud enough to sustain the turn, but quieter than this
    # share of the turn's loud frames (its 90th percentile), is asked of a second model
    # (the detector's `gauge`, Silero on the last 128 ms); under `noise_below` it is the
    # line's noise, and silence. Silero scored a road and a hum 0.05 at most at 5 and
    # 10 dB SNR, and no window of the sentence under them below 0.15. Background talkers
    # are speech to it too, and told by level (`voice.linenoise`).
    quieter_than: float = 0.5
    noise_below: float = 0.15

    def __post_init__(self) -> None:
        if self.frame_ms not in (10, 20, 30):
            raise ValueError("webrtcvad takes 10, 20 or 30 ms frames")
        if not 0 <= self.aggressiveness <= 3:
            raise ValueError("aggressiveness is 0 to 3")
        if not 0 < self.done_ms <= self.stop_ms:
            # Longer than the stop, a turn judged over would wait more than one that is not.
            raise ValueError("done_ms is above 0 and at most stop_ms")
        if self.recheck_ms and self.recheck_ms <= self.early_ms:
            raise ValueError("recheck_ms is 0 or after early_ms")


@dataclass(frozen=True, slots=True)
class SpeechStarted:
    """Urgent: the caller is speaking (confirmed), at stream time `at` of the first voiced frame."""

    at: float


@dataclass(frozen=True, slots=True)
class SpeechEnded:
    """The utterance is over. `last_voice` is the end of its last voiced frame."""

    at: float
    last_voice: float
    audio: bytes = field(repr=False)
    sample_rate: int = 16000

    @property
    def duration(self) -> float:
        return len(self.audio) / 2 / self.sample_rate


@dataclass(frozen=True, slots=True)
class SpeechPaused:
    """The caller paused: `audio` is the utterance so far, worth decoding already."""

    at: float
    audio: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class SpeechStillPaused:
    """The caller is still silent `recheck_ms` into the pause: `audio` is the utterance
    so far, the silence since included."""

    at: float
    audio: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class SpeechResumed:
    """The caller went on after a pause: what `SpeechPaused` offered is stale."""

    at: float


VadEvent = SpeechStarted | SpeechPaused | SpeechStillPaused | SpeechResumed | SpeechEnded


class TurnDetector:
    def __init__(
        self,
        config: VadConfig | None = None,
        sample_rate: int = 16000,
        *,
        gauge: SpeechGauge | None = None,
    ) -> None:
        """`gauge`: a second model's speech probability at the end of a clip
        (`voice.voiced.silero_latest`), for telling the room from the caller
        (`voice.linenoise`); None trusts webrtcvad alone."""
        if sample_rate not in VAD_RATES:
            raise ValueError(f"webrtcvad takes {VAD_RATES} Hz, not {sample_rate}")
        if gauge is not None and sample_rate != GAUGE_RATE:
            raise ValueError(f"the gauge takes {GAUGE_RATE} Hz audio")
        self.config = config or VadConfig()
        self._room = (
            None
            if gauge is None
            else LineNoise(
                gauge, quieter_than=self.config.quieter_than, noise_below=self.config.noise_below
            )
        )
        self.sample_rate = sample_rate
        self._vad = webrtcvad.Vad(self.config.aggressiveness)
        self._frame_bytes = sample_rate * self.config.frame_ms // 1000 * 2
        self._frame_s = self.config.frame_ms / 1000
        self._pending = b""
        self._clock = 0.0
        self._preroll: deque[bytes] = deque(
            maxlen=max(1, self.config.preroll_ms // self.config.frame_ms)
        )
        self._utterance: list[bytes] = []
        self._voiced_s = 0.0
        self._silence_s = 0.0
        self._started_at: float | None = None
        self._confirmed = False
        self._paused = False
        self._rechecked = False  # this pause has been offered again
        self._stop_ms: int | None = None  # this pause's own stop, once judged
        self._last_voice = 0.0

    @property
    def in_speech(self) -> bool:
        return self._confirmed

    @property
    def last_voice(self) -> float:
        """Stream time at the end of the last voiced frame."""
        return self._last_voice

    @property
    def heard_s(self) -> float:
        """Voice in the utterance under way, confirmed or not yet: 0 outside one."""
        return self._voiced_s if self._started_at is not None else 0.0

    @property
    def started_at(self) -> float | None:
        """Stream time of the first voiced frame of the utterance under way, if any."""
        return self._started_at

    @property
    def since_voice_s(self) -> float:
        """Stream time since the last voiced frame, whatever came after it (silence,
        or noise loud enough to keep a turn open)."""
        return self._clock - self._last_voice

    @property
    def paused(self) -> bool:
        """Confirmed speech is followed by `early_ms` of silence, and nothing since."""
        return self._paused

    def feed(self, pcm: bytes, *, echo: Callable[[], bool] | None = None) -> list[VadEvent]:
        """Take PCM16 at the detector's rate, of any length; return what happened, in order.

        `echo`, asked only of a frame that would count as voice: whether the frame is the
        reply coming back (voice/echo.py), which is silence to the turn. Asked about the
        frame just fed, so whoever passes it feeds one frame at a time."""
        self._pending += pcm
        events: list[VadEvent] = []
        while len(self._pending) >= self._frame_bytes:
            frame, self._pending = (
                self._pending[: self._frame_bytes],
                self._pending[self._frame_bytes :],
            )
            events.extend(self._step(frame, echo))
        return events

    def _step(self, frame: bytes, echo: Callable[[], bool] | None = None) -> list[VadEvent]:
        start = self._clock
        self._clock += self._frame_s
        config = self.config
        voiced = (
            self._vad.is_speech(frame, self.sample_rate)
            and spectral_flatness(frame) < config.max_flatness
        )
        rms = self._rms(frame)
        sustained = not voiced and self._started_at is not None and rms >= config.sustain_rms
        echoed = (voiced or sustained) and echo is not None and echo()
        if echoed:
            voiced = sustained = False
        if self._room is not None and self._room.active:
            caller = self._room.judge(
                frame,
                rms,
                voiced=voiced,
                sustained=sustained,
                echo=echoed,
                started=self._started_at is not None,
                confirmed=self._confirmed,
            )
            if not caller:
                voiced = sustained = False
        if self._started_at is None:
            if not voiced:
                self._preroll.append(frame)
                return []
            self._started_at = start
            self._utterance = list(self._preroll)
            self._preroll.clear()
            self._voiced_s = self._silence_s = 0.0
        self._utterance.append(frame)
        events: list[VadEvent] = []
        if voiced:
            self._voiced_s += self._frame_s
            self._silence_s = 0.0
            self._last_voice = self._clock
            if self._paused:
                self._paused = self._rechecked = False
                self._stop_ms = None
                events.append(SpeechResumed(at=start))
            if not self._confirmed and self._voiced_s * 1000 >= config.min_speech_ms:
                self._confirmed = True
                events.append(SpeechStarted(at=self._started_at))
        elif not sustained:
            self._silence_s += self._frame_s
        early = config.early_ms
        if self._confirmed and not self._paused and early and self._silence_s * 1000 >= early:
            self._paused = True
            events.append(SpeechPaused(at=self._clock, audio=b"".join(self._utterance)))
        recheck = config.recheck_ms
        if self._paused and recheck and not self._rechecked and self._silence_s * 1000 >= recheck:
            self._rechecked = True
            events.append(SpeechStillPaused(at=self._clock, audio=b"".join(self._utterance)))
        utterance_s = len(self._utterance) * self._frame_s
        stop_ms = max(
            config.stop_ms if self._stop_ms is None else self._stop_ms, self._least_stop()
        )
        if self._silence_s * 1000 >= stop_ms or utterance_s >= config.max_utterance_s:
            events += self._end()
        return events

    def _least_stop(self) -> int:
        """Under talkers, a pause is the room's level, not silence, and the end-of-turn
        model judged such pauses wrong both ways (docs/performance.md): the turn ends
        only after the hold, as one judged unfinished."""
        talkers = self._room is not None and self._room.active and self._room.talkers_heard
        return self.config.hold_ms if talkers else 0

    def stop_after(self, stop_ms: int) -> list[VadEvent]:
        """End this pause's turn after `stop_ms` of silence instead of `config.stop_ms`
        (an end-of-turn judgement); at once if the pause is already that long. Voice
        before then puts the usual stop back."""
        if not self._paused:
            return []
        stop_ms = max(stop_ms, self._least_stop())
        if self._silence_s * 1000 >= stop_ms:
            return self._end()  # audio already queued in `_pending` stays for what follows
        self._stop_ms = stop_ms
        return []

    def flush(self) -> list[VadEvent]:
        """The input is over for now (a push-to-talk button released): end the turn here.

        A confirmed utterance ends at once, without waiting for `stop_ms` of silence;
        an unconfirmed blip (a click of the button) is dropped."""
        self._pending = b""
        return self._end()

    def _end(self) -> list[VadEvent]:
        ended = SpeechEnded(
            at=self._clock,
            last_voice=self._last_voice,
            audio=b"".join(self._utterance),
            sample_rate=self.sample_rate,
        )
        confirmed = self._confirmed
        self._reset()
        if self._room is not None:
            self._room.turn_over()
        return [ended] if confirmed else []

    @staticmethod
    def _rms(frame: bytes) -> float:
        samples = np.frombuffer(frame, dtype="<i2").astype(np.float64)
        # A dot product, not a mean of squares: one numpy call instead of three, on every
        # frame. The squares of 16-bit samples and their sums are whole numbers far
        # below 2**53, so any order of adding gives exactly the same level.
        return math.sqrt(float(samples @ samples) / samples.size)

    def _reset(self) -> None:
        self._utterance = []
        self._started_at = None
        self._confirmed = False
        self._paused = self._rechecked = False
        self._stop_ms = None
        self._voiced_s = self._silence_s = 0.0
