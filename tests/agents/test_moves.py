"""The moves a caller's words make on an order in progress (agents/moves.py)."""

from __future__ import annotations

import pytest

from agents.moves import (
    Confirm,
    ReadBack,
    Remove,
    SetQuantity,
    Swap,
    named_line,
    only_order_talk,
    order_move,
)
from models.orders import LineView

LINES = (
    LineView("PAR500-16", "Paracetamol", "500 mg", "tablets", 2, 299),
    LineView("IBUGEL-50", "Ibuprofen Gel", "5 percent", "gel", 1, 749),
)


@pytest.mark.parametrize(
    ("said", "move"),
    [
        ("make that three", SetQuantity("Ibuprofen Gel", 3)),
        ("actually make it three boxes", SetQuantity("Ibuprofen Gel", 3)),
        ("um one more", SetQuantity("Ibuprofen Gel", 2)),
        ("one more box of the paracetamol", SetQuantity("Paracetamol", 3)),
        ("two more of the paracetamol please", SetQuantity("Paracetamol", 4)),
        ("another one", SetQuantity("Ibuprofen Gel", 2)),
        ("and a second box of the paracetamol", SetQuantity("Paracetamol", 2)),
        ("three instead", SetQuantity("Ibuprofen Gel", 3)),
        ("no, four", SetQuantity("Ibuprofen Gel", 4)),
        ("change the paracetamol to 5", SetQuantity("Paracetamol", 5)),
        ("take the gel off", Remove("Ibuprofen Gel")),
        ("uh remove the paracetamol please", Remove("Paracetamol")),
        ("i don't want the paracetamol any more", Remove("Paracetamol")),
        ("take it off", Remove("Ibuprofen Gel")),
    ],
)
def test_changes_name_the_line_and_its_new_total(said: str, move) -> None:
    assert order_move(said, LINES, read_back_heard=False) == move


@pytest.mark.parametrize(
    "said",
    [
        "one more box of aspirin",  # a new product: an add, not a change
        "two boxes of loratadine",
        "what time do you close",
        "do you have anything for a cough",
        "take the aspirin off",  # not in the order: nothing to remove
    ],
)
def test_words_that_change_no_line_are_no_move(said: str) -> None:
    assert order_move(said, LINES, read_back_heard=False) is None


@pytest.mark.parametrize("yes", ["yes", "yeah go ahead", "yes please, the paracetamol", "yep"])
def test_a_yes_to_the_read_back_only_confirms(yes: str) -> None:
    assert order_move(yes, LINES, read_back_heard=True) == Confirm()


@pytest.mark.parametrize("said", ["yes", "yes please"])
def test_a_yes_that_answers_no_read_back_confirms_nothing(said: str) -> None:
    assert order_move(said, LINES, read_back_heard=False) is None


@pytest.mark.parametrize("hedge", ["yes but make it three", "no", "wait, hang on"])
def test_a_hedged_answer_to_the_read_back_is_not_a_confirm(hedge: str) -> None:
    assert order_move(hedge, LINES, read_back_heard=True) != Confirm()


def test_an_empty_order_has_no_moves() -> None:
    assert order_move("make that three", (), read_back_heard=False) is None


@pytest.mark.parametrize(
    ("said", "move"),
    [
        ("take one off the paracetamol", SetQuantity("Paracetamol", 1)),
        ("one less of the paracetamol", SetQuantity("Paracetamol", 1)),
        ("no wait, three's silly, just make it one", SetQuantity("Ibuprofen Gel", 1)),
        ("oh wait that's way too many, make it two", SetQuantity("Ibuprofen Gel", 2)),
        ("read that back to me", ReadBack()),
        ("ok that's the lot", ReadBack()),
        ("what's that come to", ReadBack()),
        ("swap that for the bigger box", Swap("Ibuprofen Gel", "bigger box Ibuprofen Gel")),
    ],
)
def test_moves_told_by_the_catalogue_that_no_other_product_is_named(said: str, move) -> None:
    assert order_move(said, LINES, read_back_heard=False, names_other=False) == move


@pytest.mark.parametrize(
    ("said", "move"),
    [
        (
            "take the paracetamol off and give me one aspirin instead",
            Swap("Paracetamol", "one aspirin instead"),
        ),
        ("instead of the gel can i have the loratadine", Swap("Ibuprofen Gel", "loratadine")),
        ("change it to the aspirin", Swap("Ibuprofen Gel", "aspirin")),
    ],
)
def test_one_line_out_and_another_product_in_is_one_swap(said: str, move) -> None:
    assert order_move(said, LINES, read_back_heard=False, names_other=True) == move


