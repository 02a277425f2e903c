"""Was what the caller said over a reply meant to stop it?

Callers say "mm-hmm", "okay" and "right" while they listen, cough, and on a
speakerphone the reply comes back into their microphone. None of these should cut
the reply: the voice loop holds the reply the moment the caller is heard (a real
barge-in is stopped at once), then lets this module read what was said. An aside
resumes the reply where it stopped; anything else is a barge-in.

Whisper tiny reads a hum badly ("mm-hmm" as "in a month", "hmm" as "them"). A
short reading that is not an aside is read again with backchannels given as what
was just said (`BACKCHANNEL_PRIMER`); if that reading is a backchannel, and Whisper
scores it nearly as well as the first (`REREAD_MARGIN`), it is one.

A cough, a sneeze or a door gets words from Whisper too ("What?", "I don't know."). It
is noise when Whisper itself takes the audio for no speech and doubts its few words,
or when Silero (`voice.voiced`) hears no speech in it either and Whisper leans towards
none. A stop or a question needs Whisper surer, a sentence is never noise, and a call
for help is always heard, whatever the two models think (`must_hear`).

An echo is recognised twice over: by its words, when Whisper hears the reply's
own words, and by its sound, when the loudness of what was heard rises and falls
as the reply's did a moment before (`voice.echo.echo_likeness`): a short fragment of
echo is often heard as no word of the reply at all ("three options" as "Reoxy").
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from rapidfuzz import fuzz

from voice.echo import ECHO_LIKENESS, echo_likeness
from voice.speech import Transcript
from voice.voiced import SpeechGauge, silero_voiced

log = logging.getLogger("voice.overlap")

# What listeners say to keep a speaker going. Not "no", "wait" or "stop": those are
# meant to stop the reply.
_BACKCHANNEL = frozenset(
    """mm mmm mhm hm hmm uh huh um uhm ah oh aha yeah yes yep yup ok okay alright right
    sure fine cool great lovely good perfect nice thanks cheers gotcha true exactly
    absolutely brilliant excellent wonderful indeed understood""".split()
)
# Words that keep a speaker going only together: alone, "enough" and "it" stop a
# reply ("that's enough", "that's it").
_BACKCHANNEL_PHRASES = {
    "thank you": "thank-you",
    "i see": "i-see",
    "got it": "got-it",
    "of course": "of-course",
    "fair enough": "fair-enough",
    "all right": "alright",
    "you're right": "you're-right",
    "sounds good": "sounds-good",
    "sounds great": "sounds-great",
    # Asking the speaker to keep going: alone, "go" and "carry" are not asides.
    "go on": "go-on",
    "carry on": "carry-on",
    "keep going": "keep-going",
    "makes sense": "makes-sense",
    **{f"that's {w}": f"that's-{w}" for w in "right fine great good true perfect lovely".split()},
}
# Words that make a short reading a stop or a question, never an aside: not read
# again as a hum, and taken for noise only when Whisper is surer that it heard none.
_STOPS = frozenset(
    """no not nope nah wait stop hold hang sorry pardon cancel help don't what how why
    when where who which""".split()
)
# Whisper writes sounds that are not words in brackets or asterisks: "(coughs)", "*sigh*".
_SOUND = re.compile(r"[\[(*][^\])*]*[\])*]")
# Digits too: "Yes, 911." is not a backchannel.
_WORD = re.compile(r"[a-z0-9']+")
# A phrase of a reading, with the punctuation that ends it.
_PHRASE = re.compile(r"[^.?!,]+[.?!,]*")
# Humming, however Whisper spells it: "Mm-m-m", "NMM", "Hmmm", "Mhm".
_HUM = re.compile(r"^[mnh]+$|^u+h+$")
# Past this many different words an aside is a sentence, whatever its words. Different:
# Whisper's shortened window loops ("Yeah, right... Right... Right... Right").
_MOST_WORDS = 4
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
# How long the second opinion may take before the words alone decide: the reply is
# held meanwhile. It takes 1 to 3 ms a clip.
GAUGE_TIMEOUT_S = 0.25
# Words a caller's call for help holds: whatever Whisper and Silero think of the audio,
# and however much it sounds like a backchannel, such a reading cuts the reply and is
# heard as a turn. Not the reply's own echo: a reply that says "call 999" must not be
# cut by itself. Digits are joined, so "9-1-1" is 911.
_MUST_HEAR = frozenset(
    """help emergency ambulance overdose overdosed breathe breathing unconscious collapsed
    collapse 911 999 112 988""".split()
)
# A reading this short may be a hum Whisper heard as words, and is read again.
REREAD_WORDS = 3
BACKCHANNEL_PRIMER = "Mm-hmm. Uh-huh. Hmm. Mm. Yeah. Okay. Right."
# How much worse (log-probability per token, without the catalogue) the primed reading
# may score than the first, and still be what was said. Read off four voices: hums
# 0.10 to 0.50 (and 1.7, 1.8, still cut); "Pardon?" read as "Uh-huh" 1.34.
REREAD_MARGIN = 1.0
# How much of what was heard must be found in the reply, for it to be the reply's echo.
_ECHO_MATCH = 80
_ECHO_SHARE = 0.8


def words_of(text: str) -> list[str]:
    return _WORD.findall(_SOUND.sub(" ", text.lower()).replace("-", " "))


def _backchannel(words: list[str]) -> bool:
    said: set[str] = set()
    i = 0
    while i < len(words):
        pair = " ".join(words[i : i + 2])
        if pair in _BACKCHANNEL_PHRASES:
            said.add(_BACKCHANNEL_PHRASES[pair])
            i += 2
        else:
            said.add(words[i])
            i += 1
    return (
        bool(said)
        and len(said) <= _MOST_WORDS
        and all(
            w in _BACKCHANNEL or w in _BACKCHANNEL_PHRASES.values() or _HUM.match(w) for w in said
        )
    )


def _said(words: list[str]) -> set[str]:
    """The different words of a reading, with a number said digit by digit joined."""
    said: set[str] = set(words)
    run = ""
    for w in [*words, ""]:
        if w.isdigit():
            run += w
        elif run:
            said.add(run)
            run = ""
    return said


def must_hear(heard: str, reply: str = "") -> bool:
    """A call for help that is not the reply's own words heard back."""
    return bool(_said(words_of(heard)) & _MUST_HEAR - _said(words_of(reply)))


