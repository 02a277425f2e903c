"""The variant the caller's words pick, checked across the whole bundled catalogue.

Families are built from the catalogue itself (a shared active ingredient or first
name word), and every product's phrase is made from its own attributes, so a new
product is tested without anyone writing its name here.
"""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from agents.variants import (
    audience_of,
    form_groups,
    plain_of,
    resolve,
    strength_mg,
    variant_words,
)
from models.catalogue import read_catalogue
from models.shop import Product

PRODUCTS = read_catalogue()[1]
BY_NAME = {p.name: p for p in PRODUCTS}
# First words that name a variant, not a family: "Children's", "Low".
_NOT_FAMILY = {"children's", "low"}
# A spoken word for each form group, as a caller says it.
_SPOKEN_FORM = {"liquid": "liquid", "tablets": "tablets", "capsules": "capsules"}


def _families() -> dict[str, list[Product]]:
    groups: dict[str, list[Product]] = defaultdict(list)
    for product in PRODUCTS:
        ingredient = re.split(r",| and ", product.active_ingredient)[0].strip().lower()
        if ingredient:
            groups[ingredient].append(product)
        first = product.name.split()[0].lower()
        if first not in _NOT_FAMILY and first != ingredient:
            groups[first].append(product)
    # Best match first, as the search gives them: the plainer (shorter) name first.
    return {
        word: sorted(members, key=lambda p: (len(p.name), p.sku))
        for word, members in groups.items()
        if len(members) > 1
    }


FAMILIES = _families()


def _phrases(word: str, family: list[Product], product: Product) -> list[str]:
    """What a caller would say for `product`, one phrase for each attribute that only it has."""
    others = [p for p in family if p.sku != product.sku]
    # A product matched by ingredient alone (the word is in its siblings' names, not in
    # its own) is picked only by its own name.
    own_name = word in product.name.lower() or all(word not in p.name.lower() for p in family)
    said = [] if own_name else [product.name.lower()]
    if not own_name:
        return said  # matched by ingredient alone: only its name picks it
    if plain_of(family) is product:
        said.append(word)
    if audience_of(product) == "child" and all(audience_of(p) != "child" for p in others):
        said += [f"{word} for my toddler", f"the {word} for my baby"]
    spoken = {g: _SPOKEN_FORM.get(g, g) for g in form_groups(product)}
    for group, form in spoken.items():
        if all(group not in form_groups(p) for p in others):
            said.append(f"the {word} {form}")
    mg = strength_mg(product)
    if mg is not None and mg == int(mg) and all(strength_mg(p) != mg for p in others):
        said += [f"{word} {int(mg)} mg", f"the {int(mg)}s"]
    if product.pack_size > 1 and all(p.pack_size != product.pack_size for p in others):
        said += [f"{word}, pack of {product.pack_size}", f"the {product.pack_size}"]
    said.append(product.name.lower())
    return said


CASES = [
    pytest.param(family, phrase, product, id=f"{word}:{phrase}")
    for word, family in FAMILIES.items()
    for product in family
    for phrase in _phrases(word, family, product)
]


def test_the_catalogue_has_families_to_test() -> None:
    assert {"paracetamol", "ibuprofen", "aspirin", "nicotine"} <= set(FAMILIES)
    assert len(CASES) > 40


@pytest.mark.parametrize(("family", "said", "product"), CASES)
def test_each_product_is_picked_by_its_own_attributes(
    family: list[Product], said: str, product: Product
) -> None:
    got = resolve(family, said)
    assert got.product is not None, f"{said!r} gave options {[p.name for p in got.options]}"
    assert got.product.sku == product.sku
    assert got.options == ()


CHILD_PHRASES = [
    "for my toddler",
    "for my baby",
    "the children's one",
    "for the kids",
    "the liquid for my toddler",
    "for my son who is 3",
    "my daughter is 4 years old",
    "for my little one",
    "the strong ones for my toddler",
    "the tablets for my baby",
    "the gel for my toddler",
    "the 400s for the kids",
    "the bigger pack for my infant",
    "just the normal ones for my child",
]


