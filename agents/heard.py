"""What the caller has just heard, read back from the reply code wrote, and what their
short answer to it means. Pure functions, no I/O.

The replies that offer products or ask "how many" are written by code (the tools'
outputs in agents/tools/), so their shapes are known here. Measured on calls nobody
here scripted: "ok, ten then" after the quantity limit, "one bottle of that" after a
single offer and "how much is the chlorphenamine" after a list were each searched as
products, or added the wrong thing.
"""

from __future__ import annotations

import re

from agents.guards import (
    NUMBER_WORDS,
    ORDERING,
    is_clear_yes,
    is_number_word,
    spoken_quantities,
    stated_quantity,
)
from models.search import content_words

WHICH = "Which one would you like?"
ORDER_IT = "Would you like to order it?"
# How the order tool opens when it added a line.
ADDED = "I've added"
# A product found by a guess (a near sound, the start of a word) is asked about first.
_DID_YOU_SAY = "Sorry, did you say "
_ASKED = re.compile(re.escape(_DID_YOU_SAY) + r"(?P<name>[^?]+)\?\s*$")

_SINGLE = re.compile(r"(?:We have|we have) (?P<name>[^,;:]+),[^;]*?" + re.escape(ORDER_IT))
_OPTIONS = re.compile(r"(?:options: |; )([^,;]+),")
_HOW_MANY = re.compile(
    r"packs? of (?P<name>.+?) (?:per order|in stock|in your order)\. How many would you like\?"
)
_IN_STOCK = re.compile(r"we only have (?P<n>\d+) packs of")
_MOST = re.compile(
    r"\b(?:the most|the max(?:imum)?(?! strength)|as many as (?:you can|i can|possible|allowed)|"
    r"all (?:of them|you (?:can|have|allow))|whatever the (?:limit|max(?:imum)?) is)\b",
    re.IGNORECASE,
)
_FILLER = r"(?:ok(?:ay)?|right|fine|alright|um+|uh+|er|well|so|yes|yeah|then|just|please|"
_FILLER += r"let'?s (?:do|say|go with)|i'?ll (?:take|have)|make it|go on|can i have|in that case)"
_QUESTION = re.compile(r"\?|^\W*(?:what|which|how|is|are|does|do|can|could|would)\b", re.I)
_BARE_COUNT = re.compile(
    rf"^(?:{_FILLER}\b\W*)*(?P<n>\d+|{'|'.join(k for k, v in NUMBER_WORDS.items() if v <= 20)})"
    rf"(?:\s+(?:packs?|box(?:es)?|of (?:them|those)|then|please|thanks|instead))*\W*$",
    re.IGNORECASE,
)
# Questions about a price: "how much is the chlorphenamine", "what do the gels cost".
PRICE = re.compile(
    r"\b(?:how much (?:is|are|does|do|for|would)|what(?:'s| is| are) the (?:price|cost)|"
    r"price of|cost of|what do(?:es)? .{1,40}? cost|how expensive|how much more|how dear|"
    r"how much(?:'s| is it for)|what do you charge|what are you charging|"
    r"(?:is|are) (?:that|it|they|those) (?:loads|much|a lot|way|any) (?:more|dearer|cheaper))\b",
    re.IGNORECASE,
)


# Putting off what was offered: "I'll have a think about it", "not right now", "I'll pop
# in instead". Read only where a product was just offered.
_PUT_OFF = re.compile(
    r"\b(?:no,? thanks?|no,? thank you|not (?:right )?now|not today|not for now|"
    r"(?:have|had) a think|think (?:about|on) it|maybe (?:later|another time|next time)|"
    r"another time|next time|(?:i'?ll|i will|we'?ll) (?:call|ring|phone) back|"
    r"(?:i'?ll|i will|we'?ll) (?:pop|come|drop) in (?:instead|later|another time)|"
    r"i'?ll leave it|leave it for now)\b",
    re.IGNORECASE,
)
_OPENS_WITH_YES = re.compile(r"^\W*(?:yes|yeah|yep|yup|sure|go on|go ahead|please)\b", re.I)
PUT_OFF_REPLY = "No problem. Is there anything else I can help you with?"
# Leaving to call back later: "I'll have to ring you back", "hold off placing it, I'll
# call back". Measured before, both were searched as products and heard a list.
_CALLS_BACK = re.compile(
    r"\b(?:i'?ll|i will|we'?ll|i have to|i need to|i'?ll have to|i'?d better|let me) "
    r"(?:(?:call|ring|phone) (?:you |ye )?back|get back to you|give you a (?:ring|call) back)\b"
    r"|\bhold off\b",
    re.IGNORECASE,
)
# Not "it stays open for when you call back": a caller whose number is withheld is a new
# customer on every call (telephony/call.py).
CALLS_BACK_REPLY = (
    "No problem, nothing has been placed. Is there anything else I can help you with?"
)


