"""Text as it should be read aloud: prices, quantities and order numbers. Pure.

The agency already writes speakable text; this catches what a model writes itself.
"""

from __future__ import annotations

import re

_CURRENCY = {"$": ("dollar", "cents"), "€": ("euro", "cents"), "£": ("pound", "pence")}
_UNITS = {
    "mg": "milligrams",
    "ml": "millilitres",
    "mcg": "micrograms",
    "g": "grams",
    "kg": "kilograms",
}


def _price(match: re.Match[str]) -> str:
    unit, small = _CURRENCY[match.group("sym")]
    major = int(match.group("major").replace(",", ""))
    minor = match.group("minor")
    words = f"{major} {unit}{'' if major == 1 else 's'}"
    if minor and int(minor):
        words += f" {int(minor)}" if major else ""
        if not major:
            words = f"{int(minor)} {small}"
    return words


def for_speech(text: str) -> str:
    text = re.sub(r"(?P<sym>[$€£])\s?(?P<major>\d[\d,]*)(?:\.(?P<minor>\d{2}))?", _price, text)
    text = re.sub(
        r"\b(\d+(?:\.\d+)?)\s?(mg|ml|mcg|g|kg)\b",
        lambda m: f"{m.group(1)} {_UNITS[m.group(2).lower()]}",
        text,
        flags=re.IGNORECASE,
    )
    # "order #1042" or "order number 1042": read digit by digit, as people read them back.
    text = re.sub(
        r"(?:#|\bnumber\s)(\d{3,})\b",
        lambda m: "number " + " ".join(m.group(1)),
        text,
    )
    text = re.sub(r"(\d+)\s?x\b", r"\1 times", text)
    text = text.replace("&", " and ").replace("%", " percent")
    return re.sub(r"\s{2,}", " ", text).strip()