def _stop(heard: str, distinct: set[str]) -> bool:
    return bool(distinct & _STOPS) or "?" in heard


def _made_of_noise(heard: str, no_speech: float, confidence: float, voiced: float) -> bool:
    """The audio holds no speech, and Whisper's few words are what it invented for a
    cough, a breath or a door ("I can't do it.", "What?", "I don't know."): Whisper is
    sure of that and doubts its words, or Silero hears no speech either and Whisper
    leans towards none. A stop among invented words only asks for more certainty."""
    distinct = set(words_of(heard))
    if not 0 < len(distinct) <= _MOST_WORDS:
        return False
    stop = _stop(heard, distinct)
    if voiced < _SILERO_SPEECH and no_speech >= (
        _NO_SPEECH_FOR_A_STOP if stop else _NO_SPEECH_WITH_SILERO
    ):
        return True
    if math.log(max(confidence, 1e-12)) >= _UNSURE_LOGPROB:
        return False
    return no_speech >= (_NO_SPEECH_FOR_A_STOP if stop else _NO_SPEECH)


def _worth_gauging(heard: str, no_speech: float, confidence: float) -> bool:
    """Silero's opinion decides this reading: noise if Silero hears no speech, not noise
    if it does."""
    return (
        not must_hear(heard)
        and _made_of_noise(heard, no_speech, confidence, voiced=0.0)
        and not _made_of_noise(heard, no_speech, confidence, voiced=1.0)
    )


def aside(
    heard: str,
    reply: str,
    *,
    no_speech: float = 0.0,
    confidence: float = 1.0,
    voiced: float = 1.0,
) -> str | None:
    """Why `heard`, said over `reply`, does not stop it ("noise", "backchannel",
    "echo"), or None when it is a barge-in. `no_speech` and `confidence` are Whisper's,
    for the reading `heard`; `voiced` is Silero's highest speech probability in it."""
    words = words_of(heard)
    if must_hear(heard, reply):
        return None
    if not words:
        return "noise"
    if _made_of_noise(heard, no_speech, confidence, voiced):
        return "noise"
    # A question is asked of the reply, even in backchannel words ("Sure?").
    if _backchannel(words) and "?" not in heard:
        return "backchannel"
    # The reply's own words, heard back: most of them in the reply, in its order. A
    # caller's own sentence shares a product's name with it, not most of its words.
    reply_words = words_of(reply)
    shared = sum(w in reply_words for w in words) / len(words)
    if (
        len(words) >= 2
        and shared >= _ECHO_SHARE
        and fuzz.partial_ratio(" ".join(words), " ".join(reply_words)) >= _ECHO_MATCH
    ):
        return "echo"
    return None


