"""A product found from a guess is asked about before it is offered (issue 19).

The search finds products from near sounds and word starts, which is how a misheard
name still reaches its product; measured on recognised speech, a fifth of the single
hits found that way were another product. These calls run on the scripted provider
with the real pharmacy and SQLite, and check what the caller hears and what is ordered.
"""

from __future__ import annotations

import pytest
from sqlmodel import Session

from agents.heard import asked_name, did_you_say, offered
from agents.tools.catalogue import (
    SearchAnswer,
    answer_search,
    choose_products,
    find_product,
    resolve_product,
)
from agents.transcript import heard_as_names
from callswarm.app import Services
from models.search import says_product
from models.shop import Product
from swarm import ToolError

from .test_calls_nobody_scripted import lines_of
from .test_conversations import talk


def _product(name: str, keywords: str = "", ingredient: str = "") -> Product:
    return Product(
        sku="X",
        name=name,
        active_ingredient=ingredient or name.lower(),
        keywords=keywords,
        price_cents=100,
    )


def _answer(shop: Services, said: str) -> SearchAnswer:
    """The search tool's answer to the caller's words, searched as they were said."""
    with Session(shop.db) as db:
        return answer_search(db, said, said, "USD")


@pytest.mark.parametrize(
    ("said", "product", "says"),
    [
        ("can I get some omeprazole", _product("Omeprazole"), True),
        ("I'm really constipated", _product("Senna", "constipation laxative"), True),
        ("do you have pep sid", _product("Famotidine", "heartburn pepcid"), True),
        ("have you got co-codamol", _product("Co-codamol", ingredient="codeine"), True),
        ("L-O-P-E-R-A-M-I-D-E please", _product("Loperamide"), True),
        ("have you got any tram", _product("Tramadol", "pain opioid"), False),
        ("can I get some ompersole", _product("Omeprazole"), False),
        ("a nasal spray please", _product("Beclometasone Nasal Spray", "hay fever"), False),
        # An everyday word of a product's name is chance; a rarer one, two, the name in
        # a row, or a keyword (what the caller needs it for) are not.
        ("come with a hand and one", _product("Hand Sanitiser", "hand gel sanitiser"), False),
        ("have you got hand sanitiser", _product("Hand Sanitiser", "hand gel sanitiser"), True),
        ("just the hand gel", _product("Hand Sanitiser", "hand gel sanitiser"), True),
        ("then to travel, so go", _product("Travel Sickness Tablets", "travel motion"), False),
        ("do you have sleep aid", _product("Sleep Aid", "sleep insomnia night"), True),
        ("something for my back", _product("Ibuprofen", "back pain fever"), True),
        # A word the caller said is itself, not another by its sound or start.
        ("the bigger pack of those", _product("Ibuprofen", "back pain fever"), False),
        ("is there a code", _product("Co-codamol", "pain codeine", "codeine"), False),
    ],
)
def test_what_the_caller_said_of_a_product(said: str, product: Product, says: bool) -> None:
    assert says_product(product, said) is says


def test_the_question_is_read_back_as_the_product_asked_about() -> None:
    question = did_you_say("Loperamide")
    assert asked_name(question) == "Loperamide"
    assert offered(question) == ["Loperamide"]
    assert asked_name("We have Loperamide, at 3 dollars 99. Would you like to order it?") is None


async def test_a_word_start_is_asked_about_and_a_no_asks_for_the_name(shop: Services) -> None:
    replies = await talk(shop, "c", "have you got any tram", "no", "L-O-P-E-R-A-M-I-D-E")
    assert replies[0] == did_you_say("Tramadol")
    assert "We have" not in replies[0] and "dollars" not in replies[0]
    assert "name again" in replies[1] and "Tramadol" not in replies[1]
    assert "Loperamide" in replies[2] and "3 dollars 99" in replies[2]
    assert lines_of(shop, "c") == []


@pytest.mark.parametrize("yes", ["yes", "yeah that's right", "that's the one", "exactly"])
async def test_a_yes_offers_the_product_and_orders_nothing(shop: Services, yes: str) -> None:
    replies = await talk(shop, "c", "I'd like some lorprimide please", yes)
    assert replies[0] == did_you_say("Loperamide")
    assert replies[1].startswith("We have Loperamide") and "3 dollars 99" in replies[1]
    assert lines_of(shop, "c") == []


