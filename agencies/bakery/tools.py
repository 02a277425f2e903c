"""The counter's tools. The model only picks one; code says the result to the caller.

Prices, stock, quantities and the yes before an order are code: the caller's own
count wins over the model's, the read-back is spoken by code, and an order is placed
only when the caller's next words after it are a clear yes.
"""

from __future__ import annotations

import logging

from pydantic import BaseModel, Field
from sqlmodel import Session

from agencies.bakery import words
from agencies.bakery.menu import bakery, find_item, find_items
from callswarm.agency import read_back_answer
from models import orders
from models.orders import OrderError, OrderView, OutOfStock, QuantityNotAllowed
from models.search import search_products
from models.shop import Product
from swarm import ToolContext, ToolError

log = logging.getLogger("agencies.bakery")
TRANSFER_TOOL = "transfer_to_operator"
TRANSFER_WORDS = "Of course. I'm putting you through to someone in the bakery now. Please hold."
READ_BACK_ASK = "Shall I place the order?"


class NoArguments(BaseModel):
    pass


class Query(BaseModel):
    query: str = Field(min_length=2, description="What the caller asked for, in their words.")


class Item(BaseModel):
    item: str = Field(min_length=2, description="The item as the caller named it.")
    quantity: int = Field(default=1, ge=1, description="How many the caller asked for.")


class NewQuantity(BaseModel):
    item: str = Field(default="", description="The item to change, as the caller named it.")
    quantity: int = Field(ge=1, description="The new total the caller said.")


class ItemName(BaseModel):
    item: str = Field(min_length=2, description="The item as the caller named it.")


class TransferReason(BaseModel):
    reason: str = Field(default="", description="Why the caller wants a person, in a few words.")


def customer_id(db: Session, client_id: str) -> int:
    customer = orders.get_or_create_customer(db, client_id=client_id)
    assert customer.id is not None
    return customer.id


def _order_words(view: OrderView, currency: str) -> str:
    lines = [words.counted(line.quantity, line.name) for line in view.lines]
    return f"{words.listed(lines)}, {words.money(view.total_cents, currency)} in all"


def _refusal(exc: OrderError) -> ToolError:
    if isinstance(exc, OutOfStock):
        if exc.available == 0:
            return ToolError(f"I'm sorry, we've sold out of {exc.name} today.")
        left = words.counted(exc.available, exc.name)
        return ToolError(f"I'm sorry, we only have {left} left. How many would you like?")
    if isinstance(exc, QuantityNotAllowed):
        return ToolError(
            f"I can take between 1 and {orders.MAX_QUANTITY_PER_LINE} of each item by phone. "
            "How many would you like?"
        )
    return ToolError("I'm sorry, I couldn't change the order. Could you say that again?")


async def search_menu(ctx: ToolContext, params: Query) -> str:
    shop = bakery(ctx)
    said = await ctx.session.get_last_user_message() or params.query
    currency = shop.business.currency

    def work(db: Session) -> list[str]:
        hits = search_products(db, said, limit=3) or search_products(db, params.query, limit=3)
        return [f"{h.product.name} at {words.money(h.product.price_cents, currency)}" for h in hits]

    found = await shop.run(work)
    if not found:
        return "I'm sorry, we don't have that. We bake breads, pastries and cakes. What would you like?"
    return f"We have {words.listed(found)}. How many would you like?"


def _which(items: list[Product]) -> str:
    """One short question when the words fit several items."""
    return f"Which would you like: the {items[0].name} or the {items[1].name}?"


async def add_to_order(ctx: ToolContext, params: Item) -> str:
    shop = bakery(ctx)
    said = await ctx.session.get_last_user_message() or ""
    offered = await ctx.session.get_last_assistant_message() or ""
    if not words.wants(said):
        # "What cakes do you have?" taken for an order: the caller hears the menu.
        log.warning("add_unasked client_id=%s", ctx.client_id)
        return await search_menu(ctx, Query(query=said or params.item))
    if params.quantity != 1 and words.stated_quantity(said) is None:
        # A count the caller never said ("a loaf" read as 2): one, as if none was said.
        log.warning("quantity_unsaid client_id=%s model=%d", ctx.client_id, params.quantity)

    def work(db: Session) -> tuple[list[tuple[str, int]], str] | str | None:
        # The caller's words, each part of a list with its own count ("a baguette and
        # two croissants"); else the one item just offered ("two please" after "We have
        # Sourdough Loaf at…"). Never the model's words alone.
        wanted: list[tuple[Product, int]] = []
        for part in words.parts(said):
            items = find_items(db, part, by_name=True)
            if len(items) > 1:
                return _which(items)
            if items:
                wanted.append((items[0], words.stated_quantity(part) or 1))
        if not wanted:
            items = find_items(db, said, by_name=True)
            if not items and offered.startswith("We have") and offered.count(" at ") == 1:
                items = find_items(db, offered, by_name=True)
            if len(items) > 1:
                return _which(items)
            if items:
                wanted.append((items[0], words.stated_quantity(said) or 1))
        if not wanted:
            return None
        customer = customer_id(db, ctx.client_id)
        done, refused = [], ""
        for item, quantity in wanted:
            try:
                orders.set_quantity(
                    db, customer_id=customer, product=item, quantity=quantity, commit=False
                )
            except OrderError as exc:
                refused = refused or str(_refusal(exc))  # one question at a time
                continue
            done.append((item.name, quantity))
        db.commit()  # the sentence's items together: a failure saves none, so none twice
        return done, refused

    added = await shop.run(work)
    if added is None:
        return await search_menu(ctx, Query(query=said or params.item))
    if isinstance(added, str):
        return added
    done, refused = added
    if not done:
        raise ToolError(refused)
    view = await _pending(ctx)
    assert view is not None
    currency = shop.business.currency
    return f"I've added {words.listed([words.counted(n, name) for name, n in done])}. " + (
        refused or f"That's {_order_words(view, currency)}. Anything else?"
    )


