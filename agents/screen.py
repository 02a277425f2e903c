"""The pharmacy's screen and fallback: code that answers before, and after, any model.

The screen runs on every caller turn before any router or model, whichever agent
holds the caller, in this order:
1. safety (agents/safety.py): an emergency, self-harm, a dose question; an emergency
   only the probe reads, told with no word an emergency is told with (agents/cues.py),
   hears the number with an "if", and then only a request for a product named is
   served;
2. a person: asked for in the caller's own words, or a yes to the offer of one;
3. facts any agent may say: the hours and the address; after a caller spoke of
   harming themselves, nothing else is sold on that call;
4. a caller checking the line or saying who they call for, naming no product; the
   answer to "did you say X?", asked of a product found by a guess;
5. the order (agents/moves.py): a yes to the read-back confirms, and only confirms;
   "make that three", "one more", "take the X off", "give me Y instead" change the
   line they name; "can I have the herbal one instead" the one line; "three of
   those" the line just added; "read that back" reads it;
6. a goodbye, when no order is pending;
7. short answers to what the caller just heard (agents/heard.py): a count after
   "how many would you like?", a price question at sales, and the same question
   carried on to another product ("and the gum");
8. what else there is, after a prescription-only refusal;
9. the caller leaving to call back, or putting off what was just offered ("I'll
   have a think about it"),
   picking one of the products offered by a variant word, or taking the one product
   offered in their own words ("brilliant, two packs please");
10. several products in one sentence, "that" being the one just offered.

The fallback answers when a turn has spent its model calls or its time, or no
rescue worked: the facts, one clarifying question, or the offer of a person.

Over ~400 lines on purpose: the steps are one ordered list, each reading what the
reply before said, and their order is the pharmacy's policy; split across modules,
that order would no longer read in one place.
"""

from __future__ import annotations

import logging
import re

from sqlmodel import Session as Db
from sqlmodel import select

from agents import cues, dose_shape, heard, safety
from agents.deps import Pharmacy
from agents.guards import ORDERING, is_clear_yes, is_number_word, spoken_quantities
from agents.moves import (
    READ_BACK_QUESTION,
    Confirm,
    Move,
    ReadBack,
    Remove,
    SetQuantity,
    Swap,
    count_of_those,
    just_added,
    only_order_talk,
    order_move,
)
from agents.purchase import asks_what_is_stocked, only_asks_for, only_purchase_talk
from agents.routing import DONE, HOURS, SHOPPING, WHERE, asking_nothing_yet
from agents.speech import describe
from agents.tools.catalogue import (
    answer_search,
    brand_family,
    choose_product,
    family,
    guessed_from,
    ingredient,
    offer,
    several_products,
)
from agents.tools.navigation import SALES, TRANSFER_TOOL
from agents.tools.orders import pending_view
from agents.variants import resolve, variant_words
from models import orders
from models.search import (
    asks_a_lacked_mix,
    content_words,
    drugs_not_held,
    says_product,
    search_products,
)
from models.shop import Product
from models.sounds import is_english
from swarm import RoutedCall, RoutedReply, SessionHandle

log = logging.getLogger("agents.screen")