async def test_a_yes_with_a_count_adds_that_many(shop: Services) -> None:
    replies = await talk(shop, "c", "do you have meba rine", "yes, two boxes please")
    assert replies[0] == did_you_say("Mebeverine")
    assert "2 packs of Mebeverine" in replies[1]
    assert lines_of(shop, "c") == [("pending", "MEBEV-15", 2, 2 * 599)]


async def test_a_yes_then_a_yes_to_the_offer_adds_one(shop: Services) -> None:
    await talk(shop, "c", "I need some lorra mide", "yes", "yes please")
    assert lines_of(shop, "c") == [("pending", "LOPE2-12", 1, 399)]


async def test_a_no_with_the_right_name_offers_that_one(shop: Services) -> None:
    replies = await talk(shop, "c", "I'd like some lorprimide please", "no, mebeverine")
    assert "Mebeverine" in replies[1] and "Loperamide" not in replies[1]
    assert lines_of(shop, "c") == []


@pytest.mark.parametrize(
    ("said", "product"),
    [
        ("do you have pep sid", "Famotidine"),
        ("have you got fexofenadine", "Fexofenadine"),
        ("do you have ompersole for my heartburn", "Omeprazole"),
    ],
)
async def test_a_name_or_symptom_the_caller_said_is_offered_at_once(
    shop: Services, said: str, product: str
) -> None:
    [reply] = await talk(shop, "c", said)
    assert reply.startswith("We have") and f"{product}, " in reply
    assert asked_name(reply) is None


async def test_a_guess_among_several_items_is_asked_about_and_the_rest_added(
    shop: Services,
) -> None:
    [reply] = await talk(shop, "c", "one box of ibuprofen and two of meba rine please")
    assert reply.endswith(did_you_say("Mebeverine"))
    assert [sku for _, sku, _, _ in lines_of(shop, "c")] == ["IBU200-24"]


async def test_a_yes_with_a_count_adds_the_product_asked_not_a_line_of_the_order(
    shop: Services,
) -> None:
    await talk(shop, "c", "two boxes of paracetamol please", "do you have meba rine")
    await talk(shop, "c", "yes, just two please")
    assert sorted((sku, quantity) for _, sku, quantity, _ in lines_of(shop, "c")) == [
        ("MEBEV-15", 2),
        ("PAR500-16", 2),
    ]


async def test_a_no_with_a_variant_word_is_not_a_variant_of_the_guess(shop: Services) -> None:
    replies = await talk(shop, "c", "have you got ibbu proffy", "no, the gel")
    assert replies[0] == did_you_say("Ibuprofen")
    assert lines_of(shop, "c") == []


async def test_a_yes_with_a_variant_word_offers_that_variant(shop: Services) -> None:
    replies = await talk(shop, "c", "have you got ibbu proffy", "yes, the gel")
    assert replies[1].startswith("We have Ibuprofen Gel")


async def test_a_price_question_about_a_guess_asks_first(shop: Services) -> None:
    replies = await talk(shop, "c", "do you have ibuprofen", "how much is the lorprimide")
    assert replies[1] == did_you_say("Loperamide")


async def test_the_same_no_twice_offers_a_person_instead_of_asking_again(shop: Services) -> None:
    replies = await talk(shop, "c", "have you got any tram", "no", "have you got any tram", "no")
    assert "name again" in replies[1]
    assert "pharmacist" in replies[3] and "name again" not in replies[3]


async def test_a_name_spelled_after_words_is_found(shop: Services) -> None:
    [reply] = await talk(shop, "c", "it's L-O-P-E-R-A-M-I-D-E")
    assert reply.startswith("We have Loperamide")


@pytest.mark.parametrize("yes", ["yep, that one", "go on then", "yeah that's it"])
async def test_a_yes_to_an_offer_in_callers_words_adds_it(shop: Services, yes: str) -> None:
    replies = await talk(shop, "c", "do you have loperamide", yes, "yes please just the one")
    assert replies[1].startswith("I've added 1 pack of Loperamide")
    assert lines_of(shop, "c") == [("pending", "LOPE2-12", 1, 399)]
    assert "putting you through" not in replies[2]


