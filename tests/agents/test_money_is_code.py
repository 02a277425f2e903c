"""An amount of money the pharmacy's caller hears comes from the database, never the model.

The model is replaced by one that states a price it made up; the real pharmacy (screen,
routers, tools, SQLite) runs around it.
"""

from __future__ import annotations

from callswarm.app import Services
from swarm import AssistantMessage, FunctionBackend, Rescued
from tests.swarm.helpers import Sequenced


def _model(shop: Services, *outputs: str) -> Sequenced:
    model = Sequenced([AssistantMessage(content=text) for text in outputs])
    for agent in shop.engine.registry.agents.values():
        shop.engine.registry.completions[agent.completion] = FunctionBackend(model)
    return model


async def test_a_price_the_model_made_up_is_rescued_and_never_spoken(shop: Services) -> None:
    _model(shop, "Members get ten percent off, so it's 2 dollars 69.", "We have no loyalty card.")
    session = shop.engine.session("c", shop.swarm)
    with shop.engine.bus.subscribe() as events:
        reply = await session.complete("tell me about your loyalty card")
        rescues = [e for e in events.drain() if isinstance(e, Rescued)]
    heard = [m.content for m in await session.get_assistant_history()]
    assert reply == "We have no loyalty card."
    assert [(e.reason, e.strategy) for e in rescues] == [("ungrounded_amount", "recomplete")]
    assert not any("2 dollars 69" in text for text in heard)


async def test_a_price_the_database_said_may_be_repeated(shop: Services) -> None:
    session = shop.engine.session("c", shop.swarm)
    offer = await session.complete("do you have ibuprofen")
    assert "3 dollars 99" in offer
    _model(shop, "Yes, that one is 3 dollars 99.")
    assert await session.complete("tell me again about that one") == (
        "Yes, that one is 3 dollars 99."
    )
