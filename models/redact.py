"""Payment-card numbers and dates of birth, taken out of what is stored.

A caller may read out their card or their date of birth. The swarm hears it (the
turn's reply may need it), but the stored transcript, turn timings and journal keep
a mark in its place: `[card number]`, `[date of birth]`. Pure functions.

- A card number is 13 to 19 digits, alone or in groups split by spaces or dashes,
  that pass the Luhn check: an order number, a phone number or a price does not.
- A date of birth is a date (numbers, or a day and a month's name, with a year or
  not) said after "date of birth", "DOB", "born" or "birthday". A date alone ("on
  the 3rd of March") is kept: it is more often a delivery than a birth.

Numbers said as words ("four one one one …") are not recognised; Whisper writes
digits for a run of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

CARD_MARK = "[card number]"
BIRTH_MARK = "[date of birth]"

# A run of digit groups, as Whisper writes a number read out: "4111 1111 …",
# "4111, 1111, …", "4111-1111-…".
_RUN = re.compile(r"\d+(?:(?:[ .-]|, ?)\d+)*")
_GROUP = re.compile(r"\d+")
_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
# The cheap test first: most stored text has no digit and names no month ("mar" in
# "summary" or "may" in "maybe" must not send it through the date patterns).
_MONTH = re.compile(rf"\b(?:{_MONTHS})\b", re.IGNORECASE)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = r"(?:\d{4}|'?\d{2})"
_DATE = (
    rf"(?:\d{{1,4}}[/.-]\d{{1,2}}[/.-]\d{{1,4}}"  # 12/03/1980, 1980-03-12
    rf"|(?:the\s+)?{_DAY}\s+(?:of\s+)?(?:{_MONTHS})\b(?:,?\s+{_YEAR})?"  # 3rd of March 1980
    rf"|(?:{_MONTHS})\s+(?:the\s+)?{_DAY}\b(?:,?\s+{_YEAR})?)"  # March 3rd, 1980
)
_BIRTH = re.compile(
    rf"(?P<lead>\b(?:date of birth|d\.?o\.?b\.?|born|birthday|birth date)\b[^.?!\d]{{0,24}}?)"
    rf"(?P<date>{_DATE})",
    re.IGNORECASE,
)


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    """The run with the card number in it marked: the longest stretch of whole groups
    of 13 to 19 digits that passes Luhn ("4111 1111 1111 1111 123" keeps the CVV's
    neighbour out of the sum, so the card alone is found)."""
    run = match.group()
    groups = list(_GROUP.finditer(run))
    best: tuple[int, int] | None = None
    for i in range(len(groups)):
        digits = ""
        for j in range(i, len(groups)):
            digits += groups[j].group()
            if len(digits) > 19:
                break
            if len(digits) >= 13 and _luhn(digits):
                span = (groups[i].start(), groups[j].end())
                if best is None or span[1] - span[0] > best[1] - best[0]:
                    best = span
    if best is None:
        return run
    return run[: best[0]] + CARD_MARK + _card_rest(run[best[1] :])


def _card_rest(rest: str) -> str:
    found = _RUN.search(rest)
    return rest if found is None else rest[: found.start()] + _card(found) + rest[found.end() :]


def redact(text: str) -> str:
    """`text` with card numbers and dates of birth replaced by their marks."""
    if not any(ch.isdigit() for ch in text) and not _MONTH.search(text):
        return text
    text = _RUN.sub(_card, text)
    return _BIRTH.sub(lambda m: m.group("lead") + BIRTH_MARK, text)


def redact_data(value: Any) -> Any:
    """Every string in a JSON-like value redacted (tool arguments, event payloads)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v) for v in value]
    return value


# A lone UTF-16 half (JSON's "\ud800", which a model's reply can hold) cannot be
# encoded as UTF-8: SQLite and PostgreSQL refuse it as they refuse a NUL.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(value: Any) -> Any:
    """Without NUL characters or lone surrogates, which the databases refuse in text and
    JSON: one such character jammed every later write of its session (the socket fuzz
    found the NUL; a model's reply holding "\ud800", the surrogate)."""
    if isinstance(value, str):
        return _UNSTORABLE.sub("", value)
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class Redaction:
    """What the writers apply to stored text: redaction on (the default setting) or
    off, and always `storable`."""

    on: bool = True

    def text(self, value: str) -> str:
        value = storable(value)
        return redact(value) if self.on else value

    def data(self, value: Any) -> Any:
        value = storable(value)
        return redact_data(value) if self.on else value


REDACT = Redaction(on=True)