async def test_a_safety_question_after_an_offer_adds_nothing(shop: Services) -> None:
    replies = await talk(shop, "c", "do you have loperamide", "yes but is it safe with ibuprofen?")
    assert "pharmacist" in replies[1]
    assert lines_of(shop, "c") == []


@pytest.mark.parametrize(
    ("said", "names"),
    [
        # The recogniser's list of names, copied in place of the caller's words.
        ("Fenoxidil, Mebeverine, Grantolate, Shropic,", True),
        ("and Lorafexin, Lorafexin, Lorafexin,", True),
        ("Can I have some toast, Omeprazole, Wendle, Arvotine, please?", True),
        # Callers' own sentences, commas and capitals and all.
        ("Yes, please, two boxes", False),
        ("Two Paracetamol, one Ibuprofen, and a Vitamin C.", False),
        ("Right, OK, Ibuprofen then", False),
        ("Hello, hi, do you have Loperamide?", False),
        ("Hi, Nurofen, please.", False),
        ("Paracetamol, Ibuprofen, Vitamin D", False),
        ("Sorry, it's, L-O-P-E-R-A-M-I-D-E, Loperamide.", False),
    ],
)
def test_words_that_read_like_the_recognisers_list_of_names(said: str, names: bool) -> None:
    assert heard_as_names(said) is names


async def test_a_name_in_words_that_read_as_a_list_of_names_is_asked_about(
    shop: Services,
) -> None:
    [reply] = await talk(shop, "c", "Fenoxidil, Mebeverine, Grantolate, Shropic,")
    assert reply == did_you_say("Mebeverine")
    assert lines_of(shop, "c") == []


@pytest.mark.parametrize(
    ("said", "products"),
    [
        ("have you got the zylo metta something nasal spray", ["Beclometasone", "Xylometazoline"]),
        ("do you do a nasal spray", ["Beclometasone", "Xylometazoline"]),
        ("I need some of them eye drops", ["Chloramphenicol", "Lubricating"]),
    ],
)
async def test_a_form_that_fits_two_drugs_lists_both_not_the_shorter_name(
    shop: Services, said: str, products: list[str]
) -> None:
    [reply] = await talk(shop, "c", said)
    assert reply.startswith("We have 2 options"), reply
    assert all(p in reply for p in products), reply


async def test_a_form_word_is_no_brand(shop: Services) -> None:
    [reply] = await talk(shop, "c", "can you send me, um, tell the fine cream please")
    assert "Hydrocortisone" not in reply, reply


@pytest.mark.parametrize(
    ("said", "product"),
    [
        ("two packs of the beconase nasal spray please", "Beclometasone Nasal Spray"),
        ("I'd like the otrivin nasal spray please", "Xylometazoline Nasal Spray"),
        ("the lubricating eye drops please", "Lubricating Eye Drops"),
    ],
)
async def test_a_brand_or_a_word_of_the_name_says_which_of_two_drugs_of_one_form(
    shop: Services, said: str, product: str
) -> None:
    [reply] = await talk(shop, "c", said)
    assert product in reply and "options" not in reply, reply


@pytest.mark.parametrize(
    "said",
    [
        "Morning, I'd like to place an order",
        "Good morning, have you got any plasters?",
        # Heard through the phone band for "Morning, er, I'm after a box of Fybogel":
        # "morning i'm after" was taken for "morningafter", a brand misheard.
        "morning, I'm after a month of Ibexole, or in get you got it for me ma'am.",
        # "I'm after" is how many callers ask; typed, or passed on by the model, the
        # apostrophe may be gone.
        "Morning, I'm after something for my back",
        "morning im after something for my cough",
    ],
)
async def test_a_greeting_is_no_product(shop: Services, said: str) -> None:
    [reply] = await talk(shop, "c", said)
    assert "Emergency Contraception" not in reply, reply
    assert lines_of(shop, "c") == []


