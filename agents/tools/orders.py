"""Building, reading back and placing an order.

The rules are code: the model only chooses to call these tools. A quantity the
caller stated wins over the model's; the read-back is spoken by code, so the
caller hears exactly what will be ordered; an order is placed only when the
caller's very next words after that read-back are a clear yes.

Past 400 lines on purpose: every tool that changes an order sits beside the
read-back and the yes it must respect, so one reading shows the whole consent rule.
"""

from __future__ import annotations

import logging
import re

from pydantic import BaseModel, Field
from sqlmodel import Session

from agents import heard
from agents.deps import pharmacy
from agents.guards import (
    consents,
    count_before_name,
    grounded,
    is_clear_yes,
    spoken_quantities,
    stated_quantity,
)
from agents.heard import did_you_say
from agents.items import Wanted
from agents.moves import READ_BACK_QUESTION, described_by, named_line
from agents.routing import DONE_SAID_SO as DONE
from agents.speech import line_words, money, order_number, order_words, spoken_list
from agents.tools.catalogue import (
    ProductName,
    choose_product,
    family,
    find_product,
    guessed_from,
    ingredient,
    resolve_product,
    search_words,
    several_products,
)
from agents.tools.navigation import NoArguments
from callswarm.agency import read_back_answer
from models import orders
from models.orders import OrderError, OutOfStock, PrescriptionOnly, QuantityNotAllowed
from models.search import says_product
from models.shop import Product
from swarm import ToolContext, ToolError

log = logging.getLogger("agents.orders")
_DONE = re.compile(DONE, re.IGNORECASE)
# Words that ask for more of what the order holds: "another", "one more", "add".
_MORE = re.compile(r"\b(?:more|another|extra|add|also|as well|too|again|second)\b", re.I)


class AddToOrder(BaseModel):
    product: str = Field(min_length=2, description="The product name as the caller said it.")
    quantity: int = Field(default=1, ge=1, description="How many packs the caller asked for.")


class ChangeQuantity(BaseModel):
    product: str = Field(min_length=2, description="The product in the order to change.")
    quantity: int = Field(ge=1, description="The new total number of packs of it.")


def _customer_id(db: Session, client_id: str) -> int:
    customer = orders.get_or_create_customer(db, client_id=client_id)
    assert customer.id is not None
    return customer.id


def _refusal(exc: OrderError) -> ToolError:
    if isinstance(exc, PrescriptionOnly):
        return ToolError(
            f"I'm sorry, {exc.name} is prescription only, so we can't take an order for it by "
            "phone. You'll need a prescription from your doctor. Can I help with anything else?"
        )
    if isinstance(exc, OutOfStock):
        if exc.available == 0:
            return ToolError(f"I'm sorry, {exc.name} is out of stock at the moment.")
        return ToolError(
            f"I'm sorry, we only have {exc.available} packs of {exc.name} in stock. "
            "How many would you like?"
        )
    if isinstance(exc, QuantityNotAllowed):
        # The product is named so that the caller's "ok, ten then" can be taken for it.
        what = exc.name or "a product"
        return ToolError(
            f"I can only take between 1 and {orders.MAX_QUANTITY_PER_LINE} packs of {what} "
            "per order. How many would you like?"
        )
    return ToolError(f"I'm sorry, I couldn't do that: {exc}.")


async def _said_lately(ctx: ToolContext, quantity: int, turns: int = 3) -> bool:
    """Whether the caller said `quantity` in one of their last few messages ("two boxes
    of it", then "yes" after the search)."""
    said = await ctx.session.get_user_history()
    return any(quantity in spoken_quantities(m.content) for m in said[-turns:])


