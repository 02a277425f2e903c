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

A cough, a sneeze or a door gets words from Whisper too ("What?", "I don't know."):
`voice.noise` tells those from words said, with Silero's opinion when it counts. A call
for help is always heard, whatever the two models think (`must_hear`).

An echo is recognised twice over: by its words, when Whisper hears the reply's
own words, and by its sound, when the loudness of what was heard rises and falls
as the reply's did a moment before (`voice.echo.echo_likeness`): a short fragment of
echo is often heard as no word of the reply at all ("three options" as "Reoxy").
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from rapidfuzz import fuzz

from voice.echo import ECHO_LIKENESS, echo_likeness
from voice.noise import (
    MOST_WORDS,
    PlainReader,
    gauged,
    made_of_noise,
    must_hear,
    stop_or_question,
    words_of,
    worth_gauging,
)
from voice.speech import Transcript
from voice.voiced import SpeechGauge, silero_voiced

log = logging.getLogger("voice.overlap")

# What listeners say to keep a speaker going. Not "no", "wait" or "stop": those are
# meant to stop the reply.
_BACKCHANNEL = frozenset(
    """mm mmm mhm hm hmm uh huh um uhm ah oh aha yeah yes yep yup ok okay alright right
    sure fine cool great lovely good perfect nice thanks cheers gotcha true exactly
    absolutely brilliant excellent wonderful indeed understood aye righto ta grand sweet
    agreed definitely certainly totally really wow super""".split()
)
# Whom a caller says it to: "Yes, love.", "Cheers, mate." With a backchannel, never alone.
_VOCATIVE = frozenset("love dear mate pet hun darling sir madam ma'am".split())
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
    "that makes sense": "makes-sense",
    "go ahead": "go-ahead",
    # Saying they follow: alone, "with", "follow" and "listening" are not asides.
    "i'm with you": "with-you",
    "with you": "with-you",
    "i follow": "i-follow",
    "i'm listening": "listening",
    "i understand": "understood",
    "right you are": "right",
    "all good": "all-good",
    "very good": "very-good",
    # "Then" after a go-ahead: "go on then", "okay then".
    **{f"{w} then": f"{w}-then" for w in "okay ok alright right fine lovely great".split()},
    "go on then": "go-on",
    "all right then": "alright",
    **{f"that's {w}": f"that's-{w}" for w in "right fine great good true perfect lovely".split()},
}
# The longest phrase is matched first: "that makes sense" before "makes sense".
_LONGEST_PHRASE = max(len(p.split()) for p in _BACKCHANNEL_PHRASES)
# A phrase of a reading, with the punctuation that ends it.
_PHRASE = re.compile(r"[^.?!,]+[.?!,]*")
# Humming, however Whisper spells it: "Mm-m-m", "NMM", "Hmmm", "Mhm".
_HUM = re.compile(r"^[mnh]+$|^u+h+$")
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


def _backchannel(words: list[str]) -> bool:
    said: set[str] = set()
    i = 0
    while i < len(words):
        for n in range(_LONGEST_PHRASE, 1, -1):
            phrase = " ".join(words[i : i + n])
            if phrase in _BACKCHANNEL_PHRASES:
                said.add(_BACKCHANNEL_PHRASES[phrase])
                i += n
                break
        else:
            said.add(words[i])
            i += 1
    acknowledged = said - _VOCATIVE
    return (
        bool(acknowledged)
        and len(said) <= MOST_WORDS
        and all(
            w in _BACKCHANNEL or w in _BACKCHANNEL_PHRASES.values() or _HUM.match(w)
            for w in acknowledged
        )
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
    if made_of_noise(heard, no_speech, confidence, voiced):
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
    return (
        0 < len(distinct) <= REREAD_WORDS
        and not stop_or_question(heard, distinct)
        and not must_hear(heard)
    )


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


class AsideReader(PlainReader, Protocol):
    """What reading an aside needs of the recogniser (`voice.stt.WhisperSTT`)."""

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
    if worth_gauging(heard, transcript.no_speech, transcript.confidence):
        opinion = await gauged(gauge, audio, "aside_ungauged", session_id)
        voiced = 1.0 if opinion is None else opinion  # without it, the words alone decide
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
