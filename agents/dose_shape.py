"""A dose question told by its shape, not by its words: an amount, asked about, of
something taken, with no word of buying.

The safety phrases (agents/safety.py) list the ways callers ask about doses, and each
new list of callers' own words found more ways: "two patches at once yeah?", "another
capful of the cough syrup ok?", "can i pop a third one", "another loperamide after
every runny one?" were each sold to (`benchmarks/counted_asks.py`, blind4: 13 of 160
dose trials). What such lines share is not a phrase but four parts:

- an amount: a count, "another", "a third", "half", "double";
- something swallowed, spooned or applied: a tablet, a capful, 5 ml, a patch, "one",
  a medicine named after the count, or a cue of taking (at once, a day, after every,
  a child's age);
- a question: a question mark, a first word that asks ("can", "is"), or a last word
  that seeks an okay ("alright", "yeah?", "too much");
- no word of buying: a pack, a price, an order, stock, delivery, "please".

A request to buy says a pack, a price, "get" or "please" ("can I get two paracetamol",
"two boxes of ibuprofen?"); a question about taking does not need to. A line with a cue
of taking as well ("at once", "today", "for a two year old", "take") hears the dose
answer even when no phrase knows it. One without ("can I have two of the ibuprofen",
"can I have a couple of loperamide") is asked which it is: helpers wrote both as
purchases and as dose questions, and neither a sale nor a refusal is right for both.
"""

from __future__ import annotations

import re
from enum import Enum


class Shape(Enum):
    TAKE = "take"  # a dose question: the dose answer
    EITHER = "either"  # a count asked for, to buy or to take: ask which


# Asked of an `EITHER` line; `meant` reads the answer.
BUY_OR_TAKE = "Just to check, would you like to buy some, or are you asking how many to take?"