async def add_to_order(ctx: ToolContext, params: AddToOrder) -> str:
    shop = pharmacy(ctx)
    said = await ctx.session.get_last_user_message() or ""
    offered = await ctx.session.get_last_assistant_message() or ""
    if heard.puts_off(said) and not grounded(params.product, said):
        # "I'll have a think about it" after an offer: the model's add is not consent.
        log.info("add_refused_put_off client_id=%s", ctx.client_id)
        return heard.PUT_OFF_REPLY
    if heard.asks_price_only(said) or heard.only_asks(said):
        # Consent is code: a price or a question asked is answered, whatever a model
        # made of it.
        log.info("add_refused_question client_id=%s", ctx.client_id)
        return await search_words(ctx, said)
    just_offered = heard.offered(offered)
    # "One tub of that and one of the fish oil": "that" is the product just offered.
    wording = heard.naming_the_offer(said, just_offered[0]) if len(just_offered) == 1 else said
    items = await shop.run(lambda db: several_products(db, wording))
    if items:
        # "One of X and one of Y": every item is taken, none dropped without a word.
        return await _add_several(ctx, items)
    # The product must come from what the caller said or was just offered; otherwise
    # the caller's own words decide, and words that name no product become a search.
    if grounded(params.product, said):
        names = [params.product]
    elif grounded(params.product, offered) and (just_offered or heard.asked_how_many(offered)):
        # Taken from the offer, not the caller: "just one box of the fish oil" after the
        # statin was offered names the fish oil, so the caller's words come first.
        names = [said, params.product]
    else:
        # Neither said nor offered: "yes thanks" after an order was placed adds nothing.
        names = [said]
    if len(just_offered) == 1 and heard.refers_to_offer(said):
        names.append(just_offered[0])  # "one box please" after one offer: that product
    # What the last reply named to the caller: taking it is no guess ("two" after "how
    # many would you like?").
    put_to_caller = {*just_offered, heard.asked_how_many(offered)}
    quantity = params.quantity
    stated = stated_quantity(said)
    if stated is not None and stated != quantity:
        log.warning(
            "quantity_corrected client_id=%s model=%d caller=%d", ctx.client_id, quantity, stated
        )
        quantity = stated
    elif (
        stated is None
        and quantity != 1
        and not await _said_lately(ctx, quantity)
        and heard.answered_count(said, offered, orders.MAX_QUANTITY_PER_LINE) != quantity
    ):
        # A number the caller never said: small models take it from "pack of 24" or
        # "10 milligram" (measured by the bench). One pack, as if none was said.
        log.warning("quantity_unsaid client_id=%s model=%d", ctx.client_id, quantity)
        quantity = 1

    def work(db: Session) -> tuple[str, orders.OrderView] | str | None:
        # The caller's own words pick the variant (the gel, the children's one, the 400s).
        choice = choose_product(db, names, said, shop.shop.currency)
        if choice is None or isinstance(choice, str):
            return choice
        packs = quantity
        if stated is None:
            named = count_before_name(said, lambda word: says_product(choice, word))
            packs = named if named is not None else quantity
        # A variant of what the caller just heard ("the 400s" after ibuprofen) is no guess.
        heard_kin = _kin(db, put_to_caller)
        # "I'd like some lorprimide": a guess is asked about, never added unheard.
        question = _asked_first(db, choice, said, heard_kin, ctx.client_id)
        if question is not None:
            return question
        held = next((x for x in _lines(db, ctx.client_id) if x.sku == choice.sku), None)
        if held is not None and packs == 1 and stated is None and not _MORE.search(said):
            # Named again with no count and no "more": "oh right, the loratadine, my
            # daughter gets terrible hay fever" added a pack. The caller says how many.
            log.info("already_ordered client_id=%s", ctx.client_id)
            return f"You already have {line_words(held)} in your order. How many would you like?"
        view = orders.set_quantity(
            db, customer_id=_customer_id(db, ctx.client_id), product=choice, quantity=packs
        )
        return choice.name, view

    try:
        added_to = await shop.run(work)
    except OrderError as exc:
        raise _refusal(exc) from exc
    if added_to is None:
        return await search_words(ctx, said)
    if isinstance(added_to, str):
        return added_to  # one short question: which of the products the words fit
    name, view = added_to
    added = next(line for line in view.lines if line.name == name)
    currency = shop.shop.currency
    # Said, not read: with one line the order is what was just added, so say the total
    # and not the line twice (every spoken second costs the caller and the TTS). The
    # comma lets the first audio start after the product's name.
    total = (
        f"That's {money(view.total_cents, currency)}"
        if len(view.lines) == 1
        else f"Your order is now {order_words(view, currency)}"
    )
    return (
        f"{heard.ADDED} {line_words(added)}, at {money(added.unit_price_cents, currency)} each. "
        f"{total}. Anything else?"
    )