def calls_back(said: str) -> bool:
    return _CALLS_BACK.search(said) is not None


def puts_off(said: str) -> bool:
    """Not "yes please, I'll pop in for it later", nor "yeah, no thank you to a receipt"."""
    return _PUT_OFF.search(said) is not None and not _OPENS_WITH_YES.match(said)


# What points at the one product just offered, in a line that also names another: "one
# tub of that and one of the fish oil", "one please. and a pack of the sudafed".
_POINTS = re.compile(
    r"\b(?:\d+|one|two|three|four|five|six|a|an)(?: (?:box|boxes|pack|packs|packet|packets|"
    r"bottle|bottles|tube|tubes|tub|tubs))? of (?P<it>that|this|it|those|them)(?: ones?)?\b(?!')",
    re.IGNORECASE,
)
_COUNT_FIRST = re.compile(
    r"^(?P<lead>\W*(?:(?:yes|yeah|yep|ok|okay|go on|go on then|right|sure|please)\W+)*"
    r"(?:just )?(?:\d+|one|two|three|four|five|six|a couple|a pair))(?P<rest>[^,.;!?]*?)"
    r"(?=\W*(?:please)?\s*(?:[,.;!?]|\band\b))",
    re.IGNORECASE,
)
# The clause after a bare count must ask for another item: "one please. and a pack of
# the sudafed", not "two, I'm taking ibuprofen too".
_ANOTHER_ITEM = re.compile(
    r"^\W*(?:(?:please|thanks|ta)\W+)?(?:and|also|plus|as well as)?\W*"
    r"(?:can i (?:get|have)|i'?ll (?:have|take)|i'?d like|"
    r"give me)?\W*(?:a|an|one|two|three|four|five|some|\d+)\b",
    re.IGNORECASE,
)


def naming_the_offer(said: str, offered: str) -> str:
    """`said` with the words that point at the product just offered replaced by its
    name, so its items can be told apart: measured before, "one tub of that and one of
    the fish oil" after Vitamin D3 was offered ordered the fish oil alone."""
    pointing = _POINTS.search(said)
    if pointing is not None:
        return f"{said[: pointing.start('it')]}{offered}{said[pointing.end() :]}"
    counted = _COUNT_FIRST.match(said)
    if (
        counted is not None
        and not content_words(counted.group("rest"))
        and _ANOTHER_ITEM.match(said[counted.end() :].lstrip(" ,.;!?"))
    ):
        return f"{said[: counted.end('rest')]} of {offered}{said[counted.end('rest') :]}"
    return said


# A question that opens the line: "what's the difference between the Gaviscon and your
# plain antacid ones?" added both. Not "what about the 400s" or "how about two", which
# ask for them; "can you" and "could you" ask for something to be done ("can you send
# two"), and "do it" and "do the gel" are no question, so they open none here. A
# yes before the words ("yes, do it") is an answer, not a question.
_QUESTION = re.compile(
    r"^\W*(?:(?:so|and|oh|right|hi|hiya|hello|hey|well|sorry|um|uh|er|erm)\W+)*"
    r"(?:what(?:'s| is| are| does| do)?|whats|which|how(?:'s| is| are| does| do)?|is|are|"
    r"(?:do|did) (?:you|they|i|we)|does (?:it|that|this|the|he|she)|would you have|"
    r"have you|has|any idea|where|when|why|who)\b(?!(?:'s)?\W+about\b)",
    re.IGNORECASE,
)


def only_asks(said: str) -> bool:
    """A question about products that asks for nothing to be ordered: no word of
    ordering and no count of packs ("have you got two boxes of paracetamol" asks for
    them). Answered, never added: consent is the caller's words, not a model's call."""
    return (
        _QUESTION.search(said) is not None
        and ORDERING.search(said) is None
        and not spoken_quantities(said)
    )


def asks_price_only(said: str) -> bool:
    """A price asked, and nothing asked to be ordered: "how much are the pregnancy
    tests, is it two in a box" was ordered a pack. Not "how much is it, I'll take two"."""
    return PRICE.search(said) is not None and ORDERING.search(said) is None


