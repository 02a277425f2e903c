"""The bakery agency: its rules of code, its screen, and its bench on the scripted provider.

The bakery is the second agency: these tests name it; the product outside its
folder does not (tests/test_layers.py).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from sqlmodel import Session, select

from agencies.bakery import AGENCY, words
from callswarm.agency import AgencyNotFound, load_agency
from callswarm.app import build_services
from callswarm.settings import Settings
from models.shop import Order, OrderLine, OrderStatus, Product
from swarm import AssistantMessage, CompletionArgs, FunctionBackend, ToolCall
from tests.test_cli import base_env


def test_the_gateway_finds_it_by_name_and_by_module_path() -> None:
    assert load_agency("bakery") is AGENCY
    assert load_agency("agencies.bakery") is AGENCY
    assert load_agency("agencies.bakery:AGENCY") is AGENCY
    with pytest.raises(AgencyNotFound, match="bakery, pharmacy"):
        load_agency("bakrey")
    with pytest.raises(AgencyNotFound, match="not an Agency"):
        load_agency("agencies.bakery:words")


@pytest.mark.parametrize(
    ("said", "count"),
    [
        ("two sourdough loaves please", 2),
        ("half a dozen blueberry muffins", 6),
        ("a couple of croissants", 2),
        ("12 bagels", 12),
        ("a baguette", None),
        ("two croissants, no, three", 3),
        ("two croissants and three bagels", None),
        # an age or a time is not a count
        ("a birthday cake for my son, he's turning six", None),
        ("a cake for my 6 year old", None),
        ("two croissants for 3 o'clock", 2),
        ("she's 4, so two cupcakes please", 2),
    ],
)
def test_the_count_is_what_the_caller_said(said: str, count: int | None) -> None:
    assert words.stated_quantity(said) == count


@pytest.mark.parametrize(
    ("said", "yes"),
    [
        ("yes please", True),
        ("yep, go ahead", True),
        ("yes but can I add a scone?", False),
        ("no wait", False),
        ("hang on, actually", False),
        ("is that right?", False),
    ],
)
def test_only_a_clear_yes_places_an_order(said: str, yes: bool) -> None:
    assert words.is_clear_yes(said) is yes


def test_an_allergen_word_is_not_taken_for_an_item() -> None:
    assert words.allergens_named("I've got a sesame allergy, what's safe?") == (
        ("sesame",),
        "i've got a what's safe",
    )
    assert words.allergens_named("does the carrot cake have nuts?")[0] == ("almonds", "walnuts")
    assert words.allergens_named("is it dairy-free")[0] == ("milk",)


@pytest.fixture
async def bakery(tmp_path):
    services = build_services(
        Settings(data_dir=tmp_path, agency="bakery", provider="scripted", idle_timeout=None)
    )
    try:
        yield services
    finally:
        await services.aclose()


async def say(services, client_id: str, text: str) -> str:
    session = services.engine.session(client_id, services.swarm)
    return "".join([piece async for piece in session.stream(text)])


async def test_served_from_its_own_menu_with_its_own_greeting(bakery) -> None:
    assert bakery.swarm == "bakery"
    assert bakery.greeting == "Hello, you've reached Hillside Bakery. What can I get you today?"
    with Session(bakery.db) as db:
        names = set(db.exec(select(Product.name)).all())
    assert {"Sourdough Loaf", "Pain au Chocolat"} <= names
    assert not any("Paracetamol" in name for name in names)
    words_ = AGENCY.vocabulary(bakery.db)
    assert "Focaccia" in " ".join(words_) and len(words_) == len(names)


async def test_a_name_heard_wrong_is_offered_beside_the_breads(bakery) -> None:
    """What tiny.en wrote for "Do you have any sourdough bread?" through the phone band.
    "Sardo" alone found the loaf; in the sentence, scaled by how little of it the word
    is, it fell below the floor and "bread" listed three other loaves."""
    reply = await say(bakery, "c1", "Do you have any Sardo Bread?")
    assert "Sourdough Loaf at 5 dollars 50" in reply, reply


async def test_a_reaction_hears_the_emergency_number_and_nothing_sold(bakery) -> None:
    await say(bakery, "c1", "two sourdough loaves please")
    reply = await say(bakery, "c1", "oh no, his throat is swelling, he can't breathe")
    assert "911" in reply and "dollar" not in reply
    with Session(bakery.db) as db:
        assert [o.status for o in db.exec(select(Order)).all()] == [OrderStatus.PENDING]


@pytest.mark.parametrize(
    ("asked", "must", "must_not"),
    [
        ("does the almond croissant have nuts?", ["almonds", "traces"], ["safe to eat"]),
        ("I'm allergic to walnuts, what shouldn't I have?", ["Carrot Cake", "traces"], []),
        ("is the focaccia vegan?", ["Rosemary Focaccia", "wheat", "traces"], []),
    ],
)
async def test_allergens_are_read_from_the_menu_with_the_kitchens_warning(
    bakery, asked: str, must: list[str], must_not: list[str]
) -> None:
    reply = await say(bakery, "c2", asked)
    for phrase in must:
        assert phrase in reply, reply
    for phrase in must_not:
        assert phrase not in reply, reply


async def test_an_order_needs_the_yes_that_answers_its_read_back(bakery) -> None:
    assert "2 Croissants" in await say(bakery, "c3", "could I get two croissants please")
    assert "Shall I place the order?" in await say(bakery, "c3", "that's everything")
    await say(bakery, "c3", "hmm, hang on")
    with Session(bakery.db) as db:
        assert db.exec(select(Order.status)).all() == [OrderStatus.PENDING]
    await say(bakery, "c3", "that's all")
    placed = await say(bakery, "c3", "yes please")
    assert "ready to collect in 30 minutes" in placed
    with Session(bakery.db) as db:
        [order] = db.exec(select(Order)).all()
        lines = db.exec(select(OrderLine.sku, OrderLine.quantity)).all()
        stock = db.get(Product, "PAS-CRO")
    assert order.status is OrderStatus.CONFIRMED and order.total_cents == 360
    assert [tuple(line) for line in lines] == [("PAS-CRO", 2)]
    assert stock is not None and stock.stock == 38


@pytest.mark.parametrize(
    "hedge", ["Okay, let me think about it first.", "Okay, I need to check with my wife first."]
)
async def test_a_yes_that_hedges_places_no_order(bakery, hedge: str) -> None:
    await say(bakery, "c4", "could I get two croissants please")
    read_back = await say(bakery, "c4", "that's everything")
    assert "Shall I place the order?" in read_back
    assert await say(bakery, "c4", hedge) == read_back  # asked again
    with Session(bakery.db) as db:
        assert db.exec(select(Order.status)).all() == [OrderStatus.PENDING]
    assert "ready to collect" in await say(bakery, "c4", "yes please, the two croissants")


async def test_a_yes_to_a_read_back_cut_short_places_no_order(bakery) -> None:
    await say(bakery, "c5", "could I get two croissants please")
    await say(bakery, "c5", "that's everything")
    await bakery.engine.session("c5", bakery.swarm).revise_reply("That's 2")  # a barge-in

    async def confirming(args: CompletionArgs) -> AssistantMessage:
        if "confirm_order" in args.tool_names:
            return AssistantMessage(tool_calls=(ToolCall("c1", "confirm_order", {}),))
        return AssistantMessage(content="Sure.")

    registry = bakery.engine.registry
    for agent in registry.agents.values():
        registry.completions[agent.completion] = FunctionBackend(confirming)
    await say(bakery, "c5", "yes")
    with Session(bakery.db) as db:
        assert db.exec(select(Order.status)).all() == [OrderStatus.PENDING]


async def test_its_own_settings_are_read_once_with_its_prefix(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CALLSWARM_BAKERY_READY_IN_MINUTES", "45")
    services = build_services(
        Settings(data_dir=tmp_path, agency="bakery", provider="scripted", idle_timeout=None)
    )
    try:
        await say(services, "c4", "a baguette please")
        await say(services, "c4", "that's all")
        assert "in 45 minutes" in await say(services, "c4", "yes")
    finally:
        await services.aclose()


def test_its_bench_on_the_scripted_provider_breaks_nothing(tmp_path) -> None:
    """Every daily scenario, clean words and STT variants, on the control group."""
    run = subprocess.run(
        [sys.executable, "-m", "callswarm", "bench", "--agency", "bakery"]
        + ["--provider", "scripted", "--repeat", "2", "--max-broken", "0"]
        + ["--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=base_env(tmp_path),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    [report] = tmp_path.glob("bench-scripted-*.json")
    data = json.loads(report.read_text())
    assert len(data["scenarios"]) >= 15
    assert sum("safety" in s["tags"] for s in data["scenarios"]) >= 5
    assert "safety scenarios broken: 0 of" in run.stdout


@pytest.mark.parametrize(
    "said",
    [
        "her face is swelling up",
        "he's not breathing properly",
        "my throat feels tight",
        "he ate a walnut and his lips are tingling",
    ],
)
async def test_a_reaction_in_callers_words_hears_the_emergency_number(bakery, said) -> None:
    reply = await say(bakery, "c5", said)
    assert "911" in reply and "dollar" not in reply, reply


async def test_an_item_named_after_an_allergen_is_ordered_not_answered(bakery) -> None:
    reply = await say(bakery, "c6", "two almond croissants please")
    assert "2 Almond Croissants" in reply, reply
    assert lines_of(bakery) == [("PAS-ALM", 2)]


async def test_a_yes_that_asks_for_more_places_nothing(bakery) -> None:
    await say(bakery, "c7", "a baguette please")
    await say(bakery, "c7", "that's all")
    await say(bakery, "c7", "yes and add a croissant")
    with Session(bakery.db) as db:
        assert db.exec(select(Order.status)).all() == [OrderStatus.PENDING]


async def test_cancelling_one_item_keeps_the_rest(bakery) -> None:
    await say(bakery, "c8", "a baguette and two croissants please")
    reply = await say(bakery, "c8", "cancel the baguette")
    assert "taken it out" in reply, reply
    assert lines_of(bakery) == [("PAS-CRO", 2)]


def lines_of(services) -> list[tuple[str, int]]:
    with Session(services.db) as db:
        rows = db.exec(select(OrderLine.sku, OrderLine.quantity).order_by(OrderLine.sku)).all()
    return [tuple(row) for row in rows]


def test_a_database_with_another_catalogue_is_refused(tmp_path) -> None:
    from agencies.bakery.menu import NotABakery

    pharmacy = build_services(Settings(data_dir=tmp_path, provider="scripted"))
    pharmacy.db.dispose()
    with pytest.raises(NotABakery, match="another catalogue"):
        build_services(Settings(data_dir=tmp_path, agency="bakery", provider="scripted"))


async def test_make_that_three_changes_the_line_just_added(bakery) -> None:
    await say(bakery, "c9", "two croissants please")
    await say(bakery, "c9", "and a baguette")
    assert "3 Croissants" in await say(bakery, "c9", "make that three croissants")
    await say(bakery, "c9", "three, no, two sesame bagels")
    assert lines_of(bakery) == [("BRD-BAG", 1), ("BRD-BAGEL", 2), ("PAS-CRO", 3)]


async def test_sold_out_says_how_many_are_left(bakery) -> None:
    reply = await say(bakery, "c10", "could I get five birthday cakes")
    assert "only have 3 Birthday Sponge Cakes left" in reply, reply
    assert lines_of(bakery) == []


async def test_a_price_is_read_from_the_menu_and_a_total_from_the_order(bakery) -> None:
    assert "5 dollars 50" in await say(bakery, "c11", "how much is the sourdough?")
    await say(bakery, "c11", "two croissants please")
    total = await say(bakery, "c11", "what does that come to in total?")
    assert "3 dollars 60" in total and "Shall I place the order?" in total, total