async def _add_several(ctx: ToolContext, items: list[Wanted]) -> str:
    shop = pharmacy(ctx)
    said = await ctx.session.get_last_user_message() or ""

    guesses: list[str] = []

    def work(db: Session) -> tuple[list[str], list[str], orders.OrderView | None]:
        added: list[str] = []
        missed: list[str] = []
        view = None
        customer = _customer_id(db, ctx.client_id)
        taken: dict[str, int] = {}
        for item in items:
            choice = choose_product(db, [item.words], item.words, shop.shop.currency, whole=said)
            if choice is None or isinstance(choice, str):
                missed.append(item.words)
                continue
            if guessed_from(db, choice, item.words):
                guesses.append(choice.name)  # asked about once the rest is added
                continue
            wanted = item.quantity or 1
            # Named twice in one sentence, a product is one line, and the later count is
            # a correction: "one of the eye drops, no wait, make it two eye drops".
            change = wanted - taken[choice.sku] if choice.sku in taken else wanted
            if choice.sku in taken and item.quantity is None or change == 0:
                continue
            try:
                view = orders.set_quantity(
                    db, customer_id=customer, product=choice, quantity=change, commit=False
                )
                taken[choice.sku] = wanted
            except OrderError as exc:
                missed.append(str(_refusal(exc)))
                continue
            line = next(line for line in view.lines if line.sku == choice.sku)
            added = [a for a in added if not a.endswith(f" {line.name}")]
            added.append(line_words(line))
        db.commit()  # all the sentence's items at once: none saved if one fails
        return added, missed, view

    added, missed, view = await shop.run(work)
    log.info(
        "items_added client_id=%s added=%d missed=%d asked=%d",
        ctx.client_id,
        len(added),
        len(missed),
        len(guesses),
    )
    if view is None:
        return did_you_say(guesses[0]) if guesses else await search_words(ctx, said)
    currency = shop.shop.currency
    text = f"{heard.ADDED} {spoken_list(added)}. Your order is now {order_words(view, currency)}."
    for miss in missed:
        # A refusal is already a sentence for the caller; an unknown item is named.
        text += f" {miss}" if miss.endswith((".", "?")) else f" I couldn't find {miss}."
    # The question last: the caller's next words answer it (agents/screen.py).
    return f"{text} {did_you_say(guesses[0])}" if guesses else text + " Anything else?"


async def change_quantity(ctx: ToolContext, params: ChangeQuantity) -> str:
    """Set a line to the total the caller means ("make that three", "one more")."""
    shop = pharmacy(ctx)

    said = await ctx.session.get_last_user_message() or params.product
    offered = await ctx.session.get_last_assistant_message() or ""
    put_to_caller = {*heard.offered(offered), heard.asked_how_many(offered)}

    def work(db: Session) -> orders.OrderView | str:
        customer = _customer_id(db, ctx.client_id)
        lines = _lines(db, ctx.client_id)
        line = named_line(params.product, lines)
        product = db.get(Product, line.sku) if line is not None else None
        if product is None:
            # Not a line of the order: this sets a product that is not there yet, so it
            # is an add, and a guess is asked about as an add's is. Measured: "make it
            # two lamotrigine" put two Famotidine (its near sound) in the order unasked.
            product = resolve_product(db, params.product)
            question = _asked_first(db, product, said, _kin(db, put_to_caller), ctx.client_id)
            if question is not None:
                return question
        return orders.set_quantity(
            db, customer_id=customer, product=product, quantity=params.quantity, add=False
        )

    try:
        view = await shop.run(work)
    except OrderError as exc:
        raise _refusal(exc) from exc
    if isinstance(view, str):
        return view
    return f"Done. Your order is now {order_words(view, shop.shop.currency)}. Anything else?"


def _kin(db: Session, names: set[str | None]) -> set[str]:
    """The drugs of the products a reply just named to the caller: taking one of them
    is no guess ("two" after "how many would you like?")."""
    return {ingredient(p) for name in names if name for p in family(db, name)[:1]}


def _lines(db: Session, client_id: str) -> tuple[orders.LineView, ...]:
    view = pending_view(db, client_id)
    return view.lines if view is not None else ()


class SwapProduct(BaseModel):
    product: str = Field(min_length=2, description="The product in the order to take off.")
    instead: str = Field(min_length=2, description="What the caller wants instead, as said.")


def _asked_first(
    db: Session, choice: Product, said: str, known: set[str], client_id: str
) -> str | None:
    """The question to ask before `choice` goes into the order, when the caller's words
    find it only by a guess and it is none of the `known` drugs; None to go ahead."""
    if ingredient(choice) in known or not guessed_from(db, choice, said):
        return None
    log.info("name_asked client_id=%s product=%r", client_id, choice.name)
    return did_you_say(choice.name)


