"""What a caller says beside a product: their name, a combination, a colour, another
request after a drug the shop lacks.

Found by sentences a helper wrote from the product list alone (docs/performance.md, "A
name, a combination, a colour"): "hi it's Camila here, I need some cough syrup" was
told the shop lacks camila (a contraceptive's brand) and lost the cough syrup;
"ibuprofen and paracetamol together in one tablet" was offered Paracetamol as if it
were that; "the pink ones" was offered Chloramphenicol Eye Drops. The real pharmacy on
SQLite, with the scripted provider for the calls.
"""

from __future__ import annotations

import pytest
from sqlmodel import Session

from agents.heard import place_picked
from agents.tools.catalogue import SearchAnswer, answer_search
from callswarm.app import Services
from models.combinations import Made, all_named, made_of, together_lacked
from models.shop import Product

from .test_calls_nobody_scripted import lines_of
from .test_conversations import talk


def _ordered(shop: Services, client: str) -> list[str]:
    """The names of the products on the caller's orders, a name for each line."""
    with Session(shop.db) as db:
        return sorted(db.get_one(Product, sku).name for _, sku, _, _ in lines_of(shop, client))


def _answer(shop: Services, said: str) -> SearchAnswer:
    with Session(shop.db) as db:
        return answer_search(db, said, said, "USD")


def _names(answer: SearchAnswer) -> set[str]:
    return {p.name for p in answer.products}


@pytest.mark.parametrize(
    ("said", "found"),
    [
        ("hi it's camila here, I need some cough syrup", "Dry Cough Syrup"),
        ("my name's Lyrica Jones and I'd like some ibuprofen", "Ibuprofen"),
        ("hello this is Allegra speaking, have you got any paracetamol", "Paracetamol"),
        ("her name's Camila, she needs some cough syrup", "Chesty Cough Syrup"),
    ],
)
def test_a_callers_name_that_is_also_a_brand_is_no_drug(
    shop: Services, said: str, found: str
) -> None:
    answer = _answer(shop, said)
    assert "don't stock" not in answer.text, answer
    assert found in _names(answer), answer


@pytest.mark.parametrize("said", ["my name is Allegra", "call me Allegra", "it's Allegra here"])
def test_a_held_brand_given_as_a_name_finds_nothing(shop: Services, said: str) -> None:
    assert _answer(shop, said).products == ()


def test_a_held_name_after_im_is_the_product(shop: Services) -> None:
    # The recogniser's "I'm after loratadine", and a name as often as not: asked about.
    assert "Loratadine" in _names(_answer(shop, "I'm loratadine"))


@pytest.mark.parametrize(
    ("said", "drug", "found"),
    [
        # The same words as a drug are still the drug.
        ("I'm on lyrica and need some ibuprofen", "lyrica", "Ibuprofen"),
        # Not the caller's name: "the name" is the drug's, and a drug after whose it is
        # stays the drug, or Atorvastatin is guessed for pravastatin.
        ("my doctor said the name is loratadine", None, "Loratadine"),
        ("the name is allegra, do you have it", None, "Fexofenadine"),
        ("do you have allegra", None, "Fexofenadine"),
    ],
)
def test_a_brand_said_as_a_drug_is_still_the_drug(
    shop: Services, said: str, drug: str | None, found: str
) -> None:
    answer = _answer(shop, said)
    assert (f"we don't stock {drug}." in answer.text) == (drug is not None), answer
    assert found in _names(answer), answer


@pytest.mark.parametrize(
    ("said", "drug", "found"),
    [
        ("I need pravastatin and some cough syrup", "pravastatin", {"Dry Cough Syrup"}),
        ("have you got Prozac, and some sleeping tablets", "prozac", {"Sleep Aid"}),
        ("do you carry xanax, and something to help me sleep", "xanax", {"Sleep Aid"}),
        ("pravastatin and something for a sore throat", "pravastatin", {"Sore Throat Spray"}),
        # Said of the drug: its form and dose, which no product is asked for by.
        ("oxymetazoline nasal spray", "oxymetazoline", set()),
        ("pravastatin 40 mg tablets", "pravastatin", set()),
        ("do you have famciclovir cold sore cream", "famciclovir", set()),
        ("do you have nasal oxymetazoline", "oxymetazoline", set()),
        # Told of, not asked for.
        ("pravastatin, I can't sleep with the worry", "pravastatin", set()),
        ("my amlodipine repeat and a bottle of cough syrup", "amlodipine", {"Dry Cough Syrup"}),
        ("it's for my husband pravastatin", "pravastatin", set()),
    ],
)
def test_what_is_asked_for_beside_a_drug_the_shop_lacks_is_answered(
    shop: Services, said: str, drug: str, found: set[str]
) -> None:
    answer = _answer(shop, said)
    assert answer.text.startswith(f"I'm sorry, we don't stock {drug}."), answer
    assert found <= _names(answer), answer
    assert bool(answer.products) == bool(found), answer