# Asking to hear the order: the read-back, said by code.
READ_BACK = re.compile(
    r"\bread (?:it|that|them|the order|my order|everything|it all)(?: all)? back\b"
    r"|\bwhat(?:'s| is) the total\b|\bwhat(?:'s| is) (?:in )?my (?:order|basket)\b"
    r"|\bhow much (?:is|will|would) (?:that|it|everything|all that|the lot)"
    r"(?: (?:be|come to|cost))?(?: (?:altogether|all together|in total|all in))\b"
    r"|\bwhat (?:have|did) i (?:got|ordered|order)\b|\bwhat(?:'s| is) the damage\b"
    r"|\bwhat(?:'s| does| do| will) (?:that|it|they|all that) (?:come|add up) to\b",
    re.IGNORECASE,
)


def did_you_say(name: str) -> str:
    return f"{_DID_YOU_SAY}{name}?"


def asked_name(last_reply: str) -> str | None:
    """The product the reply asked the caller to confirm they named."""
    asked = _ASKED.search(last_reply)
    return asked.group("name") if asked else None


_THATS_IT = re.compile(
    r"^\W*(?:that'?s (?:it|the one|right|correct|what i said)|exactly|spot on|indeed|"
    r"uh[- ]?huh|mm[- ]?hm+|mhm|you got it|that one|(?:yes,? )?i did|aye|go on)\b(?!.*\?)",
    re.IGNORECASE,
)


def confirms_name(said: str) -> bool:
    """A yes to "did you say X?" in words other than yes: "that's the one", "exactly"."""
    return bool(_THATS_IT.search(said))


def takes_offer(said: str) -> bool:
    """A yes to the one product just offered, naming nothing else: "yep, that one", "go
    on then", "yes please, two"; or taking it in the caller's own words with no yes in
    them: "I'll have two", "brilliant, two packs please", not a question ("how much
    would two be") nor "I'd like to think about it"."""
    if not refers_to_offer(said):
        return False
    if is_clear_yes(said):
        return True
    # "That one", "that's it", taking words or a count, and nothing else: "that one made
    # me sick, can I get ibuprofen" takes nothing; "can I take two" may be a dose.
    if not all(w in _ANSWER_WORDS or is_number_word(w) for w in content_words(said)):
        return False
    if _ASKS.search(said) or _A_DOSE.search(said):
        return False
    if confirms_name(said):
        return True
    words = re.findall(r"[a-z0-9']+", _WHICH_ONE.sub(" ", said.lower()))
    return bool(_TAKES.search(said)) or any(is_number_word(w) for w in words)


_TAKES = re.compile(
    r"\b(?:(?:i'?ll|i will|we'?ll|i'?d|i would|let me)\s+(?:take|have(?! to| a (?:think|look|word|chat))"
    r"|get|grab|go for|like(?! to (?!order|buy|get|have)))"
    r"|(?:can|could|may) i\s+(?:have|get|grab))\b"
    r"|\b(?:i want|i need|give me|put me down for)\s+(?:\d+|one|two|three|four|five|six|a|an|"
    r"it|that|them|those|some)\b",
    re.IGNORECASE,
)
_WHICH_ONE = re.compile(r"\b(?:that|this|the|which|other|each) one\b")
# "Take" not as in "I'll take": how many to take is a dose question.
_A_DOSE = re.compile(r"(?<!i'll )(?<!ill )(?<!i will )(?<!we'll )\btake\b", re.IGNORECASE)
_ASKS = re.compile(
    r"\b(?:how|what|when|where|why|which|who|whether|if|could you|can you|would you|will you|"
    r"do you|does|is there|are there|tell me)\b",
    re.IGNORECASE,
)


def offered(last_reply: str) -> list[str]:
    """Names of the products the reply just offered: one, or the options listed. A
    product the caller was asked to confirm counts: "yes, two boxes" takes it."""
    asked = asked_name(last_reply)
    if asked is not None:
        return [asked]
    single = _SINGLE.search(last_reply)
    if single and WHICH not in last_reply:
        return [single.group("name").strip()]
    if WHICH in last_reply:
        return [name.strip() for name in _OPTIONS.findall(last_reply)]
    return []