@pytest.mark.parametrize("said", CHILD_PHRASES)
def test_words_about_a_child_never_give_an_adult_product(said: str) -> None:
    assert variant_words(said).audience == "child"
    for word, family in FAMILIES.items():
        for phrase in (said, f"{word} {said}", f"{said} {word}"):
            got = resolve(family, phrase)
            chosen = [got.product] if got.product else []
            assert all(audience_of(p) != "adult" for p in [*chosen, *got.options]), (
                word,
                phrase,
            )


def test_a_family_with_nothing_for_children_gives_nothing_for_a_child() -> None:
    got = resolve(FAMILIES["aspirin"], "aspirin for my toddler")
    assert got.product is None and got.options == ()


def _names(*names: str) -> list[Product]:
    return [BY_NAME[n] for n in names]


IBUPROFEN = _names(
    "Ibuprofen", "Ibuprofen Strong", "Ibuprofen Gel", "Children's Ibuprofen Suspension"
)
PARACETAMOL = _names(
    "Paracetamol",
    "Paracetamol Extra Pack",
    "Children's Paracetamol Suspension",
    "Cold and Flu Relief",
)


@pytest.mark.parametrize(
    ("family", "said", "name"),
    [
        (IBUPROFEN, "ibuprofen", "Ibuprofen"),
        (IBUPROFEN, "the gel one", "Ibuprofen Gel"),
        (IBUPROFEN, "can I get the ibuprofen gel please", "Ibuprofen Gel"),
        (IBUPROFEN, "the liquid for my toddler", "Children's Ibuprofen Suspension"),
        (IBUPROFEN, "the strong ones", "Ibuprofen Strong"),
        (IBUPROFEN, "the stronger ones please", "Ibuprofen Strong"),
        (IBUPROFEN, "extra strength ibuprofen", "Ibuprofen Strong"),
        (IBUPROFEN, "the 400s", "Ibuprofen Strong"),
        (IBUPROFEN, "two of the four hundreds", "Ibuprofen Strong"),
        (IBUPROFEN, "one box of the ibuprofen 400", "Ibuprofen Strong"),
        (IBUPROFEN, "ibuprofen four hundred milligrams", "Ibuprofen Strong"),
        (IBUPROFEN, "the 200 ones", "Ibuprofen"),
        (IBUPROFEN, "the children's one", "Children's Ibuprofen Suspension"),
        (IBUPROFEN, "ibuprofen for my son who is 3", "Children's Ibuprofen Suspension"),
        (IBUPROFEN, "just the normal ones", "Ibuprofen"),
        (IBUPROFEN, "not the children's one, the normal one", "Ibuprofen"),
        (IBUPROFEN, "um the uh gel", "Ibuprofen Gel"),
        (IBUPROFEN, "two boxes of ibuprofen", "Ibuprofen"),
        (IBUPROFEN, "I'll take 2 then", "Ibuprofen"),
        (PARACETAMOL, "paracetamol", "Paracetamol"),
        (PARACETAMOL, "the liquid for my toddler", "Children's Paracetamol Suspension"),
        (
            PARACETAMOL,
            "paracetamol liquid for my toddler please",
            "Children's Paracetamol Suspension",
        ),
        (PARACETAMOL, "the bigger pack", "Paracetamol Extra Pack"),
        (PARACETAMOL, "the bigger pack of paracetamol please, just one", "Paracetamol Extra Pack"),
        (PARACETAMOL, "the 32", "Paracetamol Extra Pack"),
        (PARACETAMOL, "one pack of the 32 paracetamol", "Paracetamol Extra Pack"),
        (PARACETAMOL, "the thirty two", "Paracetamol Extra Pack"),
        (PARACETAMOL, "32 tablets", "Paracetamol Extra Pack"),
        (PARACETAMOL, "the 16", "Paracetamol"),
        (PARACETAMOL, "the children's one", "Children's Paracetamol Suspension"),
        (PARACETAMOL, "just the normal ones", "Paracetamol"),
        (PARACETAMOL, "cold and flu relief", "Cold and Flu Relief"),
        (FAMILIES["aspirin"], "the 75", "Low Dose Aspirin"),
        (FAMILIES["aspirin"], "the stronger aspirin", "Aspirin"),
        (FAMILIES["nicotine"], "the gum", "Nicotine Gum"),
    ],
)
def test_as_callers_say_it(family: list[Product], said: str, name: str) -> None:
    got = resolve(family, said)
    assert got.product is not None, [p.name for p in got.options]
    assert got.product.name == name


