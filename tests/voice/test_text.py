import pytest

from voice.normalize import for_speech
from voice.sentences import SentenceSplitter


def split(text: str, *, tokens: int = 3) -> list[str]:
    splitter = SentenceSplitter()
    words = text.split(" ")
    out: list[str] = []
    for i in range(0, len(words), tokens):
        out += splitter.feed(" ".join(words[i : i + tokens]) + " ")
    return out + splitter.flush()


def test_sentences_are_cut_as_they_arrive_but_not_at_false_ends() -> None:
    text = (
        "Dr. Smith said the price is 3.20 dollars. Paracetamol costs $2.99 each! "
        "Is that OK? Order No. 5 is J. R. Brown's. Done"
    )
    assert split(text) == [
        "Dr. Smith said the price is 3.20 dollars.",
        "Paracetamol costs $2.99 each!",
        "Is that OK?",
        "Order No. 5 is J. R. Brown's.",
        "Done",
    ]


def test_the_first_piece_may_end_at_a_clause_for_earlier_audio() -> None:
    pieces = split("We have three good options, all in stock, and all cheap. More follows here.")
    assert pieces[0] == "We have three good options,"
    assert pieces[1] == "all in stock, and all cheap."  # no clause with four words in it
    assert pieces[2] == "More follows here."


def test_after_a_short_first_sentence_the_second_piece_may_end_at_a_clause_too() -> None:
    """A short "Thank you." plays in 0.7 s: a whole long sentence after it would be late."""
    splitter = SentenceSplitter()
    text = (
        "Thank you. Your order number 1 is placed: 2 packs of Paracetamol, for a total "
        "of $5.98. It will be ready for collection in an hour."
    )
    assert splitter.feed(text) + splitter.flush() == [
        "Thank you.",
        "Your order number 1 is placed:",
        "2 packs of Paracetamol, for a total of $5.98.",  # later pieces are whole sentences
        "It will be ready for collection in an hour.",
    ]


def test_a_reply_that_arrives_whole_still_starts_with_its_first_clause() -> None:
    splitter = SentenceSplitter()
    text = "I've added 2 packs of Paracetamol, at $2.99 each. That's $5.98. Anything else?"
    assert splitter.feed(text) + splitter.flush() == [
        "I've added 2 packs of Paracetamol,",
        "at $2.99 each.",
        "That's $5.98.",
        "Anything else?",
    ]


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("It costs $2.99 each.", "It costs 2 dollars 99 each."),
        ("Only $0.50", "Only 50 cents"),
        ("Take 500mg twice", "Take 500 milligrams twice"),
        ("Your order #1042 is placed", "Your order number 1 0 4 2 is placed"),
        ("2x a day, 10% off", "2 times a day, 10 percent off"),
    ],
)
def test_text_is_normalised_for_speech(text: str, spoken: str) -> None:
    assert for_speech(text) == spoken
