"""What the caller's words do to an order in progress: pure functions, no I/O.

The order is state that code owns (models/orders.py); the caller's words, and a
model's tool calls, may only propose moves on it. Measured on calls nobody here
scripted: "yes" after a read-back added the product again (2 packs became 4), and
"make that three" or "one more" were searched as products. Each move here names the
total the caller means, so nothing is added twice by mistake.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz.fuzz import partial_ratio

from agents.guards import NUMBER_WORDS, is_clear_yes
from agents.heard import READ_BACK
from agents.routing import DONE
from agents.variants import variant_words
from models.orders import LineView
from models.search import content_words
from models.sounds import is_english

READ_BACK_QUESTION = "Shall I place the order?"

_NUMBER = {k: v for k, v in NUMBER_WORDS.items() if v <= 20}
_ORDINAL = {"second": 2, "third": 3, "fourth": 4, "fifth": 5}
_COUNT = r"\d+|" + "|".join(k for k in _NUMBER if len(k) > 2)
_N = rf"(?P<n>{_COUNT})"
_UNITS = r"(?:box(?:es)?|packs?|packets?|bottles?|tubes?|ones?|of (?:those|them|these|it))"

# "make that three", "change it to 2", "actually three boxes", "three instead", "no, two".
_SET = re.compile(
    rf"\b(?:make (?:that|it|those|them|the \w+)(?: \w+)?|change (?:\w+ ){{1,3}}?to|"
    rf"actually(?: make (?:it|that))?|no,?|wait,?|sorry,?|just|only)\s+(?:it\s+)?{_N}\b"
    rf"|\b(?P<m>{_COUNT})\s+(?:{_UNITS}\s+)?instead\b",
    re.IGNORECASE,
)
# "one more", "two more boxes", "another one", "another box of the X".
_MORE = re.compile(rf"\b(?:{_N}\s+more|another(?P<another>\b))\b", re.IGNORECASE)
# "a second box", "a third pack": the total the caller means.
_NTH = re.compile(rf"\ba (?P<nth>{'|'.join(_ORDINAL)})\s+{_UNITS}", re.IGNORECASE)
# "take the ibuprofen off", "remove the gel", "no ibuprofen", "I don't want the X".
_REMOVE = re.compile(
    r"\b(?:take (?:the |that |those )?(?P<a>.+?) (?:off|out)\b|"
    r"(?:remove|drop|delete|scrap|lose) (?:the |that |those )?(?P<b>.+)|"
    r"(?:i )?(?:don'?t|do not) want (?:the |that |those )?(?P<c>.+?)(?: any ?more| after all)?$|"
    r"without (?:the )?(?P<d>.+))",
    re.IGNORECASE,
)
# "take one off", "one less", "two fewer": the line's total goes down.
_LESS = re.compile(rf"\btake {_N} (?:off|away|out)\b|\b(?P<m>{_COUNT}) (?:less|fewer)\b", re.I)
_DONE = re.compile(DONE, re.IGNORECASE)
_IT = re.compile(r"(?:it|that|them|those|this|that one)", re.IGNORECASE)
_STOP = frozenset(
    "the that those them these this take off out remove drop delete want don't dont please "
    "more another one two three four five box boxes pack packs make change instead actually "
    "just only with some any".split()
)
_FILLERS = re.compile(r"\b(?:um+|uh+|er+|erm|like|you know|please|thanks|thank you)\b[,.]?", re.I)


@dataclass(frozen=True, slots=True)
class Confirm:
    """A clear yes to the read-back the caller has just heard."""


@dataclass(frozen=True, slots=True)
class SetQuantity:
    product: str  # a line's product name
    quantity: int  # the line's new total


@dataclass(frozen=True, slots=True)
class Remove:
    product: str


@dataclass(frozen=True, slots=True)
class Swap:
    """One line out, another product in: "take the cetirizine off and give me loratadine"."""

    product: str  # the line's product name
    instead: str  # the caller's words for what replaces it


@dataclass(frozen=True, slots=True)
class ReadBack:
    """The caller asked to hear the order ("read that back", "what's the total")."""


Move = Confirm | SetQuantity | Remove | Swap | ReadBack

# "take the X off and give me Y", "instead of the X can I have Y", "swap the X for Y".
_WANT = (
    r"(?:give me|get me|add|put in|i'?ll (?:have|take)|i want|i'?d like|can i (?:have|get)|"
    r"could i (?:have|get)|make it|i'?d rather have)"
)
# After a removal only an explicit request is a replacement: "remove the paracetamol,
# it was for my kids" is a reason, not an order for the children's one.
_SWAP = re.compile(
    rf"\b(?:(?:take (?:the |that )?(?P<a>.+?) (?:off|out)|remove (?:the )?(?P<b>.+?))"
    rf"(?:,|\s)+(?:and |then |but )*(?:{_WANT} |(?=.*\binstead\b))"
    rf"|(?:instead of (?:the )?(?P<c>.+?)|swap (?:the )?(?P<d>.+?) for|"
    rf"change (?:the )?(?P<e>.+?) (?:to|for)|replace (?:the )?(?P<f>.+?) with)"
    rf"(?:,|\s)+(?:and |then |but )*(?:{_WANT} |have |use )?)"
    r"(?:the |a |an )?(?P<new>.+)",
    re.IGNORECASE,
)


def _asked_for(before: str) -> bool:
    """The words before a swap's new item end in a request for it ("give me")."""
    return re.search(rf"{_WANT}\s+(?:the |a |an )?$", before, re.IGNORECASE) is not None


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER[word.lower()]