# A person, in the words callers use: "could I have a word with someone who works
# there", "is there an actual pharmacist I can talk to". Measured: said mid-order,
# such words were searched as a product.
_PERSON = re.compile(
    r"\b(?:speak|talk|word|chat|put me through|transfer me|connect me|get me)\b.{0,40}?"
    r"\b(?:person|human|someone|somebody|staff|pharmacist|chemist|manager|operator|"
    r"works? there|real|actual|live)\b"
    r"|\b(?:a|an|the|real|actual) (?:human|person|operator|pharmacist)(?: please)?\W*$"
    r"|\b(?:operator|human|pharmacist|real person|member of staff)\s*(?:please)?\W*$"
    r"|\b(?:is there|are there) (?:anyone|anybody|someone|somebody|a person|a human)\b"
    r"|\b(?:is there|are there|have you got|can i get) (?:an? )?(?:actual |real )?"
    r"(?:pharmacist|person|human|member of staff)\b"
    r"|\b(?:pharmacist|person|human|someone|somebody)\b.{0,30}\b(?:speak|talk)\b"
    r"|\b(?:talk|speak|chat) (?:to|with) (?:a |the )?(?:robot|machine|computer|bot)\b"
    r"|\b(?:put me|get me|pass me) (?:on|over|through) to\b"
    r"|\bwho(?:ever)?(?:'s| is) (?:behind the counter|working|in charge|on duty|in the shop)\b",
    re.IGNORECASE,
)
_HOURS = re.compile(HOURS, re.IGNORECASE)
_WHERE = re.compile(WHERE, re.IGNORECASE)
_SHOPPING = re.compile(SHOPPING, re.IGNORECASE)
_DONE = re.compile(DONE, re.IGNORECASE)
_WHAT_ELSE = re.compile(
    r"\b(?:what else|anything else|something else|alternatives?|instead|other options?|"
    r"what (?:can|could) i (?:get|have|take|buy)|else (?:is there|have you got|do you have))\b",
    re.IGNORECASE,
)
_REFUSED = re.compile(
    r"I'm sorry, (?P<name>.+?) is prescription only|We have (?P<listed>[^,;]+),[^.;]*prescription only"
)
# A goodbye is the whole utterance, with its courtesies: "see you about my rash" is not.
_BYE = re.compile(
    r"^\W*(?:(?:ok|okay|right|lovely|brilliant|great|perfect|thanks|thank you|cheers|ta|so|"
    r"well|alright|all right|no|that'?s all|that'?s it|you'?ve been (?:really |very |so )?"
    r"helpful|ever so much|so much|very much|a lot|then|bye)\b\W*)*"
    r"(?:bye|goodbye|bye bye|see you|see ya|cheerio|ta ta|take care)"
    r"(?:\W+(?:then|now|bye|thanks|thank you|love|all|for now))*\W*$",
    re.IGNORECASE,
)


# A goodbye at the end of a longer line: "right, ok, I'll think about it, bye".
_SAYS_BYE = re.compile(r"\b(?:bye|goodbye|bye bye|cheerio|see ya|see you)\W*$", re.IGNORECASE)


def _goodbye(pharmacy: Pharmacy) -> str:
    return f"Thank you for calling {pharmacy.shop.name}. Goodbye!"


def asks_for_person(said: str) -> bool:
    return bool(_PERSON.search(said))


def offered_person(last_reply: str) -> bool:
    return safety.OFFER_MARK.lower() in last_reply.lower()


async def accepts_offer(
    pharmacy: Pharmacy, last_reply: str, said: str, named: _Named | None = None
) -> bool:
    """A yes to the offer of a person, and not a new request: "two boxes of ibuprofen
    please" after the offer holds a "please", and must not put the caller through."""
    if not (offered_person(last_reply) and safety.accepts_person(said)):
        return False
    return not await (named or _Named(pharmacy, said)).any()


class _Named:
    """What the caller's words name in the catalogue, looked up once per turn, and only
    when a step needs it: several steps of the screen ask the same question."""

    def __init__(self, pharmacy: Pharmacy, said: str) -> None:
        self._pharmacy, self._said = pharmacy, said
        self._found: list[Product] | None = None

    async def any(self) -> bool:
        return bool(await self._products())

    async def described(self) -> list[tuple[str, str, str]]:
        """Each product's name, form and strength."""
        return [(p.name, p.form, p.strength) for p in await self._products()]

    async def brands(self) -> frozenset[str]:
        """The words of each product's ingredient, and its keywords that are no English
        word: its brands ("stugeron", "prilosec")."""
        words: set[str] = set()
        for p in await self._products():
            words |= set(re.findall(r"[a-z]+", p.active_ingredient.lower()))
            words |= {w for w in re.findall(r"[a-z]+", p.keywords.lower()) if not is_english(w)}
        return frozenset(words)

    async def _products(self) -> list[Product]:
        if self._found is None:
            said = self._said
            self._found = (
                await self._pharmacy.run(lambda db: family(db, said)) if content_words(said) else []
            )
        return self._found


