"""What the third set of whole calls written blind found (benchmarks/data/calls_blind3.yaml,
run before anyone read it): each failed on the code before, on the scripted provider
with the real pharmacy (routers, screen, tools, SQLite)."""

from __future__ import annotations

import pytest

from agents import cues, heard, safety
from agents.routing import CHECKING_IN_WORDS, FOR_SOMEONE_WORDS
from callswarm.app import Services

from .test_calls_nobody_scripted import lines_of
from .test_conversations import talk


def skus(shop: Services) -> list[tuple[str, int]]:
    return [(sku, n) for _, sku, n, _ in lines_of(shop, "c")]


async def test_a_question_about_two_products_orders_neither(shop: Services) -> None:
    """Both were added: a line naming two products was taken as asking for both."""
    replies = await talk(
        shop, "c", "Hiya, what's the difference between the Gaviscon and your plain antacid ones?"
    )
    assert skus(shop) == [] and "added" not in replies[0], replies
    assert "Gaviscon" in replies[0], replies


async def test_how_dear_asks_a_price(shop: Services) -> None:
    replies = await talk(shop, "c", "the insect repellent please", "and how dear's the repellent?")
    assert skus(shop) == [("INSECT-100", 1)], replies
    assert "7 dollars 99" in replies[1] and "added" not in replies[1], replies


async def test_a_greeting_names_no_product(shop: Services) -> None:
    """ "G'day" found the chesty cough syrup, and it was added."""
    replies = await talk(shop, "c", "G'day. Yeah, I've gone and cooked meself at Bondi")
    assert skus(shop) == [], replies


@pytest.mark.parametrize(
    "yes", ["Aye, on ye go", "Yeah, too easy, put it through", "Yeah, fire ahead"]
)
async def test_a_yes_in_regional_words_places_the_order(shop: Services, yes: str) -> None:
    """Each was asked for "a plain yes or no", and the caller hung up with nothing placed."""
    replies = await talk(shop, "c", "two packs of paracetamol please", "that's all", yes)
    assert lines_of(shop, "c") == [("confirmed", "PAR500-16", 2, 2 * 299)], replies


@pytest.mark.parametrize("done", ["No, I'm good", "That's your lot, love"])
async def test_the_end_of_an_order_in_the_callers_words(shop: Services, done: str) -> None:
    replies = await talk(shop, "c", "two packs of paracetamol please", done)
    assert replies[1].startswith("Your order is 2 packs of Paracetamol"), replies


async def test_im_good_to_how_are_you_is_no_end_of_an_order(shop: Services) -> None:
    replies = await talk(shop, "c", "two packs of paracetamol please", "I'm good thanks")
    assert not replies[1].startswith("Your order is"), replies


async def test_better_say_three_sets_the_count(shop: Services) -> None:
    replies = await talk(
        shop, "c", "one box of loratadine", "hang on, better say three. His mother's coming"
    )
    assert skus(shop) == [("LOR10-30", 3)], replies


async def test_calling_back_keeps_the_order_open_and_lists_nothing(shop: Services) -> None:
    replies = await talk(shop, "c", "one box of iron tablets", "I'll have to ring you back")
    assert replies[1] == heard.CALLS_BACK_REPLY, replies
    assert lines_of(shop, "c")[0][:3] == ("pending", "IRON-84", 1), replies


@pytest.mark.parametrize(
    ("said", "sku"),
    [
        ("the ibuprofen 200 please", "IBU200-24"),
        ("multivitamins please, the thirty tablets one", "MULTI-30"),
    ],
)
async def test_a_strength_or_a_packs_size_is_no_count(shop: Services, said: str, sku: str) -> None:
    """Both were asked how many of "between 1 and 10 packs"."""
    replies = await talk(shop, "c", said)
    assert skus(shop) == [(sku, 1)], replies


@pytest.mark.parametrize(
    "said",
    [
        "Hello? Is this the chemist? Oh good, I wasn't sure I'd pressed the right button",
        "Hello, hello, can you hear me? Network is very poor here",
    ],
)
async def test_checking_the_line_is_answered_not_searched(shop: Services, said: str) -> None:
    """One heard "I can't find that", the other a list of three products."""
    replies = await talk(shop, "c", said)
    assert replies == [CHECKING_IN_WORDS]


async def test_calling_for_someone_else_is_answered_not_searched(shop: Services) -> None:
    replies = await talk(
        shop, "c", "Hello, I'm ringing for the lady next door, she's not been out since the fall"
    )
    assert replies == [FOR_SOMEONE_WORDS]


@pytest.mark.parametrize(
    ("said", "heard_back"),
    [
        ("is this the pharmacy? I need paracetamol", "Paracetamol"),
        ("I'm ringing for my dad, the ibuprofen gel please", "Ibuprofen Gel"),
        ("hello, I'm calling on behalf of my mother, she needs her loratadine", "Loratadine"),
        ("hello, can you hear me? my husband's collapsed and he's not breathing", "911"),
    ],
)
async def test_checking_the_line_with_more_said_is_the_more(
    shop: Services, said: str, heard_back: str
) -> None:
    replies = await talk(shop, "c", said)
    assert heard_back in replies[0], replies


_POUNDING = "Hello, my head's been pounding like a drum since this morning"


async def test_a_symptom_told_vividly_hears_the_number_with_an_if_then_is_served(
    shop: Services,
) -> None:
    """It heard "This sounds like an emergency", and the paracetamol after it the
    number again; the caller hung up with nothing."""
    replies = await talk(shop, "c", _POUNDING, "two packs of paracetamol please")
    assert replies[0] == safety.check(), replies
    assert skus(shop) == [("PAR500-16", 2)], replies


@pytest.mark.parametrize(
    "said",
    [
        "my dad's gone a funny grey colour and he's sweating buckets",
        "he fell down the stairs and he's not moving",
    ],
)
async def test_an_emergency_the_probe_alone_reads_is_still_said_plainly(
    shop: Services, said: str
) -> None:
    assert safety.screen(said) is None  # the probe's, not the phrases'
    replies = await talk(shop, "c", said, "can I just get some paracetamol")
    assert replies[0].startswith("This sounds like an emergency."), replies
    assert "911" in replies[1] and skus(shop) == [], replies


async def test_asking_what_to_give_after_the_if_hears_no_product(shop: Services) -> None:
    replies = await talk(shop, "c", _POUNDING, "what can I give him for it")
    assert safety.concern_answered(replies[1]) is not None, replies


@pytest.mark.parametrize(
    ("said", "told"),
    [
        ("I've a cold sore the size of a volcano and I look like death warmed up", False),
        ("this cough is going to be the death of me", False),
        ("the kids'll be sick as dogs in the back of the car", False),
        ("I think he's dying", True),
        ("she's not breathing properly", True),
        ("he swallowed a button battery", True),
    ],
)
def test_the_words_an_emergency_is_told_with(said: str, told: bool) -> None:
    assert cues.tells_emergency(said) is told