@pytest.mark.parametrize(
    ("said", "move"),
    [
        # Asked for by a name no dictionary holds, and not in the catalogue: the swap
        # looks it up, and leaves the line when it finds nothing.
        (
            "take the gel off and give me lamotrigine instead",
            Swap("Ibuprofen Gel", "lamotrigine instead"),
        ),
        # A reason or an errand is no product wanted instead: the removal alone.
        ("take it off, I'll pay by card instead", Remove("Ibuprofen Gel")),
        ("remove the paracetamol, my wife will get some instead", Remove("Paracetamol")),
        ("take the gel out, could I have the bag instead", Remove("Ibuprofen Gel")),
        ("take the gel off, can I get it delivered instead", Remove("Ibuprofen Gel")),
    ],
)
def test_what_is_wanted_instead_of_a_line_when_the_catalogue_has_none(said: str, move) -> None:
    assert order_move(said, LINES, read_back_heard=False, names_other=False) == move


def test_a_count_after_change_is_a_quantity_not_a_swap() -> None:
    assert order_move("change it to two", LINES, read_back_heard=False, names_other=False) == (
        SetQuantity("Ibuprofen Gel", 2)
    )


@pytest.mark.parametrize(
    ("said", "move"),
    [
        # Read as the read-back alone, the line stayed in the order that was read out.
        ("remove the paracetamol and that's all", Remove("Paracetamol")),
        ("take the gel off, that's it thanks", Remove("Ibuprofen Gel")),
        ("oh and drop the paracetamol, that'll be all", Remove("Paracetamol")),
        ("that's everything, I don't want the gel after all", Remove("Ibuprofen Gel")),
        ("that's all, I don't want anything else", ReadBack()),
        ("no that's it, nothing else", ReadBack()),
        ("can you read it back", ReadBack()),
    ],
)
def test_a_removal_said_with_the_end_of_the_order_is_made(said: str, move) -> None:
    assert order_move(said, LINES, read_back_heard=False) == move


@pytest.mark.parametrize(
    ("said", "name"),
    [
        ("Honey and Lemon Throat Lozenges", "Honey and Lemon Throat Lozenges"),
        ("take the throat spray off", "Sore Throat Spray"),
        ("the lozenges", "Honey and Lemon Throat Lozenges"),
    ],
)
def test_a_line_named_by_a_word_two_lines_share_is_the_one_more_words_name(
    said: str, name: str
) -> None:
    """A tool given the whole product name took off the first line with "throat" in it."""
    lines = (
        LineView("BENZ-SPR", "Sore Throat Spray", "0.15 percent", "spray", 1, 649),
        LineView("LOZ-HL", "Honey and Lemon Throat Lozenges", "", "lozenges", 1, 299),
    )
    line = named_line(said, lines)
    assert line is not None and line.name == name


@pytest.mark.parametrize(
    ("said", "move"),
    [
        # A line named by its form or container when no other line has it.
        ("can you get rid of the tablets", Remove("Paracetamol")),
        ("the tube, I don't need it now, could you take it out", Remove("Ibuprofen Gel")),
        # "those" points at the line the sentence names, not the last one.
        ("my husband's already got paracetamol so take those off", Remove("Paracetamol")),
        ("oh scratch the ibuprofen one", Remove("Ibuprofen Gel")),
        ("forget about the gel then", Remove("Ibuprofen Gel")),
        ("I don't need the paracetamol now", Remove("Paracetamol")),
        ("could you leave the tablets out please", Remove("Paracetamol")),
        ("just the gel then, no paracetamol", Remove("Paracetamol")),
        # Counts said in other ways.
        ("can you knock it down to one pack of the tablets", SetQuantity("Paracetamol", 1)),
        ("take one of the tablets off", SetQuantity("Paracetamol", 1)),
        ("another two of the paracetamol", SetQuantity("Paracetamol", 4)),
        ("and an extra tube of gel", SetQuantity("Ibuprofen Gel", 2)),
        ("could you double the paracetamol", SetQuantity("Paracetamol", 4)),
        ("make it just the one box of paracetamol", SetQuantity("Paracetamol", 1)),
    ],
)
def test_moves_said_the_way_callers_say_them(said: str, move) -> None:
    assert order_move(said, LINES, read_back_heard=False, names_other=False) == move


@pytest.mark.parametrize(
    ("said", "move"),
    [
        # Said of the whole order, or of nothing: no line goes.
        ("forget it", None),
        ("cancel it", None),
        ("no the gel is fine", None),
        ("leave the gel, it's fine", None),
        ("no, two", SetQuantity("Ibuprofen Gel", 2)),
    ],
)
def test_words_that_sound_like_a_removal_but_name_no_line(said: str, move) -> None:
    assert order_move(said, LINES, read_back_heard=False, names_other=False) == move


def test_a_form_two_lines_share_names_neither() -> None:
    lines = (
        LineView("PAR500-16", "Paracetamol", "500 mg", "tablets", 2, 299),
        LineView("IBU200-24", "Ibuprofen", "200 mg", "tablets", 1, 399),
    )
    assert order_move("get rid of the tablets", lines, read_back_heard=False) is None


