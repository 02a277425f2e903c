"""Drugs the catalogue lacks, from the real list of drug names (models/drug_names.py)."""

from __future__ import annotations

import logging

import pytest
from sqlmodel import Session

from models import drug_names, make_engine
from models.catalogue import load_catalogue
from models.drug_names import spelling, unheld
from models.search import _tokens, search_products

# A small catalogue, as the search passes it: each product's name, ingredient, keywords.
CATALOGUE = (
    "Chlorphenamine",
    "chlorphenamine",
    "allergy itch piriton",
    "Co-codamol",
    "codeine and paracetamol",
    "pain strong",
    "Beclometasone Nasal Spray",
    "beclometasone",
    "hay fever",
)


def _unheld(said: str) -> list[str]:
    return [u.name for u in unheld(_tokens(said), CATALOGUE)]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("beclomethasone", "beclometasone"),
        ("acyclovir", "aciclovir"),
        ("cholecalciferol", "colecalciferol"),
        ("ferrous sulphate", "ferrous sulfate"),
        ("nikotin", "nicotine"),
    ],
)
def test_two_spellings_of_one_drug_are_one(a: str, b: str) -> None:
    assert spelling(a) == spelling(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("oxymetazoline", "xylometazoline"),
        ("esomeprazole", "omeprazole"),
        ("pravastatin", "atorvastatin"),
        ("famciclovir", "aciclovir"),
        # A letter or a number alone is kept: another vitamin.
        ("vitamin k", "vitamin c"),
        ("vitamin b12", "vitamin b6"),
    ],
)
def test_two_drugs_alike_stay_two(a: str, b: str) -> None:
    assert spelling(a) != spelling(b)


@pytest.mark.parametrize(
    ("said", "drugs"),
    [
        ("do you have pravastatin?", ["pravastatin"]),
        ("two boxes of zantac and the piriton", ["zantac"]),
        # The longest name wins: "fusidic acid", not nothing for "acid".
        ("the fusidic acid cream please", ["fusidic acid"]),
        ("it's the esomeprazole's I take", ["esomeprazole"]),
        # Said as written, hyphen and all, though the words come apart.
        ("have you got co-trimoxazole", ["co-trimoxazole"]),
        # Its own names, by any name of the same drug: paracetamol is acetaminophen.
        ("have you got tylenol", []),
        ("co-codamol please", []),
        ("the beclomethasone spray", []),
        # A piece of a name of its own, heard apart: "fenamine" names amphetamine too.
        ("tricore fenamine", []),
        # Dictionary words are what callers say of anything: "caps" is a drug's brand.
        ("the peppermint caps", []),
        # A name of several words that holds one of its drugs, or too few letters of
        # its own: a combination or a leaflet's title, not another drug.
        ("do you have co-codamol and chlorphenamine", []),
        ("something for uti relief", []),
    ],
)
def test_drugs_no_product_is(said: str, drugs: list[str]) -> None:
    assert _unheld(said) == drugs


def test_a_name_is_found_where_it_was_said() -> None:
    [found] = unheld(_tokens("could I get the fusidic acid cream"), CATALOGUE)
    assert (found.start, found.end) == (4, 6)


def test_without_the_list_of_names_the_search_still_finds(monkeypatch, caplog) -> None:
    """A broken install loses the rule, loudly, and keeps the search."""
    monkeypatch.setattr(drug_names, "_loaded", [])
    monkeypatch.setattr(drug_names.importlib.util, "find_spec", lambda name: None)
    db = make_engine("sqlite:///:memory:")
    load_catalogue(db)
    with caplog.at_level(logging.ERROR), Session(db) as s:
        assert [h.product.name for h in search_products(s, "paracetamol", limit=1)] == [
            "Paracetamol"
        ]
    assert "drug_names_missing" in caplog.text


def test_names_read_again_are_not_answered_from_a_list_read_before(monkeypatch) -> None:
    """A test's empty list, then the real one: "tylenol" is paracetamol again (the
    answers are kept per list read, not per name)."""
    assert drug_names.drugs_named("tylenol") == {"acetaminophen"}
    with monkeypatch.context() as patched:
        patched.setattr(drug_names, "_loaded", [])
        patched.setattr(drug_names.importlib.util, "find_spec", lambda name: None)
        assert drug_names.drugs_named("tylenol") == frozenset()
    assert drug_names.drugs_named("tylenol") == {"acetaminophen"}