async def swap_product(ctx: ToolContext, params: SwapProduct) -> str:
    """One line out and another product in, in one step: "take the cetirizine off and
    give me loratadine instead". Measured before: the removal happened, and the product
    wanted instead was dropped without a word. Nothing is removed unless the new
    product is clear and may be sold."""
    shop = pharmacy(ctx)
    currency = shop.shop.currency
    said = await ctx.session.get_last_user_message() or params.instead

    def work(db: Session) -> tuple[str, orders.OrderView] | str:
        choice = choose_product(db, [params.instead], params.instead, currency)
        if choice is None:
            # Not the caller's words read back: a sentence said back sounds like a parrot.
            return (
                "I couldn't find what you'd like instead, so I've left your order as it is. "
                "Which product do you mean?"
            )
        if isinstance(choice, str):
            return choice  # one short question first; the order stays as it is
        customer = _customer_id(db, ctx.client_id)
        order = orders.pending_order(db, customer_id=customer)
        lines = orders.view_order(db, order=order).lines if order is not None else ()
        line = named_line(params.product, lines)
        if line is None:
            raise ToolError(f"There is no {params.product} in your order. What would you like?")
        if choice.sku == line.sku:
            return f"{line.name} is already in your order, so I've left it as it is. Anything else?"
        # "give me lamotrigine instead" finds Famotidine by its sound: a swap is an
        # order's consent as an add is, and a guess is asked about, the line left. The
        # line's own drug in another variant ("the 32 pack") is no guess.
        out = db.get(Product, line.sku)
        question = _asked_first(
            db, choice, said, {ingredient(out)} if out is not None else set(), ctx.client_id
        )
        if question is not None:
            return question
        # "change it to the 32 pack" on three packs: three of the other, unless said.
        quantity = stated_quantity(params.instead) or line.quantity
        # One commit for both: a failure between them must not leave both lines.
        orders.set_quantity(
            db, customer_id=customer, product=choice, quantity=quantity, add=False, commit=False
        )
        view = orders.remove_product(db, customer_id=customer, sku=line.sku, name=line.name)
        return line.name, view

    try:
        done = await shop.run(work)
    except OrderError as exc:
        raise _refusal(exc) from exc
    if isinstance(done, str):
        return done
    removed, view = done
    log.info("line_swapped client_id=%s out=%s", ctx.client_id, removed)
    return (
        f"I've taken off {removed}. Your order is now {order_words(view, currency)}. Anything else?"
    )


async def remove_from_order(ctx: ToolContext, params: ProductName) -> str | None:
    """Take a line off. The line is found among the order's own first; a product the
    catalogue finds only by a guess is never taken off unasked, and the caller hears
    which line went. "Take the plasters off, that's all" then hears the read-back."""
    shop = pharmacy(ctx)
    currency = shop.shop.currency
    said = await ctx.session.get_last_user_message() or params.product

    def work(db: Session) -> tuple[str, orders.OrderView] | str:
        customer = _customer_id(db, ctx.client_id)
        view = pending_view(db, ctx.client_id)
        lines = view.lines if view is not None else ()
        line = named_line(params.product, lines)
        if line is None:
            product = find_product(db, params.product)
            line = next((x for x in lines if product and x.sku == product.sku), None)
            if product is None or line is None or guessed_from(db, product, params.product):
                # "take the lamotrigine off" finds Famotidine by its sound: the caller
                # is asked, in the order's words, rather than told of a drug not said.
                log.info("removal_unclear client_id=%s", ctx.client_id)
                if view is None or not lines:
                    return "Your order is empty at the moment. What would you like?"
                return (
                    f"Sorry, I can't find {params.product} in your order. It has "
                    f"{order_words(view, currency)}. Which should I take off?"
                )
        return line.name, orders.remove_product(
            db, customer_id=customer, sku=line.sku, name=line.name
        )

    try:
        done = await shop.run(work)
    except OrderError as exc:
        raise _refusal(exc) from exc
    if isinstance(done, str):
        return done
    removed, view = done
    if not view.lines:
        return f"I've taken off {removed}, so your order is empty now. Anything else?"
    if _DONE.search(said):
        await _read_back(ctx, view, currency, first=f"I've taken off {removed}.")
        return None
    return f"I've taken off {removed}. Your order is now {order_words(view, currency)}."