async def change_quantity(ctx: ToolContext, params: NewQuantity) -> str:
    """ "Make that three": the item the caller names, else the line last added. The
    count is the caller's, never the model's."""
    shop = bakery(ctx)
    said = await ctx.session.get_last_user_message() or ""
    quantity = words.stated_quantity(said)
    if quantity is None:
        raise ToolError("How many would you like?")

    def work(db: Session) -> str | None:
        customer = customer_id(db, ctx.client_id)
        order = orders.pending_order(db, customer_id=customer)
        if order is None:
            return None
        view = orders.view_order(db, order=order)
        named = find_items(db, said, by_name=True)
        sku = named[0].sku if named else (view.lines[-1].sku if view.lines else None)
        item = db.get(Product, sku) if sku else None
        if item is None or all(line.sku != item.sku for line in view.lines):
            return None
        orders.set_quantity(db, customer_id=customer, product=item, quantity=quantity, add=False)
        return item.name

    try:
        changed = await shop.run(work)
    except OrderError as exc:
        raise _refusal(exc) from exc
    if changed is None:
        raise ToolError("Which item should I change?")
    view = await _pending(ctx)
    assert view is not None
    return f"Done. That's {_order_words(view, shop.business.currency)}. Anything else?"


async def remove_from_order(ctx: ToolContext, params: ItemName) -> str:
    shop = bakery(ctx)
    said = await ctx.session.get_last_user_message() or ""

    def work(db: Session) -> OrderView | None:
        item = find_item(db, said, params.item)
        if item is None:
            return None
        customer = customer_id(db, ctx.client_id)
        return orders.remove_product(db, customer_id=customer, sku=item.sku, name=item.name)

    try:
        view = await shop.run(work)
    except OrderError as exc:
        raise ToolError("That isn't in your order. What would you like to change?") from exc
    if view is None:
        raise ToolError("Which item should I take out?")
    if not view.lines:
        return "I've taken it out. Your order is empty now. What would you like?"
    return f"I've taken it out. Your order is {_order_words(view, shop.business.currency)}."


async def _pending(ctx: ToolContext) -> OrderView | None:
    def work(db: Session) -> OrderView | None:
        order = orders.pending_order(db, customer_id=customer_id(db, ctx.client_id))
        return None if order is None else orders.view_order(db, order=order)

    return await bakery(ctx).run(work)


async def read_back_order(ctx: ToolContext, _: NoArguments) -> None:
    """Code reads the order; the caller's next words answer it."""
    shop = bakery(ctx)
    view = await _pending(ctx)
    if view is None or not view.lines:
        await ctx.commit_tool_output("The order is empty.", failed=True)
        await ctx.emit("Your order is empty at the moment. What would you like?")
        return
    await ctx.commit_tool_output("The order was read back; the caller was asked to confirm.")
    spoken_order = await ctx.emit(
        f"That's {_order_words(view, shop.business.currency)}. {READ_BACK_ASK}"
    )
    await shop.run(
        lambda db: orders.mark_read_back(
            db,
            customer_id=customer_id(db, ctx.client_id),
            revision=view.revision,
            seq=spoken_order.seq,
        )
    )


async def confirm_order(ctx: ToolContext, params: NoArguments) -> None:
    """Place the order on a clear yes to its read-back; otherwise read it back (again)."""
    shop = bakery(ctx)
    view = await _pending(ctx)
    if view is None or not view.lines:
        await ctx.commit_tool_output("No order to place.", failed=True)
        await ctx.emit("There's no order to place yet. What would you like?")
        return
    reply = None
    if view.read_back_revision == view.revision:
        history = await ctx.session.get_raw_history()
        reply = read_back_answer(history, view.read_back_seq, READ_BACK_ASK)
    order = [(line.name, line.quantity) for line in view.lines]
    if reply is None or not words.consents(reply, order):
        log.warning("confirm_deferred client_id=%s", ctx.client_id)
        await read_back_order(ctx, params)
        return
    try:
        done = await shop.run(
            lambda db: orders.confirm_order(
                db, customer_id=customer_id(db, ctx.client_id), order_id=view.id
            )
        )
    except OrderError as exc:
        await ctx.commit_tool_output("Failed; the reason was said to the caller.", failed=True)
        await ctx.emit(str(_refusal(exc)))
        return
    await ctx.commit_tool_output("The order was placed and the caller told.")
    minutes = shop.settings.ready_in_minutes
    number = done.order.id
    await ctx.emit(
        f"Thank you. Order number {number} is placed: "
        f"{_order_words(done.order, shop.business.currency)}. "
        f"It will be ready to collect in {minutes} minutes."
    )


async def cancel_order(ctx: ToolContext, _: NoArguments) -> str:
    shop = bakery(ctx)
    view = await shop.run(
        lambda db: orders.cancel_pending(db, customer_id=customer_id(db, ctx.client_id))
    )
    if view is None:
        return "There was no order in progress, so there's nothing to cancel."
    return "I've cancelled your order. Can I help with anything else?"


async def transfer_to_operator(ctx: ToolContext, params: TransferReason) -> None:
    await ctx.commit_tool_output(f"Transfer to a person requested: {params.reason or 'none'}")
    await ctx.emit(TRANSFER_WORDS)