_ANSWER_WORDS = frozenset(
    "yes yeah yep yup sure ok okay please thanks thank great lovely perfect fine go ahead "
    "box boxes pack packs packet packets bottle bottles tube tubes tub tubs one ones just "
    "then right alright brilliant cheers fab fantastic smashing grand cool awesome "
    "excellent wonderful super marvellous nice good ace ta put down "
    "god gosh jeez blimey crikey wow oh ah well sweet bonza exactly indeed spot".split()
)
_ANAPHOR = re.compile(r"\b(?:that|it|those|them|this|these|that one|the one)\b", re.IGNORECASE)
_REFUSE = re.compile(
    r"\b(?:no|not|don'?t|never|nothing|else|other|instead|what about|how about|is it|is that|"
    r"are they|does it|do they|would it|think about|have a think|maybe|(?<!for )later|next time|"
    r"another time|bye|but|if|from|elsewhere)\b|\?",
    re.IGNORECASE,
)


def refers_to_offer(said: str) -> bool:
    """Words that take what was just offered ("one bottle of that then", "one box
    please", "yes, two"), not refuse it nor name something else."""
    if _REFUSE.search(said):
        return False
    named = [w for w in content_words(said) if w not in _ANSWER_WORDS and not is_number_word(w)]
    return bool(_ANAPHOR.search(said)) or not named


def asked_how_many(last_reply: str) -> str | None:
    """The product whose quantity the reply asked for (after the limit or the stock)."""
    found = _HOW_MANY.search(last_reply)
    return found.group("name") if found else None


def answered_count(said: str, last_reply: str, limit: int) -> int | None:
    """How many packs the caller's answer to "how many would you like?" means."""
    if _QUESTION.search(said):
        return None  # "what's the most I can have?" asks; it orders nothing
    stated = stated_quantity(said)
    if stated is None and _MOST.search(said):
        stock = _IN_STOCK.search(last_reply)
        return min(limit, int(stock.group("n"))) if stock else limit
    bare = _BARE_COUNT.match(said.strip()) if stated is None else None
    if stated is None and bare is not None:
        word = bare.group("n").lower()
        stated = int(word) if word.isdigit() else NUMBER_WORDS[word]
    return stated if stated is not None and stated >= 1 else None


def place_picked(said: str, listed: int) -> int | str | None:
    """Which of `listed` options just read out the caller picks by its place ("the first
    one", "number two", "the last one") or its price ("the cheaper one"): an index,
    "cheapest" or "dearest", or None. Only a whole answer picks: "hang on a second",
    "the same one I had last time" and "is there a cheaper one" pick nothing."""
    text = " ".join(re.findall(r"[a-z0-9']+", said.lower()))
    match = _PICK.fullmatch(text)
    if match is None:
        return None
    if match["price"]:
        return "dearest" if match["price"] in _DEARER else "cheapest"
    index = _PLACES[match["place"]]
    index = index if index >= 0 else listed + index
    return index if 0 <= index < listed else None


def asks_or_declines(said: str) -> bool:
    """Whether words said after options were read out ask about them or turn them all
    down: "what's the difference between them?", "neither, thanks"."""
    return _ASKS_OR_DECLINES.search(said.lower()) is not None


_ASKS_OR_DECLINES = re.compile(
    r"\?|\b(?:what|what's|whats|which|why|how|difference|compare|neither|none|nothing)\b"
)
# The place said as an answer to "which one would you like?", and how callers frame it.
_PLACES = {"first": 0, "second": 1, "middle": 1, "third": 2, "last": -1}
_PLACES |= {"number one": 0, "number two": 1, "number three": 2}
_DEARER = frozenset(("dearer", "dearest", "pricier", "more expensive", "most expensive"))
_PICK = re.compile(
    r"(?:(?:yes|yeah|yep|ok|okay|um|uh|er|erm|so|right|oh|just|go on then|go on|go for|"
    r"go with|i'll go for|"
    r"i'll go with|i'll have|i'll take|i'd like|id like|can i have|can i get|could i have|"
    r"could i get|give me|let's go with|let me have|two of|three of|a couple of) )*"
    r"(?:the )?(?:(?P<place>first|second|middle|third|last|number one|number two|"
    r"number three)|(?P<price>cheaper|cheapest|less expensive|least expensive|dearer|"
    r"dearest|pricier|more expensive|most expensive))(?: one| option| pack| box| one then)?"
    r"(?: (?:please|thanks|thank you|then|for me|ta|cheers|you said|you mentioned))*"
)