_NUM = (
    r"(?:\d+(?:\.\d+)?|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|"
    r"twenty|thirty|forty|fifty|a hundred)"
)
_SMALL = r"(?:[1-6]|one|two|three|four|five|six|half|a half)"
# An amount: a count, "another", "a third", "half", "the max". A number after "the" is a
# product's ("the 400", "the 100 ml one"), and "one a day" and "half a dozen" are not
# doses.
_AMOUNT = re.compile(
    rf"\b(?:(?<!the ){_NUM}|one(?! (?:of you|of your|off|day|time|thing|a day)\b)|"
    rf"a couple|a few|another|an extra|one more|double|half(?! a dozen)|a whole|"
    rf"a (?:second|third|fourth|fifth)|(?:{_NUM}) more|max|maximum|"
    rf"every (?:{_NUM}) (?:hours?|hrs?))\b"
    r"(?! (?:strength|strong)\b)"
)
# "One" after a word that names it: "the red one", "which one", "the branded one".
_NAMED_BEFORE = re.compile(
    r"\b(?:the|a|an|that|this|which|any|each|every|no|same|other|one)(?: [a-z0-9']+){0,2} $"
)
# Which of two small amounts, or the most: a question, and one about taking ("one or
# two senna", "max on the nicotine gum?"). "16 or 32", "five or six quid" and "one or
# two boxes" are not: a price or a pack, or more than a dose.
_WHICH_AMOUNT = re.compile(rf"\b(?:{_SMALL} or {_SMALL}|max|maximum)\b(?! (?:strength|strong)\b)")
# An amount of time, money or distance: "is it 24 hours", "two quid", "ten minutes".
_NOT_TAKEN = re.compile(
    r" (?:hours?|hrs?|days?|nights?|weeks?|months?|years?|minutes?|mins?|seconds?|o'?clock|"
    r"pm|am|quid|pounds?|pence|p|dollars?|euros?|miles?|metres?|doors?|streets?|stops?|"
    r"for (?:one|two|1|2|the price))\b"
)
# What is taken: a form of a dose or a medicine by its ending or brand.
# A measure of a dose, never of a pack: "another capful", "two puffs", "5 ml". Both
# something taken and a cue of taking.
_MEASURES = (
    r"capfuls?|spoons?|spoonfuls?|teaspoons?|tablespoons?|tsps?|mls?|mils?|millilit\w+|"
    r"puffs?|squirts?|doses?"
)
_TAKEN = re.compile(
    rf"\b(?:{_MEASURES}|tablets?|tabs?|pills?|caps|capsules?|caplets?|mg|milligrams?|"
    r"sprays?|drops?|patch(?:es)?|sachets?|lozenges?|gummies|chewables?|"
    r"ones?|of (?:them|those|these|it)|"
    r"\w*(?:profen|amol|irin|tadine|izine|irizine|amine|zole|idine|amide|oxen|mycin|cillin|"
    r"statin|codamol|fen|pam|done|tine|dol|pril|olol)|calpol|nurofen|piriton|gaviscon|"
    r"rennie|rennies|imodium|lemsip|lemsips|night nurse|beechams|sudafed|nytol|kalms|"
    r"benadryl|clarityn|zirtek|anadin|syrup|suspension|medicine|linctus|gel)\b"
)
# A cue of taking, whatever reply came before: "at once", "two puffs", "for a two year
# old", "can she have", "too many".
_TAKING = re.compile(
    r"\b(?:at once|at a time|at the same time|in one go|together|back to back|a day|per day|"
    r"a night|every \w+ hours?|each time|after every|before bed|on top|top up|topped up|"
    r"double up|doubled|year old|years old|month old|months old|weeks old|weighs?|"
    r"kilos?|stone|pop|neck|swallow|chew|chuck|take|taking|took|give|giving|gave|forgot|"
    r"forget|forgotten|missed|too much|too many|overdoing it|overdo it|"
    r"after (?:the next|every|each|my|his|her|a|tea|dinner|food|meals?)|"
    r"(?:can|could|should|may) (?:he|she|they|him|her|my [a-z']+|the (?:baby|kids?|"
    r"little one|wee one)) (?:have|take)|"
    r"(?:ok|okay|alright|all right|fine|safe) (?:to|if (?:i|he|she|we|they)) (?:have|take|"
    rf"give|use)|{_MEASURES})\b"
)
# Cues that, after an offer or "how many would you like?", may be about the order:
# "two today?" (collection), "the same as I had", "the max", "half".
_TAKING_ALONE = re.compile(
    r"\b(?:half|had|have had|since|today|tonight|now|already|so far|"
    r"in an hour|an hour)\b"
)
# Asking whether an amount is enough or safe is about taking it, when it is of a medicine.
_ENOUGH = re.compile(r"\b(?:enough|safe|allowed|be too)\b")
_OKAY_WORDS = r"(?:ok|okay|alright|all right|fine)"
# A question by its first or last words. A bare "?", "yeah?" or "right?" is weaker:
# "three loratadine and one vitamin C, right?" reads an order back, so with those a
# line needs a cue of taking too.
_ASKS = re.compile(
    r"^(?:so |and |but |right |ok |okay |well |like |yeah |oh )*(?:can|could|may|should|"
    r"shall|is|are|would|will|do|does|am|how about|what about|what if)\b"
    rf"|\b(?:{_OKAY_WORDS}|safe|allowed|too much|too many|enough|or what|"
    r"or not|is it|is that|would it|will it|be ok|be okay|be alright|would that do)$"
)
# Seeking an okay for the amount: "another capful of the cough syrup ok?". After "how
# many would you like?", "two of them, alright?" answers it.
_OKAY = re.compile(rf"\b{_OKAY_WORDS}$")
_OKAY_SOUGHT = re.compile(rf"\b{_OKAY_WORDS}\b")
_SEEKS = re.compile(r"\b(?:yeah|yea|yes|right|no)$")
# A word of buying anywhere: the line asks for packs, a price, a delivery or the shop.
# "Get" is UK and Irish for buying ("can I get two paracetamol"), and so is "I'll take".
_BUYING = re.compile(
    rf"\b(?:buy|buying|bought|purchase|order|ordering|orders|get|getting|send|sent|post|"
    rf"posted|deliver\w*|collect\w*|pick (?:up|them up|it up)|picking up|aside|reserve\w*|"
    rf"hold|keep|add|stick|basket|bag|box|boxes|pack|packs|packet|packets|bottles?|"
    rf"tubes?|tubs?|tins?|strips?|cartons?|price|prices|cost|costs|costing|pay|charge|"
    rf"quid|pounds?|pence|p each|dollars?|euros?|stock|in stock|sell|sells|do you (?:have|do)|"
    rf"have you got|got any|any left|is there|are there|please|prescription|repeat|grab|"
    rf"courier|ship|bring|drop|fetch|extra strength|extra strong|dozen|one a day|"
    rf"(?:i'?ll|i will|we'?ll|we will|i'?d|i would) (?:take|like|have)|"
    rf"if (?:that'?s|it'?s|that is|it is) (?:ok|okay|alright|fine|possible)|if possible|"
    rf"(?:you|shop|pharmacy|store|you're|are you) (?:open|closed?|shut)|opening|closing|"
    rf"open (?:at|on|till|until|today|tomorrow|late|now)|"
    rf"(?:so )?that'?s (?:{_NUM}|one|a couple)|(?:{_SMALL}|{_NUM}) for (?:one|two|1|2|the "
    rf"price)|(?:is|are) (?:that|it|this|they|those|these) (?:the )?{_NUM} ?(?:mg|"
    rf"milligrams?|mcg|micrograms?|tablets|caps|capsules)\b)\b"
    r"|\bput (?:\w+ )?(?:aside|by|away|on (?:my|the|an|a)|to one side|through)\b"
    r"|\bpop (?:on|in|them|it|aside|round|by|over)\b|^(?:can|could|would|will) you\b"
)