@pytest.mark.parametrize(
    ("said", "name"),
    [
        ("thirty packs of the lozenges please", "Honey and Lemon Throat Lozenges"),
        ("just a sachet of the rehydration stuff", "Oral Rehydration Salts"),
    ],
)
def test_a_keyword_said_in_the_plural_or_not_still_names_its_product(
    shop: Services, said: str, name: str
) -> None:
    """A word may differ from the keyword by its plural, either way."""
    from agents.tools.catalogue import brand_family

    with Session(shop.db) as db:
        family = [p.name for p in brand_family(db, said)]
    assert family == [name], family


@pytest.mark.parametrize(
    "said", ["do you have the morning after pill", "I need the morning-after pill, please"]
)
def test_the_morning_after_pill_is_still_found(shop: Services, said: str) -> None:
    answer = _answer(shop, said)
    assert [p.name for p in answer.products] == ["Emergency Contraception"], answer


@pytest.mark.parametrize(
    ("heard", "listed"),
    [
        # Heard for "Have you got co-codamol? The over the counter one." in wide band.
        ("Have you got Co-codamole, Ibuprofen account at one?", {"Co-codamol", "Ibuprofen"}),
        ("do you have paracetamol or ibuprofen", {"Ibuprofen", "Paracetamol"}),
        ("do you have a pregnancy test and folic acid", {"Pregnancy Test", "Folic Acid"}),
        # A word names one product, the best ranked: not the gel beside the tablets.
        ("I need loratadine and ibuprofen", {"Loratadine", "Ibuprofen"}),
        ("I need loperamide and nicotine", {"Loperamide", "Nicotine Gum", "Nicotine Patches"}),
        # A keyword ("hives") or an ingredient names no second product.
        ("loratadine for hives", {"Loratadine"}),
        ("cetirizine for itchy eyes", {"Cetirizine"}),
        ("omeprazole for indigestion", {"Omeprazole"}),
        # Words read as the recogniser's list of names: a guess, asked about alone.
        ("Guaifan, Beclometasone, Omepraz,", {"Beclometasone Nasal Spray"}),
    ],
)
def test_two_products_named_are_both_answered(shop: Services, heard: str, listed: set[str]) -> None:
    answer = _answer(shop, heard)
    assert {p.name for p in answer.products} == listed, answer


@pytest.mark.parametrize(
    ("said", "outright"),
    [
        ("have you got ibuprofen gel", True),
        ("do you have paracetamol", True),
        # A name split by speech, beside an everyday word of the product's own: named
        # by its sound, not found by the everyday word (the bench's STT variants).
        ("have you got i be pro fen for my back", True),
        ("can i get one of the childrens i be pro fen the liquid", True),
        # The name in a row, or a keyword: said on purpose, if everyday.
        ("do you have sleep aid", True),
        ("just the hand gel please", True),
        ("something for my back", True),
        # Heard through the phone band at 10 dB for "Do you have Gaviscon, the advance
        # one?" and "I'd like to buy nicotine patches" (benchmarks/product_names.py):
        # one everyday word of a product's own alone.
        ("who do you have to have this come with a hand and one.", False),
        ("I'd like to mind it, because in hand, I'm giving no king,", False),
        # Found by the name's first word: "Hiya, it's for my mum, she needs some more of
        # her lansoprazole", in the same conditions.
        ("I live for my mom, she need to come more after then to travel, so go, hurry, go,", False),
    ],
)
def test_a_product_is_offered_outright_only_when_named(
    shop: Services, said: str, outright: bool
) -> None:
    answer = _answer(shop, said)
    assert (len(answer.products) == 1 and not answer.asked) is outright, answer


# Drugs the catalogue does not hold, said as they are spelled. Some sound near one it
# does (rosuvastatin and Atorvastatin, lamotrigine and Famotidine), and the search
# then finds that one; it is asked about ("did you say Famotidine?"), never offered as
# what the caller asked for (`benchmarks/offers.py --absent`). Not here: codeine, which
# is Co-codamol's own ingredient. Esomeprazole holds "omeprazole" whole, and was offered
# as Omeprazole until a name with letters before a product's own word was a guess.
ABSENT_DRUGS = (
    "ranitidine lansoprazole diazepam warfarin amlodipine esomeprazole dexlansoprazole "
    "simvastatin rosuvastatin prednisolone desloratadine levocetirizine promethazine "
    "doxycycline miconazole lamotrigine citalopram gabapentin metronidazole "
    # Found whole, as a misheard name is, these pass the guess gate (0.855-0.869); the
    # gate weighs them in their sentence (`Hit.in_sentence`), as it was measured.
    "famciclovir oxymetazoline olopatadine"
).split()