def worth_rereading(heard: str) -> bool:
    """Short enough to be a hum that Whisper heard as words, and not a stop: a stop
    read as a backchannel would let the reply talk over the caller."""
    distinct = set(words_of(heard))
    return 0 < len(distinct) <= REREAD_WORDS and not _stop(heard, distinct) and not must_hear(heard)


def primed_backchannel(reading: str) -> str | None:
    """The backchannel a reading primed with backchannels says, to be scored against
    the first reading; None if the primed reading is not a backchannel. Each phrase is
    kept once: a looping reading ("Mm-hmm. Mm-hmm. Mm-hmm.") scores well for its
    repetition alone, while cutting a reading to its first phrase ("Yeah. Right." to
    "Yeah.") scores it for words that leave half the audio unread."""
    if "?" in reading or not _backchannel(words_of(reading)):
        return None
    kept: list[str] = []
    seen: set[tuple[str, ...]] = set()
    for piece in _PHRASE.findall(reading):
        said = tuple(words_of(piece))
        if said and said not in seen:
            seen.add(said)
            kept.append(piece.strip())
    text = " ".join(kept).rstrip(",;: ")
    return text if text.endswith((".", "?", "!")) else text + "."


class AsideReader(Protocol):
    """What reading an aside needs of the recogniser (`voice.stt.WhisperSTT`)."""

    async def transcribe(
        self, pcm16: bytes, sample_rate: int = ..., *, plain: bool = ..., primer: str | None = ...
    ) -> Transcript: ...

    async def score(self, pcm16: bytes, texts: Sequence[str]) -> list[float]: ...


@dataclass(frozen=True, slots=True)
class AsideReading:
    """What was said over a held reply, and why it does not stop it (`reason`: "noise",
    "backchannel", "echo"), or None: a barge-in."""

    heard: str
    reason: str | None
    # The reading primed with backchannels, when a short one was read again.
    reread: str | None = None


async def read_aside(
    stt: AsideReader,
    audio: bytes,
    reply: str,
    played: bytes,
    *,
    still_held: Callable[[], bool] = lambda: True,
    session_id: str = "",
    gauge: SpeechGauge = silero_voiced,
) -> AsideReading | None:
    """Read `audio`, said over `reply` after `played` went out. None when `still_held()`
    turns false while reading: something else decided meanwhile. `gauge` gives a
    second model's opinion of whether `audio` holds speech at all."""
    try:
        # Read without the catalogue's bias: it made products of "mm-hmm" and "right".
        transcript: Transcript | None = await stt.transcribe(audio, plain=True)
    except Exception as error:
        log.warning("aside_unheard session_id=%s error=%r", session_id, error)
        transcript = None
    if not still_held():
        return None
    if transcript is None:
        return AsideReading(heard="", reason=None)
    heard = transcript.text
    voiced = 1.0
    if _worth_gauging(heard, transcript.no_speech, transcript.confidence):
        try:
            voiced = await asyncio.wait_for(asyncio.to_thread(gauge, audio), GAUGE_TIMEOUT_S)
        except Exception as error:  # without the second opinion, the words alone decide
            log.warning("aside_ungauged session_id=%s error=%r", session_id, error)
        if not still_held():
            return None
    reason = aside(
        heard,
        reply,
        no_speech=transcript.no_speech,
        confidence=transcript.confidence,
        voiced=voiced,
    )
    if (
        reason is None
        and not must_hear(heard, reply)
        and echo_likeness(audio, played) >= ECHO_LIKENESS
    ):
        reason = "echo"
    if reason is not None or not worth_rereading(heard):
        return AsideReading(heard=heard, reason=reason)
    try:
        primed = await stt.transcribe(audio, plain=True, primer=BACKCHANNEL_PRIMER)
        backchannel = primed_backchannel(primed.text)
        gap = None
        if backchannel is not None:
            first, second = await stt.score(audio, [heard, backchannel])
            gap = first - second
    except Exception as error:
        log.warning("aside_unread session_id=%s error=%r", session_id, error)
        return AsideReading(heard=heard, reason=None) if still_held() else None
    if not still_held():
        return None
    log.info(  # counts, not the caller's words: logs escape retention and erasure
        "aside_reread session_id=%s words=%d primed_words=%d gap=%s",
        session_id,
        len(heard.split()),
        len(primed.text.split()),
        "-" if gap is None else f"{gap:.2f}",
    )
    backchannel_heard = gap is not None and gap <= REREAD_MARGIN
    return AsideReading(
        heard=heard, reason="backchannel" if backchannel_heard else None, reread=primed.text
    )
