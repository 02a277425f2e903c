"""A dose question told by its shape: an amount, asked about, of something taken, with
no word of buying."""

from __future__ import annotations

import pytest

from agents.dose_shape import Shape, meant, read


@pytest.mark.parametrize(
    "said",
    [
        "three of the cetirizine in one go alright?",
        "could he have another of the loperamide after the next runny one?",
        "is half a spoon ok for a one year old",
        "can I pop another two nurofen now",
        "two sprays at a time is that ok",
        "I've had two already, is another one alright",
        "so can she have a third calpol tonight",
        "ten mil of the cough syrup, too much?",
        "double the omeprazole ok if I forgot yesterday?",
        # Which of two amounts, the most, too many: questions of taking in themselves.
        "one or two of the loratadine",
        "what's the max on the ibuprofen",
        "six too many?",
        # Found by review: units written on the number, someone else, "now".
        "is 5ml enough for a 2 year old",
        "is 1000mg too much",
        "can she have two?",
        "can I have two now?",
        "is it ok if I have two more, cheers",
        "can he have one now? he had the other one at breakfast",
    ],
)
def test_an_amount_asked_about_with_a_cue_of_taking(said: str) -> None:
    assert read(said) is Shape.TAKE


@pytest.mark.parametrize(
    "said",
    [
        "could I have three of the cetirizine",
        "can I have a couple of the loratadine",
        "would I be able to have two of them antacids",
    ],
)
def test_a_count_of_a_medicine_asked_for_is_asked_about(said: str) -> None:
    """Helpers wrote lines like these both as purchases and as dose questions."""
    assert read(said) is Shape.EITHER


@pytest.mark.parametrize(
    "said",
    [
        # A word of buying anywhere.
        "can I get two paracetamol",
        "could I have two boxes of ibuprofen?",
        "can I have two of the cetirizine please",
        "could you pop two of the loperamide in a bag, I'll be by at five",
        "can I just grab another of the chlorphenamine",
        "is there any tiger balm, the red one",
        "how much are two of the gels?",
        "can you send three of the hay fever ones round",
        "is that the extra strength ibuprofen?",
        # An order read back, or an answer to "how many?", is no question of taking.
        "yeah three loratadine and one vitamin C right?",
        "alright, so that's one cetirizine, two ibuprofen gel and the plasters yeah?",
        "two please",
        "two",
        # No amount, or an amount of something not taken.
        "which one is better for hay fever?",
        "is the blue one stronger?",
        "do you open at nine?",
        "is it 24 hours a day you're open?",
        "is it 5 or 6 quid",
        "one or two boxes of senna",
        "is that the max strength one?",
        "which one works the most?",
        # Found by review: a product's size or strength, a deal, a read-back, politeness.
        "can I have the 100 ml one",
        "is the 200 ml one ok",
        "200 or 400?",
        "so that's three nurofen, ok?",
        "I'd like two nurofen, is that ok?",
        "two nurofen if that's ok",
        "could I have half a dozen plasters",
        "can I have one a day multivitamins",
        "is it two for one",
        "is that 500 mg",
        "are you open at 9?",
    ],
)
def test_buying_and_ordinary_talk_is_not_a_dose_question(said: str) -> None:
    assert read(said) is None


def test_after_an_offer_only_a_cue_of_taking_counts() -> None:
    """After "would you like to order it?", "can I have two of them?" answers it."""
    assert read("can I have two of them?", offered=True) is None
    assert read("can I have two of them?") is Shape.EITHER
    assert read("can I have two of them at once?", offered=True) is Shape.TAKE
    assert read("can she have two?", offered=True) is Shape.TAKE


@pytest.mark.parametrize(
    "said",
    [
        "the max",
        "whatever the max is",
        "what's the max?",
        "two or three",
        "one or two",
        "can I have two today?",
        "two ibuprofen for tonight?",
        "is one enough for the week",
        "can I have two again, same as I had last time",
    ],
)
def test_answers_to_how_many_are_not_dose_questions(said: str) -> None:
    """Found by review: after "how many would you like?", these answer it."""
    assert read(said, offered=True) is None


@pytest.mark.parametrize(
    ("said", "shape"),
    [
        ("to buy", Shape.EITHER),
        ("no I want to order some", Shape.EITHER),
        ("buying, two packs", Shape.EITHER),
        ("the first one", Shape.EITHER),
        ("how many I can take", Shape.TAKE),
        ("taking them", Shape.TAKE),
        ("is it safe", Shape.TAKE),
        ("I'll take them", Shape.EITHER),
        ("yes", None),
        ("how much are they?", None),
        ("I want to buy them but how many can I take", None),
        # More than a plain answer is read as any line: the probe and phrases see it.
        ("to buy, I've got nothing left to live for", None),
        ("I want to buy them, I've already had 16 today", None),
    ],
)
def test_the_answer_to_buy_or_take(said: str, shape: Shape | None) -> None:
    assert meant(said) is shape