def _clean(said: str) -> str:
    return re.sub(r"\s+", " ", _FILLERS.sub(" ", said)).strip(" ,.!?")


def described_by(lines: Sequence[LineView]) -> list[tuple[str, int]]:
    """Each line as read back, (its product, strength and form; its count): a yes that
    repeats them consents to nothing more (`consents`)."""
    return [(f"{line.name} {line.strength} {line.form}", line.quantity) for line in lines]


def named_line(said: str, lines: Sequence[LineView]) -> LineView | None:
    """The line whose product the caller named, by its name's words."""
    # Form words count here ("take the gel off"): they tell lines of one order apart.
    words = [w for w in re.findall(r"[a-z0-9']+", said.lower()) if w not in _STOP]
    best, best_score = None, (0.0, 0)
    for line in lines:
        name = line.name.lower()
        scores = [partial_ratio(w, name) for w in words if len(w) > 2]
        # Ties go to the line more of the words name: "Honey and Lemon Throat Lozenges"
        # is not the Sore Throat Spray, though "throat" names both.
        score = (max(scores, default=0.0), sum(s >= 85 for s in scores))
        if score > best_score:
            best, best_score = line, score
    return best if best_score[0] >= 85 else None


_NOT_NAMES = frozenset(
    "make change actually instead another more second third fourth fifth wait sorry only "
    "just off out remove drop sister brother mum mom dad wife husband son daughter friend "
    "partner kids child baby boyfriend girlfriend neighbour also well too".split()
)


def _names_something_else(text: str, lines: Sequence[LineView]) -> bool:
    names = [line.name.lower() for line in lines]
    return any(
        w not in _NOT_NAMES and not any(partial_ratio(w, name) >= 85 for name in names)
        for w in content_words(text)
    )


def _names_variant(words: str) -> bool:
    """A form, strength, pack or audience in the words; a bare count ("to two") is none."""
    hints = variant_words(words)
    sized = not hints.bare and (hints.strength_mg is not None or hints.pack_size is not None)
    return bool(hints.form or hints.strong or hints.pack or hints.audience or hints.plain or sized)