@pytest.mark.parametrize(
    ("family", "said", "options"),
    [
        # Nothing is plain: ask, do not pick the shortest name.
        (FAMILIES["nicotine"], "nicotine", {"Nicotine Patches", "Nicotine Gum"}),
        # A son of no stated age: the question offers the children's product too.
        (IBUPROFEN, "ibuprofen for my son", {"Ibuprofen", "Children's Ibuprofen Suspension"}),
        (
            PARACETAMOL,
            "paracetamol for my daughter",
            {"Paracetamol", "Children's Paracetamol Suspension"},
        ),
        # Nothing fits: the closest, never a children's one for an adult.
        (IBUPROFEN, "ibuprofen liquid for adults", {"Ibuprofen", "Ibuprofen Strong"}),
        (IBUPROFEN, "ibuprofen 600 mg", {"Ibuprofen", "Ibuprofen Strong"}),
        (IBUPROFEN, "the 32", {"Ibuprofen"}),
        (IBUPROFEN, "the gel for my toddler", {"Children's Ibuprofen Suspension"}),
        # Both children's products, when the family is the children's ones.
        (
            _names("Children's Paracetamol Suspension", "Children's Ibuprofen Suspension"),
            "the liquid for my toddler",
            {"Children's Paracetamol Suspension", "Children's Ibuprofen Suspension"},
        ),
        # Paracetamol capsules do not exist; Cold and Flu Relief is only offered.
        (PARACETAMOL, "paracetamol capsules", {"Cold and Flu Relief"}),
    ],
)
def test_unclear_words_give_options(family: list[Product], said: str, options: set[str]) -> None:
    got = resolve(family, said)
    assert got.product is None
    names = {p.name for p in got.options}
    assert options <= names and len(got.options) <= 3
    if "adult" in said:
        assert all(audience_of(p) != "child" for p in got.options)


@pytest.mark.parametrize(
    ("said", "field", "value"),
    [
        ("the gel one", "form", "gel"),
        ("the syrup", "form", "liquid"),
        ("the suspension", "form", "liquid"),
        ("400 mg", "strength_mg", 400),
        ("the 400s", "strength_mg", 400),
        ("four hundred milligram", "strength_mg", 400),
        ("pack of 32", "pack_size", 32),
        ("the 32", "pack_size", 32),
        ("32 tablets", "pack_size", 32),
        ("two tablets", "pack_size", None),
        ("two boxes", "pack_size", None),
        ("the bigger pack", "pack", "bigger"),
        ("a smaller box", "pack", "smaller"),
        ("maximum strength", "strong", True),
        ("for my toddler", "audience", "child"),
        ("for the kids", "audience", "child"),
        ("my 6 year old", "audience", "child"),
        ("for my son", "audience", "unsure"),
        ("for my son who is 30", "audience", "adult"),
        ("for adults", "audience", "adult"),
        ("not for children", "audience", None),
        ("the normal ones", "plain", True),
    ],
)
def test_variant_words(said: str, field: str, value: object) -> None:
    assert getattr(variant_words(said), field) == value


def test_audience_comes_from_the_products_own_words() -> None:
    children = {p.name for p in PRODUCTS if audience_of(p) == "child"}
    assert "Children's Ibuprofen Suspension" in children and "Teething Gel" in children
    assert audience_of(BY_NAME["Ibuprofen"]) == "adult"
    assert audience_of(BY_NAME["Digital Thermometer"]) == "any"
