"""One sentence, the items it asks for: none dropped, none split inside a product's name."""

from __future__ import annotations

import pytest

from agents.items import Wanted, split_items
from models.catalogue import read_catalogue

NAMES = [p.name for p in read_catalogue()[1]]


@pytest.mark.parametrize(
    ("said", "items"),
    [
        (
            "one of the paracetamol and one of the loratadine",
            [("the paracetamol", 1), ("the loratadine", 1)],
        ),
        (
            "um can I get one of the paracetamol and one of the loratadine",
            [("the paracetamol", 1), ("the loratadine", 1)],
        ),
        (
            "two boxes of ibuprofen and a bottle of the dry cough syrup",
            [("ibuprofen", 2), ("the dry cough syrup", 1)],
        ),
        ("paracetamol and ibuprofen please", [("paracetamol", None), ("ibuprofen", None)]),
        ("two boxes of paracetamol", [("paracetamol", 2)]),
        ("a couple of boxes of paracetamol", [("paracetamol", 2)]),
        ("honey and lemon lozenges", [("honey and lemon lozenges", None)]),
        ("cold and flu relief", [("cold and flu relief", None)]),
        ("oral rehydration salts", [("oral rehydration salts", None)]),
        (
            "three packs of cetirizine as well as the honey and lemon lozenges",
            [("cetirizine", 3), ("the honey and lemon lozenges", None)],
        ),
        (
            "cold and flu relief and two paracetamol",
            [("cold and flu relief", None), ("paracetamol", 2)],
        ),
        (
            "paracetamol, ibuprofen, and loratadine",
            [("paracetamol", None), ("ibuprofen", None), ("loratadine", None)],
        ),
        ("paracetamol plus ibuprofen", [("paracetamol", None), ("ibuprofen", None)]),
        ("I'd like paracetamol also ibuprofen", [("paracetamol", None), ("ibuprofen", None)]),
        (
            "can I get paracetamol and then some ibuprofen",
            [("paracetamol", None), ("ibuprofen", None)],
        ),
        ("uh, paracetamol, uh, and, um, ibuprofen", [("paracetamol", None), ("ibuprofen", None)]),
        ("a paracetamol and an ibuprofen", [("paracetamol", 1), ("ibuprofen", 1)]),
        ("2 x paracetamol and 3 ibuprofen", [("paracetamol", 2), ("ibuprofen", 3)]),
        (
            "half a dozen paracetamol and one loratadine",
            [("paracetamol", 6), ("loratadine", 1)],
        ),
        ("two of each, paracetamol and ibuprofen", [("paracetamol", 2), ("ibuprofen", 2)]),
        # A quantity said after the item is that item's.
        ("paracetamol, two boxes", [("paracetamol", 2)]),
        # A variant alone is of the family named just before it.
        (
            "the strong ibuprofen and one of the gel",
            [("the strong ibuprofen", None), ("the gel ibuprofen", 1)],
        ),
        # Numbers that are a pack or a strength are part of the words, not a quantity.
        ("32 paracetamol", [("32 paracetamol", None)]),
        ("500 mg paracetamol and ibuprofen", [("500 mg paracetamol", None), ("ibuprofen", None)]),
        ("two hundred and fifty mg naproxen", [("two hundred and fifty mg naproxen", None)]),
        ("the gel one", [("the gel one", None)]),
        ("the ibuprofen gel please", [("the ibuprofen gel", None)]),
        ("yes and paracetamol", [("paracetamol", None)]),
        ("vitamin c and zinc", [("vitamin c", None), ("zinc", None)]),
        ("that's all thanks", []),
    ],
)
def test_items_said_in_one_sentence(said: str, items: list[tuple[str, int | None]]) -> None:
    assert split_items(said, NAMES) == [Wanted(words, quantity) for words, quantity in items]


@pytest.mark.parametrize("name", [n for n in NAMES if " and " in n.lower()])
def test_no_product_name_with_and_is_ever_split(name: str) -> None:
    """Every name in the catalogue, said alone or after a quantity, stays one item."""
    assert split_items(name, NAMES) == [Wanted(name.lower(), None)]
    assert split_items(f"two boxes of {name}", NAMES) == [Wanted(name.lower(), 2)]


def test_without_the_names_the_and_splits() -> None:
    """The names are what keeps "honey and lemon" whole: the test above can fail."""
    assert len(split_items("honey and lemon lozenges")) == 2
