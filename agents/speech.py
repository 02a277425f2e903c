"""Turning shop data into words that read aloud well. Pure functions."""

from __future__ import annotations

import re
from collections.abc import Sequence

from models.orders import LineView, OrderView
from models.shop import Product

_CURRENCIES = {"USD": ("dollar", "cent"), "EUR": ("euro", "cent"), "GBP": ("pound", "penny")}
_UNITS = (
    (r"\bmg\b", "milligram"),
    (r"\bml\b", "millilitre"),
    (r"\bg\b", "gram"),
    (r"\bmicrograms\b", "microgram"),
    (r"\bSPF\b", "S P F"),
)


def money(cents: int, currency: str = "USD") -> str:
    """1299 → "12 dollars 99"; 100 → "1 dollar"; 5 → "5 cents"."""
    major, minor = divmod(cents, 100)
    unit, small = _CURRENCIES.get(currency, (currency, "cent"))
    if major == 0:
        return f"{minor} {small if minor == 1 else _plural(small)}"
    words = f"{major} {unit if major == 1 else unit + 's'}"
    return f"{words} {minor:02d}" if minor else words


def _plural(word: str) -> str:
    return "pence" if word == "penny" else word + "s"


def strength_words(strength: str) -> str:
    out = strength
    for pattern, word in _UNITS:
        out = re.sub(pattern, word, out)
    return out


def describe(product: Product, currency: str = "USD") -> str:
    """One speakable sentence: name, strength and form, pack, price. No ids, no JSON."""
    parts = [product.name]
    form = " ".join(p for p in (strength_words(product.strength), product.form) if p)
    if form:
        parts.append(form)
    if product.pack_size > 1:
        parts.append(f"pack of {product.pack_size}")
    text = ", ".join(parts) + f", at {money(product.price_cents, currency)}"
    if product.prescription_only:
        text += ", prescription only"
    elif product.stock == 0:
        text += ", currently out of stock"
    return text


def line_words(line: LineView) -> str:
    packs = "1 pack" if line.quantity == 1 else f"{line.quantity} packs"
    return f"{packs} of {line.name}"


def spoken_list(items: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c": as a list is said."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def order_words(order: OrderView, currency: str = "USD") -> str:
    if not order.lines:
        return "nothing yet"
    listed = spoken_list([line_words(line) for line in order.lines])
    return f"{listed}, for a total of {money(order.total_cents, currency)}"


def order_number(order_id: int) -> str:
    """Order numbers are read digit by digit, as people read them back on the phone."""
    return " ".join(str(order_id))
