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
past ending, is in Webster's list (`english-words`, 234,000 words).

Without `piper-tts` (a text-only install) there are no sounds, and search matches on
letters alone.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from functools import lru_cache

log = logging.getLogger(__name__)

# The voice Piper's bundled model speaks with. espeak-ng keeps one voice for the whole
# process, and Piper sets its own before each sentence in a separate call: using the
# same one here means neither can change what the other hears.
_VOICE = "en-us"

_CLASSES: dict[str, str] = {}
for _letters, _class in (
    ("aɐʌɑæəɜᵻ", "a"),
    ("ɚɝ", "ar"),
    ("ɪieɛ", "i"),
    ("ɒɔoʊuɵ", "o"),
    ("pb", "p"),
    ("tdθð", "t"),
    ("kgɡqx", "k"),
    ("fv", "f"),
    ("szʃʒ", "s"),
    ("ɹrɾ", "r"),
    ("lɬɫ", "l"),
    ("mnŋ", "n"),
):
    for _letter in _letters:
        _CLASSES[_letter] = _class
# Glides, h and the glottal stop come and go between speakers and spellings.
_DROPPED = frozenset("hwjʔ")


@lru_cache(maxsize=1)
def _dictionary() -> frozenset[str]:
    from english_words import get_english_words_set

    return frozenset(get_english_words_set(["web2"], lower=True))


_ENDINGS = ("'s", "s", "es", "ed", "d", "ing", "er", "ers", "ly")


@lru_cache(maxsize=8192)
def is_english(word: str) -> bool:
    """The word, or its stem, is in the dictionary: "bunched", "sashes", "memory"."""
    words = _dictionary()
    word = word.lower().strip("'")
    if word in words:
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


@lru_cache(maxsize=1)
def _bridge() -> object | None:
    try:
        from piper import espeakbridge
        from piper.phonemize_espeak import ESPEAK_DATA_DIR
    except ImportError:
        log.info("sounds_unavailable reason=no_piper")
        return None
    from piper import voice

    # Piper initialises espeak-ng once for its phonemizer; doing it again would drop
    # the voice Piper just set, between its two calls.
    if getattr(voice, "_ESPEAK_PHONEMIZER", None) is None:
        espeakbridge.initialize(str(ESPEAK_DATA_DIR))
    return espeakbridge


def fold(ipa: str) -> str:
    """IPA to sound classes: "ˈoʊmpɹɐzˌoʊl" → "opraso" (runs of one class kept once)."""
    out = []
    for letter in unicodedata.normalize("NFD", ipa):
        if letter in _DROPPED:
            continue
        folded = _CLASSES.get(letter)
        if folded is None:
            folded = letter if letter.isalpha() and letter.isascii() else ""
        out.append(folded)
    return re.sub(r"(.)\1+", r"\1", "".join(out))


@lru_cache(maxsize=8192)
def sounds(word: str) -> str | None:
    """The sound classes of one word; None without espeak-ng, "" for no letters."""
    if not re.search(r"[a-z]", word.lower()):
        return ""
    bridge = _bridge()
    if bridge is None:
        return None
    # The extension holds the GIL for each call, so threads cannot interleave inside it.
    try:
        bridge.set_voice(_VOICE)  # type: ignore[attr-defined]
        clauses = bridge.get_phonemes(word)  # type: ignore[attr-defined]
    except RuntimeError as error:  # a search must not fail for want of a sound
        log.warning("sounds_failed word=%r error=%s", word, error)
        return None
    return fold("".join(phonemes for phonemes, _, _ in clauses))


@lru_cache(maxsize=8192)
def sounds_of(words: tuple[str, ...]) -> str | None:
    """Several words said together, as one string: "tell the affine"."""
    parts = [sounds(w) for w in words]
    if any(p is None for p in parts):
        return None
    return re.sub(r"(.)\1+", r"\1", "".join(p for p in parts if p))
