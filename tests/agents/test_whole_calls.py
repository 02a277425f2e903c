"""What whole calls written by someone who read no code found (benchmarks/whole_calls.py,
benchmarks/data/calls_blind1.yaml): each failed on the code before, on the scripted
provider with the real pharmacy (routers, screen, tools, SQLite)."""

from __future__ import annotations

import pytest

from agents import heard
from callswarm.app import Services

from .test_calls_nobody_scripted import _model_calls, lines_of
from .test_conversations import talk


@pytest.mark.parametrize(
    ("taken", "packs"),
    [
        ("right, I'll take one pack then", 1),
        ("brilliant, two packs please", 2),
        ("sure, put me down for one", 1),
        ("two please", 2),
    ],
)
async def test_an_offer_taken_in_the_callers_own_words(
    shop: Services, taken: str, packs: int
) -> None:
    """No yes in them: they were searched as a product ("I can't find anything for
    brilliant, two packs please")."""
    replies = await talk(shop, "c", "have you got the travel sickness tablets in stock", taken)
    assert replies[0].endswith(heard.ORDER_IT), replies
    assert lines_of(shop, "c") == [("pending", "CINN-15", packs, packs * 379)], replies


@pytest.mark.parametrize(
    "put_off",
    ["not right now thanks", "I'll have a think about it", "maybe next time", "I'll pop in later"],
)
async def test_an_offer_put_off_orders_nothing(shop: Services, put_off: str) -> None:
    replies = await talk(shop, "c", "have you got plasters", put_off)
    assert replies[1] == heard.PUT_OFF_REPLY, replies
    assert lines_of(shop, "c") == []


async def test_a_goodbye_with_the_put_off_ends_the_call(shop: Services) -> None:
    replies = await talk(
        shop,
        "c",
        "hi, how much are the pregnancy tests, and is it two in a box",
        "ok thanks, I'll have a think about it, bye",
    )
    assert "7 dollars 99" in replies[0] and "added" not in replies[0], replies
    assert "Goodbye" in replies[1], replies
    assert lines_of(shop, "c") == []


async def test_a_put_off_after_a_list_is_not_an_order(shop: Services) -> None:
    replies = await talk(shop, "c", "I need something for hay fever", "I'll have a think about it")
    assert heard.WHICH in replies[0], replies
    assert replies[1] == heard.PUT_OFF_REPLY, replies
    assert lines_of(shop, "c") == []


async def test_a_model_adding_what_was_put_off_adds_nothing(shop: Services) -> None:
    """Consent is code: a model that orders on "I'll have a think" (the scripted rules
    add on "I'll have") is refused by the order tool, whatever the screen let through."""
    await talk(shop, "c", "have you got plasters")
    _model_calls(shop, "add_to_order", {"product": "Fabric Plasters", "quantity": 1})
    # A product named in it: the screen leaves the line to the model.
    [reply] = await talk(shop, "c", "I'll have a think, I might get ibuprofen gel instead")
    assert reply == heard.PUT_OFF_REPLY, reply
    assert lines_of(shop, "c") == []


async def test_items_described_after_their_name_are_that_item(shop: Services) -> None:
    """ "the 200s" was an item of its own ("I couldn't find the 200s"), and "the normal
    ones not the low dose" ordered the low-dose aspirin beside the normal one."""
    reply = await talk(
        shop,
        "c",
        "morning, erm, two packs of ibuprofin, the 200s, and a pack of aspirin, "
        "the normal ones not the low dose",
    )
    assert [(sku, n) for _, sku, n, _ in lines_of(shop, "c")] == [
        ("ASP300-32", 1),
        ("IBU200-24", 2),
    ], reply
    assert "couldn't find" not in reply[0], reply


async def test_done_said_with_a_word_between_reads_the_order_back(shop: Services) -> None:
    replies = await talk(
        shop,
        "c",
        "can I have one pack of the omeprazole please",
        "right that's definitely everything",
    )
    assert replies[1].endswith("Shall I place the order?"), replies


async def test_a_count_corrected_at_the_read_back(shop: Services) -> None:
    replies = await talk(
        shop,
        "c",
        "hi can I order three packs of the zinc tablets",
        "that's all",
        "no sorry, I meant two packs not three",
        "that's everything",
        "yes that's right",
    )
    assert lines_of(shop, "c") == [("confirmed", "ZINC-30", 2, 2 * 449)], replies


@pytest.mark.parametrize(
    ("first", "instead", "now"),
    [
        (
            "hi I want the nytol sleeping tablets, one pack",
            "actually can I have the herbal one instead, the valerian, I'd rather go natural",
            "MELAT-30",
        ),
        (
            "i need cough syrup for dry cough, one bottle",
            "sorry, it is chesty cough actually, please change to the chesty one",
            "GUAI-150",
        ),
        (
            "hiya can i get the loratadine, one box",
            "actually hmm do you have the allegra one instead, the fexofenadine, swap it for that",
            "FEX120-30",
        ),
    ],
)
async def test_a_product_wanted_instead_replaces_the_one_line(
    shop: Services, first: str, instead: str, now: str
) -> None:
    """The line to replace is not named: it was added beside the one it replaced."""
    replies = await talk(shop, "c", first, instead)
    assert [sku for _, sku, _, _ in lines_of(shop, "c")] == [now], replies


