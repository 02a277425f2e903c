"""Turn-taking with webrtcvad: when the caller starts and stops speaking.

A state machine over 10/20/30 ms frames, in stream time (seconds of audio fed,
not wall time), so tests and benchmarks are exact:

- silence: the last `preroll_ms` are kept, so first syllables are not cut;
- voiced frames start a *candidate*; it becomes speech only after
  `min_speech_ms` of voice (a cough never starts a turn or barges in);
- speech ends after `stop_ms` of silence (a caller pausing for less keeps the
  turn), or at `max_utterance_s`;
- inside a turn, steady room noise under the caller is silence, by a second model's
  opinion of frames much quieter than the turn's voice (`VadConfig.quieter_than`).

webrtcvad adapts to its input and, after a loud burst, took a second of steady
hiss for speech (a test caught it). A frame also has to be spectrally uneven to
count as voice: measured here, voiced speech has a median spectral flatness of
0.001 to 0.025, white noise 0.556.

The module runs a little over 400 lines: the room-noise rule reads the same frames,
in the same step, as the state machine it changes, and split out it would need that
state handed to it frame by frame.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import webrtcvad

from voice.voiced import LATEST_WINDOWS, WINDOW, SpeechGauge

log = logging.getLogger("voice.vad")

VAD_RATES = (8000, 16000, 32000, 48000)
GAUGE_RATE = 16000
# What the gauge reads when a frame is in doubt: the latest 128 ms, Silero's last
# window after three more (`voice.voiced.silero_latest`).
GAUGE_WINDOW_BYTES = LATEST_WINDOWS * WINDOW * 2
# How many voiced frames tell the turn's loudness: 200 ms, as `min_speech_ms`.
LOUD_FRAMES_KNOWN = 10
GAUGE_EVERY = 4
# Quiet frames since the turn was last at its loudness before any is asked about: 300 ms.
QUIET_FIRST = 15
# Voice within this ratio (12 dB) of the line's known noise needs the gauge to start a turn.
NEW_TURN_ABOVE = 4.0


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
    # are speech to it too: see docs/performance.md.
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
        (`voice.voiced.silero_latest`), for quiet frames inside a turn; None trusts
        webrtcvad alone."""
        if sample_rate not in VAD_RATES:
            raise ValueError(f"webrtcvad takes {VAD_RATES} Hz, not {sample_rate}")
        if gauge is not None and sample_rate != GAUGE_RATE:
            raise ValueError(f"the gauge takes {GAUGE_RATE} Hz audio")
        self.config = config or VadConfig()
        self._gauge = gauge
        self._loud: list[float] = []  # each voiced frame's RMS, this utterance
        self._recent = b""  # the last gauge window's samples
        self._verdict: bool | None = None  # the gauge's last: line noise, through quiet frames
        self._verdict_age = 0
        self._since_loud = 0  # frames since one at the turn's loudness
        self._quiet_voiced = 0  # of those, taken for voice by webrtcvad or sustained
        self._loud_p90 = 0.0  # the turn's loudness, as last read off `_loud`
        self._loud_known = 0  # how many of `_loud` it was read off
        # The line's noise, as heard under the last turns: kept from turn to turn.
        self._noise_rms = 0.0
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
        if (voiced or sustained) and echo is not None and echo():
            voiced = sustained = False
        if self._gauge is not None:
            self._recent = (self._recent + frame)[-GAUGE_WINDOW_BYTES:]
        if self._gauge is not None and self._confirmed:
            self._since_loud += 1
            if not (voiced or sustained):
                self._verdict = None  # a verdict holds only while frames are in doubt
            elif self._line_noise(rms):
                voiced = sustained = False
                self._noise_rms = rms if not self._noise_rms else 0.9 * self._noise_rms + 0.1 * rms
            elif voiced and rms >= self.config.quieter_than * self._loud_p90:
                self._loud.append(rms)  # the turn's loudness, never its noise
        elif voiced and self._noise_rms and rms < NEW_TURN_ABOVE * self._noise_rms:
            # The noise a turn was heard over goes on after it: near its level, voice
            # starts a turn only if the gauge hears speech, or the hum would start the
            # next turn the moment this one ends, and cut the reply.
            voiced = not self._gauge_hears_noise()
        else:
            self._verdict = None
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
        stop_ms = config.stop_ms if self._stop_ms is None else self._stop_ms
        if self._silence_s * 1000 >= stop_ms or utterance_s >= config.max_utterance_s:
            events += self._end()
        return events

    def _line_noise(self, rms: float) -> bool:
        """A frame taken for voice inside a turn is the line's steady noise: much
        quieter than the turn's voice, in a quiet stretch of `QUIET_FIRST` frames or more
        that webrtcvad took for voice at least half of, and no speech to the gauge."""
        assert self._gauge is not None
        if len(self._loud) < LOUD_FRAMES_KNOWN:
            return False
        if len(self._loud) >= self._loud_known + LOUD_FRAMES_KNOWN // 2:
            # Read again every few voiced frames, not each: a percentile per frame was
            # 15 ms of the loop's CPU over the reference turn.
            self._loud_p90 = float(np.percentile(self._loud, 90))
            self._loud_known = len(self._loud)
        if rms >= self.config.quieter_than * self._loud_p90:
            self._verdict, self._since_loud, self._quiet_voiced = None, 0, 0
            return False
        # Steady noise holds webrtcvad on through most of a quiet stretch; a caller's
        # own pause ("Hello, | I would like") has a stray voiced frame or two. Judged at
        # once, such frames gave the reference line a pause, and every turn a
        # speculative decode: +0.2 CPU-s a turn.
        self._quiet_voiced += 1
        if self._since_loud < QUIET_FIRST or 2 * self._quiet_voiced < self._since_loud:
            return False
        return self._gauge_hears_noise()

    def _gauge_hears_noise(self) -> bool:
        """The gauge's verdict on the latest 128 ms: no speech. Asked again every
        `GAUGE_EVERY` frames in doubt, not each: its window spans them, and each call is
        a third of a millisecond."""
        if self._gauge is None:
            return False
        if self._verdict is None or self._verdict_age >= GAUGE_EVERY:
            try:
                self._verdict = self._gauge(self._recent) < self.config.noise_below
            except Exception as error:  # a broken model must not end the call
                log.warning("vad_gauge_failed error=%r", error)
                self._gauge = None  # webrtcvad alone, as before, for this detector
                self._noise_rms = 0.0
                return False
            self._verdict_age = 0
        self._verdict_age += 1
        return self._verdict

    def stop_after(self, stop_ms: int) -> list[VadEvent]:
        """End this pause's turn after `stop_ms` of silence instead of `config.stop_ms`
        (an end-of-turn judgement); at once if the pause is already that long. Voice
        before then puts the usual stop back."""
        if not self._paused:
            return []
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
        return [ended] if confirmed else []

    @staticmethod
    def _rms(frame: bytes) -> float:
        samples = np.frombuffer(frame, dtype="<i2").astype(np.float64)
        return float(np.sqrt(np.mean(samples * samples)))

    def _reset(self) -> None:
        self._loud = []  # the line's last 128 ms (`_recent`) and noise level are kept
        self._verdict = None
        self._since_loud = self._quiet_voiced = self._loud_known = 0
        self._loud_p90 = 0.0
        self._utterance = []
        self._started_at = None
        self._confirmed = False
        self._paused = self._rechecked = False
        self._stop_ms = None
        self._voiced_s = self._silence_s = 0.0