async def cancel_order(ctx: ToolContext, _: NoArguments) -> str:
    shop = pharmacy(ctx)
    view = await shop.run(
        lambda db: orders.cancel_pending(db, customer_id=_customer_id(db, ctx.client_id))
    )
    if view is None:
        return "There was no order in progress, so there is nothing to cancel."
    return "I've cancelled your order. Nothing will be charged. Can I help with anything else?"


# Before the read-back again, to a yes that held more than a yes: the caller hears
# why they are asked twice, and a plain "yes" places the order.
PLAIN_YES_PLEASE = "Sorry, I need a plain yes or no before I place it."


async def _read_back(
    ctx: ToolContext, view: orders.OrderView, currency: str, *, first: str = ""
) -> None:
    """Code, not the model, says what will be ordered; the caller's next words answer it."""
    shop = pharmacy(ctx)
    await ctx.commit_tool_output("The order was read back to the caller, who was asked to confirm.")
    said = f"Your order is {order_words(view, currency)}. {READ_BACK_QUESTION}"
    spoken = await ctx.emit(f"{first} {said}" if first else said)
    await shop.run(
        lambda db: orders.mark_read_back(
            db, customer_id=_customer_id(db, ctx.client_id), revision=view.revision, seq=spoken.seq
        )
    )


def pending_view(db: Session, client_id: str) -> orders.OrderView | None:
    """The caller's order in progress, if any; shared with the screen."""
    order = orders.pending_order(db, customer_id=_customer_id(db, client_id))
    return None if order is None else orders.view_order(db, order=order)


async def _pending_view(ctx: ToolContext) -> orders.OrderView | None:
    return await pharmacy(ctx).run(lambda db: pending_view(db, ctx.client_id))


async def read_back_order(ctx: ToolContext, _: NoArguments) -> None:
    view = await _pending_view(ctx)
    if view is None or not view.lines:
        raise ToolError("Your order is empty at the moment. What would you like?")
    await _read_back(ctx, view, pharmacy(ctx).shop.currency)


async def confirm_order(ctx: ToolContext, _: NoArguments) -> None:
    """Place the order on a clear yes to its read-back; otherwise read it back (again)."""
    shop = pharmacy(ctx)
    currency = shop.shop.currency
    view = await _pending_view(ctx)
    if view is None or not view.lines:
        done = await shop.run(
            lambda db: orders.last_confirmed(db, customer_id=_customer_id(db, ctx.client_id))
        )
        if done is None or done.id is None:
            raise ToolError("There is no order to place yet. What would you like?")
        await ctx.emit(
            f"Your order number {order_number(done.id)} is already placed. Anything else?"
        )
        return
    reply = None
    if view.read_back_revision == view.revision:
        reply = read_back_answer(
            await ctx.session.get_raw_history(), view.read_back_seq, READ_BACK_QUESTION
        )
    if reply is None or not consents(reply, described_by(view.lines)):
        log.warning("confirm_deferred client_id=%s", ctx.client_id)  # no words in logs
        unclear = reply is not None and is_clear_yes(reply)
        await _read_back(ctx, view, currency, first=PLAIN_YES_PLEASE if unclear else "")
        return
    try:
        confirmation = await shop.run(
            lambda db: orders.confirm_order(
                db, customer_id=_customer_id(db, ctx.client_id), order_id=view.id
            )
        )
    except OrderError as exc:
        raise _refusal(exc) from exc
    number = order_number(confirmation.order.id)
    if confirmation.already_confirmed:
        await ctx.emit(f"Your order number {number} is already placed. Anything else?")
        return
    await ctx.emit(
        f"Thank you. Your order number {number} is placed: "
        f"{order_words(confirmation.order, currency)}. It will be ready for collection in an hour."
    )


_STATUS_WORDS = {"pending": "in progress", "confirmed": "placed", "cancelled": "cancelled"}


async def order_status(ctx: ToolContext, _: NoArguments) -> str:
    shop = pharmacy(ctx)
    views = await shop.run(
        lambda db: orders.customer_orders(db, customer_id=_customer_id(db, ctx.client_id), limit=3)
    )
    if not views:
        return "I can't find any orders for you."
    parts = [
        f"order number {order_number(v.id)}, {_STATUS_WORDS[v.status.value]}: "
        f"{order_words(v, shop.shop.currency)}"
        for v in views
    ]
    return "Your orders, newest first: " + "; ".join(parts) + "."