class _Pending:
    """The caller's order in progress, read once per turn: the screen writes nothing."""

    def __init__(self, pharmacy: Pharmacy, client_id: str) -> None:
        self._pharmacy, self._client_id = pharmacy, client_id
        self._read = False
        self._view: orders.OrderView | None = None

    async def view(self) -> orders.OrderView | None:
        if not self._read:
            client_id = self._client_id
            self._view = await self._pharmacy.run(lambda db: pending_view(db, client_id))
            self._read = True
        return self._view

    async def has_lines(self) -> bool:
        view = await self.view()
        return view is not None and bool(view.lines)


def facts(pharmacy: Pharmacy, said: str) -> str | None:
    """The hours or the address, when that is what the caller asked."""
    shop = pharmacy.shop
    parts = []
    if _HOURS.search(said):
        parts.append(f"We are open {shop.hours}.")
    if _WHERE.search(said):
        parts.append(f"We are at {shop.address}.")
    return " ".join(parts) or None


def _pharmacy(session: SessionHandle) -> Pharmacy:
    deps = session.deps
    if not isinstance(deps, Pharmacy):
        raise RuntimeError("the pharmacy screen needs Engine(deps=Pharmacy(...))")
    return deps


async def pharmacy_anticipate(session: SessionHandle, said: str) -> None:
    """The probe reads a pause's words while the voice loop judges whether the pause ends
    the turn; the screen then finds the reading kept (`ProbeReader`) and answers without
    waiting on it. Lines the phrases answer, and asks for a person, are not read. A
    plain request to buy is read all the same, though the screen will not ask: telling
    it needs the catalogue, and that lookup first would start the reading after the
    turn's own ask (`test_turn.py`)."""
    pharmacy = _pharmacy(session)
    if safety.screen(said, pharmacy.shop.safety) is not None or asks_for_person(said):
        return
    await pharmacy.risk.concern(said, client_id=session.client_id)


# Asking for something for a symptom: "something for the swelling", "what's good for it".
_FOR_A_SYMPTOM = re.compile(r"\b(?:something|anything|what\w*)\b[^.?!]*\bfor\b", re.IGNORECASE)


# Words of taking or giving a medicine, or of whether to: after the "if", "should I give
# him the aspirin" may be the emergency's next words. Not "give me" nor "I'll take a box".
_TAKING = re.compile(
    r"\b(?:(?:give|giving|gave) (?:him|her|them|it|my|his|our|the|this|that|these|those|a|an|"
    r"to)|(?:can|could|may|might|should|do|does|would|to) (?:i |we |he |she |they |you |u )?"
    r"take|taking|took|swallowed|have had|had some|safe|should|doses?|okay to|ok to|alright "
    r"to|all right to|allowed)\b",
    re.IGNORECASE,
)


async def _served_after_check(said: str, named: _Named) -> bool:
    """Whether the words after `safety.check` ask for a product they name and say
    nothing else: to buy it, or whether the shop has it or what it costs ("have you got
    the Stugeron?", "y'all have Prilosec? I'll take a box"). Not a question with more
    in it ("do you have aspirin? his arm's gone weak"), "something for", words naming
    nothing, a word an emergency is told with, or one of giving or taking."""
    described = await named.described()
    if only_purchase_talk(said, described) or only_asks_for(said, described, await named.brands()):
        return True
    return (
        bool(described)
        and "?" not in said
        and not heard.only_asks(said)
        and _FOR_A_SYMPTOM.search(said) is None
        and not cues.tells_emergency(said)
        and _TAKING.search(said) is None
    )


