"""One caller sentence, split into the items it asks for.

"One of the paracetamol and one of the loratadine" is two items, one pack each;
"honey and lemon lozenges" is one item, because a product is called that. Pure
functions: the catalogue's names come in as a list. Measured before: a sentence
with two products became one order line, and the second product was dropped
without a word.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agents.guards import NUMBER_WORDS
from agents.variants import is_variant_word
from models.search import content_words


@dataclass(frozen=True, slots=True)
class Wanted:
    words: str  # the words naming this item ("the ibuprofen gel")
    quantity: int | None  # packs stated for this item, None if not stated


# The counts of guards.NUMBER_WORDS an item can start with (at most a dozen packs are
# ever asked for), and "another" for "and another of the gel".
_NUMBERS = {**{k: v for k, v in NUMBER_WORDS.items() if v <= 12}, "another": 1}
_NUMBER = rf"(?:\d+|{'|'.join(_NUMBERS)})"
_CONTAINER = r"(?:box(?:es)?|packs?|packets?|bottles?|tubes?|tubs?|jars?|cartons?|lots?|units?)"
# A quantity at the start of an item: "two boxes of", "a couple of", "one of the", "3 x".
_QUANTITY = re.compile(
    rf"^(?:(?P<half>half a dozen)|(?:a\s+)?(?P<n>{_NUMBER}))"
    rf"(?:\s+(?:more|of|{_CONTAINER}))*(?:\s+x)?\b\s*",
)
# A count inside an item; "a", "an" and "one" are left out ("a bit poorly", "the gel one").
_INSIDE = re.compile(
    rf"\b(?P<n>\d+|{'|'.join(w for w in _NUMBERS if w not in ('a', 'an', 'one', 'another'))})"
    rf"\b(?:\s+(?:more|of|{_CONTAINER}))*\s*"
)
_FILLERS = re.compile(r"\b(?:um+|uh+|erm+|er|hmm+|ah+|oh)\b")
# What callers say around the items, not part of any name.
_LEAD = re.compile(
    r"^(?:(?:and|also|then|plus|so|okay|ok|right|yes|yeah|just|oh)\s+)*"
    r"(?:(?:can|could|may) (?:i|we|you) (?:get|have|order|buy|add|grab|please have|also get)"
    r"|i(?:'d| would) like|i(?:'ll| will) (?:have|take|get)|i (?:want|need)|i'm after"
    r"|give me|get me|let me (?:get|have)|do you have|have you got|add|put in)?\s*"
    r"(?:some|any|also|please)?\s*"
)
_NOT = re.compile(r"(?:but )?(?:not|no|rather than|instead of|apart from)\b")
# What follows inside an item is what the caller does not want: "aspirin, the normal
# ones not the low dose" ordered the low-dose aspirin beside the normal.
_NOT_INSIDE = re.compile(r"\s*\b(?:but )?(?:not|rather than|instead of|apart from)\b.*$")
# An item that only describes: "the 200s", "the factor 50", "those ones".
_DESCRIBES = re.compile(r"^(?:the|those|that|these)\b")
_TAIL = re.compile(r"\s*\b(?:please|thanks|thank you|as well|too|for me|then)\s*$")
# Between items: "and", "also", "plus", "as well as", "and then", commas, full stops.
_BETWEEN = re.compile(
    r"\s*(?:[,;.!?]+\s*(?:and\s+(?:then\s+|also\s+)?)?|\band then\b|\band also\b|\bas well as\b"
    r"|\balong with\b|\bplus\b|\balso\b|\band\b)\s*"
)
_COMMA = re.compile(r"\s*[,;]\s*")
_EACH = re.compile(rf"\b(?P<n>{_NUMBER}) of each\b|\beach\b")
_KEEP = "\x00"  # stands for an "and" inside a product's name while the sentence is split


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word]


def _protect(text: str, names: Sequence[str]) -> str:
    """Hide the "and" of a name said ("honey and lemon", "cold and flu"), and of a
    number ("two hundred and fifty"), so the sentence is not split there."""
    for name in names:
        words = re.findall(r"[a-z0-9']+", name.lower())
        for i, word in enumerate(words[1:-1], start=1):
            if word == "and":
                pair = rf"\b{re.escape(words[i - 1])}\s+and\s+{re.escape(words[i + 1])}\b"
                text = re.sub(pair, lambda m: m.group(0).replace("and", _KEEP), text)
    return re.sub(r"\b(hundred|thousand)\s+and\b", rf"\1 {_KEEP}", text)


def _item(chunk: str) -> Wanted | None:
    chunk = _TAIL.sub("", _LEAD.sub("", chunk.strip(), count=1)).strip()
    if _NOT.match(chunk):
        return None  # "the rub on kind, not tablets": what the caller does not want
    chunk = _NOT_INSIDE.sub("", chunk)
    quantity = None
    match = _QUANTITY.match(chunk)
    # "32 paracetamol" names the pack of 32 (at most 12 packs are ever asked for), and
    # "one" alone is "the gel one", not a quantity.
    if match and (match.group("half") or _says_quantity(match, chunk)):
        quantity = 6 if match.group("half") else _number(match.group("n"))
        chunk = chunk[match.end() :].strip()
    elif match is None:
        # "we're off on holiday so two sun creams": the count comes after the chatter.
        inside = _INSIDE.search(chunk)
        if inside and _says_quantity(inside, chunk[inside.start() :]):
            quantity = _number(inside.group("n"))
            chunk = " ".join(f"{chunk[: inside.start()]} {chunk[inside.end() :]}".split())
    chunk = _LEAD.sub("", chunk, count=1).strip()
    if not chunk and quantity is None:
        return None
    return Wanted(chunk.replace(_KEEP, "and"), quantity)


def _says_quantity(match: re.Match[str], chunk: str) -> bool:
    word = match.group("n")
    rest = chunk[match.end() :].strip()
    if word.isdigit() and int(word) > 12 and not re.search(_CONTAINER, match.group(0)):
        return False
    if re.match(r"(?:mg|milligrams?|ml|percent|hundred|thousand)\b", rest):
        return False  # "500 mg paracetamol" is a strength
    if word in ("a", "an", "one") and (not rest or rest.split()[0] in ("one", "ones")):
        return False
    return True


def _names_product(item: Wanted) -> bool:
    return bool(content_words(item.words))


def split_items(
    said: str, names: Sequence[str] = (), known: frozenset[str] = frozenset()
) -> list[Wanted]:
    """The items `said` asks for, in order; `names` are the catalogue's product names,
    never split ("cold and flu relief" is one item), and `known` every word it names
    products by (`known_words`). A sentence of one item is one."""
    text = _FILLERS.sub(" ", said.lower().replace("\u2019", "'"))
    text = " ".join(_protect(" ".join(text.split()), names).split())
    each = _EACH.search(text)
    known = known or known_words(names)
    items: list[Wanted] = []
    joined = _EACH.sub(" ", text) if each else text
    parts = _BETWEEN.split(joined)
    # Each chunk, and whether a comma alone came before it: "aspirin, the normal ones" is
    # one item; "paracetamol and the piriton" two.
    commas = [False] + [_COMMA.fullmatch(m.group(0)) is not None for m in _BETWEEN.finditer(joined)]
    for chunk, after_comma in zip(parts, commas, strict=True):
        item = _item(chunk)
        if item is None:
            continue
        if (
            items
            and after_comma
            and item.quantity is None
            and _describes_the_last(item.words, known)
        ):
            # "ibuprofen, the 200s", "sun cream, the factor 50, two bottles": said of the
            # item before, not an item of its own ("I couldn't find the 200s").
            items[-1] = Wanted(f"{items[-1].words} {item.words}", items[-1].quantity)
            continue
        if not item.words:
            # "paracetamol, two boxes": a quantity alone belongs to the item before it.
            if items and items[-1].quantity is None:
                items[-1] = Wanted(items[-1].words, item.quantity)
            continue
        if not _names_product(item) and not _is_variant(item.words):
            continue  # "that's all", "yes please": no item
        if not _names_product(item) and items:
            # "the strong ibuprofen and one of the gel": the gel of the same family.
            family = " ".join(w for w in content_words(items[-1].words) if not is_variant_word(w))
            item = Wanted(f"{item.words} {family}".strip(), item.quantity)
        items.append(item)
    if each and items:
        n = each.group("n")
        items = [Wanted(i.words, i.quantity or (_number(n) if n else None)) for i in items]
    return items


def known_words(texts: Sequence[str]) -> frozenset[str]:
    """The words of `texts` (names, ingredients, keywords) as `split_items` reads them."""
    return frozenset(w for text in texts for w in re.findall(r"[a-z0-9']+", text.lower()))


def _describes_the_last(words: str, known: frozenset[str]) -> bool:
    """Words that point ("the ...") and name nothing the catalogue names a product by:
    "the 200s", "the normal ones". Not "the ibuprofen gel", "the piriton", nor "the
    aloe vera one"."""
    said = content_words(words)
    return bool(_DESCRIBES.match(words)) and bool(said) and not known.intersection(said)


def _is_variant(words: str) -> bool:
    return any(is_variant_word(w) for w in re.findall(r"[a-z0-9']+", words))