@pytest.mark.parametrize(
    ("said", "product"),
    [
        ("I need the piles cream with lidocaine and hydrocortisone in it", "Haemorrhoid Cream"),
        ("lidocaine and hydrocortisone", "Haemorrhoid Cream"),
        ("paracetamol with codeine", "Co-codamol"),
        ("tylenol with codeine", "Co-codamol"),
    ],
)
def test_a_product_named_by_every_ingredient_is_offered_alone(
    shop: Services, said: str, product: str
) -> None:
    answer = _answer(shop, said)
    assert [p.name for p in answer.products] == [product], answer
    assert answer.text.startswith(f"We have {product}"), answer


@pytest.mark.parametrize(
    ("said", "ingredients", "listed"),
    [
        (
            "the ibuprofen and paracetamol together in one tablet",
            "ibuprofen and paracetamol",
            {"Ibuprofen", "Paracetamol"},
        ),
        (
            "you got Excedrin, the migraine one, with the aspirin and acetaminophen and caffeine",
            "aspirin, paracetamol and caffeine",
            {"Aspirin", "Paracetamol"},
        ),
        ("have you got Nurofen Plus, the one with codeine", "ibuprofen and codeine", {"Ibuprofen"}),
    ],
)
def test_a_combination_the_shop_lacks_is_never_one_part_offered_as_the_whole(
    shop: Services, said: str, ingredients: str, listed: set[str]
) -> None:
    answer = _answer(shop, said)
    assert answer.text.startswith(f"I'm sorry, we don't stock {ingredients} in one product."), (
        answer
    )
    # Each part the shop has on its own, once; codeine is sold only in Co-codamol.
    assert _names(answer) == listed, answer


@pytest.mark.parametrize(
    "said",
    [
        "do you have ibuprofen and paracetamol",
        "I need paracetamol with some ibuprofen as well",
        "paracetamol and ibuprofen, do you have both in stock",
    ],
)
def test_two_products_asked_for_are_no_combination(shop: Services, said: str) -> None:
    answer = _answer(shop, said)
    assert "one product" not in answer.text, answer
    assert {"Ibuprofen", "Paracetamol"} <= _names(answer), answer


@pytest.mark.parametrize(
    ("said", "holding"),
    [
        (
            "um Panadol Extra, paracetamol with caffeine, have you got that",
            "paracetamol and caffeine",
        ),
        (
            "something for a cold with paracetamol and phenylephrine in one",
            "paracetamol and phenylephrine",
        ),
    ],
)
def test_a_wider_mix_is_offered_as_what_it_is(shop: Services, said: str, holding: str) -> None:
    """Cold and Flu Relief holds both, and caffeine or phenylephrine too: not the mix asked
    for, nor a reason to say the shop has none."""
    answer = _answer(shop, said)
    assert answer.text.startswith(f"I'm sorry, we don't stock {holding} alone in one product."), (
        answer
    )
    assert {"Cold and Flu Relief", "Paracetamol"} == _names(answer), answer


async def test_a_combination_asked_for_with_a_word_of_buying_orders_nothing(shop: Services) -> None:
    [reply] = await talk(shop, "c", "I need the ibuprofen and codeine together, like nurofen plus")
    assert "in one product" in reply, reply
    assert lines_of(shop, "c") == []


@pytest.mark.parametrize("said", ["the pink ones", "the little white tablets please"])
def test_a_colour_names_no_product(shop: Services, said: str) -> None:
    assert _answer(shop, said).products == (), said


def test_a_colour_in_a_products_words_still_names_it(shop: Services) -> None:
    assert "Chloramphenicol Eye Drops" in _names(_answer(shop, "something for pink eye"))


async def test_a_call_naming_a_combination_orders_nothing_unasked(shop: Services) -> None:
    replies = await talk(
        shop,
        "c",
        "do you sell the ibuprofen and paracetamol together in one tablet",
        "the first one",
    )
    assert "in one product" in replies[0], replies
    assert "We have" in replies[0] and "Would you like to order it" not in replies[0], replies
    # The caller chose from the list: one line, of what was chosen.
    assert _ordered(shop, "c") == _listed(replies[0])[:1], replies


MADE = made_of(
    (
        ("CC", "codeine and paracetamol"),
        ("P", "paracetamol"),
        ("I", "ibuprofen"),
        ("H", "lidocaine and hydrocortisone"),
        ("G", "sodium alginate and potassium bicarbonate"),
        ("O", "sodium chloride, potassium and glucose"),
        ("CF", "paracetamol, phenylephrine and caffeine"),
    )
)


@pytest.mark.parametrize(
    ("said", "whole"),
    [
        ("paracetamol and codeine", {"CC"}),
        ("acetaminophen with codeine", {"CC"}),  # another name of paracetamol
        ("the co-codamol", set()),  # its name, not its ingredients: the search's part
        ("hydrocortisone", set()),
        # Its potassium is not also the rehydration salts' potassium.
        ("the one with sodium alginate and potassium bicarbonate", {"G"}),
    ],
)
def test_a_product_is_named_whole_only_by_every_ingredient(said: str, whole: set[str]) -> None:
    assert all_named(said.split(), MADE) == whole


