"""What the caller just heard, and what their short answer to it means (agents/heard.py)."""

from __future__ import annotations

import pytest

from agents.guards import spoken_quantities, stated_quantity
from agents.heard import PRICE, READ_BACK, answered_count, asked_how_many, offered, refers_to_offer

LIMIT = "I can only take between 1 and 10 packs of Paracetamol per order. How many would you like?"
STOCK = "I'm sorry, we only have 4 packs of Loratadine in stock. How many would you like?"
SINGLE = (
    "We have Children's Paracetamol Suspension, 120 milligram per 5 millilitre oral suspension, "
    "at 5 dollars 49. Would you like to order it?"
)
OPTIONS = (
    "We have 2 options: Ibuprofen Strong, 400 milligram tablets, pack of 24, at 5 dollars 99; "
    "Ibuprofen, 200 milligram tablets, pack of 24, at 3 dollars 99. Which one would you like?"
)


def test_the_product_asked_about_is_read_from_the_limit_and_the_stock_answers() -> None:
    assert asked_how_many(LIMIT) == "Paracetamol"
    assert asked_how_many(STOCK) == "Loratadine"
    assert asked_how_many(SINGLE) is None


@pytest.mark.parametrize(
    ("said", "last", "count"),
    [
        ("ok ten then", LIMIT, 10),
        ("fine, 10", LIMIT, 10),
        ("right, let's say eight please", LIMIT, 8),
        ("the most then", LIMIT, 10),
        ("as many as you can", STOCK, 4),
        ("no thanks", LIMIT, None),
        ("what about ibuprofen", LIMIT, None),
    ],
)
def test_a_short_answer_to_how_many(said: str, last: str, count: int | None) -> None:
    assert answered_count(said, last, 10) == count


def test_what_was_offered_is_one_product_or_the_options() -> None:
    assert offered(SINGLE) == ["Children's Paracetamol Suspension"]
    assert offered(OPTIONS) == ["Ibuprofen Strong", "Ibuprofen"]
    assert offered("We are open Monday to Saturday.") == []


@pytest.mark.parametrize(
    ("said", "takes"),
    [
        ("great, one bottle of that then", True),
        ("two of those please", True),
        ("no, not that one", False),
        ("something else for a cough", False),
        ("one box please", True),
        ("yes one please", True),
        ("ibuprofen please", False),
        ("what about the gel", False),
    ],
)
def test_taking_the_offer_is_told_from_refusing_it(said: str, takes: bool) -> None:
    assert refers_to_offer(said) is takes


@pytest.mark.parametrize(
    ("said", "quantities", "stated"),
    [
        ("paracetamol, the 32 pack, uh, three boxes of those", [3], 3),
        ("ok, um, the 400s. two boxes of the 400s", [2], 2),
        ("how much is the regular one, the 200", [], None),
        ("can I get three boxes, no sorry, two boxes of the loratadine", [3, 2], 2),
        ("two boxes and three boxes", [2, 3], None),
        ("can I get 20 boxes of paracetamol", [20], 20),
    ],
)
def test_numbers_that_name_a_variant_are_no_quantity(
    said: str, quantities: list[int], stated: int | None
) -> None:
    assert spoken_quantities(said) == quantities
    assert stated_quantity(said) == stated


def test_price_and_read_back_questions_are_told_apart() -> None:
    assert PRICE.search("how much is the chlorphenamine")
    assert not READ_BACK.search("how much is the chlorphenamine")
    assert READ_BACK.search("read that back to me")
    assert READ_BACK.search("how much is that altogether")
