"""What callers say to a bakery, read by code: pure functions and patterns.

These decide what must never be left to a model: an allergic reaction, a question
about allergens, a yes to an order, how many the caller asked for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from callswarm.agency import nothing_but_consent

_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a dozen": 12,
    "half a dozen": 6,
    "a couple of": 2,
    "a couple": 2,
}
_QUANTITY = re.compile(
    r"\b(?P<n>half a dozen|a dozen|a couple(?: of)?|one|two|three|four|five|six|seven|"
    r"eight|nine|ten|eleven|twelve|\d{1,3})\b"
)

# A reaction happening now: the emergency number, before anything else.
EMERGENCY = re.compile(
    r"\b(can'?t breathe|cannot breathe|not breathing|struggling to breathe|trouble breathing|"
    r"short of breath|wheez\w*|throat[\w\s']{0,12}(?:swell\w*|closing|tight)|"
    r"(?:lips?|tongue|face|mouth|eyes?)[\w\s']{0,12}(?:swell\w*|puff\w*|tingl\w*)|"
    r"swelling up|hives|anaphyla\w*|epi ?pen|allergic reaction|having a reaction|"
    r"gone into shock|collapsed|unconscious|passed out|turning blue)",
    re.I,
)
# A question about what is in the food: answered from the menu, never by a model. An
# allergen's word alone is not one: "two almond croissants" is an order.
ALLERGY = re.compile(
    r"\b(allerg\w*|intoleran\w*|coeliac|celiac|contains?|ingredients?|safe|free|"
    r"made with|vegan|dairy|lactose|gluten|traces?)\b",
    re.I,
)


def asks_about_allergens(text: str) -> bool:
    """ "Does the carrot cake have nuts?", "I'm coeliac", not "two almond croissants"."""
    if ALLERGY.search(text):
        return True
    named, _ = allergens_named(text)
    return bool(named) and ("?" in text or bool(re.search(r"\b(do|does|is|are|has)\b", text, re.I)))


# What a caller's word for an allergy means in the menu's allergen lists.
ALLERGENS = {
    "nut": ("almonds", "walnuts"),
    "nuts": ("almonds", "walnuts"),
    "almond": ("almonds",),
    "almonds": ("almonds",),
    "walnut": ("walnuts",),
    "walnuts": ("walnuts",),
    "peanut": ("peanuts",),
    "peanuts": ("peanuts",),
    "gluten": ("wheat", "rye"),
    "coeliac": ("wheat", "rye"),
    "celiac": ("wheat", "rye"),
    "wheat": ("wheat",),
    "dairy": ("milk",),
    "lactose": ("milk",),
    "milk": ("milk",),
    "egg": ("eggs",),
    "eggs": ("eggs",),
    "vegan": ("milk", "eggs"),
    "sesame": ("sesame",),
    "soy": ("soya",),
    "soya": ("soya",),
}


def allergens_named(text: str) -> tuple[tuple[str, ...], str]:
    """The allergens the caller's words name, and their words without them (to find
    the item they asked about: "sesame" must not find the Sesame Bagel)."""
    found: list[str] = []
    kept = []
    for word in re.findall(r"[\w'-]+", text.lower()):
        base = word.split("-")[0]
        if base in ALLERGENS:
            found.extend(a for a in ALLERGENS[base] if a not in found)
        elif not word.startswith(("allerg", "intoleran")):
            kept.append(word)
    return tuple(found), " ".join(kept)


PERSON = re.compile(
    r"\b((?:talk|speak|put me through) to (?:a |an |the )?(?:person|human|someone|somebody|staff|"
    r"manager|baker)|real person|an? (?:person|human)|operator|the manager)\b",
    re.I,
)
HOURS = re.compile(r"\b(open|opening|close|closing|hours|what time)\b", re.I)
WHERE = re.compile(r"\b(where are you|address|located|location|find you|directions)\b", re.I)
DONE = re.compile(
    r"\b(that'?s (?:all|it|everything)|that is (?:all|it|everything)|nothing (?:else|more)|"
    r"that will be all|that'?ll be all|i'?m done|"
    r"that'?s me done|no,? that'?s (?:fine|great|good))\b",
    re.I,
)
CANCEL = re.compile(
    r"\b(cancel|forget (?:the|my|it)|scrap (?:the|it|that)|don'?t want any)\b", re.I
)
REMOVE = re.compile(
    r"\b(?:remove|take off|take out|drop|leave out|no more)\s+(?:the\s+|my\s+)?(?P<item>.+)",
    re.I,
)
_YES = re.compile(
    r"\b(yes|yeah|yep|yup|sure|correct|that'?s right|go ahead|go for it|please do|"
    r"place it|sounds (?:good|great|lovely|fine|right)|perfect|ok(?:ay)?|absolutely|"
    r"definitely|aye|confirm)\b",
    re.I,
)
# A yes that also asks for something ("yes and add a croissant") is not the yes to the order.
_NOT_YES = re.compile(
    r"\b(no|not|don'?t|wait|hang on|actually|change|but|instead|and|add|another|more|"
    r"also|plus|remove|what|how|total)\b|\?",
    re.I,
)
_CHATTER = {
    "please",
    "thanks",
    "thank",
    "you",
    "could",
    "can",
    "get",
    "have",
    "like",
    "want",
    "would",
    "some",
    "the",
    "and",
    "also",
    "for",
    "me",
    "i",
    "i'd",
    "i'll",
    "take",
    "just",
    "of",
    "yes",
    "yeah",
    "hi",
    "hello",
    "hiya",
    "um",
    "uh",
    "oh",
    "well",
    "do",
    "any",
    "got",
    "today",
    "a",
    "an",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "dozen",
    "half",
    "couple",
    "no",
    "wait",
    "hang",
    "on",
    "actually",
    "hmm",
    "sorry",
    "okay",
    "ok",
    "right",
    "great",
    "good",
    "fine",
    "cheers",
    "morning",
    "afternoon",
    "there",
    "it",
    "is",
    "that",
    "what",
    "your",
    "my",
    "be",
    "to",
    "with",
    "pick",
    "up",
    "collect",
    "order",
    "buy",
}


_TIME = r"(?:years?|months?|weeks?|days?|hours?|minutes?|o'?clock|pm|am)"
# Numbers that say how old or when, never how many: "a cake for my son, he's turning
# six" ordered six cakes (measured, bench fresh set); "for 3 o'clock", "my 4 year old".
_NOT_A_COUNT = re.compile(
    r"\b(?:he|she|who|son|daughter)(?:'s| is| will be)\s+"
    r"(?:(?:nearly|almost|just|only|turning|going to be)\s+)?(?:\d{1,3}|[a-z]+)\b"
    r"(?!\s+(?:more\s+)?(?:of|loaves|cakes|buns|rolls|pieces|slices)\b)"
    r"|\b(?:turning|turned|turns|aged?|age of|at|for|by)\s+(?:\d{1,3}|[a-z]+)\s*"
    rf"(?={_TIME}\b|(?:th|st|nd|rd)\b|$|[,.!?])"
    r"|\b(?:turning|turned|turns|aged?)\s+(?:\d{1,3}|[a-z]+)\b"
    rf"|\b(?:\d{{1,3}}|[a-z]+)[\s-]+{_TIME}\b(?:[\s-]+old)?",
    re.I,
)


def quantities(text: str) -> list[int]:
    """The counts a caller said: "two sourdough loaves" → [2], "half a dozen" → [6]; an
    age or a time ("he's turning six", "for 3 o'clock") is not a count."""
    out = []
    for match in _QUANTITY.finditer(_NOT_A_COUNT.sub(" ", text.lower())):
        word = match.group("n")
        out.append(int(word) if word.isdigit() else _NUMBERS[word])
    return out


# Said between two counts, the second replaces the first: "three, no, two croissants".
CORRECTED = re.compile(
    r"\b(no|sorry|actually|i mean|wait|make (?:it|that)|or rather|change (?:it|that) to)\b", re.I
)


def stated_quantity(text: str) -> int | None:
    """The one count the caller said; of two, the second when they corrected themselves
    between them; None when they said none, or several without a correction."""
    found = quantities(text)
    if len(set(found)) == 1:
        return found[0]
    if len(found) == 2:
        counted = _NOT_A_COUNT.sub(" ", text.lower())
        spans = [m.span() for m in _QUANTITY.finditer(counted)]
        if CORRECTED.search(counted[spans[0][1] : spans[1][0]]):
            return found[1]
    return None


_PARTS = re.compile(r",|\band\b|\bplus\b|\balso\b|\bwith\b", re.I)


def parts(text: str) -> list[str]:
    """The caller's words split where a list would be: "a baguette and two croissants"."""
    return [p.strip() for p in _PARTS.split(text) if p.strip()]