async def pharmacy_screen(session: SessionHandle, said: str) -> RoutedCall | RoutedReply | None:
    pharmacy = _pharmacy(session)
    last = await session.get_last_assistant_message() or ""
    concern = safety.screen(said, pharmacy.shop.safety)
    if concern is not None:
        log.warning(
            "safety client_id=%s concern=%s by=phrases", session.client_id, concern.concern.value
        )
        return RoutedReply(concern.words)
    named = _Named(pharmacy, said)
    pending = _Pending(pharmacy, session.client_id)
    # A person before the probe: "put me through to someone, I can't cope" must reach
    # one, not hear the offer of one again.
    if asks_for_person(said) or await accepts_offer(pharmacy, last, said, named):
        return RoutedCall(TRANSFER_TOOL, {"reason": "asked for a person"})
    # A change to the caller's order in progress is read by the probe that knows order
    # talk: "get rid of the tablets, that's me done" was answered with a crisis line.
    view = await pending.view()
    move = await _order_move(pharmacy, view, said, last)
    order_talk = (
        isinstance(move, Remove | SetQuantity | Swap | ReadBack)
        and view is not None
        and only_order_talk(said, view.lines)
    )
    # A plain request to buy a few packs says no concern the phrases missed, and the
    # probe is not asked: it gave "can I get two paracetamol" the dose answer, and "two
    # strips of paracetamol" the crisis line.
    read = (
        None
        if move is None and only_purchase_talk(said, await named.described())
        else await pharmacy.risk.concern(said, client_id=session.client_id, order_talk=order_talk)
    )
    # A count asked about, of something taken, with no word of buying: "two patches at
    # once yeah?" was sold to when neither the phrases nor the probe knew it.
    shape = None
    if read is None:
        answering = bool(heard.offered(last) or heard.asked_how_many(last))
        shape = dose_shape.read(said, offered=answering)
    if shape is dose_shape.Shape.TAKE:
        read = safety.Concern.DOSING
        log.warning("safety client_id=%s concern=%s by=shape", session.client_id, read.value)
    # After a safety answer, the probe may only raise it: "should I just give her an
    # aspirin" after a stroke's 911 reads as a dose question, and must hear 911 again.
    if read is not None and not safety.holds(safety.concern_answered(last), read):
        if (
            read is safety.Concern.EMERGENCY
            and not cues.tells_emergency(said)
            and not safety.checked(last)
        ):
            # "My head's been pounding like a drum": the number, with an "if"; the next
            # line is held to it unless it asks for a product named (agents/cues.py).
            # Read so a second time running, it is said plainly.
            log.warning("safety client_id=%s concern=emergency by=probe told=no", session.client_id)
            return RoutedReply(safety.check(pharmacy.shop.safety))
        log.warning("safety client_id=%s concern=%s by=probe", session.client_id, read.value)
        return RoutedReply(safety.answer(read, pharmacy.shop.safety).words)
    if safety.checked(last) and not await _served_after_check(said, named):
        # After the "if it's severe" of a line read as an emergency, only a request for a
        # product named is served ("two packs of paracetamol please", "the Zyrtec
        # please"). A question ("what can I give her for the allergy?", "have you got
        # anything for a burn?") or words naming nothing ("yes, it's severe") may be the
        # emergency's next words, and hear them answered as one.
        log.warning("safety client_id=%s concern=emergency by=check", session.client_id)
        return RoutedReply(safety.answer(safety.Concern.EMERGENCY, pharmacy.shop.safety).words)
    known = facts(pharmacy, said)
    if known is not None and not _SHOPPING.search(said):
        return RoutedReply(known)
    lines = pharmacy.shop.safety
    if await _after_self_harm(session, lines):
        return RoutedReply(safety.after_self_harm(lines))
    answered = safety.concern_answered(last)
    asked_which = last == dose_shape.BUY_OR_TAKE
    if (asked_which or answered is safety.Concern.DOSING) and move is None:
        if not await named.any():  # "no, the ibuprofen instead" is a request of its own
            chosen = await _buy_or_take(session, pharmacy, said, asked_which)
            if chosen is not None:
                return chosen
    if answered is not None and not _DONE.search(said):
        # After an emergency, nothing is sold until the caller moves on: "can't you just
        # put the chlorphenamine aside" after throat swelling still hears the number.
        if answered is safety.Concern.EMERGENCY or not await named.any():
            return RoutedReply(safety.follow_up(answered, said, lines))
    if shape is dose_shape.Shape.EITHER and move is None:
        # Asked once: the same words again hear the dose answer, from which "to buy"
        # still leads back to a sale.
        log.info("buy_or_take client_id=%s again=%s", session.client_id, asked_which)
        if asked_which:
            return RoutedReply(safety.answer(safety.Concern.DOSING, lines).words)
        return RoutedReply(dose_shape.BUY_OR_TAKE)
    checking = asking_nothing_yet(said)
    if checking is not None and not await named.any():
        # After every safety answer and lock: "hello? are you there?" after 911 must
        # hear the number again, not the menu.
        return RoutedReply(checking)
    asked = heard.asked_name(last)
    if asked is not None:
        # Before the order's moves: "yes, just two" answers the question, and must not
        # change a line already in the order.
        answer = await _name_answer(session, pharmacy, asked, said)
        if answer is not None:
            return answer
    call = _move_call(move)
    if call is not None:
        return call
    goodbye = _BYE.search(said) or (heard.puts_off(said) and _SAYS_BYE.search(said))
    if goodbye and not await pending.has_lines() and not await named.any():
        return RoutedReply(_goodbye(pharmacy))
    wanted = heard.asked_how_many(last)
    count = heard.answered_count(said, last, orders.MAX_QUANTITY_PER_LINE) if wanted else None
    if wanted and count is not None:
        # The answer to our "how many would you like?": the total, for the product asked.
        tool = "change_quantity" if await pending.has_lines() else "add_to_order"
        return RoutedCall(tool, {"product": wanted, "quantity": count})
    at_sales = await session.get_agent_name() == SALES
    if at_sales and heard.PRICE.search(said) and not heard.READ_BACK.search(said):
        price = await _price(pharmacy, said, heard.offered(last))
        if price is not None:
            return RoutedReply(price)
    if at_sales and _AND_THE.match(said) and await _asked_price_before(session, said.lower()):
        # "How much are the nicotine patches?" ... "and the gum": the same question of
        # another product, or another form of it. Measured before: the gum was ordered.
        price = await _price(pharmacy, said, heard.offered(last))
        if price is not None:
            return RoutedReply(price)
    refused = _REFUSED.search(last)
    if _WHAT_ELSE.search(said) and refused is not None:
        name = refused.group("name") or refused.group("listed")
        return RoutedReply(await _alternatives(pharmacy, name))
    offered = heard.offered(last)
    # After "did you say X?", "no, the gel" is not X's gel: the caller's words decide.
    if offered and asked is None and (heard.WHICH in last or variant_words(said).given):
        # "the 400s" after the 200s were offered: a variant of what was just offered.
        picked = await _picked(pharmacy, session, said, offered)
        if picked is not None:
            return picked
    if heard.calls_back(said) and not await named.any():
        if await pending.has_lines():
            return RoutedReply(heard.CALLS_BACK_REPLY)
        return RoutedReply(heard.PUT_OFF_REPLY)
    if offered and heard.puts_off(said):
        if not await named.any():
            # "ok thanks, I'll have a think about it, bye": nothing is ordered; with an
            # order open, the caller is not let go without hearing of it.
            if _SAYS_BYE.search(said) and not await pending.has_lines():
                return RoutedReply(_goodbye(pharmacy))
            return RoutedReply(heard.PUT_OFF_REPLY)
    if len(offered) == 1 and last.endswith(heard.ORDER_IT) and heard.takes_offer(said):
        # A yes to "would you like to order it?", in the caller's words ("yep, that one",
        # "go on then", "yeah that's it"): measured, the model missed those and the
        # fallback's offer of a person then took the next yes as a transfer.
        return RoutedCall(
            "add_to_order", {"product": offered[0], "quantity": await _count(session, said)}
        )
    # After every move on the order and every answer to a question: "remove the
    # cetirizine, I'll get pravastatin elsewhere" is the removal.
    lacked = await _lacked(pharmacy, said)
    if lacked is not None:
        return lacked
    wording = heard.naming_the_offer(said, offered[0]) if len(offered) == 1 else said
    items = await pharmacy.run(lambda db: several_products(db, wording))
    if items:
        counted = any(i.quantity is not None for i in items)
        # A question is answered, and nothing is ordered without being asked for; nor
        # are the parts of a combination the shop lacks ("I need ibuprofen and codeine
        # together" is not Ibuprofen and Co-codamol).
        if asks_what_is_stocked(said, counted) or await pharmacy.run(
            lambda db: asks_a_lacked_mix(db, said)
        ):
            return RoutedCall("search_products", {"query": said})
        return RoutedCall("add_to_order", {"product": said, "quantity": 1})
    return None


