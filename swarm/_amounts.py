"""Amounts of money in text, so that a model's own words never state a price.

Money is code: a price or a total a caller hears must come from a tool's words (or
code's), which read it from the database. A model that works out "two at 2.99 is
5.98" itself, or remembers a price from its training, is caught here and rescued.
Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

# Number words, shared with the agencies' parsers (they say prices, counts, strengths);
# read-only, since every caller's session reads them.
NUMBER_UNITS: Mapping[str, int] = MappingProxyType(
    {
        w: i
        for i, w in enumerate(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen".split()
        )
    }
)
NUMBER_TENS: Mapping[str, int] = MappingProxyType(
    {
        w: 10 * i
        for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)
    }
)
_UNITS, _TENS = NUMBER_UNITS, NUMBER_TENS
_SMALL = (
    r"\d+|(?:" + "|".join(_TENS) + r")(?:[\s-](?:" + "|".join(list(_UNITS)[1:10]) + r"))?"
    r"|" + "|".join(sorted(_UNITS, key=len, reverse=True))
)
_NUMBER = _SMALL + r"|a|an"  # "a dollar"; never the pence: "2 dollars a pack"
_MAJOR = r"dollars?|bucks?|pounds?|quid|euros?"
_MINOR = r"cents?|pence|p(?!\.?\s?m\b)"  # "6 p.m." is a time
_AMOUNT = re.compile(
    # "$4.99", "£5", "€12,50"
    r"[$£€]\s?(?P<sym>\d+)(?:[.,](?P<sym_minor>\d{2}))?\b"
    # "4 dollars 99", "five pounds and twenty pence", "4.99 dollars"
    rf"|\b(?P<major>{_NUMBER})(?:[.,](?P<dec>\d{{2}}))?\s+(?:{_MAJOR})\b"
    rf"(?:,?\s+(?:and\s+)?(?P<minor>{_SMALL})(?:\s+(?:{_MINOR}))?\b)?"
    # "99 cents", "fifty pence"
    rf"|\b(?P<cents>{_NUMBER})\s*(?:{_MINOR})\b"
    # "it's 4.99": two decimals after words that give a price ("open at 8.30" is a time)
    r"|\b(?:is|it'?s|that'?s|costs?|costing|priced|price|total|only|just|be)\s+"
    r"(?P<bare>\d+)\.(?P<bare_minor>\d{2})\b(?!\s*(?:am|pm|a\.m|p\.m|mg|ml|g)\b)",
    re.IGNORECASE,
)


def _value(word: str | None) -> int | None:
    if word is None:
        return None
    word = word.lower().replace("-", " ")
    if word.isdigit():
        return int(word)
    if word in ("a", "an"):
        return 1
    parts = word.split()
    if parts[0] in _TENS:
        return _TENS[parts[0]] + (_UNITS[parts[1]] if len(parts) > 1 else 0)
    return _UNITS.get(word)


def amounts(text: str) -> set[int]:
    """Every amount of money `text` states, in cents (hundredths of any currency)."""
    found: set[int] = set()
    for match in _AMOUNT.finditer(text):
        if match.group("sym") is not None:
            found.add(100 * int(match.group("sym")) + int(match.group("sym_minor") or 0))
        elif match.group("major") is not None:
            major = _value(match.group("major")) or 0
            minor = _value(match.group("minor")) or int(match.group("dec") or 0)
            found.add(100 * major + minor)
        elif match.group("cents") is not None:
            cents = _value(match.group("cents"))
            if cents is not None:
                found.add(cents)
        else:
            found.add(100 * int(match.group("bare")) + int(match.group("bare_minor")))
    return found


def ungrounded_amounts(text: str, sources: list[str]) -> set[int]:
    """The amounts `text` states that none of `sources` stated."""
    said = amounts(text)
    if not said:
        return set()
    known: set[int] = set()
    for source in sources:
        known |= amounts(source)
    return said - known


# From one of these on, streamed words are held until the whole output is checked.
MONEY_OPENER = re.compile(rf"[$£€]|\d|\b(?:{_MAJOR}|{_MINOR})\b", re.IGNORECASE)
