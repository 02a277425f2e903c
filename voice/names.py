"""Other readings of a transcript, each with one catalogue name in place of the words
that sound most like it: the candidates a rescoring of the audio chooses among.

Whisper's beam keeps the reading its language model likes; for a drug name it has
rarely seen ("lore atadine", "Cetirinine"), the catalogue's spelling may fit the audio
as well or better and still lose in the beam. `WhisperSTT.score_sync` scores each
candidate against the audio; see benchmarks/product_names.py (`--rescore`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

_WORD = re.compile(r"[a-z0-9']+")


@dataclass(frozen=True, slots=True)
class Reading:
    name: str  # the catalogue name put in
    text: str
    similarity: float  # of the replaced words to the name, 0 to 100


def _plain(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def names_in_place(transcript: str, names: Sequence[str], limit: int) -> list[Reading]:
    """Up to `limit` readings, most similar first: for each name, the run of words (one
    to one more than the name has) whose letters are closest to it, replaced by it."""
    words = transcript.split()
    plain = [_plain(w) for w in words]
    found: list[Reading] = []
    for name in names:
        target = _plain(name)
        size_max = min(len(words), len(target.split()) + 1)
        best, where = 0.0, (0, 0)
        for size in range(1, size_max + 1):
            for start in range(len(words) - size + 1):
                score = fuzz.ratio(" ".join(plain[start : start + size]), target)
                if score > best:
                    best, where = score, (start, start + size)
        if best == 0.0:
            continue
        start, end = where
        # Keep the punctuation that followed the replaced words ("lore atadine," -> "Loratadine,").
        tail = re.sub(r"^[\w'-]+", "", words[end - 1])
        text = " ".join([*words[:start], name + tail, *words[end:]])
        if _plain(text) != _plain(transcript):
            found.append(Reading(name, text, best))
    found.sort(key=lambda r: -r.similarity)
    return found[:limit]
