"""The bakery's one agent, the counter, and the code that answers before it.

The screen runs on every caller turn before the model. Safety comes before sales:
an allergic reaction hears the emergency number, and a question about allergens is
answered from the menu's data with the kitchen's warning, never by a model.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel
from sqlmodel import Session, col, select

from agencies.bakery import tools, words
from agencies.bakery.menu import KITCHEN, Bakery, find_items
from agencies.bakery.menu import bakery as menu_bakery
from callswarm.agency import AgencyBuild, Business
from models import orders
from models.shop import Product
from swarm import (
    USER,
    AssistantMessage,
    CompletionArgs,
    RoutedCall,
    RoutedReply,
    Rule,
    ScriptedBackend,
    SessionHandle,
    ToolCall,
    ToolContext,
    spoken,
)

log = logging.getLogger("agencies.bakery")
SWARM, COUNTER = "bakery", "counter"

PROMPT = """You serve at the counter of {name}, a bakery, on the phone.
Facts: we are open {hours}. We are at {address}.
Never invent items, prices or stock: use the tools.
- The caller names something to eat or asks what we have: call search_menu with their words.
- The caller wants an item: call add_to_order with it and how many they said.
- The caller has everything: call read_back_order. They say yes to it: call confirm_order.
- Take something out: remove_from_order. Give up the order: cancel_order.
- A person, the manager or the baker: call transfer_to_operator.
Examples:
Caller: Do you have sourdough?
{{"name": "search_menu", "arguments": {{"query": "sourdough"}}}}
Caller: Two croissants please
{{"name": "add_to_order", "arguments": {{"item": "croissant", "quantity": 2}}}}
Caller: That's all
{{"name": "read_back_order", "arguments": {{}}}}"""

MISSION = (
    "{name} takes orders by phone for bread, pastries and cakes to collect. Speak in one or "
    "two short, friendly sentences: callers hear you, they cannot see lists or tool names."
)


def greeting(business: Business) -> str:
    return f"Hello, you've reached {business.name}. What can I get you today?"


def emergency_words(business: Business) -> str:
    return (
        f"If someone is having an allergic reaction or can't breathe, call "
        f"{business.emergency_number} now, and use their adrenaline pen if they have one."
    )


def _asked_about(db: Session, said: str, rest: str) -> list[Product]:
    """The items the caller named: by their whole words when a word of the name besides
    the allergen was said ("the almond croissant"), else by the words without the
    allergen ("a sesame allergy" names no Sesame Bagel). Two that fit alike: both."""
    items = find_items(db, said)
    kept = set(rest.split())
    if items and any(w in kept for w in items[0].name.lower().split()):
        return items
    return find_items(db, rest) if rest.strip() else []


async def allergen_answer(bakery: Bakery, said: str, last: str) -> str:
    """From the menu's data, always with the kitchen's warning: a caller is never told
    an item is safe. The item they named (or were just told about) and what it
    contains; else, for an allergen they named, the shorter of the two lists."""
    named, rest = words.allergens_named(said)

    def work(db: Session) -> str | None:
        items = _asked_about(db, said, rest)
        if not items and (not named or re.search(r"\b(it|that|them|those|they)\b", rest)):
            items = find_items(db, last)  # "does it have dairy?" after the croissants
        if items:
            return " ".join(bakery.allergen_words(item) for item in items)
        if not named:
            return None
        menu = db.exec(select(Product).order_by(col(Product.sku))).all()
        with_it = [p.name for p in menu if set(bakery.contains.get(p.sku, ())) & set(named)]
        without = [p.name for p in menu if p.name not in with_it]
        what = words.listed(list(named)).replace(" and ", " or ")
        if not with_it:
            return f"None of our recipes has {what} in it."
        if not without:
            return f"Every one of our recipes has {what} in it."
        if len(without) < len(with_it):
            return f"Only our {words.listed(without)} {'is' if len(without) == 1 else 'are'} made without {what}."
        return f"Our {words.listed(with_it)} {'has' if len(with_it) == 1 else 'have'} {what} in the recipe."

    found = await bakery.run(work)
    if found is None:
        return f"Tell me which item, and I'll read you what's in it. {KITCHEN}"
    return f"{found} {KITCHEN}"


async def screen(session: SessionHandle, said: str) -> RoutedCall | RoutedReply | None:
    bakery = menu_bakery(session)
    business = bakery.business
    if words.EMERGENCY.search(said):
        log.warning("safety client_id=%s concern=allergic_reaction", session.client_id)
        return RoutedReply(emergency_words(business))
    last = await session.get_last_assistant_message() or ""
    if words.asks_about_allergens(said):
        return RoutedReply(await allergen_answer(bakery, said, last))
    if words.PERSON.search(said):
        return RoutedCall(tools.TRANSFER_TOOL, {"reason": "asked for a person"})
    if words.HOURS.search(said) and not (words.WANTS.search(said) or words.quantities(said)):
        return RoutedReply(f"We're open {business.hours}.")
    if words.WHERE.search(said):
        return RoutedReply(f"We're at {business.address}.")
    if not words.WANTS.search(said):
        # Money is code: the order read back with its total, or the menu's prices.
        if words.TOTAL.search(said):
            return RoutedCall("read_back_order")
        if words.PRICE.search(said):
            return RoutedCall("search_menu", {"query": said})
    pending = await bakery.run(
        lambda db: orders.pending_order(db, customer_id=tools.customer_id(db, session.client_id))
    )
    if pending is None:
        return None
    if words.CANCEL.search(said):
        # "Cancel the sourdough" takes one item out; only the order named cancels it.
        left = words.item_words(words.CANCEL.sub(" ", said))
        if [w for w in left if w not in ("order", "whole", "thing", "everything", "all")]:
            return RoutedCall("remove_from_order", {"item": said})
        return RoutedCall("cancel_order")
    if words.CORRECTION.search(said) and words.quantities(said):
        return RoutedCall("change_quantity", {"item": said, "quantity": words.quantities(said)[-1]})
    if tools.READ_BACK_ASK in last and words.is_clear_yes(said):
        return RoutedCall("confirm_order")
    if words.DONE.search(said):
        return RoutedCall("read_back_order")
    return None


async def fallback(session: SessionHandle, said: str) -> str:
    """Code's words when the model could not answer in time: never silence, never a guess."""
    return "I'm sorry, I didn't manage that. Could you say it another way?"


