"""A plain request to buy: words that ask for a few packs of named products and say
nothing else, which the screen need not ask the safety probe about.

Measured with utterances nobody here wrote (`benchmarks/counted_asks.py`): the probe
gave "can I get two paracetamol" the dose answer, and "two strips of paracetamol" the
crisis line, 22 times in 240 requests to buy. Over the 815 emergencies, self-harm and
dose questions of every safety set, and 190 dose questions said with a count, none is
such a request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.guards import NUMBER_WORDS, is_number_word
from agents.moves import TALK, clean


def only_purchase_talk(said: str, named: Sequence[tuple[str, str, str]]) -> bool:
    """Whether the words say nothing but a request to buy the products `named` (name,
    form, strength): a word of buying or a pack ("get", "order", "I'll take", "two
    boxes"), their own words, a few packs of them, and politeness. "Can I get two
    paracetamol" and "stick two packs of the lozenges on my order" are; "can I take two
    paracetamol", "can I have two of these", "two for my son", "four at once" and "ten
    boxes" are not."""
    text = _I_WILL_TAKE.sub("i'll order", clean(said).lower())
    words = re.findall(r"[a-z0-9']+", text)
    own: set[str] = set()
    for name, form, strength in named:
        own |= set(re.findall(r"[a-z]+", f"{name} {form}".lower()))
        own |= set(re.findall(r"\d+", strength))
    said_else = [w for w in words if w not in own]  # a strength ("500") is no count
    counts = [NUMBER_WORDS.get(w, int(w) if w.isdigit() else 0) for w in said_else]

    def plain(word: str, *among: frozenset[str]) -> bool:
        forms = (word, word.removesuffix("s"), word.removesuffix("es"))
        return any(form in kind for form in forms for kind in among)

    return (
        bool(own & set(words))
        and any(plain(w, _BUYING) for w in said_else)
        and max(counts, default=0) <= MOST_PACKS_ASKED
        and all(plain(w, _ASKING, _BUYING, _POLITE) or is_number_word(w) for w in said_else)
    )


# Past this many packs of a thing, a request to buy is read for safety as before: "can
# I get four boxes of paracetamol" may be stockpiling.
MOST_PACKS_ASKED = 3
_I_WILL_TAKE = re.compile(r"\b(?:i'll|i will|ill|we'll|we will|i'd|id) take\b")
# Words of asking to buy, and packs. No word of taking a medicine is here ("I'll take"
# is read as "I'll order"), nor of whom it is for, nor of when or how many at once.
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
# Of the order's talk (`agents.moves.TALK`), the words a request to buy may say: "all",
# "a lot" or "how much" of a medicine may be stockpiling, and "done" or "no" ask nothing.
_ASKING = TALK - frozenset(
    "all everything lot much how nothing done finished go ready no not really else total "
    "tell read back what's".split()
)