async def _buy_or_take(
    session: SessionHandle, pharmacy: Pharmacy, said: str, asked_which: bool
) -> RoutedReply | None:
    """The answer to "would you like to buy some, or are you asking how many to take?",
    or to a dose answer that misread a request to buy: taking hears the dose answer;
    buying, said plainly ("no, I want to buy two packs"), hears what the line before
    named, as any search would answer it, and a yes then orders the count said. Never
    on a call that heard the emergency number or the crisis line."""
    meant = dose_shape.meant(said)
    lines = pharmacy.shop.safety
    if meant is dose_shape.Shape.TAKE and asked_which:
        return RoutedReply(safety.answer(safety.Concern.DOSING, lines).words)
    history = await session.get_user_history()
    if meant is not dose_shape.Shape.EITHER or len(history) < 2:
        return None
    replies = await session.get_assistant_history()
    if any(f"call {lines.emergency_number}" in m.content for m in replies):
        return None
    asked = history[-2].content
    currency = pharmacy.shop.currency
    found = await pharmacy.run(lambda db: answer_search(db, asked, asked, currency))
    if not found.products:
        return None
    # The offer is made where a yes can order it: reception has no order tools.
    if await session.get_agent_name() != SALES:
        await session.change_to_agent(SALES)
    log.info("bought_after_asking client_id=%s", session.client_id)
    return RoutedReply(found.text)


