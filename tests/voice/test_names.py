"""Readings of a transcript with a catalogue name in place of the words most like it."""

from __future__ import annotations

from voice.names import names_in_place

NAMES = ["Paracetamol", "Loratadine", "Famotidine", "Cetirizine", "Dry Cough Syrup", "Zinc"]


def test_a_name_heard_as_two_words_is_put_back_with_its_punctuation() -> None:
    [first, *_] = names_in_place("Could I order a box of lore atadine, please?", NAMES, 3)
    assert first.name == "Loratadine"
    assert first.text == "Could I order a box of Loratadine, please?"
    assert first.similarity > 80


def test_readings_come_most_similar_first_and_no_more_than_asked() -> None:
    readings = names_in_place("I need Cetirinine for my daughter", NAMES, 2)
    assert [r.name for r in readings][:1] == ["Cetirizine"]
    assert len(readings) == 2
    assert readings[0].similarity >= readings[1].similarity


def test_a_name_already_there_gives_no_reading_of_itself() -> None:
    readings = names_in_place("Do you have any paracetamol?", NAMES, 10)
    assert all(r.text.lower() != "do you have any paracetamol?" for r in readings)
    assert "Paracetamol" not in {r.name for r in readings}


def test_a_name_of_several_words_may_replace_more_words() -> None:
    [first, *_] = names_in_place("some dry cuff sirup please", NAMES, 1)
    assert first.text == "some Dry Cough Syrup please"


def test_an_empty_transcript_has_no_readings() -> None:
    assert names_in_place("", NAMES, 5) == []
