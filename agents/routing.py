"""What code can tell from the caller's words alone, before any model is asked.

Shared by the triage router and the scripted provider's rules, so the two agree.
"""

from __future__ import annotations

import re

from agents.guards import is_number_word, stated_quantity
from agents.heard import asks_price_only
from models.search import content_words
from swarm import RoutedCall, RoutedReply

PERSON = r"\b(operator|human|real person|a person|someone|somebody|staff|pharmacist|manager)\b"
HOURS = r"\b(open|opening|close|closing|hours|shut|shuts)\b"
WHERE = (
    r"\b(where are you|whereabouts|address|located|location|find you|how do i get to you|"
    r"(you'?re|you are|are you) (the one )?(by|near|next to|opposite|across from|behind|on) the)\b"
)
SHOPPING = (
    r"\b(buy|order|need|want|looking for|have you got|do you (have|sell)|price|cost|something for|"
    r"pain|ache|headache|cough|cold|fever|flu|allerg\w*|hay ?fever|medicine|tablets?|pills?|"
    r"cream|spray|drops|vitamins?|sore|itch\w*|i'?d like|would like|like to|can i (get|have)|"
    r"get some)\b"
)

# Not the pharmacy's business: answered politely, never searched in the catalogue.
OFF_TOPIC = (
    r"\b(weather|jokes?|football|soccer|politics|election|lottery|recipes?|movies?|songs?|"
    r"poems?|system prompt|your (instructions|prompt)|ignore (all |your |previous )*instructions)\b"
)
# Courtesies, when they are all the caller said: answered in kind.
SMALL_TALK = (
    r"^\W*(thanks?|thank you( very much)?|bye|goodbye|cheers)"
    r"([\s,.!]+(bye|goodbye|thanks|thank you|cheers))*\W*$"
)
HOW_ARE_YOU = (
    r"^\W*((hi|hiya|hello|hey)( there)?\W+)?(how are you|how'?s it going|"
    r"are you a (robot|bot|machine))\b"
    r"|\bhow (are|r) (you|ya)( doing| keeping| getting on| today)?\W*$"
)

MENU = (
    "I can help with medicines and orders, our opening hours and our address. What would you like?"
)
OFF_TOPIC_WORDS = "I'm afraid I can only help with the pharmacy: " + MENU[len("I can help with ") :]
COURTESY_WORDS = (
    "You're welcome, and thank you for calling. Is there anything else I can help with?"
)
HOW_WORDS = "I'm an automated assistant, and very well, thank you. " + MENU
# Checking the line, or who answered, and asking nothing yet: "Hello? Is this the
# chemist? Oh good", "can you hear me? the network's very poor". And calling for someone
# else: "I'm ringing for the lady next door". Measured on whole calls written blind,
# each was searched, and heard "I can't find that" or a list of three products.
CHECKING_IN = (
    r"\b(?:(?:is|are) (?:this|that|you|it) (?:the )?(?:chemist'?s?|pharmacy|pharmacist)|"
    r"(?:can|could) you hear me|are you there|is (?:anyone|anybody) there|"
    r"am i through to|have i got the (?:chemist|pharmacy))\b"
)
CHECKING_IN_WORDS = "Yes, I can hear you, and you're through to the pharmacy. " + MENU
FOR_SOMEONE = (
    r"\b(?:calling|ringing|phoning|ordering) (?:for|on behalf of) (?:my|our|the|a|his|her) "
    r"(?:\w+ )?(?:mum|mom|mam|mother|dad|da|father|husband|wife|missus|partner|son|daughter|"
    r"child|kid|baby|nan|nana|gran|granny|grandma|grandmother|grandad|grandpa|grandfather|"
    r"neighbou?r|friend|brother|sister|aunt|auntie|uncle|lady|man|gentleman|fella|boss|"
    r"colleague|patient|parents?|family|in.laws?)\b"
)
FOR_SOMEONE_WORDS = "Of course, I can help with that. What do they need?"

