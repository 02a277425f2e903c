"""Is what Whisper read made of noise? A cough, a sneeze or a door gets words from
Whisper ("What?", "I don't know.", "I'll be right back in the next video.").

Over a reply (`voice.overlap`), a short reading is noise when Whisper itself takes the
audio for no speech and doubts its few words, or when Silero (`voice.voiced`) hears no
speech in it either and Whisper leans towards none. A stop or a question needs Whisper
surer, a sentence is never noise, and a call for help is always heard, whatever the
two models think (`must_hear`).

While no reply plays (`noise_turn`), read with the catalogue's prompt, a cough became
"Acicol, Acicol," or "I'll be right back in the next video", and the agent answered
it. Dropping a turn loses the caller's words, where an aside taken for noise only lets
a reply go on, so a turn is noise only when Silero is surer still; the second, plain
decode it needs is paid only then.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from typing import Protocol

from voice.speech import Transcript
from voice.voiced import SpeechGauge, silero_voiced

log = logging.getLogger("voice.noise")

# Words that make a short reading a stop or a question, never an aside: not read
# again as a hum, and taken for noise only when Whisper is surer that it heard none.
STOPS = frozenset(
    """no not nope nah wait stop hold hang sorry pardon cancel help don't what how why
    when where who which""".split()
)
# Whisper writes sounds that are not words in brackets or asterisks: "(coughs)", "*sigh*".
_SOUND = re.compile(r"[\[(*][^\])*]*[\])*]")
# Digits too: "Yes, 911." is not a backchannel.
_WORD = re.compile(r"[a-z0-9']+")
# Past this many different words a reading is a sentence, whatever its words. Different:
# Whisper's shortened window loops ("Yeah, right... Right... Right... Right").
MOST_WORDS = 4
# Whisper is sure the audio holds no speech, and unsure of the words it made of it
# anyway: a cough or a breath ("I can't do it."). Measured on synthetic coughs, no
# speech 0.82 to 0.88 at -2.1 to -3.1 per token; on 420 short phrases in nine voices,
# no speech above 0.8 once ("No, no, no", at -1.66).
_NO_SPEECH = 0.8
_UNSURE_LOGPROB = -1.9
# A stop or a question read out of what Whisper takes for no speech needs it surer. A
# cough is read "What?", "What's up?" or "What is it?" at no speech 0.89 to 0.95; real
# stops it doubted stayed under 0.8 ("Wait." heard "way.", 0.79, at 10 dB).
_NO_SPEECH_FOR_A_STOP = 0.85
# When Silero too hears no speech in any window (below its own threshold), Whisper need
# only lean towards none. Of 3,294 stops and barge-ins (nine voices, wide and phone
# band, clean and at 10 and 5 dB; `benchmarks/aside_scores.py`) Silero missed 17, all
# in the phone band in noise, and Whisper scored those 0.65 at most ("Whoa, whoa,
# whoa." heard "Hello, hello" at 5 dB). A stop or question still needs
# `_NO_SPEECH_FOR_A_STOP`, and a sentence is never noise: the two models' margin is
# read off synthetic voices only.
_SILERO_SPEECH = 0.5
_NO_SPEECH_WITH_SILERO = 0.7
# How long the second opinion may take before the other evidence decides: a held reply,
# or a turn, waits meanwhile. It takes 1 to 3 ms for a second of audio.
GAUGE_TIMEOUT_S = 0.25
# A turn is noise only when Silero's every window is below half its own threshold, and
# Whisper's plain reading takes the audio for no speech. Read off 169 short turns,
# stops, backchannels and barge-ins in five voices (wide, phone band, phone band at 10
# and 5 dB; `benchmarks/turn_noise.py`): the speech Silero scored this low was read at
# no speech 0.73 at most ("Hmm." at 5 dB), and the coughs at 0.80 to 0.89. A turn
# dropped loses the caller's words, so the bar is higher than over a reply.
TURN_SILERO = 0.25
_TURN_NO_SPEECH = 0.75
# A turn longer than this (16 kHz audio, as the VAD cut it) is taken for speech without
# asking: the coughs and sounds measured were cut at 2.3 s at most, a fit of three coughs
# and the VAD's padding included, and Silero's cost grows with the audio (about 3 ms a
# second, on the way to every reply).
TURN_NOISE_MAX_S = 3.0
RATE = 16000  # the VAD's, at which turns are cut
# Words a caller's call for help holds: whatever Whisper and Silero think of the audio,
# and however much it sounds like a backchannel, such a reading cuts the reply and is
# heard as a turn. Not the reply's own echo: a reply that says "call 999" must not be
# cut by itself. Digits are joined, so "9-1-1" is 911.
_MUST_HEAR = frozenset(
    """help emergency ambulance overdose overdosed breathe breathing breath unconscious
    collapsed collapse choking choke bleeding seizure stroke allergic anaphylaxis
    anaphylactic faint fainted fainting chest poison poisoned poisoning suicide suicidal
    dying hurry 911 999 112 988""".split()
)
# Numbers said as words join as digits do: "nine nine nine" is 999.
_DIGITS = {
    w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine".split())
}


def words_of(text: str) -> list[str]:
    return _WORD.findall(_SOUND.sub(" ", text.lower()).replace("-", " "))


def _said(words: list[str]) -> set[str]:
    """The different words of a reading, with a number said digit by digit joined."""
    said: set[str] = set(words)
    run = ""
    for w in [*words, ""]:
        w = _DIGITS.get(w, w)
        if w.isdigit():
            run += w
        elif run:
            said.add(run)
            run = ""
    return said


def must_hear(heard: str, reply: str = "") -> bool:
    """A call for help that is not the reply's own words heard back."""
    return bool(_said(words_of(heard)) & _MUST_HEAR - _said(words_of(reply)))