_ids = itertools.count(1)


def _call(name: str, **arguments: object) -> AssistantMessage:
    return AssistantMessage(tool_calls=(ToolCall(f"bakery_{next(_ids)}", name, dict(arguments)),))


def _decide(args: CompletionArgs, match: re.Match[str]) -> AssistantMessage:
    """The scripted counter: what a model that never breaks would choose."""
    text = match.string
    removal = words.REMOVE.search(text)
    if removal:
        return _call("remove_from_order", item=removal.group("item"))
    if words.CANCEL.search(text):
        return _call("cancel_order")
    if words.DONE.search(text):
        return _call("read_back_order")
    if not words.item_words(text):
        if any(
            m["role"] == "assistant" and tools.READ_BACK_ASK in str(m.get("content") or "")
            for m in args.messages[-2:]
        ):
            return AssistantMessage(content="No problem. What would you like to change?")
        return AssistantMessage(content="What would you like? We bake breads, pastries and cakes.")
    counted = words.quantities(text)
    if counted or words.WANTS.search(text):
        return _call("add_to_order", item=text, quantity=counted[0] if counted else 1)
    return _call("search_menu", query=text)


def scripted(business: Business) -> ScriptedBackend:
    return ScriptedBackend(
        [
            Rule(words.PERSON.pattern, tool=tools.TRANSFER_TOOL, arguments={"reason": "a person"}),
            Rule(
                r"^\W*(hello|hiya|hi|hey|good (morning|afternoon|evening))\b[\s\w,.!?']{0,12}$",
                reply=greeting(business),
            ),
            Rule(r"(?s).+", respond=_decide),
        ],
        default="Sorry, I didn't catch that. Could you say it again?",
    )


ToolEntry = tuple[str, type[BaseModel], Callable[[ToolContext, Any], Awaitable[str | None]]]
TOOLS: dict[str, ToolEntry] = {
    "search_menu": ("Find items on the menu and their prices.", tools.Query, tools.search_menu),
    "add_to_order": ("Add an item to the caller's order.", tools.Item, tools.add_to_order),
    "remove_from_order": (
        "Take an item out of the caller's order.",
        tools.ItemName,
        tools.remove_from_order,
    ),
    "read_back_order": (
        "Read the order back and ask the caller to confirm.",
        tools.NoArguments,
        tools.read_back_order,
    ),
    "confirm_order": (
        "Place the order: only after the caller said yes to the read-back.",
        tools.NoArguments,
        tools.confirm_order,
    ),
    "change_quantity": (
        "Change how many of an item in the order: the new total the caller said.",
        tools.NewQuantity,
        tools.change_quantity,
    ),
    "cancel_order": ("Cancel the order in progress.", tools.NoArguments, tools.cancel_order),
    tools.TRANSFER_TOOL: (
        "Put the caller through to a person.",
        tools.TransferReason,
        tools.transfer_to_operator,
    ),
}
_SPOKEN = {"search_menu", "add_to_order", "change_quantity", "remove_from_order", "cancel_order"}


def build(setup: AgencyBuild) -> str:
    from agencies.bakery.menu import BakerySettings

    options = setup.options if isinstance(setup.options, BakerySettings) else BakerySettings()
    setup.engine.deps = Bakery(setup.db, setup.business, options)
    for name, (description, parameters, call) in TOOLS.items():
        setup.engine.add_tool(
            name,
            description,
            parameters,
            spoken(call) if name in _SPOKEN else call,
        )
    business = setup.business
    setup.engine.add_agent(
        COUNTER,
        setup.completions[COUNTER],
        PROMPT.format(name=business.name, hours=business.hours, address=business.address),
        tools=tuple(TOOLS),
        keep_messages=14,
        description="Answers the phone at the counter and takes orders to collect.",
        reminder="If a tool fits the caller's last words, reply with exactly one tool call JSON.",
        money_from_tools=True,
    )
    setup.engine.add_swarm(
        SWARM,
        [COUNTER],
        COUNTER,
        mission=MISSION.format(name=business.name),
        communication=[(USER, COUNTER)],
        screen=screen if setup.routers else None,
        fallback=fallback,
    )
    setup.engine.validate()
    return SWARM