def wants(text: str) -> bool:
    """Whether the words ask to buy, not to hear what there is: "what cakes do you have?"
    adds nothing."""
    asking = re.match(r"\W*(what|which|do you|have you|is there|are there|any)\b", text, re.I)
    return bool(WANTS.search(text) or quantities(text) or is_clear_yes(text)) and not asking


def is_clear_yes(text: str) -> bool:
    return bool(_YES.search(text)) and not _NOT_YES.search(text)


def consents(text: str, order: Sequence[tuple[str, int]]) -> bool:
    """A clear yes to placing the order, with nothing but politeness or the order's own
    items and counts beside it (`nothing_but_consent`): "okay, let me think about it
    first" is no consent, nor "yes, three croissants" to two."""
    return is_clear_yes(text) and nothing_but_consent(_YES.sub(" ", text), order)


def item_words(text: str) -> list[str]:
    """The words that could name something to eat, without the chatter around them."""
    return [w for w in re.findall(r"[a-z][a-z'-]+", text.lower()) if w not in _CHATTER]


_CURRENCIES = {"USD": ("dollar", "cent"), "EUR": ("euro", "cent"), "GBP": ("pound", "penny")}


def money(cents: int, currency: str = "USD") -> str:
    """550 → "5 dollars 50": digits a voice reads right, no symbol it may skip."""
    major, minor = divmod(cents, 100)
    unit, small = _CURRENCIES.get(currency, (currency, "cent"))
    if major == 0:
        return f"{minor} {small if minor == 1 else ('pence' if small == 'penny' else small + 's')}"
    words = f"{major} {unit if major == 1 else unit + 's'}"
    return f"{words} {minor:02d}" if minor else words