_NO = re.compile(r"^\W*(?:no|nope|nah|not really|wrong|that'?s not it|not that)\b", re.I)


async def _name_answer(
    session: SessionHandle, pharmacy: Pharmacy, asked: str, said: str
) -> RoutedCall | RoutedReply | None:
    """The caller's answer to "did you say X?": a yes offers X, or the variant it names
    ("yes, the gel"), or adds it with a count; a bare no asks for the name again, and a
    second one offers a person; anything else is a new request."""
    if is_clear_yes(said) or heard.confirms_name(said):
        currency = pharmacy.shop.currency

        def work(db: Db) -> Product | None:
            named = db.exec(select(Product).where(Product.name == asked)).first()
            if named is not None and variant_words(said).given:
                return _offered_pick(db, [asked], said) or named
            return named

        product = await pharmacy.run(work)
        if product is None:
            return None
        # "yes, just two please": a count in the yes, with or without "boxes".
        quantity = heard.answered_count(said, "", orders.MAX_QUANTITY_PER_LINE)
        if quantity is not None:
            return RoutedCall("add_to_order", {"product": product.name, "quantity": quantity})
        return RoutedReply(offer(product, currency))
    if _NO.search(said) and not content_words(_NO.sub(" ", said)):
        replies = await session.get_assistant_history()
        if sum(m.content.endswith(heard.did_you_say(asked)) for m in replies[-4:]) >= 2:
            # The same mishearing twice: a third question would trap the caller.
            return RoutedReply(
                "Sorry, I'm not catching the name. You could tell me what it's for, "
                f"or would you like me to {safety.OFFER_MARK}?"
            )
        return RoutedReply("Sorry about that. Could you say the name again, or spell it for me?")
    return None


async def _after_self_harm(session: SessionHandle, lines: safety.SafetyLines) -> bool:
    replies = await session.get_assistant_history()
    return any(safety.raised_self_harm(m.content, lines) for m in replies)


async def _lacked(pharmacy: Pharmacy, said: str) -> RoutedCall | None:
    """The search, and no order move, when the caller names a drug the shop does not
    stock: "make it two pravastatin" set the last line's count, and "two pravastatin
    and one ibuprofen" put the two on the ibuprofen, saying nothing of the pravastatin.
    The search says so, and offers what else they named for a yes. A tool, not a reply:
    at reception it is made once the caller is with sales, who can take that yes."""
    lacked = await pharmacy.run(lambda db: drugs_not_held(db, said).names)
    return RoutedCall("search_products", {"query": said}) if lacked else None