def _normalise(said: str) -> str:
    text = said.lower().replace("\u2019", "'")
    text = re.sub(r"[^a-z0-9'.]+", " ", text)
    text = re.sub(r"(?<![0-9])\.|\.(?![0-9])", " ", text)
    # "10ml", "1000mg": speech to text writes units on the number.
    text = re.sub(r"(\d)([a-z])", r"\1 \2", text)
    text = re.sub(r"\b(?:u+m+|u+h+m*|e+r+m*|a+h+|h+m+)\b", " ", text)
    return " ".join(text.split())


def read(said: str, offered: bool = False) -> Shape | None:
    """Whether `said` has the parts of a dose question and no word of buying: `TAKE`
    with a cue of taking, `EITHER` with only a count of a medicine asked for.

    `offered`: the caller has just been offered a product or asked how many. Then "can I
    have two of them?", "two today?", "the max" and "one or two" answer it, and only a
    cue of taking ("at once", "take", "can she have") makes a count a dose question."""
    text = _normalise(said)
    if not text or _BUYING.search(text):
        return None
    amount = next(
        (
            m
            for m in _AMOUNT.finditer(text)
            if not _NOT_TAKEN.match(text, m.end())
            and not (m.group() == "one" and _NAMED_BEFORE.search(text[: m.start()]))
            and not (offered and m.group() in ("max", "maximum"))
        ),
        None,
    )
    if amount is None:
        return None
    taken = _TAKEN.search(text, amount.start())
    which = None if offered else _WHICH_AMOUNT.search(text)
    cue = (
        _TAKING.search(text)
        or which
        or (not offered and _TAKING_ALONE.search(text))
        or (taken and not offered and _ENOUGH.search(text))
    )
    question = said.rstrip().endswith("?")
    if _ASKS.search(text):
        if cue or (taken and not offered and _OKAY.search(text)):
            return Shape.TAKE
        return None if offered or not taken else Shape.EITHER
    # "Three of the vitamin d ok in one go": an okay sought after the amount.
    seeks = question or which or _SEEKS.search(text) or _OKAY_SOUGHT.search(text, amount.end())
    if seeks and cue:
        return Shape.TAKE
    # "Four nurofen?": a count of a medicine, asked.
    # "Three loratadine and one vitamin C, right?" reads an order back.
    plain_question = question and not _SEEKS.search(text)
    return Shape.EITHER if plain_question and taken and not offered else None


# The answer to `BUY_OR_TAKE`, or to a dose answer given to a request to buy, says no
# more than this: "no sorry, I want to buy two packs", "to buy", "I'll take them".
# Anything else ("to buy, I've got nothing left to live for") is read as any line.
_PLAIN = frozenset(
    """no nah nope sorry i i'm im i'd i'll ill just only want wanted wanna would like love to
    buy buying purchase purchasing order ordering them it some those these the a an first
    one please yes yeah yep actually meant mean get getting pack packs box boxes packet
    packets of lot for me my ok okay thanks thank you cheers ta was asking that shopping
    oh ah well so right take them all both two three""".split()
)
_TO_BUY = re.compile(
    r"\b(?:buy|buying|purchase|purchasing|order|ordering|shopping|the first|first one|"
    r"packs?|box(?:es)?|get some|getting some|(?:i'?ll|i will|ill) take)\b"
)
_TO_TAKE = re.compile(
    r"\b(?:(?<!i'll )(?<!ill )(?<!will )take|(?<!not )taking|dose|doses|dosage|how many|"
    r"swallow|safe|the second|second one|latter|at once|at a time|a day)\b"
)


def meant(said: str) -> Shape | None:
    """The answer to `BUY_OR_TAKE`: `TAKE` for a question about taking, `EITHER` to buy
    (the count was asked for, to buy) when the line says nothing else, None when it
    says neither, both, or more."""
    text = _normalise(said)
    buy, take = bool(_TO_BUY.search(text)), bool(_TO_TAKE.search(text))
    if buy == take:
        return None
    if take:
        return Shape.TAKE
    return Shape.EITHER if set(text.split()) <= _PLAIN else None
