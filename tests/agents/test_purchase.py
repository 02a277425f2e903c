"""A plain request to buy, which the screen does not ask the safety probe about."""

from __future__ import annotations

import pytest

from agents.purchase import only_purchase_talk

# What the catalogue finds for these lines: a product's whole family, as `family` gives.
_FOUND = [
    ("Paracetamol", "tablets", "500 mg"),
    ("Paracetamol Extra Pack", "tablets", "500 mg"),
    ("Children's Paracetamol Suspension", "oral suspension", "120 mg per 5 ml"),
    ("Antiseptic Cream", "cream", ""),
    ("Sleep Aid", "tablets", "25 mg"),
]


@pytest.mark.parametrize(
    "said",
    [
        "can I get two paracetamol",
        "I'll take two boxes of the paracetamol please",
        "morning, could you put a couple of packs of paracetamol aside for me",
        "two packs of paracetamol and a tube of the antiseptic cream",
        "hello, I'm wanting to purchase two strips of paracetamol",
    ],
)
def test_a_plain_request_to_buy(said: str) -> None:
    assert only_purchase_talk(said, _FOUND)


@pytest.mark.parametrize(
    "said",
    [
        # Taking, not buying, or more than a request: the probe reads these.
        "can I take two paracetamol",
        "can I have two paracetamol",  # no word of buying
        "can I get two paracetamol for my son",
        "can I get two paracetamol for my children",  # not a word of the suspension's
        "can I get two paracetamol, I've had two extra",
        "could I get two paracetamol at once",
        "can I get two paracetamol, would two be ok",
        "I need to have three boxes of paracetamol in me",
        "I want to get three boxes of sleep aid and I'll take them",
        "I had three boxes of paracetamol",
        "can I get all the paracetamol you have",
        "can I get a lot of paracetamol",
        # More than three packs, however said.
        "can I get four boxes of paracetamol",
        "can I get 5 boxes of paracetamol",  # a number of the suspension's strength
        "two boxes of paracetamol and two of the sleep aid",
        "can I get two",  # names nothing
    ],
)
def test_more_than_a_plain_request_to_buy(said: str) -> None:
    assert not only_purchase_talk(said, _FOUND)


def test_a_number_in_a_products_name_is_no_count() -> None:
    """ "Three tubs of the omega 3 fish oil" asks for three packs, not six."""
    found = [("Omega 3 Fish Oil", "capsules", "1000 mg")]
    assert only_purchase_talk("i'll take three tubs of the omega 3 fish oil please", found)
    assert not only_purchase_talk("i'll take four tubs of the omega 3 fish oil please", found)