@pytest.mark.parametrize("drug", ABSENT_DRUGS)
def test_a_drug_the_shop_lacks_is_never_offered_as_another(shop: Services, drug: str) -> None:
    answer = _answer(shop, f"do you have {drug}?")
    assert len(answer.products) != 1 or answer.asked, answer


@pytest.mark.parametrize(
    ("said", "drug"),
    [
        ("two boxes of famciclovir please", "famciclovir"),
        ("I'd like some olopatadine please", "olopatadine"),
        ("make it two pravastatin", "pravastatin"),
        ("nystatin tablets please", "nystatin"),
        ("could I get some fusidic acid cream", "fusidic acid"),
        ("F-A-M-C-I-C-L-O-V-I-R", "famciclovir"),
    ],
)
async def test_a_drug_the_shop_lacks_is_never_added_as_another(
    shop: Services, said: str, drug: str
) -> None:
    [reply] = await talk(shop, "c", said)
    assert reply.startswith(f"I'm sorry, we don't stock {drug}."), reply
    assert "We have" not in reply and "did you say" not in reply, reply
    assert lines_of(shop, "c") == []


@pytest.mark.parametrize(
    "said",
    [
        "and two of the pravastatin",
        # A count with a drug the order lacks is not the last line's new count.
        "make it two pravastatin",
        "make that three of the pravastatin",
    ],
)
async def test_a_drug_the_shop_lacks_in_an_order_adds_nothing_and_keeps_the_order(
    shop: Services, said: str
) -> None:
    """Said after a line is in: the statin the caller takes is not the one the shop has,
    and the ibuprofen already ordered stays as it was."""
    await talk(shop, "c", "I'd like some ibuprofen please", "yes, one box")
    before = lines_of(shop, "c")
    assert [(sku, n) for _, sku, n, _ in before] == [("IBU200-24", 1)], before
    [reply] = await talk(shop, "c", said)
    assert "we don't stock pravastatin" in reply and "Atorvastatin" not in reply, reply
    assert lines_of(shop, "c") == before


@pytest.mark.parametrize(
    "said",
    [
        "two boxes of pravastatin and one ibuprofen please",
        "one box of ibuprofen and two boxes of pravastatin",
    ],
)
async def test_a_drug_the_shop_lacks_among_several_items_orders_nothing_unasked(
    shop: Services, said: str
) -> None:
    """Its count did not land on the other item, nor was it dropped unsaid: the caller
    hears it is not stocked, and the ibuprofen is offered for a yes."""
    [reply] = await talk(shop, "c", said)
    assert reply.startswith("I'm sorry, we don't stock pravastatin."), reply
    assert "Ibuprofen" in reply, reply
    assert lines_of(shop, "c") == []
    await talk(shop, "c", "yes please")
    assert [(sku, n) for _, sku, n, _ in lines_of(shop, "c")] == [("IBU200-24", 1)]


@pytest.mark.parametrize(
    "name", ["pravastatin tablets", "oxymetazoline nasal spray", "ranitidine tablets"]
)
def test_a_drug_the_shop_lacks_resolves_to_no_product(shop: Services, name: str) -> None:
    """The model's own name for a product, as `get_product` and the order tools take it:
    what is left without the drug ("tablets", "nasal spray") is no product."""
    with Session(shop.db) as db:
        assert find_product(db, name) is None
        assert choose_products(db, [name], name) is None
        with pytest.raises(ToolError, match="we don't stock"):
            resolve_product(db, name)