async def _order_move(
    pharmacy: Pharmacy, view: orders.OrderView | None, said: str, last: str
) -> Move | None:
    def names_other(db: Db, lines: tuple[orders.LineView, ...]) -> bool:
        # A drug's name said among other words ("make it two lamotrigine") is looked
        # up on its own: the whole sentence finds nothing, and the last line was set.
        # A drug the shop lacks is never a line of the order.
        if drugs_not_held(db, said).names:
            return True
        found = (
            family(db, said)
            or brand_family(db, said)
            or [
                p
                for w in content_words(said)
                if len(w) >= 6 and not is_english(w)
                for p in family(db, w)
            ]
        )
        held = {ingredient(p) for line in lines if (p := db.get(Product, line.sku))}
        return any(ingredient(p) not in held for p in found)

    if view is None or not view.lines:
        return None
    asked = heard.asked_how_many(last)
    # After "you already have 1 pack of X. How many would you like?", a count that names
    # no line is X's: measured, "make it two" set the last line.
    lines = tuple(sorted(view.lines, key=lambda line: line.name == asked))
    other = await pharmacy.run(lambda db: names_other(db, lines))
    answers = view.read_back_revision == view.revision and last.endswith(READ_BACK_QUESTION)
    move = order_move(said, lines, read_back_heard=answers, names_other=other)
    count = count_of_those(said) if move is None else None
    added = just_added(last, lines) if count is not None else None
    if count is not None and added is not None:
        # "three of those" right after "I've added 1 pack of X": X's new total. Measured
        # before: searched as a product ("What would you like?").
        return SetQuantity(added.name, count)
    return move


def _move_call(move: Move | None) -> RoutedCall | None:
    if isinstance(move, ReadBack):
        return RoutedCall("read_back_order")
    if isinstance(move, Swap):
        return RoutedCall("swap_product", {"product": move.product, "instead": move.instead})
    if isinstance(move, Confirm):
        return RoutedCall("confirm_order")
    if isinstance(move, SetQuantity):
        return RoutedCall("change_quantity", {"product": move.product, "quantity": move.quantity})
    if isinstance(move, Remove):
        return RoutedCall("remove_from_order", {"product": move.product})
    return None


async def _alternatives(pharmacy: Pharmacy, refused: str) -> str:
    """Products that treat what the refused one treats and need no prescription."""
    currency = pharmacy.shop.currency

    def work(db: Db) -> str:
        product = next(iter(family(db, refused)), None)
        words = " ".join(content_words(product.keywords)) if product is not None else refused
        hits = [
            h
            for h in search_products(db, words, limit=8)
            if not h.product.prescription_only and h.product.stock > 0
        ][:3]
        if not hits:
            return (
                f"I'm sorry, we have nothing that replaces {refused} without a prescription. "
                "Our pharmacist can advise you. Would you like me to put you through?"
            )
        listed = "; ".join(describe(h.product, currency) for h in hits)
        return (
            f"Without a prescription, we have {len(hits)} options: {listed}. {heard.WHICH}"
            if len(hits) > 1
            else f"Without a prescription, we have {listed}. Would you like to order it?"
        )

    return await pharmacy.run(work)


def _offered_pick(db: Db, options: list[str], said: str, *, asking: bool = False) -> Product | None:
    """The one of the products just offered that the caller's words pick; a variant word
    may pick a relative that was not listed ("the 400s" after the 200s)."""
    listed = [p for name in options for p in family(db, name)[:1]]
    place = heard.place_picked(said, len(listed)) if len(listed) == len(options) > 1 else None
    if place is not None:
        # "The second one", "the cheaper one": by where, or what, it was read out.
        if isinstance(place, int):
            return listed[place]
        by_price = sorted(listed, key=lambda p: p.price_cents)
        if place == "dearest":
            by_price.reverse()
        # Two at one price: which is the cheaper is not the caller's choice to guess.
        return by_price[0] if by_price[0].price_cents != by_price[1].price_cents else None
    if len(options) > 1 and not any(says_product(p, said) for p in listed):
        # Words that name none of the options pick none by a variant word alone when
        # they ask or decline, and none at all without one: the variants resolve to the
        # plainest product when told nothing, and "what's the difference between them
        # two?" ordered it ("two" read as a pack of two).
        if (heard.asks_or_declines(said) and not asking) or not variant_words(said).given:
            return None
    picked = resolve(listed, said).product if listed else None
    if picked is None and listed and variant_words(said).given:
        kin = {ingredient(p) for p in listed}
        relatives = [p for name in options for p in family(db, name) if ingredient(p) in kin]
        picked = resolve(relatives, said).product
    return picked