def _unknown_name(text: str) -> bool:
    """A word no dictionary holds, long enough to be a drug's name ("lamotrigine"), and
    not a line's (the caller already named `target` then)."""
    return any(len(w) >= 6 and not is_english(w) for w in content_words(text))


def _removal(text: str, lines: Sequence[LineView]) -> Remove | None:
    removal = _REMOVE.search(text)
    if removal is None:
        return None
    words = next(g for g in removal.groups() if g)
    line = named_line(words, lines) or (
        lines[-1] if re.fullmatch(r"(?:it|that|them|those)\b.*", words, re.I) else None
    )
    return Remove(line.name) if line is not None else None


def order_move(
    said: str,
    lines: Sequence[LineView],
    *,
    read_back_heard: bool,
    names_other: bool | None = None,
) -> Move | None:
    """The move the caller's words make on the pending order, or None for anything else.

    `read_back_heard`: the caller's words answer the read-back of the current revision.
    A yes to it can only confirm: it never adds, whatever product words it repeats, and
    `confirm_order` places the order only on consent (`consents`).
    `names_other`: the words name a catalogue product that is not in the order (the
    screen asks the catalogue); unset, any word unlike a line's name counts as one."""
    text = _clean(said)
    if read_back_heard and is_clear_yes(said):  # as said: `_clean` drops "please"
        # confirm_order decides whether it is consent: a yes with more in it ("sure,
        # I'll call back to decide") is asked for a plain yes or no.
        return Confirm()
    if not lines:
        return None
    if READ_BACK.search(text) or _DONE.search(text):
        # "remove the plasters and that's all": the removal, which then reads the order
        # back (`remove_from_order`). Read as the read-back alone, the plasters stayed.
        return _removal(_DONE.sub(" ", text), lines) or ReadBack()
    target = named_line(text, lines)
    other = _names_something_else(text, lines) if names_other is None else names_other
    swap = _SWAP.search(text)
    if swap:
        old = next(g for g in swap.groups()[:6] if g)
        line = named_line(old, lines) or (lines[-1] if _IT.fullmatch(old) else None)
        new = swap.group("new")
        if line is not None and named_line(new, lines) is None:
            if other:
                return Swap(line.name, new)
            if _names_variant(new):
                # "swap that for the bigger box": another variant of the line's product.
                return Swap(line.name, f"{new} {line.name}")
            if _asked_for(text[: swap.start("new")]) and any(
                not is_english(w) for w in content_words(new)
            ):
                # Asked for by a name no dictionary holds: a drug the shop does not
                # hold ("give me lamotrigine instead") was read as the removal alone,
                # and the request dropped without a word. The swap looks it up, leaves
                # the line when it finds nothing, and says so. Not a reason or an
                # errand ("I'll pay by card instead", "could I have the bag instead").
                return Swap(line.name, new)
    less = _LESS.search(text)
    if less:
        line = target or lines[-1]
        fewer = _count(less.group("n") or less.group("m"))
        if fewer >= line.quantity:
            return Remove(line.name)
        return SetQuantity(line.name, line.quantity - fewer)
    if _REMOVE.search(text):
        return _removal(text, lines)
    if target is None and (other or _unknown_name(text)):
        # "one more box of aspirin" adds aspirin; it changes no line. Nor does "make it
        # two lamotrigine", a drug the shop lacks: measured, the last line became two.
        return None
    line = target or lines[-1]
    nth = _NTH.search(text)
    if nth:
        return SetQuantity(line.name, _ORDINAL[nth.group("nth").lower()])
    more = _MORE.search(text)
    if more:
        extra = 1 if more.group("another") is not None else _count(more.group("n"))
        return SetQuantity(line.name, line.quantity + extra)
    # The last of several: "four's a bit silly, no, just make it two" means two.
    setting = next(reversed(list(_SET.finditer(text))), None)
    if setting:
        return SetQuantity(line.name, _count(setting.group("n") or setting.group("m")))
    return None
