"""The pharmacy agency: its tools, two agents and the swarm that joins them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agents import availability, prompts
from agents.deps import Pharmacy
from agents.routing import sales_router, triage_router
from agents.screen import pharmacy_anticipate, pharmacy_fallback, pharmacy_screen
from agents.tools import catalogue, navigation, orders
from agents.tools.navigation import SALES, TRIAGE
from swarm import USER, Engine, SessionHandle, ToolContext, spoken

SWARM = "pharmacy"


@dataclass(frozen=True, slots=True)
class Tool:
    description: str
    parameters: type[BaseModel]
    call: Callable[[ToolContext, Any], Awaitable[Any]]
    available: Callable[[SessionHandle, str], bool | Awaitable[bool]] | None = None


TOOLS: dict[str, Tool] = {
    "search_products": Tool(
        "Search the catalogue by product name or symptom.",
        catalogue.SearchQuery,
        spoken(catalogue.search),
    ),
    "get_product": Tool(
        "Details of one product: strength, pack, price, stock.",
        catalogue.ProductName,
        spoken(catalogue.get_product),
    ),
    "add_to_order": Tool(
        "Add packs of a product to the caller's order.",
        orders.AddToOrder,
        spoken(orders.add_to_order),
    ),
    "change_quantity": Tool(
        "Change how many packs of a product in the order: the new total the caller said.",
        orders.ChangeQuantity,
        spoken(orders.change_quantity),
        availability.order_in_progress,
    ),
    "swap_product": Tool(
        "Take a product out of the order and add what the caller wants instead.",
        orders.SwapProduct,
        spoken(orders.swap_product),
        availability.order_in_progress,
    ),
    "remove_from_order": Tool(
        "Take a product out of the caller's order.",
        catalogue.ProductName,
        spoken(orders.remove_from_order),
        availability.order_in_progress,
    ),
    "read_back_order": Tool(
        "Read the whole order and its total back to the caller and ask them to confirm.",
        navigation.NoArguments,
        spoken(orders.read_back_order),
        availability.order_in_progress,
    ),
    "confirm_order": Tool(
        "Place the order. Only after the caller said yes to the order you read back.",
        navigation.NoArguments,
        spoken(orders.confirm_order),
        availability.order_read_back,
    ),
    "cancel_order": Tool(
        "Cancel the order in progress.",
        navigation.NoArguments,
        spoken(orders.cancel_order),
        availability.order_in_progress,
    ),
    "order_status": Tool(
        "The status of the caller's own orders.",
        navigation.NoArguments,
        spoken(orders.order_status),
    ),
    "navigate_to_sales": Tool(
        "Hand the caller to the sales assistant, for products, prices and orders.",
        navigation.NoArguments,
        navigation.navigate_to_sales,
        availability.caller_wants_something,
    ),
    "navigate_to_triage": Tool(
        "Hand the caller back to the receptionist, for anything but buying.",
        navigation.NoArguments,
        navigation.navigate_to_triage,
        availability.caller_asked_elsewhere,
    ),
    navigation.TRANSFER_TOOL: Tool(
        "Put the caller through to a member of staff.",
        navigation.TransferReason,
        navigation.transfer_to_operator,
        availability.caller_asked_for_person,
    ),
}

TRIAGE_TOOLS = ("navigate_to_sales", navigation.TRANSFER_TOOL)
SALES_TOOLS = (
    "search_products",
    "add_to_order",
    "change_quantity",
    "remove_from_order",
    "swap_product",
    "read_back_order",
    "confirm_order",
    "cancel_order",
    "order_status",
    "navigate_to_triage",
    navigation.TRANSFER_TOOL,
)
# Measured on the 0.5B model (docs/agents.md): with get_product offered, it chose it
# for "two boxes of paracetamol" and symptoms alike, 5/8 right; without it, 7/8.
# search_products already describes a single confident match, so only models
# that can tell the two apart get it.
DETAILED_SALES_TOOLS = (*SALES_TOOLS[:1], "get_product", *SALES_TOOLS[1:])


def build_pharmacy(
    engine: Engine,
    pharmacy: Pharmacy,
    completions: Mapping[str, str],
    *,
    detailed_tools: bool = False,
    routers: bool = True,
) -> str:
    """Register the agency on `engine`; `completions` names the completion of each agent.

    `routers=False` leaves out every rule of code before the models (the routers and the
    screen, safety included): only the bench uses it, to measure a model alone."""
    engine.deps = pharmacy
    for name, tool in TOOLS.items():
        engine.add_tool(name, tool.description, tool.parameters, tool.call, tool.available)
    shop = pharmacy.shop
    engine.add_agent(
        TRIAGE,
        completions[TRIAGE],
        prompts.triage_prompt(shop),
        tools=TRIAGE_TOOLS,
        keep_messages=12,
        description="Greets callers, answers questions, routes them.",
        reminder=prompts.REMINDER,
        money_from_tools=True,
        router=triage_router if routers else None,
    )
    engine.add_agent(
        SALES,
        completions[SALES],
        prompts.sales_prompt(shop),
        tools=DETAILED_SALES_TOOLS if detailed_tools else SALES_TOOLS,
        keep_messages=16,
        description="Searches the catalogue and takes orders.",
        reminder=prompts.REMINDER,
        money_from_tools=True,
        router=sales_router if routers else None,
    )
    engine.add_swarm(
        SWARM,
        [TRIAGE, SALES],
        TRIAGE,
        mission=prompts.mission(shop),
        communication=[(USER, TRIAGE), (USER, SALES)],
        screen=pharmacy_screen if routers else None,
        fallback=pharmacy_fallback,
        anticipate=pharmacy_anticipate if routers else None,
    )
    engine.validate()
    return SWARM