# A price or the total asked for: said by code from the menu or the order, never by a model.
PRICE = re.compile(r"\b(how much|price|prices|cost|costs|charge)\b", re.I)
TOTAL = re.compile(r"\b(total|altogether|all together|in all|come to)\b", re.I)
# A change to the count of something already in the order.
CORRECTION = re.compile(
    r"\b(make (?:that|it)|change (?:that|it) to|just (?:the )?one|only (?:the )?one|"
    r"actually,? (?:just )?(?:one|two|three|four|five|six)|instead of)\b",
    re.I,
)
WANTS = re.compile(
    r"\b(i'?ll (?:take|have)|i'?d like|can i (?:get|have)|could i (?:get|have)|add|"
    r"give me|i want|i need)\b|^\W*(?:and|also|plus|oh and)?\W*(?:a|an)\b|\b(?:and|also|plus) (?:a|an)\b",
    re.I,
)
_SAME_PLURAL = {"bread", "chocolat", "focaccia"}


def counted(quantity: int, name: str) -> str:
    """2, "Sourdough Loaf" → "2 Sourdough Loaves"."""
    if quantity == 1:
        return f"1 {name}"
    head, _, last = name.rpartition(" ")
    if last.lower() == "loaf":
        plural = "Loaves"
    elif last.lower() in _SAME_PLURAL:
        plural = last
    else:
        plural = last + "s"
    return f"{quantity} {head + ' ' if head else ''}{plural}"


def listed(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
