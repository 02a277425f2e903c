"""The pharmacy on the embedded model (llama.cpp, Qwen2.5-Coder 0.5B): a whole purchase.

Asserts what ends up in the database, not the model's wording.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlmodel import Session, select

from agents import safety
from agents.heard import asked_name
from callswarm.app import Services, build_services
from callswarm.settings import Settings
from models.shop import Order, OrderLine, OrderStatus, Product


@asynccontextmanager
async def _pharmacy(tmp_path, bundled_model) -> AsyncIterator[Services]:
    """The whole gateway's services on the bundled model, warmed up as `serve` does."""
    settings = Settings(
        data_dir=tmp_path, provider="local", local_model_path=bundled_model, idle_timeout=None
    )
    services = build_services(settings)
    try:
        await services.warm_up()
        yield services
    finally:
        await services.aclose()


async def test_a_purchase_on_the_embedded_model(tmp_path, bundled_model) -> None:
    async with _pharmacy(tmp_path, bundled_model) as services:
        with Session(services.db) as s:
            before = s.get(Product, "PAR500-16").stock
        session = services.engine.session("+15550199", services.swarm)
        await session.emit(services.greeting)
        for line in (
            "I need something for a headache",
            "Two boxes of paracetamol please",
            "That's all, thanks",
            "Yes",
        ):
            await session.complete(line)
        assert await session.get_agent_name() == "sales"
        with Session(services.db) as s:
            confirmed = s.exec(select(Order).where(Order.status == OrderStatus.CONFIRMED)).all()
            assert len(confirmed) == 1
            lines = s.exec(select(OrderLine).where(OrderLine.order_id == confirmed[0].id)).all()
            assert [(line.sku, line.quantity) for line in lines] == [("PAR500-16", 2)]
            assert confirmed[0].total_cents == 2 * 299
            assert s.get(Product, "PAR500-16").stock == before - 2


async def test_a_guessed_name_is_asked_about_on_the_embedded_model(tmp_path, bundled_model) -> None:
    """Whatever tool the model picks for a name heard badly, the caller is asked before
    anything is offered or added, and their yes with a count orders that count. A drug
    named right that the shop lacks is said to be missing, never offered or ordered as
    the one it has (Atorvastatin is 0.86 alike to pravastatin); nor is one part of a
    combination it lacks. One warm-up for all three."""
    async with _pharmacy(tmp_path, bundled_model) as services:
        lacked = services.engine.session("+15550193", services.swarm)
        await lacked.emit(services.greeting)
        for said in ("Hi, have you got pravastatin?", "Two boxes of the pravastatin then"):
            reply = await lacked.complete(said)
            assert "don't stock pravastatin" in reply and "Atorvastatin" not in reply, reply
        with Session(services.db) as s:
            assert s.exec(select(OrderLine)).all() == []
        # A combination the shop lacks, asked about: never one part as the whole, nothing
        # ordered until the caller picks from the list.
        combined = services.engine.session("+15550194", services.swarm)
        await combined.emit(services.greeting)
        reply = await combined.complete("Do you sell ibuprofen and paracetamol in one tablet?")
        assert "in one product" in reply and "Which one would you like?" in reply, reply
        with Session(services.db) as s:
            assert s.exec(select(OrderLine)).all() == []
        await combined.complete("The second one please")
        second = reply.split("options: ", 1)[1].split("; ")[1].split(",", 1)[0]
        with Session(services.db) as s:
            lines = s.exec(select(OrderLine)).all()
            assert [s.get_one(Product, line.sku).name for line in lines] == [second], reply
            for line in lines:
                s.delete(line)
            s.commit()
        session = services.engine.session("+15550123", services.swarm)
        await session.emit(services.greeting)
        first = await session.complete("Have you got any lorra mide?")
        assert asked_name(first) == "Loperamide"
        with Session(services.db) as s:
            assert s.exec(select(OrderLine)).all() == []
        await session.complete("Yes, two boxes please")
        with Session(services.db) as s:
            lines = s.exec(select(OrderLine)).all()
            assert [(line.sku, line.quantity) for line in lines] == [("LOPE2-12", 2)]


async def test_a_line_taken_off_with_the_end_of_the_order_on_the_embedded_model(
    tmp_path, bundled_model
) -> None:
    """ "Take X off and that's all" removes X, then reads back the rest; the yes places
    only that. Read as the read-back alone, X stayed and was placed."""
    async with _pharmacy(tmp_path, bundled_model) as services:
        session = services.engine.session("+15550198", services.swarm)
        await session.emit(services.greeting)
        for line in (
            "Hi, one famotidine and one cetirizine please",
            "Actually take the famotidine off, and that's all",
            "Yes",
        ):
            await session.complete(line)
        with Session(services.db) as s:
            placed = s.exec(select(Order).where(Order.status == OrderStatus.CONFIRMED)).all()
            assert len(placed) == 1
            lines = s.exec(select(OrderLine).where(OrderLine.order_id == placed[0].id)).all()
            assert [(line.sku, line.quantity) for line in lines] == [("CET10-30", 1)]


async def test_a_count_to_buy_and_a_count_to_take_on_the_embedded_model(
    tmp_path, bundled_model
) -> None:
    """ "Can I get two paracetamol" is an order of two packs (the probe had given it the
    dose answer); "can I get away with three ibuprofen", the same words, is a dose
    question (it had added three packs), and so is "two patches at once yeah?", by its
    shape. "No sorry, I want to buy two packs" after a dose answer orders them. The
    screen decides all of these, on any model."""
    async with _pharmacy(tmp_path, bundled_model) as services:
        bought = services.engine.session("+15550197", services.swarm)
        await bought.emit(services.greeting)
        reply = await bought.complete("Hi, can I get two paracetamol")
        assert safety.concern_answered(reply) is None, reply
        asked = services.engine.session("+15550196", services.swarm)
        await asked.emit(services.greeting)
        reply = await asked.complete("can I get away with three ibuprofen")
        assert safety.concern_answered(reply) is safety.Concern.DOSING, reply
        # A shape no phrase knows is a dose question too; and a caller given the dose
        # answer who meant to buy gets back to a sale by saying so.
        shaped = services.engine.session("+15550195", services.swarm)
        await shaped.emit(services.greeting)
        reply = await shaped.complete("two patches at once yeah?")
        assert safety.concern_answered(reply) is safety.Concern.DOSING, reply
        meant = services.engine.session("+15550194", services.swarm)
        await meant.emit(services.greeting)
        await meant.complete("can I take two paracetamol")
        offered = await meant.complete("no sorry, I want to buy two packs")
        assert "Paracetamol" in offered, offered
        await meant.complete("yes please")
        with Session(services.db) as s:
            lines = s.exec(select(OrderLine)).all()
            assert [(line.sku, line.quantity) for line in lines] == [("PAR500-16", 2)] * 2