def stop_or_question(heard: str, distinct: set[str]) -> bool:
    return bool(distinct & STOPS) or "?" in heard


def made_of_noise(heard: str, no_speech: float, confidence: float, voiced: float) -> bool:
    """The audio holds no speech, and Whisper's few words are what it invented for a
    cough, a breath or a door ("I can't do it.", "What?", "I don't know."): Whisper is
    sure of that and doubts its words, or Silero hears no speech either and Whisper
    leans towards none. A stop among invented words only asks for more certainty."""
    distinct = set(words_of(heard))
    if not 0 < len(distinct) <= MOST_WORDS:
        return False
    stop = stop_or_question(heard, distinct)
    if voiced < _SILERO_SPEECH and no_speech >= (
        _NO_SPEECH_FOR_A_STOP if stop else _NO_SPEECH_WITH_SILERO
    ):
        return True
    if math.log(max(confidence, 1e-12)) >= _UNSURE_LOGPROB:
        return False
    return no_speech >= (_NO_SPEECH_FOR_A_STOP if stop else _NO_SPEECH)


def _noise_reading(heard: str, no_speech: float) -> bool:
    """A plain reading of a turn Silero heard no speech in, that Whisper takes for none
    either: a few words, never a call for help, a stop or a question only when surer."""
    distinct = set(words_of(heard))
    if must_hear(heard) or len(distinct) > MOST_WORDS:
        return False
    if not distinct:
        return True
    stop = stop_or_question(heard, distinct)
    return no_speech >= (_NO_SPEECH_FOR_A_STOP if stop else _TURN_NO_SPEECH)


def worth_gauging(heard: str, no_speech: float, confidence: float) -> bool:
    """Silero's opinion decides this reading: noise if Silero hears no speech, not noise
    if it does."""
    return (
        not must_hear(heard)
        and made_of_noise(heard, no_speech, confidence, voiced=0.0)
        and not made_of_noise(heard, no_speech, confidence, voiced=1.0)
    )


async def gauged(gauge: SpeechGauge, audio: bytes, failed: str, session_id: str) -> float | None:
    """Silero's opinion of `audio`, off the event loop and within `GAUGE_TIMEOUT_S`; None,
    logged as `failed`, when it fails or is late: then the other evidence decides."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(gauge, audio), GAUGE_TIMEOUT_S)
    except Exception as error:
        log.warning("%s session_id=%s error=%r", failed, session_id, error)
        return None


class PlainReader(Protocol):
    """What reading a turn again needs of the recogniser (`voice.stt.WhisperSTT`)."""

    async def transcribe(
        self, pcm16: bytes, sample_rate: int = ..., *, plain: bool = ..., primer: str | None = ...
    ) -> Transcript: ...


async def noise_turn(
    stt: PlainReader,
    audio: bytes,
    heard: str,
    *,
    session_id: str = "",
    gauge: SpeechGauge = silero_voiced,
) -> bool:
    """A turn heard while no reply plays (`heard`, read with the catalogue's prompt) that
    holds no speech: a cough, a sneeze, a door. Silero is asked first (4 ms p50 with the
    thread's hand-off); the audio is read again without the prompt only when Silero
    hears no speech in it. When either model fails, or the turn is long, it is kept."""
    if not heard.strip() or must_hear(heard) or len(audio) / 2 / RATE > TURN_NOISE_MAX_S:
        return False
    voiced = await gauged(gauge, audio, "turn_ungauged", session_id)
    if voiced is None or not voiced < TURN_SILERO:  # NaN too: Whisper never decides alone
        return False
    try:
        plain = await stt.transcribe(audio, plain=True)
    except Exception as error:
        log.warning("turn_unread session_id=%s error=%r", session_id, error)
        return False
    noise = _noise_reading(plain.text, plain.no_speech)
    log.info(  # counts, not the caller's words
        "turn_gauged session_id=%s voiced=%.2f no_speech=%.2f words=%d noise=%s",
        session_id,
        voiced,
        plain.no_speech,
        len(words_of(plain.text)),
        noise,
    )
    return noise
