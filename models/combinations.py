"""Medicines of several ingredients, named by them.

A caller who asks for "the piles cream with lidocaine and hydrocortisone" has named
Haemorrhoid Cream by its ingredients, and the search, which compares names, put
Hydrocortisone Cream first (0.90 against 0.84). One who asks for "ibuprofen and
paracetamol together in one tablet" (Nuromol), or "the one with aspirin and
acetaminophen and caffeine" (Excedrin), asked for a combination the shop lacks, and
was offered Paracetamol, or Aspirin, outright as if it were that.

An ingredient is named by its own word ("codeine"), or by any name the drug list pairs
with it ("acetaminophen", "tylenol" and "nurofen" name paracetamol and ibuprofen;
models/drug_names.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from models.drug_names import drugs_named, spelling

_SPLIT = re.compile(r",|\band\b|\bwith\b|\+|/")
# Said of a combination, not of two products: "together", "in one", "the one with".
_TOGETHER = frozenset("together combined combination combo".split())
# Not "both in" alone: "do you have both in stock" asks for two.
_TOGETHER_SAID = (("in", "one"), ("both", "in", "one"), ("both", "in", "it"), ("does", "both"))
_JOINING = frozenset("with plus".split())


@dataclass(frozen=True, slots=True)
class Made:
    """A product and its ingredients, each as it is written and as a drug is named."""

    sku: str
    ingredients: tuple[str, ...]


@lru_cache(maxsize=16)
def made_of(rows: tuple[tuple[str, str], ...]) -> tuple[Made, ...]:
    """(sku, active ingredient) rows as `Made`: "codeine and paracetamol" is two."""
    return tuple(
        Made(sku, tuple(p.strip() for p in _SPLIT.split(ingredient.lower()) if p.strip()))
        for sku, ingredient in rows
    )


def named_ingredients(tokens: Sequence[str], made: Sequence[Made]) -> dict[str, list[int]]:
    """The catalogue's ingredients the words name, each with where it is named."""
    known = sorted({i for m in made for i in m.ingredients})
    said = [spelling(t) for t in tokens]
    heard: list[frozenset[str]] | None = None  # each word's drugs, read once if needed
    found: dict[str, list[int]] = {}
    for ingredient in known:
        words = [spelling(w) for w in ingredient.split()]
        at = [k for k in range(len(said) - len(words) + 1) if said[k : k + len(words)] == words]
        if not at and len(words) == 1 and (drugs := drugs_named(ingredient)):
            if heard is None:
                heard = [drugs_named(t) for t in tokens]
            at = [k for k, d in enumerate(heard) if d & drugs]
        if at:
            found[ingredient] = at
    # "potassium bicarbonate" is not also the potassium of another product.
    spans = {i: {(k, k + len(i.split())) for k in at} for i, at in found.items()}
    return {
        i: at
        for i, at in found.items()
        if not all(
            any(o != i and a <= k and e <= b for o in spans for a, b in spans[o])
            for k, e in spans[i]
        )
    }


def all_named(tokens: Sequence[str], made: Sequence[Made]) -> set[str]:
    """The products of two ingredients or more whose every ingredient the words name."""
    several = [m for m in made if len(m.ingredients) >= 2]
    if not several:
        return set()
    named = named_ingredients(tokens, several)
    return {m.sku for m in several if all(i in named for i in m.ingredients)}


def together_lacked(tokens: Sequence[str], made: Sequence[Made]) -> tuple[str, ...]:
    """The ingredients, in the order said, of a combination the caller asked for ("in
    one", "together", "ibuprofen with codeine", "the one with") that no product is; ()
    when they asked for none, or the shop has it. "Paracetamol, with some ibuprofen as
    well" asks for two products."""
    together = bool(_TOGETHER.intersection(tokens)) or any(
        tuple(tokens[k : k + len(cue)]) == cue for cue in _TOGETHER_SAID for k in range(len(tokens))
    )
    if not (together or _JOINING.intersection(tokens)):
        return ()  # most sentences: no ingredient is looked for
    named = named_ingredients(tokens, made)
    if len(named) < 2:
        return ()
    at = {k for places in named.values() for k in places}
    joined = any(
        t in _JOINING and (k + 1 in at or (k + 2 in at and tokens[k + 1] == "the"))
        for k, t in enumerate(tokens)
    )
    # The shop has it only as that mix: paracetamol with caffeine is not Cold and Flu
    # Relief, which has phenylephrine too.
    if not (together or joined) or any(set(named) == set(m.ingredients) for m in made):
        return ()
    return tuple(sorted(named, key=lambda i: min(named[i])))


def holding(made: Made, ingredients: Iterable[str]) -> bool:
    """The product holds every one of these, and more: a wider mix than asked for."""
    return set(made.ingredients) > set(ingredients)


def of_these_only(made: Made, ingredients: Iterable[str]) -> bool:
    """Every ingredient of the product is one of these: a part of the combination."""
    return set(made.ingredients) <= set(ingredients)
