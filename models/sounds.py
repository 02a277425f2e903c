"""How a word sounds, as a short string of sound classes, for matching misheard names.

A recogniser that does not know a drug name writes what it heard in English words:
"tricore phenamine" for chlorphenamine, "low-remide" for loperamide, "tell the affine"
for terbinafine. Letters compare those badly ("tricore" shares little with "chlor");
their sounds are close. espeak-ng's letter-to-sound rules (the copy inside the
`piper-tts` wheel, already there for the voice) give each word's phonemes. Those are
then folded into classes a recogniser confuses with each other anyway: voiced and
unvoiced pairs, the nasals, and vowels into three groups, with stress and length
dropped.

Sounds are compared only for words the recogniser could not have meant as English:
"come down" sounds like "condoms", but a recogniser that wrote two dictionary words
heard two dictionary words. A word is English when it, or its stem without a plural or
past ending, is in Webster's list or GCIDE (`english-words`), or a contraction of one.

Without `piper-tts` (a text-only install) there are no sounds, and search matches on
letters alone.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Callable
from functools import lru_cache

log = logging.getLogger(__name__)

# American English, as Piper's bundled voice. Every call sets its voice under Piper's
# lock (see _Espeak), so whichever voice Piper speaks with is left alone.
_VOICE = "en-us"

_CLASSES: dict[str, str] = {}
for _letters, _class in (
    ("aɐʌɑæəɜᵻ", "a"),
    ("ɚɝ", "ar"),
    ("ɪieɛ", "i"),
    ("ɒɔoʊuɵ", "o"),
    ("pb", "p"),
    ("tdθðɾ", "t"),
    ("kgɡqx", "k"),
    ("fv", "f"),
    ("szʃʒ", "s"),
    ("ɹr", "r"),
    ("lɬɫ", "l"),
    ("mnŋ", "n"),
):
    for _letter in _letters:
        _CLASSES[_letter] = _class
# Glides, h and the glottal stop come and go between speakers and spellings.
_DROPPED = frozenset("hwjʔ")


# Each list is read once: a caller's turn that asks while the warm-up reads waits for
# that reading instead of making a second copy beside it (`lru_cache` would not wait).
_LISTS: dict[str, frozenset[str]] = {}
_READING = threading.RLock()  # GCIDE's reading reads Webster's first


def _read_once(name: str, read: Callable[[], frozenset[str]]) -> frozenset[str]:
    found = _LISTS.get(name)
    if found is None:
        with _READING:
            if name not in _LISTS:
                _LISTS[name] = read()
            found = _LISTS[name]
    return found


def _english(which: str) -> frozenset[str]:
    from english_words import get_english_words_set

    return frozenset(get_english_words_set([which], lower=True))


def _webster() -> frozenset[str]:
    return _read_once("web2", lambda: _english("web2") | _SPOKEN)


def _dictionary() -> frozenset[str]:
    # Webster's 1934 list and GCIDE: neither alone has "teenager" and "sashes" both.
    # Built on Webster's own set, so the words both hold are stored once.
    return _read_once("both", lambda: _webster() | _english("gcide"))


# Words callers say that neither dictionary holds.
_SPOKEN = frozenset(
    "okay ok yeah yep nope alright colour flavour website app apps online email "
    "hangover paediatric diarrhoea anaesthetic oestrogen haemorrhage".split()
)
_ENDINGS = ("'s", "s", "es", "ed", "d", "ing", "er", "ers", "ly")
_CONTRACTION = re.compile(r"(?:n't|'re|'ve|'ll|'d|'m|'s|s')$")


# Zipf frequency (log10 of uses per billion words) from which a word is everyday talk:
# "hand" 5.4, "back" 6.0, "night" 5.6, "pain" 5.0; a product's own rarer words stay
# under it ("vitamin" 4.0, "nicotine" 3.5, "heartburn" 2.9).
EVERYDAY_ZIPF = 5.0


def load() -> None:
    """Read both dictionaries and wordfreq's list now, not at a caller's first turn:
    importing wordfreq alone takes half a second."""
    _dictionary()
    everyday("hand")


@lru_cache(maxsize=8192)
def everyday(word: str) -> bool:
    """A word so common in English that hearing it says little of what was meant
    (wordfreq's English list: books, subtitles, the web and conversation)."""
    from wordfreq import zipf_frequency

    # The small list (the commonest words only) loads in milliseconds, not the large
    # one's tenth of a second, and holds every word this common.
    return zipf_frequency(word, "en", wordlist="small") >= EVERYDAY_ZIPF


@lru_cache(maxsize=8192)
def is_english(word: str, *, webster_only: bool = False) -> bool:
    """The word, or its stem, is in the dictionary: "bunched", "sashes", "memory",
    and "he's" or "can't" by what they are short for. `webster_only` leaves GCIDE out,
    which holds some drug names ("ibuprofen") a recogniser is still to be told of."""
    words = _webster() if webster_only else _dictionary()
    word = word.lower().strip("'")
    if word in words:
        return True
    short = _CONTRACTION.sub("", word)
    if short != word and (short in words or short in ("ca", "wo", "sha", "i", "he", "we")):
        return True
    for end in _ENDINGS:
        stem = word[: -len(end)]
        if word.endswith(end) and len(stem) >= 3:
            # "lubricating" is "lubricate", "allergies" is "allergy".
            if (
                stem in words
                or stem + "e" in words
                or (end == "es" and stem[-1] == "i" and stem[:-1] + "y" in words)
            ):
                return True
    return False


class _Espeak:
    """espeak-ng as Piper holds it: one per process, created and used under Piper's
    own lock, which Piper also holds while it phonemizes. espeak-ng keeps one voice
    for the whole process, set by a separate call before each text: without the lock,
    a voice set by one thread would phonemize another's words."""

    def __init__(self) -> None:
        from piper import voice
        from piper.phonemize_espeak import EspeakPhonemizer

        self._voice = voice
        with voice._ESPEAK_PHONEMIZER_LOCK:
            if voice._ESPEAK_PHONEMIZER is None:
                voice._ESPEAK_PHONEMIZER = EspeakPhonemizer()
        from piper import espeakbridge

        self._bridge = espeakbridge

    def phonemes(self, word: str) -> str:
        with self._voice._ESPEAK_PHONEMIZER_LOCK:
            self._bridge.set_voice(_VOICE)
            clauses = self._bridge.get_phonemes(word)
        # Words espeak-ng reads as another language come wrapped in "(fr)...(en)".
        return re.sub(r"\([^)]+\)", "", "".join(phonemes for phonemes, _, _ in clauses))


@lru_cache(maxsize=1)
def _espeak() -> _Espeak | None:
    # Kept for the process either way: no piper-tts (or a Piper without the private
    # lock read above) does not come back; a word that fails does not stay failed.
    try:
        return _Espeak()
    except Exception as error:  # no piper-tts, or its espeak-ng data: letters only
        log.warning("sounds_unavailable error=%r", error)
        return None


def fold(ipa: str) -> str:
    """IPA to sound classes: "ˈoʊmpɹɐzˌoʊl" → "onprasol" (runs of one class kept once)."""
    out = []
    for letter in unicodedata.normalize("NFD", ipa):
        if letter in _DROPPED:
            continue
        folded = _CLASSES.get(letter)
        if folded is None:
            folded = letter if letter.isalpha() and letter.isascii() else ""
        out.append(folded)
    return re.sub(r"(.)\1+", r"\1", "".join(out))


class _NoSound(Exception):
    """Raised inside the cache, so that a failure is tried again next time."""


@lru_cache(maxsize=8192)
def _sounds(word: str) -> str:
    espeak = _espeak()
    if espeak is None:
        raise _NoSound
    try:
        return fold(espeak.phonemes(word))
    except RuntimeError as error:
        log.warning("sounds_failed word=%r error=%s", word, error)
        raise _NoSound from error


def sounds(word: str) -> str | None:
    """The sound classes of one word; None without espeak-ng, "" for no letters."""
    if not re.search(r"[a-z]", word.lower()):
        return ""
    try:
        return _sounds(word)
    except _NoSound:  # a search must not fail for want of a sound
        return None


@lru_cache(maxsize=8192)
def _sounds_of(words: tuple[str, ...]) -> str:
    parts = [_sounds(w) if re.search(r"[a-z]", w.lower()) else "" for w in words]
    return re.sub(r"(.)\1+", r"\1", "".join(parts))


def clear_cache() -> None:
    """Forget every word's sounds (for tests that take espeak-ng away)."""
    _sounds.cache_clear()
    _sounds_of.cache_clear()


def sounds_of(words: tuple[str, ...]) -> str | None:
    """Several words said together, as one string: "tell the affine". Cached like
    `sounds`, since search asks it for every window against every product name."""
    try:
        return _sounds_of(words)
    except _NoSound:
        return None