# Found by a review of the first build of the moves above.
_IBU = LineView("IBU200-24", "Ibuprofen", "200 mg", "tablets", 1, 399)
_GEL = LineView("IBUGEL-50", "Ibuprofen Gel", "5 percent", "gel", 1, 749)
_FLU = LineView("FLU-16", "Cold and Flu Relief", "", "capsules", 1, 499)
_PAR = LineView("PAR500-16", "Paracetamol", "500 mg", "tablets", 2, 299)


@pytest.mark.parametrize(
    ("said", "lines", "move"),
    [
        # "and" was a word of the name "Cold and Flu Relief".
        ("remove the paracetamol and that's it", (_FLU, _PAR), Remove("Paracetamol")),
        # The words of the other clause counted for the line kept.
        ("remove the ibuprofen, keep the gel", (_IBU, _GEL), Remove("Ibuprofen")),
        ("remove the ibuprofen, keep the gel", (_GEL, _IBU), Remove("Ibuprofen")),
        ("take it off", (_GEL, _IBU), Remove("Ibuprofen")),
        # Said with the end of the order: a question, an errand, a count.
        ("what's the total without the gel?", (_PAR, _GEL), ReadBack()),
        ("that's everything, my husband will drop it off later", (_PAR, _GEL), ReadBack()),
        ("that's all, I'll drop them round to my mum", (_PAR, _GEL), ReadBack()),
        ("that's it, I don't want them to run out", (_PAR, _GEL), ReadBack()),
        ("take one paracetamol off, that's all", (_PAR, _GEL), SetQuantity("Paracetamol", 1)),
    ],
)
def test_the_line_meant_and_no_other(said: str, lines, move) -> None:
    assert order_move(said, lines, read_back_heard=False, names_other=False) == move


def test_a_tool_given_a_line_name_takes_that_line() -> None:
    line = named_line("Ibuprofen", (_GEL, _IBU))
    assert line is not None and line.name == "Ibuprofen"


_SLEEP = LineView("SLEEP-20", "Sleep Aid", "50 mg", "tablets", 1, 499, "sleep insomnia night")
_STRONG = LineView("IBU400-24", "Ibuprofen Strong", "400 mg", "tablets", 2, 599)


@pytest.mark.parametrize(
    ("said", "lines", "move"),
    [
        # Found by a review of the moves said the way callers say them.
        ("don't forget the paracetamol", (_PAR, _GEL), None),
        ("cancel that, keep the gel", (_PAR, _GEL), None),
        ("scratch that, the gel is fine", (_PAR, _GEL), None),
        ("I need something to get rid of my headache as well", (_PAR, _GEL), None),
        ("does the paracetamol cancel out the ibuprofen?", (_PAR, _GEL), None),
        ("I don't need a prescription for the paracetamol, do I?", (_PAR, _GEL), None),
        ("I don't need anything else for the pain", (_PAR, _GEL), None),
        ("cancel one of the paracetamol", (_PAR, _GEL), None),
        ("I've been taking up to 8 paracetamol a day for weeks", (_PAR, _GEL), None),
        ("up to 2 weeks delivery is fine", (_PAR, _GEL), None),
        ("ok forget the hay fever tablets then", (_PAR,), None),
        ("cancel the ibuprofen", (_STRONG, _GEL), None),
        (
            "I don't need three of the paracetamol, just one",
            (_PAR, _GEL),
            SetQuantity("Paracetamol", 1),
        ),
    ],
)
def test_words_about_a_line_that_do_not_change_it(said: str, lines, move) -> None:
    assert order_move(said, lines, read_back_heard=False) == move


@pytest.mark.parametrize(
    ("said", "only"),
    [
        ("take the paracetamol off please, I don't need them anymore", True),
        ("just get rid of the paracetamol and I'm good to go", True),
        ("that's all thanks", True),
        # More than order talk: read for safety as any other line.
        ("cancel the paracetamol, I've already taken two packets today", False),
        ("get rid of the sleep aid, I've got plenty saved up", False),
        ("scratch the paracetamol, there's no point anyway", False),
        ("nothing else matters anymore", False),
        ("I'm done. Tired of everything.", False),
    ],
)
def test_order_talk_is_only_words_of_the_order(said: str, only: bool) -> None:
    assert only_order_talk(said, (_PAR, _SLEEP)) is only


def test_a_request_asked_as_a_question_is_still_made() -> None:
    assert order_move("Can I cancel the gel?", LINES, read_back_heard=False) == Remove(
        "Ibuprofen Gel"
    )


def test_a_reason_is_more_than_order_talk() -> None:
    """ "I've got plenty left" is said of stockpiling too: the line probe reads it."""
    assert not only_order_talk("get rid of the paracetamol, I've got plenty left", LINES)
