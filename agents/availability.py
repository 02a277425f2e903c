"""When each risky tool is offered at all. Fewer choices, and a grammar that forbids the rest.

A tool that cannot apply is not shown to the model (and the local model's
grammar cannot produce it): no read-back without an order, no confirm before a
read-back, no transfer or hand-back the caller did not ask for.
"""

from __future__ import annotations

from sqlmodel import Session as Db

from agents.deps import Pharmacy
from agents.guards import ELSEWHERE_WORDS, PERSON_WORDS
from agents.screen import accepts_offer, asks_for_person
from models import orders
from models.search import content_words
from swarm import SessionHandle


async def _said(session: SessionHandle) -> str:
    return await session.get_last_user_message() or ""


async def caller_asked_for_person(session: SessionHandle, agent: str) -> bool:
    """Asked for one, or said yes when a person was offered (after a safety answer, or
    when the agents could not answer in time)."""
    said = await _said(session)
    if PERSON_WORDS.search(said) or asks_for_person(said):
        return True
    last = await session.get_last_assistant_message() or ""
    pharmacy = session.deps
    assert isinstance(pharmacy, Pharmacy)
    return await accepts_offer(pharmacy, last, said)


async def caller_wants_something(session: SessionHandle, agent: str) -> bool:
    """Sales has something to do: the caller said more than hours, address or pleasantries."""
    said = await _said(session)
    return any(not ELSEWHERE_WORDS.search(word) for word in content_words(said))


async def caller_asked_elsewhere(session: SessionHandle, agent: str) -> bool:
    said = await _said(session)
    return bool(ELSEWHERE_WORDS.search(said) or PERSON_WORDS.search(said))


async def _pending(session: SessionHandle) -> orders.OrderView | None:
    pharmacy = session.deps
    assert isinstance(pharmacy, Pharmacy)

    def work(db: Db) -> orders.OrderView | None:
        customer = orders.get_or_create_customer(db, client_id=session.client_id)
        assert customer.id is not None
        order = orders.pending_order(db, customer_id=customer.id)
        return None if order is None else orders.view_order(db, order=order)

    return await pharmacy.run(work)


async def order_in_progress(session: SessionHandle, agent: str) -> bool:
    view = await _pending(session)
    return view is not None and bool(view.lines)


async def order_read_back(session: SessionHandle, agent: str) -> bool:
    view = await _pending(session)
    return view is not None and bool(view.lines) and view.read_back_revision == view.revision