async def test_the_bigger_pack_instead_keeps_the_count(shop: Services) -> None:
    replies = await talk(
        shop,
        "c",
        "paracetamol please two packs of the normal ones",
        "actually you know what make it the bigger pack instead, the thirty twos, still two",
    )
    assert [(sku, n) for _, sku, n, _ in lines_of(shop, "c")] == [("PAR500-32", 2)], replies


async def test_a_count_of_what_was_just_added(shop: Services) -> None:
    replies = await talk(
        shop, "c", "hi yeah can i get tylenol, the big pack, the thirty two count", "three of those"
    )
    assert [(sku, n) for _, sku, n, _ in lines_of(shop, "c")] == [("PAR500-32", 3)], replies


@pytest.mark.parametrize("done", ["no that's grand thanks", "that's me", "that is all only"])
async def test_done_in_regional_words(shop: Services, done: str) -> None:
    replies = await talk(shop, "c", "a box of plasters please", done)
    assert replies[1].endswith("Shall I place the order?"), replies


@pytest.mark.parametrize(
    ("asked", "taken", "lines"),
    [
        (
            "how much is the vitamin d",
            "go on then, one tub of that and one of the fish oil",
            [("OMEG-60", 1), ("VITD1000-90", 1)],
        ),
        (
            "i need a nasal spray for a blocked nose, the otrivin one",
            "one please. and a pack of the sudafed tablets",
            [("PSE60-12", 1), ("XYLNAS-10", 1)],
        ),
        (
            "do you have the head lice stuff in, the nit lotion",
            "god ok, one bottle then",
            [("HEADLICE-100", 1)],
        ),
    ],
)
async def test_the_offer_taken_with_another_product(
    shop: Services, asked: str, taken: str, lines: list[tuple[str, int]]
) -> None:
    """Only the other product was ordered: "that" was the product just offered."""
    replies = await talk(shop, "c", asked, taken)
    assert [(sku, n) for _, sku, n, _ in lines_of(shop, "c")] == lines, replies


@pytest.mark.parametrize(
    ("first", "then", "named"),
    [
        ("um hi how much are the nicotine patches", "jeez ok and the gum", "Nicotine Gum"),
        ("hi how much is the fexofenadine", "and the cetirizine", "Cetirizine"),
    ],
)
async def test_a_price_question_carried_on_to_another_product_orders_nothing(
    shop: Services, first: str, then: str, named: str
) -> None:
    replies = await talk(shop, "c", first, then, "right, ok, i'll think about it, bye")
    assert replies[1].startswith(f"We have {named},") and "dollars" in replies[1], replies
    assert "Goodbye" in replies[2], replies
    assert lines_of(shop, "c") == []


async def test_the_smaller_pack_of_a_list_is_the_plain_one(shop: Services) -> None:
    """The plain pack is the smallest: "the smaller pack" fitted none, and the caller
    heard "I can't find that"."""
    replies = await talk(
        shop,
        "c",
        "hi there, do you guys carry tylenol",
        "the regular adult tablets, the smaller pack with sixteen in it, I'll take two of those",
    )
    assert [(sku, n) for _, sku, n, _ in lines_of(shop, "c")] == [("PAR500-16", 2)], replies


# --- what the first review of these found: lines that must not order, swap or merge ------


@pytest.mark.parametrize(
    "said",
    [
        "I'm allergic to that one, can I get the ibuprofen",
        "that one made me sick, can I get ibuprofen",
        "I'll get it from the supermarket",
    ],
)
async def test_an_offer_turned_down_in_passing_is_not_ordered(shop: Services, said: str) -> None:
    replies = await talk(shop, "c", "have you got the travel sickness tablets", said)
    assert "CINN-15" not in [sku for _, sku, _, _ in lines_of(shop, "c")], replies


@pytest.mark.parametrize(
    "asked",
    ["can I take ibuprofen instead?", "I'll get the ibuprofen from the supermarket instead"],
)
async def test_instead_in_a_question_or_an_errand_swaps_nothing(shop: Services, asked: str) -> None:
    replies = await talk(shop, "c", "two boxes of paracetamol please", asked)
    assert [(sku, n) for _, sku, n, _ in lines_of(shop, "c")] == [("PAR500-16", 2)], replies


async def test_two_products_joined_by_and_stay_two(shop: Services) -> None:
    replies = await talk(shop, "c", "two paracetamol and the piriton please")
    assert sorted(sku for _, sku, _, _ in lines_of(shop, "c")) == ["CHLOR4-28", "PAR500-16"], (
        replies
    )


async def test_a_yes_with_a_collection_plan_takes_the_offer(shop: Services) -> None:
    replies = await talk(
        shop, "c", "have you got plasters", "yes please, I'll come in and collect it"
    )
    assert [sku for _, sku, _, _ in lines_of(shop, "c")] == ["PLAST-40"], replies
