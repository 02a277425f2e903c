"""Checks on what the caller said, so that code, not the model, decides the risky steps."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from rapidfuzz.fuzz import ratio

from callswarm.agency import nothing_but_consent
from models.search import content_words

_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "single": 1,
    "two": 2,
    "couple": 2,
    "pair": 2,
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
    "dozen": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "fifty": 50,
    "hundred": 100,
}
# Number words callers say, shared with the order's moves (agents/moves.py).
NUMBER_WORDS = _NUMBERS

_UNIT_NOUNS = r"(?:box(?:es)?|packs?|packets?|bottles?|tubes?|strips?|tubs?|tins?|sachets?|of|units?|tablets?|items?)"
_QUANTITY = re.compile(
    rf"\b(?P<half>half\s+a\s+dozen)\b|\b(?P<num>\d+|{'|'.join(_NUMBERS)})\s+(?:more\s+)?{_UNIT_NOUNS}\b"
    r"|\b(?P<bare>\d+)\b",
    re.IGNORECASE,
)

_YES = re.compile(
    r"\b(yes|yeah|yep|yup|ya|yah|yeh|yea|ja|sure|correct|confirm(?:ed)?|go ahead|please do|do it|place it|"
    r"that'?s right|sounds (?:good|great|lovely|fine|perfect|right)|ok(?:ay)?|absolutely|"
    r"definitely|right|aye|go for it)\b",
    re.IGNORECASE,
)
_NOT_YES = re.compile(
    r"\b(no|nope|not|don'?t|wait|hold on|cancel|change|instead|actually|but|remove|add|"
    r"another|more|less|wrong|stop|never ?mind|hang on)\b|\?",
    re.IGNORECASE,
)

# Asking for something to be ordered, beside a question about it ("do you sell X and Y,
# I'll take both"); not "do you have both in stock".
ORDERING = re.compile(
    r"\b(?:i'll|i will|ill|we'll|i'd|id|i would|we'd) (?:take|have|like|get|grab)\b|"
    r"\b(?:can|could|may) (?:i|we) (?:get|have|order|buy|grab)\b|\b(?:order|add|put|stick|"
    r"buy|purchase|reserve|put aside|set aside)\b|\bi (?:want|need)\b(?! to)|\bone of each\b|"
    r"\bboth (?:please|of them please|then)\b|\b(?:give me|gimme|gie'?s)\b(?! a (?:sec|second|minute|moment|mo|min)\b)",
    re.IGNORECASE,
)


def is_number_word(word: str) -> bool:
    return word.lower() in _NUMBERS or word.isdigit()


# Numbers that name a variant, not how many: "the 32 pack", "a pack of 32", "the 400s",
# "the 200", "400 mg". Measured: "paracetamol, the 32 pack, three boxes" ordered 32.
_VARIANT_NUMBER = re.compile(
    r"\b(?:the\s+)?\d+\s*(?:-\s*)?(?:pack|packet|tablets? pack|count)\b(?!s)"
    r"|\bpacks?\s+of\s+\d+\b|\bthe\s+\d+s?\b(?!\s+(?:more\s+)?(?:box|boxes|packs|packets|bottles|tubes|of\b))"
    r"|\b\d+\s*(?:mg|milligrams?|ml|millilitres?|milliliters?|mcg|micrograms?|percent|%|spf)\b"
    r"|\bspf\s*\d+\b|\bfactor\s+\d+\b|\b(?:vitamin\s+)?[bcd]\s*\d+\b|\bomega\s*\d\b"
    # "the ibuprofen 200", "the 30 tablet one": a strength or a pack's size after a
    # name. Measured before, both were asked how many of up to ten packs. Not after a
    # word of asking: "I'll take 120 paracetamol" is still refused as 120 packs.
    r"|\b(?!(?:take|get|order|buy|want|need|have|give|me|and|of|like|please|just|about)\b)"
    rf"[a-z]+\s+\d{{3,}}\b(?!\s+(?:more\s+)?{_UNIT_NOUNS})"
    rf"|\bthe\s+(?:\d+|{'|'.join(_NUMBERS)})\s+(?:tablets?|capsules?|caps|count)\s+"
    r"(?:one|ones|pack|packs|box|tub|bottle)\b",
    re.IGNORECASE,
)


_COUNTABLE = "|".join(w for w in _NUMBERS if w not in ("a", "an", "single", "couple", "pair"))
_TIME = r"(?:years?|yrs?|months?|weeks?|days?|nights?|hours?|hrs?|minutes?|mins?)"
# Numbers that say how old, how long or how often, never how many: "she's 4", "my 6
# year old", "he's turning six", "for 3 days", "every 4 hours", "twice... 3 times a
# day". Measured: "calpol for my daughter, she's 4" added 4 packs.
_NOT_A_COUNT = re.compile(
    rf"\b(?:he|she|they|who|son|daughter|baby|kid|child)(?:'s|'re| is| are| was)\s+"
    rf"(?:(?:nearly|almost|just|only|about|turning|now|going on)\s+)?(?:\d+|{_COUNTABLE})\b"
    rf"(?!\s+(?:more\s+)?{_UNIT_NOUNS}\b)"
    rf"|\b(?:turning|turned|turns|aged?|age of)\s+(?:\d+|{_COUNTABLE})\b"
    rf"|\b(?:\d+|{_COUNTABLE})(?:\s+and\s+a\s+half)?[\s-]+{_TIME}\b(?:[\s-]+old)?"
    rf"|\b(?:\d+|{_COUNTABLE})\s+times\s+(?:a|per|each|every)\b",
    re.IGNORECASE,
)


def _counts_only(text: str) -> str:
    return _NOT_A_COUNT.sub(" ", _VARIANT_NUMBER.sub(" ", text))


def spoken_quantities(text: str) -> list[int]:
    """Quantities the caller stated: "two boxes" → [2], "half a dozen" → [6]; numbers
    that name a strength or a pack size ("the 32 pack", "the 400s"), an age or a time
    ("she's 4", "for 3 days") are not counted."""
    found = []
    text = _counts_only(text)
    for match in _QUANTITY.finditer(text):
        if match.group("half"):
            found.append(6)
        elif match.group("num"):
            word = match.group("num").lower()
            found.append(int(word) if word.isdigit() else _NUMBERS[word])
        elif match.group("bare"):
            found.append(int(match.group("bare")))
    return found


# Words that make a count before a name a dose: "I take two paracetamol a day".
DOSE_TALK = re.compile(
    r"\b(?:a day|per day|daily|every|at a time|at once|times|hours?|tonight|in the morning|"
    r"take|took|taken|taking|swallowed|had)\b",
    re.IGNORECASE,
)


def count_before_name(text: str, names: Callable[[str], bool]) -> int | None:
    """The count said right before a word that `names` the product ("two paracetamol
    please", "three of the ibuprofen"): measured, it was dropped for one pack, and a
    model's right count was reset to one as never said. None in dose talk, or when two
    counts are said."""
    if DOSE_TALK.search(text):
        return None
    words = re.findall(r"[a-z0-9']+", text.lower())
    found = set()
    for i, word in enumerate(words):
        if word in ("a", "an") or not is_number_word(word):
            continue
        after = [w for w in words[i + 1 : i + 4] if w not in ("more", "of", "the", "those")]
        if after and names(after[0]):
            found.add(int(word) if word.isdigit() else _NUMBERS[word])
    return found.pop() if len(found) == 1 else None


# A self-correction between two quantities: "three boxes, no sorry, two boxes".
_PACK_UNITS = r"\b(?:box(?:es)?|packs?|packets?|bottles?|tubes?)\b"
_CORRECTED = re.compile(
    r"\b(?:no|sorry|actually|i mean|wait|make (?:it|that)|or rather|scratch that|hang on)\b",
    re.IGNORECASE,
)


def stated_quantity(text: str) -> int | None:
    """The one quantity the caller stated, or None when they stated none or several;
    of several, the last when the caller corrected themselves between them."""
    found = spoken_quantities(text)
    if len(set(found)) == 1:
        return found[0]
    if len(found) == 2:
        cleaned = _counts_only(text)
        matches = list(_QUANTITY.finditer(cleaned))
        between = cleaned[matches[0].end() : matches[1].start()] if len(matches) == 2 else ""
        unit = len(matches) == 2 and re.search(_PACK_UNITS, matches[1].group(0), re.I)
        if unit and _CORRECTED.search(" ".join(between.split()[-3:])):
            return found[1]
    return None


def is_clear_yes(text: str) -> bool:
    """A yes with no hedge, negation, question or change of mind in it."""
    return bool(_YES.search(text)) and not _NOT_YES.search(text)


def consents(text: str, order: Sequence[tuple[str, int]] = ()) -> bool:
    """A clear yes to placing the order and nothing more (`nothing_but_consent`):
    `order`'s lines (description, quantity) may be said with the yes, as read back."""
    return is_clear_yes(text) and nothing_but_consent(_YES.sub(" ", text), order)


def grounded(argument: str, *said: str) -> bool:
    """Whether a model's argument comes from words that were really said.

    Small models fill arguments from their prompt's examples ("ibuprofen" to a
    caller who said hello). A word counts when it is close to a word said.
    """
    heard = [w for text in said for w in content_words(text)]
    return any(ratio(word, other) >= 80 for word in content_words(argument) for other in heard)


PERSON_WORDS = re.compile(
    r"\b(operator|human|person|someone|somebody|staff|pharmacist|manager|agent|transfer)\b",
    re.IGNORECASE,
)
ELSEWHERE_WORDS = re.compile(
    r"\b(open|opening|close|closing|hours|address|where|located|location|reception|"
    r"something else|other question)\b",
    re.IGNORECASE,
)