@pytest.mark.parametrize(
    ("said", "lacked"),
    [
        ("ibuprofen and paracetamol together", ("ibuprofen", "paracetamol")),
        ("nurofen with the codeine in", ("ibuprofen", "codeine")),
        ("ibuprofen and paracetamol", ()),  # two products
        ("paracetamol with some ibuprofen as well", ()),
        ("paracetamol with codeine", ()),  # the shop has it
        ("ibuprofen together", ()),  # one ingredient
        ("a syrup that does both ibuprofen and codeine", ("ibuprofen", "codeine")),
        ("paracetamol and ibuprofen do you have both in stock", ()),
        ("ibuprofen and paracetamol i'll take both", ()),
        # A product of those and more is not that mix.
        ("panadol extra paracetamol with caffeine", ("paracetamol", "caffeine")),
        ("the one with sodium alginate and potassium bicarbonate", ()),
    ],
)
def test_a_combination_is_asked_for_by_its_cue(said: str, lacked: tuple[str, ...]) -> None:
    assert together_lacked(said.split(), MADE) == lacked


def test_ingredients_are_split_as_written() -> None:
    assert made_of((("X", "paracetamol, phenylephrine and caffeine"),)) == (
        Made("X", ("paracetamol", "phenylephrine", "caffeine")),
    )


# --- after a list: a question orders nothing, a place or a price picks ----------------------


@pytest.mark.parametrize(
    "said",
    [
        "do you have ibuprofen and paracetamol",
        "have you got any loratadine or cetirizine",
        "do you guys sell nicotine gum and nicotine patches?",
        "paracetamol and ibuprofen, do you have both in stock",
    ],
)
async def test_asking_what_the_shop_has_orders_nothing(shop: Services, said: str) -> None:
    [reply] = await talk(shop, "c", said)
    assert reply.startswith("We have"), reply
    assert lines_of(shop, "c") == []


@pytest.mark.parametrize(
    "said",
    [
        "do you have ibuprofen and paracetamol, I'll take one of each",
        "can I get ibuprofen and paracetamol",
        "have you got two boxes of ibuprofen and one of paracetamol",
        "do you have ibuprofen and paracetamol, both please",
    ],
)
async def test_asking_for_several_products_orders_them(shop: Services, said: str) -> None:
    await talk(shop, "c", said)
    assert set(_ordered(shop, "c")) == {"Ibuprofen", "Paracetamol"}


@pytest.mark.parametrize(
    ("said", "picked"),
    [
        ("the second one please", 1),
        ("yeah the first one", 0),
        ("I'll go for the last one", -1),
    ],
)
async def test_an_option_is_picked_by_its_place(shop: Services, said: str, picked: int) -> None:
    replies = await talk(shop, "c", "do you have ibuprofen and paracetamol", said)
    listed = _listed(replies[0])
    assert _ordered(shop, "c") == [listed[picked]], replies


async def test_an_option_is_picked_by_its_price_and_a_question_picks_nothing(
    shop: Services,
) -> None:
    await talk(shop, "c", "do you have ibuprofen and paracetamol", "which is cheaper")
    assert lines_of(shop, "c") == []
    await talk(shop, "d", "do you have ibuprofen and paracetamol", "the cheaper one")
    assert _ordered(shop, "d") == ["Paracetamol"]  # 2.99 against 3.99


@pytest.mark.parametrize(
    "said",
    [
        "what's the actual difference between them two",
        "neither, thanks",
        "which is stronger",
        # A place or a price word that is no answer (a review's).
        "hang on a second",
        "the same one I had last time",
        "first I need to check with my wife",
        "is there a cheaper one",
        "do you have anything cheaper",
    ],
)
async def test_a_question_or_a_no_after_a_list_orders_nothing(shop: Services, said: str) -> None:
    replies = await talk(shop, "c", "do you have paracetamol and ibuprofen", said)
    assert "Which one would you like?" in replies[0], replies
    assert lines_of(shop, "c") == [], replies


async def test_a_price_asked_of_one_option_is_answered_and_orders_nothing(shop: Services) -> None:
    """A question, but of one option by its variant: the bench's "brand-advil-price",
    which a first version of the rule above broke."""
    replies = await talk(shop, "c", "do you have advil", "how much is the regular one, the 200")
    assert "Ibuprofen, 200 milligram" in replies[1] and "3 dollars 99" in replies[1], replies
    assert lines_of(shop, "c") == []


async def test_an_option_named_after_a_no_is_the_one_picked(shop: Services) -> None:
    await talk(
        shop, "c", "do you have ibuprofen and paracetamol", "not the paracetamol, the ibuprofen"
    )
    assert _ordered(shop, "c") == ["Ibuprofen"]


def test_a_place_is_read_only_among_what_was_listed() -> None:
    assert place_picked("the third one", 2) is None
    assert place_picked("hang on a second", 2) is None
    assert place_picked("um, the second one you said", 3) == 1
    assert place_picked("go on then, the last one", 3) == 2
    assert place_picked("the first or the second", 2) is None
    assert place_picked("number two please", 3) == 1
    assert place_picked("the more expensive one", 2) == "dearest"


def _listed(reply: str) -> list[str]:
    return [part.split(",", 1)[0] for part in reply.split("options: ", 1)[1].split("; ")]
