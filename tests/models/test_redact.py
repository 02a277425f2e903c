"""Card numbers and dates of birth come out of stored text; nothing else does."""

from __future__ import annotations

import pytest

from models.redact import BIRTH_MARK, CARD_MARK, Redaction, redact, redact_data


@pytest.mark.parametrize(
    "said",
    [
        "Can I pay by card? It's 4111 1111 1111 1111, expiry twelve twenty seven.",
        "the long number is 4111-1111-1111-1111",
        "5500005555555559",
        "my Amex is 3782 822463 10005 thanks",
        "Card number: 6011 1111 1111 1117.",
        "4111 1111 1111 1111 123",  # the security code said straight after
        "it's 4111, 1111, 1111, 1111",  # how Whisper punctuates a number read out
        "4111.1111.1111.1111",
    ],
)
def test_card_numbers_are_replaced(said: str) -> None:
    stored = redact(said)
    assert CARD_MARK in stored
    assert "1111" not in stored and "5555" not in stored and "8224" not in stored


@pytest.mark.parametrize(
    "said",
    [
        "My date of birth is 12/03/1980.",
        "I was born on the 3rd of March 1980, if you need it",
        "DOB: March 3rd, 1980",
        "my birthday's the 14th of February",
        "It's for my dad, he was born 4 July 1951.",
        "date of birth 1980-03-12",
    ],
)
def test_dates_of_birth_are_replaced(said: str) -> None:
    stored = redact(said)
    assert BIRTH_MARK in stored
    assert not any(m in stored.lower() for m in ("march", "february", "july", "1980", "1951"))


@pytest.mark.parametrize(
    "said",
    [
        "Two boxes of paracetamol, the 16 pack, that's $2.99 each.",
        "My order number is 1234567890123.",  # fails the Luhn check
        "You can ring me on 07700 900123.",
        "Ring +44 20 7946 0958 or 020 7946 0959 after six.",  # 22 digits, no card in them
        "Can you deliver on the 3rd of March?",  # a date, not a birth
        "I'm 45 and I take 20 mg of omeprazole.",
        "Is ibuprofen 400 ok with a May birthday party?",
    ],
)
def test_everything_else_is_kept(said: str) -> None:
    assert redact(said) == said


def test_nul_characters_never_reach_the_database_even_with_redaction_off() -> None:
    for redaction in (Redaction(on=True), Redaction(on=False)):
        assert redaction.text("a\x00b") == "ab"
        assert redaction.data({"k\x00": ["x\x00"]}) == {"k": ["x"]}
        # Lone UTF-16 halves, from a model's "\ud800"; a whole emoji stays.
        assert redaction.text("a\ud800b\U0001f600") == "ab\U0001f600"
        assert redaction.data({"k\udfff": ["x\ud83d"]}) == {"k": ["x"]}


def test_data_is_redacted_through_and_off_means_off() -> None:
    arguments = {"note": "card 4111 1111 1111 1111", "items": ["born 1/2/1990", 3]}
    assert redact_data(arguments) == {
        "note": f"card {CARD_MARK}",
        "items": [f"born {BIRTH_MARK}", 3],
    }
    assert Redaction(on=False).data(arguments) == arguments
    assert Redaction(on=False).text("4111 1111 1111 1111") == "4111 1111 1111 1111"