@pytest.mark.parametrize(
    ("said", "drug", "named"),
    [
        # Beside a product the caller also named: that one is answered, and the other
        # said not to be stocked.
        ("do you have pravastatin or ibuprofen", "pravastatin", "Ibuprofen"),
        # A form the shop has names nothing: a steroid spray is no stand-in for a
        # decongestant, and which would do is for a pharmacist to say.
        ("oxymetazoline nasal spray", "oxymetazoline", None),
        ("two boxes of pravastatin tablets please", "pravastatin", None),
        # A brand of a drug the shop lacks: Voltarol is diclofenac, not ibuprofen.
        ("have you got the voltarol gel", "voltarol", None),
    ],
)
def test_a_drug_the_shop_lacks_is_said_to_be_lacked_first(
    shop: Services, said: str, drug: str, named: str | None
) -> None:
    answer = _answer(shop, said)
    assert answer.text.startswith(f"I'm sorry, we don't stock {drug}."), answer
    assert not answer.asked, answer
    assert [p.name for p in answer.products if p.name == named] == ([named] if named else [])


@pytest.mark.parametrize(
    ("said", "product"),
    [
        # Another spelling of a drug the shop holds is that drug, not one it lacks.
        ("do you have chlorpheniramine", "Chlorphenamine"),
        ("have you got acyclovir cream", "Aciclovir Cold Sore Cream"),
        ("the beclomethasone nasal spray", "Beclometasone Nasal Spray"),
        ("cholecalciferol please", "Vitamin D3"),
        ("do you do tylenol", "Paracetamol"),
        ("some albuterol inhaler", "Salbutamol Inhaler"),
        # The list of names files combinations and leaflets as drugs of their own.
        ("do you have aspirin and omeprazole", "Omeprazole"),
        ("have you got salbutamol inhalers", "Salbutamol Inhaler"),
        ("the clotrimazole vaginal cream", "Clotrimazole Cream"),
        ("do you have acetaminophen and codeine", "Co-codamol"),
    ],
)
def test_another_name_of_a_drug_the_shop_holds_finds_it(
    shop: Services, said: str, product: str
) -> None:
    answer = _answer(shop, said)
    assert "don't stock" not in answer.text, answer
    assert product in [p.name for p in answer.products], answer


@pytest.mark.parametrize(
    ("said", "drug"),
    [
        ("do you have esomeprazol?", "esomeprazol"),
        ("it's the esomeprazole's I take", "esomeprazole"),
        ("have you got levocetirizine", "levocetirizine"),
    ],
)
def test_letters_before_a_products_name_make_another_drug(
    shop: Services, said: str, drug: str
) -> None:
    answer = _answer(shop, said)
    assert answer.text.startswith(f"I'm sorry, we don't stock {drug}."), answer
    assert answer.products == (), answer


@pytest.mark.parametrize(
    ("said", "asked"),
    [
        # A drug no list of names holds, the letters before a product's name still
        # make another: asked about, not offered.
        ("do you have esomeprazolix?", True),
        # Joined to an everyday word, a product's own name is still that product.
        ("handsanitiser please", False),
        ("have you got cocodamol", False),
    ],
)
def test_letters_before_a_products_name_are_asked_about(
    shop: Services, said: str, asked: bool
) -> None:
    answer = _answer(shop, said)
    assert len(answer.products) == 1 and answer.asked is asked, answer


@pytest.mark.parametrize(
    ("said", "after"),
    [
        ("remove the cetirizine, I'll get pravastatin elsewhere", []),
        ("make it two cetirizine, and do you have pravastatin", [("CET10-30", 2)]),
    ],
)
async def test_a_move_on_the_order_said_with_a_drug_the_shop_lacks_is_made(
    shop: Services, said: str, after: list[tuple[str, int]]
) -> None:
    """The drug the shop lacks does not take the turn from the order's move."""
    await talk(shop, "c", "a box of cetirizine please")
    await talk(shop, "c", said)
    assert [(sku, n) for _, sku, n, _ in lines_of(shop, "c")] == after


async def test_a_read_back_asked_with_a_drug_the_shop_lacks_is_read_back(
    shop: Services,
) -> None:
    await talk(shop, "c", "a box of cetirizine please")
    [reply] = await talk(shop, "c", "that's everything, I get pravastatin from my GP")
    assert reply.endswith("Shall I place the order?"), reply
