"""Deterministic rules that run the pharmacy without a language model.

A product feature: demos with no model at all, deterministic tests, and the
bench's control group. Tool outputs are already written for the caller, so the
sales rules relay them as they are.
"""

from __future__ import annotations

import itertools
import re

from agents import heard, prompts
from agents.deps import ShopInfo
from agents.guards import consents, spoken_quantities
from agents.moves import READ_BACK_QUESTION
from agents.routing import CANCEL as _CANCEL
from agents.routing import CHATTER as _CHATTER
from agents.routing import DONE_SAID_SO as _DONE
from agents.routing import HOURS, MENU, PERSON, SHOPPING, WHERE
from agents.tools.navigation import SALES, TRIAGE
from models.search import content_words
from swarm import AssistantMessage, CompletionArgs, Rule, ScriptedBackend, ToolCall

_STATUS = r"\b(status|my orders?|where is my order|did my order)\b"
_REMOVE = r"\b(?:remove|take off|take out|drop|delete)\s+(?:the\s+)?(?P<p>.+)"
_ADD = (
    r"\b(add|i'?ll (take|have)|i'?d like|give me|can i (get|have)|yes|yeah|sure|please)\b"
    r"|^\s*(and|also|plus)\b|\b(and|also|plus) (a|an|one|some)\b"
)
_ids = itertools.count(1)


def _call(name: str, **arguments: object) -> AssistantMessage:
    return AssistantMessage(tool_calls=(ToolCall(f"pharmacy_{next(_ids)}", name, dict(arguments)),))


def _last_assistant(args: CompletionArgs) -> str:
    for message in reversed(args.messages):
        if message["role"] == "assistant" and message.get("content"):
            return str(message["content"])
    return ""


def _offered(args: CompletionArgs) -> list[str]:
    """Names of the products the agent just offered ("We have …" from search_products)."""
    last = _last_assistant(args)
    # As before heard.offered was shared: a single offer counts when the reply opens with it.
    return heard.offered(last) if heard.WHICH in last or last.startswith("We have") else []


def _named(text: str, options: list[str]) -> str | None:
    """The offered option the caller named: most of its words said, plainest name first."""
    said = set(re.findall(r"[a-z]+", text))

    def share(option: str) -> float:
        words = [w for w in re.findall(r"[a-z]+", option.lower()) if len(w) > 3]
        return sum(w in said for w in words) / max(len(words), 1)

    best = max(options, key=lambda o: (share(o), -len(o)), default=None)
    return best if best is not None and share(best) > 0 else None


def _sales_decision(args: CompletionArgs, match: re.Match[str]) -> AssistantMessage:
    text = match.string
    lowered = text.lower()
    # Explicit requests first, whatever was asked before.
    removal = re.search(_REMOVE, lowered)
    if removal:
        return _call("remove_from_order", product=removal.group("p"))
    if re.search(_CANCEL, lowered):
        return _call("cancel_order")
    if re.search(_DONE, lowered):
        return _call("read_back_order")
    if re.search(_STATUS, lowered):
        return _call("order_status")
    # Then the answer to the question the caller just heard.
    last = _last_assistant(args)
    product_words = [w for w in content_words(lowered) if w not in _CHATTER]
    if READ_BACK_QUESTION in last:
        if consents(text):
            return _call("confirm_order")
        if not product_words:
            return AssistantMessage(content="No problem. What would you like to change?")
    quantities = spoken_quantities(lowered)
    quantity = quantities[0] if quantities else 1
    wants = bool(quantities or re.search(_ADD, lowered)) and not re.match(r"\s*no\b", lowered)
    options = _offered(args)
    if options and wants:
        chosen = _named(lowered, options) or (options[0] if len(options) == 1 else None)
        if chosen:
            return _call("add_to_order", product=chosen, quantity=quantity)
    if wants and product_words:
        return _call("add_to_order", product=text, quantity=quantity)
    if options and wants:
        listed = ", ".join(options[:-1]) + " or " + options[-1]
        return AssistantMessage(content=f"Which one would you like: {listed}?")
    if not product_words:
        return AssistantMessage(content="What would you like? You can name a product or a symptom.")
    return _call("search_products", query=text)


def _route_if_sellable(args: CompletionArgs, match: re.Match[str]) -> AssistantMessage:
    if [w for w in content_words(match.string) if w not in _CHATTER]:
        return _call("navigate_to_sales")
    return AssistantMessage(content=MENU)


def pharmacy_script(shop: ShopInfo) -> ScriptedBackend:
    greeting = prompts.greeting(shop)
    return ScriptedBackend(
        [
            # Reception.
            Rule(
                PERSON,
                tool="transfer_to_operator",
                arguments={"reason": "asked for a person"},
                agent=TRIAGE,
            ),
            Rule(HOURS, reply=f"We are open {shop.hours}.", agent=TRIAGE),
            Rule(WHERE, reply=f"We are at {shop.address}.", agent=TRIAGE),
            Rule(SHOPPING, tool="navigate_to_sales", agent=TRIAGE),
            # Only a bare greeting gets one back: "Hello, I'd like paracetamol" is shopping.
            Rule(
                r"(?i)^\W*(greet|hello|hi|hey|good (morning|afternoon|evening))\b[\s\w,.!?']{0,12}$",
                reply=greeting,
                agent=TRIAGE,
            ),
            # Anything else that could name a product ("Paris at them all") is for sales too.
            Rule(r"(?s).+", respond=_route_if_sellable, agent=TRIAGE),
            # Sales.
            Rule(
                PERSON,
                tool="transfer_to_operator",
                arguments={"reason": "asked for a person"},
                agent=SALES,
            ),
            Rule(HOURS + "|" + WHERE, tool="navigate_to_triage", agent=SALES),
            Rule(r"(?s).+", respond=_sales_decision, agent=SALES),
            Rule(r"(?s)(?P<said>.+)", reply="{said}", agent=SALES, on="tool"),
        ],
        default="Sorry, I didn't catch that. Could you say it again?",
    )
