"""Cutting a reply's token stream into speakable pieces as it arrives. Pure.

A piece ends at . ! ? or a line break followed by more text, but not after an
abbreviation ("Dr."), an initial ("J."), inside a number ("3.20") or a price
("$2.99"). The first two pieces of a reply may end at a clause (, ; :) once they
have a few words: the first so the first audio starts sooner, the second so it is
synthesised before a short first piece ("Thank you.") has finished playing.
"""

from __future__ import annotations

import re

ABBREVIATIONS = frozenset(
    "mr mrs ms dr st no vs etc eg ie approx mt jr sr prof inc ltd co tab tabs".split()
)
_END = re.compile(r"[.!?]+[\"')\]]*(?=\s)|\n+")
_CLAUSE = re.compile(r"[,;:](?=\s)")


class SentenceSplitter:
    def __init__(self, *, first_clause_words: int = 4, clause_pieces: int = 2) -> None:
        self._buffer = ""
        self._pieces = 0  # pieces cut from this reply so far
        self._first_clause_words = first_clause_words
        self._clause_pieces = clause_pieces

    def feed(self, text: str) -> list[str]:
        """Add streamed text; return the pieces now complete, in order."""
        self._buffer += text
        pieces: list[str] = []
        while True:
            cut = self._next_cut()
            if cut is None:
                return pieces
            piece, self._buffer = self._buffer[:cut].strip(), self._buffer[cut:]
            if piece:
                pieces.append(piece)
                self._pieces += 1

    def flush(self) -> list[str]:
        """The rest, once the reply is complete."""
        rest, self._buffer = self._buffer.strip(), ""
        self._pieces = 0
        return [rest] if rest else []

    def _next_cut(self) -> int | None:
        cut = None
        for match in _END.finditer(self._buffer):
            if match.group(0).startswith("\n") or not self._false_end(match.start()):
                cut = match.end()
                break
        if self._pieces < self._clause_pieces:
            # Whichever comes first: a reply that arrives whole must still start short.
            for match in _CLAUSE.finditer(self._buffer, 0, cut or len(self._buffer)):
                if len(self._buffer[: match.start()].split()) >= self._first_clause_words:
                    return match.end()
        return cut

    def _false_end(self, dot: int) -> bool:
        if self._buffer[dot] != ".":
            return False
        word = re.search(r"([A-Za-z]+)\.?$", self._buffer[: dot + 1])
        if word is None:
            return False
        token = word.group(1)
        return token.lower() in ABBREVIATIONS or (len(token) == 1 and token.isupper())
