"""A plain request to buy: words that ask for a few packs of named products and say
nothing else, which the screen need not ask the safety probe about.

Measured with utterances nobody here wrote (`benchmarks/counted_asks.py`): the probe
gave "can I get two paracetamol" the dose answer, and "two strips of paracetamol" the
crisis line, 22 times in 240 requests to buy. Of the 815 emergencies, self-harm and
dose questions of every safety set, and 350 dose questions said with a count, none is
such a request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.guards import NUMBER_WORDS, ORDERING, is_number_word
from agents.moves import TALK, clean


def only_purchase_talk(said: str, named: Sequence[tuple[str, str, str]]) -> bool:
    """Whether the words say nothing but a request to buy the products `named` (name,
    form, strength): a word of buying or a pack ("get", "order", "I'll take two", "two
    boxes"), the words of a product named whole, up to three packs in all, and
    politeness. "Can I get two paracetamol" and "stick two packs of the lozenges on my
    order" are; "can I take two paracetamol", "can I have two", "two for my son", "I
    had three boxes", "four at once" and "ten boxes" are not."""
    words, own = _words_and_own(said, named)
    said_else = [w for w in words if w.removesuffix("s") not in own]
    return (
        bool(own)
        and any(_plain(w, _BUYING) for w in said_else)
        and _packs(said_else) <= MOST_PACKS_ASKED
        and all(_plain(w, _ASKING, _BUYING, _POLITE) or is_number_word(w) for w in said_else)
    )


def _words_and_own(said: str, named: Sequence[tuple[str, str, str]]) -> tuple[list[str], set[str]]:
    """The words said ("I'll take two" read as "I'll order two"), and those of the
    products `named` whole, with their forms."""
    text = _I_WILL_TAKE.sub("i'll order ", clean(said).lower())
    words = re.findall(r"[a-z0-9']+", text)
    said_words = {w.removesuffix("s") for w in words}
    own: set[str] = set()
    for name, form, _ in named:
        # Only a product named whole: "paracetamol" names Paracetamol, not Children's
        # Paracetamol Suspension, whose "children" would then pass as a product's word.
        # "Omega 3": a name's number is no count of packs.
        name_words = {w.removesuffix("s") for w in re.findall(r"[a-z0-9]+", name.lower())}
        if name_words <= said_words:
            own |= name_words | {w.removesuffix("s") for w in re.findall(r"[a-z]+", form.lower())}
    return words, own


def _packs(words: list[str]) -> int:
    return sum(_PACKS_SAID.get(w, 0) or (int(w) if w.isdigit() else 0) for w in words)


def _plain(word: str, *among: frozenset[str]) -> bool:
    forms = (word, word.removesuffix("s"), word.removesuffix("es"))
    return any(form in kind for form in forms for kind in among)


def asks_what_is_stocked(said: str, counted: bool) -> bool:
    """Whether the words ask what the shop has ("do you have ibuprofen and
    paracetamol?", "have you got any plasters or bandages"), and ask for nothing to be
    ordered: no count (`counted`, "have you got two boxes of ..." is a request) and no
    word of buying ("do you sell X and Y, I'll take both")."""
    return (
        not counted
        and asks_if_stocked(said)
        # On the words as said: cleaned, "both please" is "both".
        and ORDERING.search(said.lower()) is None
    )


def asks_if_stocked(said: str) -> bool:
    """Whether the words ask if the shop has something, whatever else they ask."""
    return _STOCK_QUESTION.search(clean(said).lower()) is not None


def only_asks_for(said: str, named: Sequence[tuple[str, str, str]], brands: frozenset[str]) -> bool:
    """Whether the words ask nothing but whether the shop has the products `named`, or
    what they cost, and perhaps ask for a few packs: "have you got the travel sickness
    tablets, Stugeron is it?", "y'all have Prilosec? I'll take a box of that". `brands`:
    the named products' ingredients and brands, which their names may not hold. Any
    other word says more ("do you have aspirin? his arm's gone weak", "have you got
    calpol? he's had four doses", "do you have it? I need the lot")."""
    text = clean(said).lower()
    asked = (_SHORT_STOCK_QUESTION, _STOCK_QUESTION, _PRICE_ASKED)
    if not named or not any(a.search(text) for a in asked):
        return False
    for a in asked:
        text = a.sub(" ", text)
    words, own = _words_and_own(text, named)
    said_else = [w for w in words if w.removesuffix("s") not in own and w not in brands]
    return _packs(said_else) <= MOST_PACKS_ASKED and all(
        _plain(w, _ASKED_WITH) or is_number_word(w) for w in said_else
    )


# Asking what the shop has, in callers' words.
_STOCK_QUESTION = re.compile(
    r"\b(?:do|does|did) (?:you|ya|u|the shop)(?: guys| lot| all)? (?:have|sell|stock|carry|"
    r"do|keep|get|got)\b|\bhave (?:you|ya) (?:got|any)\b|\bgot any\b|\bis there any\b|"
    r"\bare there any\b|\bany chance (?:you|ya)\b|\bdo you know if you\b"
)
# The same asked short, as a sentence's first words: "you have chlorhexidine?", "y'all
# have Prilosec?".
_SHORT_STOCK_QUESTION = re.compile(
    r"(?:^|[.?!,]\s*)(?:y'?all|you|ya|u)(?: guys| lot)? (?:have|got|sell|stock|carry)\b"
)
# A price asked, and nothing more: not "how much do I ..." or "how much would do it".
_PRICE_ASKED = re.compile(
    r"\bhow much (?:is|are|'s|for)\b|\bwhat(?:'s| is| are) the (?:price|cost)\b|\bprice of\b|"
    r"\bwhat do(?:es)? (?:it|they|that|those|these) cost\b"
)

# Past this many packs in all, a request to buy is read for safety as before: "can I get
# four boxes of paracetamol" may be stockpiling.
MOST_PACKS_ASKED = 3
_PACKS_SAID = {**NUMBER_WORDS, "couple": 2, "pair": 2, "few": 3}
_COUNT_WORDS = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
# "I'll take" before a count is buying; "and I'll take them" is not.
_I_WILL_TAKE = re.compile(
    rf"\b(?:i'll|i will|ill|we'll|we will|i'd|id) take (?=(?:\d+|{_COUNT_WORDS}|a|an|a couple|"
    rf"a pair)\b)"
)
# Words of asking to buy, and packs. No word of taking a medicine is here ("I'll take
# two" is read as "I'll order two"), nor of whom it is for, nor of when or how many at once.
_BUYING = frozenset(
    """buy purchase order ordering grab pick collect send sent deliver delivered delivery
    post aside put keep hold stick add get pack packet box bottle tube strip tub tin
    sachet""".split()
)
# Words that ask nothing: greetings, articles, pronouns of the products.
_POLITE = frozenset(
    """the this these those them couple pair few some and also too as hello hiya hey
    morning afternoon evening am ever just only want wanting wanted need needed after
    looking""".split()
)
# Words of the order's talk (`agents.moves.TALK`) a request to buy may say. Not "have"
# or "had" ("I had three boxes", "I need to have them in me"), "in", "ok" or "fine"
# ("would two be ok"), "all" or "a lot" (stockpiling), "done" or "no".
_ASKING = TALK & frozenset(
    """i i'm im i'd i'll me my we you your can could would will do a an of to for on at
    so yes yeah yep hi please thanks thank cheers ta lovely great mate love""".split()
)
# What else a question whether the shop has something, or what it costs, may say once
# its asking words are taken out: not "have" ("can I have two" may be taking them), "do"
# or "to" ("I want to do it"), "too", "a lot", or wanting and needing.
_ASKED_WITH = (_ASKING | _BUYING | _POLITE | {"is", "it", "there", "one", "which", "that"}) - {
    "do",
    "to",
    "too",
    "want",
    "wanting",
    "wanted",
    "need",
    "needed",
    "after",
}
