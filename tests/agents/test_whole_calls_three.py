"""What the third set of whole calls written blind found (benchmarks/data/calls_blind3.yaml,
run before anyone read it): each failed on the code before, on the scripted provider
with the real pharmacy (routers, screen, tools, SQLite)."""

from __future__ import annotations

import pytest

from agents import cues, heard, safety
from agents.guards import stated_quantity
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
    "yes", ["Aye, on ye go", "Yeah, too easy, put it through", "Yeah, fire ahead", "yeah, crack on"]
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


async def test_calling_back_places_nothing_and_lists_nothing(shop: Services) -> None:
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


@pytest.mark.parametrize(
    "then",
    [
        "what can I give him for it",
        "what can I give her for the allergy?",
        "have you got anything for a burn?",
        "yes, it's severe",
        "can I get something for the swelling",
    ],
)
async def test_after_the_if_only_a_plain_request_to_buy_is_served(
    shop: Services, then: str
) -> None:
    """The review's: an emergency the words missed may go on like this."""
    replies = await talk(shop, "c", _POUNDING, then)
    assert safety.concern_answered(replies[1]) is not None, replies
    assert skus(shop) == [], replies


@pytest.mark.parametrize(
    ("then", "named"),
    [("two packs of paracetamol please", "Paracetamol"), ("the Zyrtec please", "Cetirizine")],
)
async def test_after_the_if_a_product_asked_for_by_name_is_served(
    shop: Services, then: str, named: str
) -> None:
    replies = await talk(shop, "c", _POUNDING, then)
    assert safety.concern_answered(replies[1]) is None and named in replies[1], replies


@pytest.mark.parametrize(
    ("then", "named"),
    [
        # From the set's calls: each heard "This sounds like an emergency" and hung up.
        ("Have you got the travel sickness tablets, Stugeron is it?", "Travel Sickness"),
        ("You have antiseptic mouthwash? Chlorhexidine?", "Antiseptic Mouthwash"),
        ("Y'all have Prilosec? I'll take a box of that", "Omeprazole"),
        # Written here, not in the set.
        ("do you sell the loratadine?", "Loratadine"),
        ("how much is the ibuprofen gel?", "Ibuprofen Gel"),
        ("you have loratadine?", "Loratadine"),
    ],
)
async def test_after_the_if_asking_for_a_product_by_name_is_served(
    shop: Services, then: str, named: str
) -> None:
    """Whether the shop has it, or what it costs, asked of a product named."""
    replies = await talk(shop, "c", _POUNDING, then)
    assert safety.concern_answered(replies[1]) is None and named in replies[1], replies


@pytest.mark.parametrize(
    "then",
    [
        "can I give her the piriton?",
        "should he take the ibuprofen now?",
        "is the calpol safe for him?",
        "have you got piriton? his lips are swelling up",
        "do you have loratadine? she can't breathe properly",
        # The review's: symptoms no emergency word names, and a child's doses.
        "do you have aspirin? my husband's arm has gone weak",
        "have you got aspirin? the pain's going down his arm and into his jaw",
        "have you got calpol? he's already had four doses today",
        "do you have calpol? would it help him?",
        "how much is the paracetamol? I need a lot, like a hundred",
        # The second review's: no question mark, a need, a brand-like word, a giving.
        "he's had four doses of ibuprofen today and he's floppy",
        "should I give him the aspirin",
        "he swallowed the paracetamol",
        "do you have the sleep aid? i need the lot",
        "have you got paracetamol? so i can do it",
        "have you got loratadine? anafalactic",
    ],
)
async def test_after_the_if_a_product_named_with_giving_or_a_symptom_is_not_served(
    shop: Services, then: str
) -> None:
    """A question with more in it than whether the shop has the product or its price may
    be the emergency going on: it hears the number plainly, and nothing is offered."""
    replies = await talk(shop, "c", _POUNDING, then)
    assert safety.concern_answered(replies[1]) is not None, replies
    assert "dollars" not in replies[1] and skus(shop) == [], replies


async def test_checking_the_line_after_an_emergency_hears_the_number_again(
    shop: Services,
) -> None:
    replies = await talk(
        shop,
        "c",
        "my dad's gone a funny grey colour and he's sweating buckets",
        "hello? are you there?",
    )
    assert "911" in replies[1] and replies[1] != CHECKING_IN_WORDS, replies


async def test_a_yes_with_do_it_takes_the_offer(shop: Services) -> None:
    replies = await talk(shop, "c", "have you got plasters", "yes, do it")
    assert skus(shop) == [("PLAST-40", 1)], replies


@pytest.mark.parametrize(
    ("said", "count"),
    [
        ("the ibuprofen 200 please", None),
        ("vitamin c 1000, two tubs", 2),
        # After a word of asking, a count: refused as too many packs, not one pack added.
        ("I'll take 120 paracetamol", 120),
        ("can I get 150 of the plasters", 150),
    ],
)
def test_a_number_after_a_name_is_its_strength_and_after_asking_a_count(
    said: str, count: int | None
) -> None:
    assert stated_quantity(said) == count


@pytest.mark.parametrize(
    ("said", "told"),
    [
        ("I've a cold sore the size of a volcano and I look like death warmed up", False),
        ("this cough is going to be the death of me", False),
        ("the kids'll be sick as dogs in the back of the car", False),
        ("I think he's dying", True),
        ("she's not breathing properly", True),
        ("he swallowed a button battery", True),
        ("I popped a load of my sleeping pills", True),
        ("she won't stay awake", True),
        ("it knocked him out for a minute", True),
        ("I feel like I'm dying with the chest on me", True),
    ],
)
def test_the_words_an_emergency_is_told_with(said: str, told: bool) -> None:
    assert cues.tells_emergency(said) is told