# The sales agent's plainest intents, the same words the scripted provider answers.
# With a word between, as callers say it: "that's definitely everything", "that'll be
# everything", "that's me done"; and regional ways of saying it, alone.
DONE = (
    r"\b(that'?s (?:(?:definitely|really|honestly|probably|just|about|all) )?(all|it|everything|"
    r"the lot)|that'?ll (be (?:all|it|everything)|do)|that is (all|it|everything)|nothing else|"
    r"(?:i'?m|i am|that'?s me|we'?re) (?:all )?done(?! with| for)|read it back|"
    r"what'?s the total)\b"
)
# The whole answer to "anything else?" in regional words: "no that's grand thanks",
# "that's me", "that is all only". After an emergency's answer they may mean "I'm
# fine", so the screen does not take them as moving on from it (`DONE` alone).
_THANKS_TO_THE_END = r"(?:\W+(?:thanks|thank you|ta|cheers|love|mate))*\W*$"
DONE_SAID_SO = (
    DONE + r"|^\W*(?:(?:no|nah|nope|naw|yeah|ok|okay|right)\W+)*(?:that'?s|that is) "
    r"(?:grand|me|sound|all only|us|your lot)"
    + _THANKS_TO_THE_END
    # "No, I'm good": the no makes it an answer to "anything else?", not to "how are you?".
    + r"|^\W*(?:no|nah|nope|naw)\W+(?:(?:thanks|thank you|ta)\W+)?(?:i'?m|we'?re) "
    r"(?:good|grand|fine|sorted|alright|all right|ok|okay)" + _THANKS_TO_THE_END
)
CANCEL = r"\b(cancel( (it|that|the order|my order))?|forget it|never ?mind)\b"
_DONE = re.compile(DONE_SAID_SO, re.IGNORECASE)
_CANCEL_ALL = re.compile(rf"^\W*({CANCEL})([\s,.!]+({CANCEL}))*\W*$", re.IGNORECASE)
# Words of shopping talk that name no product.
CHATTER = frozenset("please thanks yes yeah sure want like need wait also plus".split())

_OTHER_BUSINESS = re.compile("|".join((PERSON, HOURS, WHERE)), re.IGNORECASE)
_SHOPPING = re.compile(SHOPPING, re.IGNORECASE)
_DECLINED = (
    (re.compile(OFF_TOPIC, re.IGNORECASE), OFF_TOPIC_WORDS),
    (re.compile(SMALL_TALK, re.IGNORECASE), COURTESY_WORDS),
    (re.compile(HOW_ARE_YOU, re.IGNORECASE), HOW_WORDS),
)


_ASKING_NOTHING = (
    (re.compile(CHECKING_IN, re.IGNORECASE), CHECKING_IN_WORDS),
    (re.compile(FOR_SOMEONE, re.IGNORECASE), FOR_SOMEONE_WORDS),
)


def prepared_reply(said: str) -> RoutedReply | None:
    """Words no model should be asked about: off-topic requests (and instructions to
    drop the agent's own), courtesies, "how are you". Measured on the embedded model,
    it searched the catalogue for the weather and for "thank you, bye" (docs/bench.md)."""
    for pattern, words in _DECLINED:
        if pattern.search(said):
            return RoutedReply(words)
    return None


def asking_nothing_yet(said: str) -> str | None:
    """The words for a caller checking the line, or saying who they call for, with no
    word of shopping and no count. Whether a product is named the caller's screen asks
    the catalogue: "I'm ringing for my dad, the ibuprofen gel" asks for the gel."""
    if _SHOPPING.search(said) or stated_quantity(said) is not None:
        return None
    return next((words for pattern, words in _ASKING_NOTHING if pattern.search(said)), None)


def sales_router(said: str) -> RoutedCall | RoutedReply | None:
    """Prepared words, then what code can tell of an order from the words alone. The
    bench measured the embedded model adding "24 packs" when the caller said "that's
    all", reading the order back on "never mind", and searching again when the caller
    said "one box of ibuprofen". A routed call the agent may not make yet (no pending
    order to read back) is rescued like a model's, so the model then decides."""
    prepared = prepared_reply(said)
    if prepared is not None:
        return prepared
    if _OTHER_BUSINESS.search(said):
        return None
    if _DONE.search(said):
        return RoutedCall("read_back_order")
    if _CANCEL_ALL.match(said):
        return RoutedCall("cancel_order")
    quantity = stated_quantity(said)
    named = [w for w in content_words(said) if w not in CHATTER and not is_number_word(w)]
    # "How much are the pregnancy tests, is it two in a box?" asks, and orders nothing.
    if quantity is not None and named and not asks_price_only(said):
        return RoutedCall("add_to_order", {"product": said, "quantity": quantity})
    return None


def triage_router(said: str) -> RoutedCall | RoutedReply | None:
    """Plain shopping goes straight to sales; anything else is the triage model's call.

    Measured on the embedded model, a hand-off cost two model calls (triage routes,
    then sales acts), about half of a turn's time (docs/performance.md). Words that
    also ask for a person, the hours or the address are left to the model."""
    prepared = prepared_reply(said)
    if prepared is not None:
        return prepared
    if _OTHER_BUSINESS.search(said) or not _SHOPPING.search(said):
        return None
    return RoutedCall("navigate_to_sales")