async def _picked(
    pharmacy: Pharmacy, session: SessionHandle, said: str, options: list[str]
) -> RoutedCall | None:
    """The option the caller chose by a variant word ("the gel one", "the 400s")."""
    if not options:
        return None

    product = await pharmacy.run(lambda db: _offered_pick(db, options, said))
    if product is None:
        return None
    return RoutedCall(
        "add_to_order", {"product": product.name, "quantity": await _count(session, said)}
    )


async def _count(session: SessionHandle, said: str) -> int:
    """How many the caller wants: said now ("yes, two"), else said a turn or two ago
    ("three boxes of it" before the offer), else one."""
    now = heard.answered_count(said, "", orders.MAX_QUANTITY_PER_LINE)
    if now is not None:
        return now
    history = [m.content for m in (await session.get_user_history())[-3:-1]]

    def counted(db: Db) -> list[int]:
        # Not a count said with a drug the shop lacks: "two pravastatin and one
        # ibuprofen", then yes to the ibuprofen, put two in the order.
        return [
            q
            for line in history
            if not drugs_not_held(db, line).names
            for q in spoken_quantities(line)
        ]

    recent = await _pharmacy(session).run(counted)
    return recent[-1] if recent else 1


# A question carried on to another product: "and the gum?", "what about the cetirizine".
_AND_THE = re.compile(
    r"^\W*(?:(?:jeez|gosh|ok|okay|right|hmm+|um+|oh|and)\W+)*"
    r"(?:and|what about|how about)\s+(?!(?:how|can|could|is|are|should|does|do|will|what|the max)\b)"
    r"(?:the |a |an |for )?(?P<what>[^,.;!?]+?)\W*$",
    re.IGNORECASE,
)


async def _asked_price_before(session: SessionHandle, said: str) -> bool:
    """The caller's line before `said` asked a price, and `said` asks for nothing."""
    if ORDERING.search(said) or any(is_number_word(w) for w in re.findall(r"[a-z0-9]+", said)):
        return False
    history = await session.get_user_history()
    return len(history) >= 2 and heard.PRICE.search(history[-2].content) is not None


async def _price(pharmacy: Pharmacy, said: str, options: list[str]) -> str | None:
    """The price of the product the caller asked about, from the options they just
    heard or the catalogue; None when their words name no one product."""
    currency = pharmacy.shop.currency

    def work(db: Db) -> str | None:
        # A question, asked of one option: "how much is the regular one, the 200".
        picked = _offered_pick(db, options, said, asking=True)
        choice = choose_product(db, [said], said, currency)
        # A product the words name that is not the one offered: "how much is the
        # lorprimide" after ibuprofen asks about the other one (measured: it was given
        # ibuprofen's price), and a guess of a name is asked about first.
        if isinstance(choice, Product) and (
            picked is None or ingredient(choice) != ingredient(picked)
        ):
            if guessed_from(db, choice, said):
                return heard.did_you_say(choice.name)
            picked = choice
        return offer(picked, currency) if picked is not None else None

    return await pharmacy.run(work)


async def pharmacy_fallback(session: SessionHandle, said: str) -> str:
    """Code's words when the models could not answer in time: never silence, never a guess."""
    pharmacy = _pharmacy(session)
    known = facts(pharmacy, said)
    if known is not None:
        return known + " Anything else?"
    return (
        "I'm sorry, I didn't manage that. Could you say it another way, "
        f"or would you like me to {safety.OFFER_MARK}?"
    )
