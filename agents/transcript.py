"""What a transcript's form says of how it was heard. Pure functions, no I/O.

The recogniser is primed with the catalogue's names, and its mistakes have a shape of
their own, apart from the words in them (docs/voice.md, Product names).
"""

from __future__ import annotations

import re

from models.sounds import is_english

# Words run together as a list: three parts or more between commas.
_LIST_PARTS = 3
_LIST_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+")
_SELF = frozenset({"i", "i'm", "i'd", "i'll", "i've"})
_SPELLED_WORD = re.compile(r"(?:[A-Za-z]-)+[A-Za-z]")


def _reads_as_a_name(part: str) -> bool:
    """One to three words, each capitalised, not all of them English: "Sanloratadine",
    "Mebae Fever"; not "Please", "Two Boxes" or "I'm"."""
    words = _LIST_WORD.findall(part)
    if any(_SPELLED_WORD.fullmatch(w) for w in words):
        return False  # "L-O-P-E-R-A-M-I-D-E", the answer to "spell it for me"
    return (
        1 <= len(words) <= 3
        and all(w[0].isupper() and w.lower() not in _SELF for w in words)
        and not all(is_english(w) for w in words)
    )


def heard_as_names(said: str) -> bool:
    """Whether the words read like the recogniser's own list of the catalogue's names:
    three parts or more between commas, half of them or more a name alone
    ("Cetiramok, Sanloratadine, Mebeverin, Terbole,"). Whisper is primed with the names
    as such a list, and when it hears badly it copies that list's form, and names in
    it, in place of the caller's words. A caller's own sentences rarely read so ("Two
    Paracetamol, one Ibuprofen, and a Vitamin C" does not); a product found in such
    words is a guess.

    Measured (docs/voice.md, Product names) on the daily sentences in all eight voices,
    before the other changes of that day: the wrong products offered outright went from
    17 to 7 through the phone band at 10 dB, and from 2 to 1 in wide band, at the cost
    of a question before 14 and 7 right ones."""
    parts = [p for p in said.split(",") if p.strip(" .?!")]
    names = sum(_reads_as_a_name(p) for p in parts)
    return len(parts) >= _LIST_PARTS and names >= 2 and 2 * names >= len(parts)
