"""What the caller's words do to an order in progress: pure functions, no I/O.

Past 400 lines because the ways callers name a line (its name, form, strength and
keywords) and the moves that use them read only side by side.

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

from agents.guards import DOSE_TALK, NUMBER_WORDS, is_clear_yes, is_number_word
from agents.heard import ADDED, READ_BACK
from agents.routing import DONE_SAID_SO as DONE
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

# "make that three", "change it to 2", "actually three boxes", "three instead", "no, two",
# "make it just the one", "two tubes of the gel instead", "I meant two packs not three".
_SET = re.compile(
    rf"\b(?:make (?:that|it|those|them|the \w+)(?: \w+)?|"
    rf"(?:change|increase|raise|bump|bring|put) (?:\w+ ){{1,3}}?to|"
    rf"actually(?: make (?:it|that))?|no,?|wait,?|sorry,?|just|only|i meant|i said|"
    rf"better say)"
    rf"\s+(?:it\s+)?(?:just |only )?(?:the )?{_N}\b"
    rf"|\b(?P<m>{_COUNT})\s+(?:{_UNITS}\s+)?(?:of (?:the |those )?\w+(?: \w+)?\s+)?instead\b",
    re.IGNORECASE,
)
# "one more", "two more boxes", "another one", "another two packs", "an extra tube".
_MORE = re.compile(
    rf"\b(?:{_N}\s+more|another(?:\s+(?P<k>{_COUNT})\b(?!\s+more))?(?P<another>\b)|"
    rf"an(?P<extra>) extra)\b",
    re.IGNORECASE,
)
# "double the gel", "could you double it": twice the line.
_DOUBLE = re.compile(r"\bdouble (?:up )?(?:the |that|it|those|them)", re.IGNORECASE)
# "a second box", "a third pack": the total the caller means.
_NTH = re.compile(rf"\ba (?P<nth>{'|'.join(_ORDINAL)})\s+{_UNITS}", re.IGNORECASE)
# "take the ibuprofen off", "remove the gel", "no ibuprofen", "I don't want the X".
_REMOVE = re.compile(
    r"\b(?:take (?:the |that |those )?(?P<a>.+?) (?:off|out)\b|"
    r"(?:remove|drop|delete|scrap|lose) (?:the |that |those )?(?P<b>.+)|"
    r"(?:i )?(?:don'?t|do not) want (?:the |that |those )?(?P<c>.+?)"
    r"(?: any ?more| after all)?$|"
    r"without (?:the )?(?P<d>.+))",
    re.IGNORECASE,
)
# Removals that count only with a line named in the clause: "forget it", "cancel that"
# and "skip it" are said of the whole order, or of nothing, as often as of a line.
_REMOVE_NAMED = re.compile(
    r"\b(?:get rid of|scratch|skip|(?<!don't )(?<!dont )(?<!do not )forget(?: about)?|nix|"
    r"ditch|cancel|leave out|take (?:off|out)|(?:won'?t|will not|i'?ll not) bother with|"
    r"(?:don'?t|do not) need(?! (?:a|an|to|any|anything|another|more)\b))"
    # Not "get rid of my headache": what the caller has, not a line.
    r" (?!my |your |his |her |their )(?:the |that |those )?"
    r"(?P<x>[^,.;?!]+?)(?=$|[,.;?!]| then| and| actually| "
    r"after all| any ?more| i | please| thanks| cheers| cos| because)"
    r"|\bleave (?:the |that |those )?(?P<y>[^,.;?!]+?) out\b"
    # "no gel then", "no paracetamol, and that's it": two words at most, then a pause.
    r"|(?:^|[,.;]\s*|\bthen |\band )no (?:more )?(?:the )?(?P<z>\w+(?: \w+)?)"
    r"(?=$|[,.;?!]| then| and| actually| thanks| please)",
    re.IGNORECASE,
)
# "take one off", "take one of the bottles off", "take one paracetamol off", "one less",
# "two fewer": the line's total goes down.
_LESS = re.compile(
    rf"\btake {_N}(?: (?:of )?(?:the |those |them )?[\w ]{{0,30}}?)? (?:off|away|out)\b"
    rf"|\b(?P<m>{_COUNT}) (?:less|fewer)\b",
    re.I,
)
# "drop it down to one bottle", "bring the tablets up to five": a total, never a removal.
_TO_COUNT = re.compile(
    rf"\b(?:down|up) to (?:just |only )?(?:the )?{_N}\b"
    r"(?!\s+(?:weeks?|days?|times?|hours?|minutes?|months?|years?|a day|per|mg|milligrams?)\b)",
    re.I,
)
# Words in a removal that make it one of fewer packs: "cancel one of the paracetamol",
# "I don't need so many paracetamol".
_COUNTED = re.compile(
    rf"^(?:{_COUNT}|so many|all)\b|\b(?:{_COUNT}) (?:of|more|less|box(?:es)?|packs?|bottles?|tubes?)\b",
    re.I,
)
_DONE = re.compile(DONE, re.IGNORECASE)
_IT = re.compile(r"(?:it|that|them|those|this|that one)", re.IGNORECASE)
_STOP = frozenset(
    "the that those them these this take off out remove drop delete want don't dont please "
    "more another one two three four five box boxes pack packs make change instead actually "
    "just only with some any and then but also too ones".split()
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

# A new product for a line the caller does not name: "can I have the herbal one
# instead", "please change to the chesty one", "make it the bigger pack instead, the
# thirty twos". Measured before: each was added beside the line it was meant to replace.
_INSTEAD = re.compile(
    r"\b(?:change|switch|swap)(?: it| that| them| this| over)? (?:to|for) (?:the |a |an )?"
    r"(?P<to>[^,.;!?]+)"
    r"|(?:^|[,.;!?]\s*)(?P<lead>[^,.;!?]*?)\binstead\b(?! of)",
    re.IGNORECASE,
)
# How a request opens, before the product it names.
_OPENING = re.compile(
    rf"^(?:\W*(?:actually|no|sorry|oh|hmm+|um+|erm|well|right|ok|okay|you know what|"
    rf"on second thoughts?|wait|and|so|but|please|what|what about|how about)\b)*\W*(?:{_WANT}|do you have|have you got|"
    rf"i'?ll go for|let'?s (?:have|do)|(?:can|could) you (?:do|give me))?\s*(?:the |a |an )?",
    re.IGNORECASE,
)
_POINTING = re.compile(r"^(?:it|that|this|them|those|that one|this one)$", re.IGNORECASE)
_NOT_A_REQUEST = re.compile(
    r"\?|^\W*(?:(?:and|so|but|um+|erm|oh|well|ok|okay)\W+)?"
    r"(?:should|is|are|would|does|do|can (?:she|he|they|it|you)|"
    r"could (?:she|he|they|it|you)|will)\b|\b(?:from|at) (?:the )?(?:supermarket|shop|boots|"
    r"chemist|pharmacy|another)",
    re.IGNORECASE,
)


def _instead(text: str, lines: Sequence[LineView], other: bool) -> Swap | None:
    """A swap whose line is implied: the one line of the order, or the line whose
    product the new words are a variant of. None when several lines could be meant."""
    found = _INSTEAD.search(text)
    if found is None or _NOT_A_REQUEST.search(text) or DOSE_TALK.search(text):
        # "can I take ibuprofen instead?", "should she have the liquid instead": asked,
        # not ordered; "I'll get it from the supermarket instead" is no swap.
        return None
    lead = found.group("lead")
    if lead is not None and not re.search(_WANT, lead, re.IGNORECASE):
        return None
    new = (found.group("to") or _OPENING.sub("", lead or "", count=1)).strip()
    if not new or _POINTING.fullmatch(new):
        # "do you have the allegra one instead, the fexofenadine, swap it for that": the
        # sentence names what "that" is.
        new = _INSTEAD.sub(" ", text).strip(" ,.")
    if not new or named_line(new, lines) is not None:
        return None
    if other and len(lines) == 1:
        return Swap(lines[0].name, new)
    if _names_variant(new) and len(lines) == 1:
        return Swap(lines[0].name, f"{new} {lines[0].name}")
    return None


# A count of what was just added, and nothing else: "three of those", "two of them please".
_OF_THOSE = re.compile(
    rf"^\W*(?:(?:actually|make (?:it|that)|oh|and|um+|erm)\W+)*(?:just |only )?{_N}"
    r" (?:of (?:those|them|these|that|it)|(?:packs|boxes|bottles|tubes) of (?:those|them|these|that))"
    r"(?:\W+(?:please|then|thanks|ta|actually))*\W*$",
    re.IGNORECASE,
)


def count_of_those(said: str) -> int | None:
    found = _OF_THOSE.match(clean(said))
    return _count(found.group("n")) if found else None


_ONE_ADDED = re.compile(rf"^{re.escape(ADDED)} (?P<what>[^,.;]+), at ")


def just_added(last_reply: str, lines: Sequence[LineView]) -> LineView | None:
    """The line a reply of one add named ("I've added 1 pack of X, at ..."); None after
    several were added, or anything else."""
    found = _ONE_ADDED.match(last_reply)
    named = [line for line in lines if found and line.name in found.group("what")]
    return max(named, key=lambda line: len(line.name)) if named else None


def _asked_for(before: str) -> bool:
    """The words before a swap's new item end in a request for it ("give me")."""
    return re.search(rf"{_WANT}\s+(?:the |a |an )?$", before, re.IGNORECASE) is not None


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER[word.lower()]


def clean(said: str) -> str:
    """The words said, without fillers ("um", "like", "please") or edge punctuation."""
    return re.sub(r"\s+", " ", _FILLERS.sub(" ", said)).strip(" ,.!?")


def described_by(lines: Sequence[LineView]) -> list[tuple[str, int]]:
    """Each line as read back, (its product, strength and form; its count): a yes that
    repeats them consents to nothing more (`consents`)."""
    return [(f"{line.name} {line.strength} {line.form}", line.quantity) for line in lines]


# What callers call a product by besides its name: its container, or its form said
# another way ("the tube", "the bottle", "the pills").
_CALLED = {
    "tube": ("gel", "cream", "ointment"),
    "bottle": ("syrup", "suspension", "solution", "liquid", "mouthwash", "lotion"),
    "pill": ("tablet", "capsule"),
    "tablet": ("tablet",),
    "capsule": ("capsule",),
}


def named_line(said: str, lines: Sequence[LineView], *, strict: bool = False) -> LineView | None:
    """The line whose product the caller named, by its name's words; else by its form,
    when no other line has it ("scrap the tablets", "the tube of gel")."""
    # Form words count here ("take the gel off"): they tell lines of one order apart.
    exact = [line for line in lines if line.name.lower() == said.strip().lower()]
    if exact:
        return exact[0]  # a tool given the line's own name: "Ibuprofen", not the gel
    words = [w for w in re.findall(r"[a-z0-9']+", said.lower()) if w not in _STOP]
    by_name = _named_by_name(words, lines)
    if by_name is not None:
        return by_name
    heard = {w.removesuffix("s") for w in words}
    # A word two lines share ("the tablets" of two) names neither, but narrows them:
    # "the hay fever tablets" of an antihistamine and a painkiller, both tablets.
    left = list(lines)
    for names in (_form_words, _strength_words, _kind_words):
        named = [line for line in left if _calls(heard, names(line))]
        if len(named) == 1:
            # `strict` (the words of a removal): not when other words name something
            # else, "forget the hay fever tablets" of an order of paracetamol.
            if strict and not _explains(named[0], set(content_words(said))):
                return None
            return named[0]
        left = named or left
    return None


def _explains(line: LineView, said: set[str]) -> bool:
    """Every content word the caller said is one of the line's own (name, form, strength
    or keywords), or says nothing of which product."""
    return _all_said_of(said, [line])


def _all_said_of(words: set[str], lines: Sequence[LineView], *, talk: bool = False) -> bool:
    own: set[str] = set()
    for line in lines:
        own |= _form_words(line) | _strength_words(line) | _kind_words(line)
        own |= {w.removesuffix("s") for w in re.findall(r"[a-z]+", line.name.lower())}
    return all(
        w in _STOP
        or w in _NOT_NAMES
        or w in _MOVE_WORDS
        or (w in TALK if talk else w in _REASONS)
        or is_number_word(w)
        or _calls({w.removesuffix("s")}, own)
        for w in {w.removesuffix("'s") for w in words}
    )


def only_order_talk(said: str, lines: Sequence[LineView]) -> bool:
    """Whether the words say nothing but a change to the order: every word is the order's
    own (its lines' names, forms, strengths, keywords), a word of moving a line, of
    ending the order, or of politeness. "Get rid of the cough syrup and I'm good to go"
    is; "cancel the paracetamol, I've already taken two packets today" is not, and is
    read for safety as any other line."""
    return _all_said_of(set(re.findall(r"[a-z0-9']+", clean(said).lower())), lines, talk=True)


# Words of the order's talk that name nothing: ending it, politeness, pronouns.
TALK = frozenset(
    """i i'm im i've i'd i'll me my we we're you your it's that's thats that'll there's
    is are be was will would could can do does did have has had get got a an of to for
    in on at so no not yes yeah yep ok okay right well oh um uh er erm hmm hi please
    thanks thank cheers ta lovely great fine perfect cool good sorted set done finished
    lot everything all nothing else ready go order what's total much how tell read back
    you're mate love really""".split()
)


# What callers say to change a line, which names no product.
_MOVE_WORDS = frozenset(
    """knock down up out off don't dont anymore bump bring put drop scrap scratch skip
    forget cancel ditch nix leave bother rid need want double increase raise extra less
    fewer go can't won't i'll change""".split()
)
# Reasons said with a change, which name no product either, but are more than order talk
# to the safety probe: "I've got plenty left" is said of stockpiling too.
_REASONS = frozenset(
    "already bought got home found loads plenty still left gone mind changed".split()
)


def _calls(heard: set[str], own: set[str]) -> bool:
    """A heard word is one of `own`, or begins with one ("painkillers", "pain")."""
    return bool(heard & own) or any(
        h.startswith(w) for h in heard for w in own if len(w) >= 4 and len(h) > len(w)
    )


def _strength_words(line: LineView) -> set[str]:
    """The number of its strength ("the 400s"), when no count could be it: "5
    percent" is not "make it 5"."""
    return {n for n in re.findall(r"\d+", line.strength) if len(n) >= 3}


def _kind_words(line: LineView) -> set[str]:
    """What the line is for, in the catalogue's keywords ("allergy", "antihistamine")."""
    return {w.removesuffix("s") for w in re.findall(r"[a-z]+", line.keywords.lower()) if len(w) > 2}


def _form_words(line: LineView) -> set[str]:
    form = line.form.lower()
    own = {w.removesuffix("s") for w in re.findall(r"[a-z]+", form)}
    return own | {called for called, forms in _CALLED.items() if any(f in form for f in forms)}


def _named_by_name(words: list[str], lines: Sequence[LineView]) -> LineView | None:
    best, best_score, tied = None, (0.0, 0, 0), False
    for line in lines:
        name = line.name.lower()
        scores = [partial_ratio(w, name) for w in words if len(w) > 2]
        # Ties go to the line more of the words name ("Honey and Lemon Throat Lozenges"
        # is not the Sore Throat Spray, though "throat" names both), then to the one
        # with fewer words not said ("the ibuprofen" is Ibuprofen, not Ibuprofen Gel).
        unsaid = [
            w for w in name.split() if max((partial_ratio(h, w) for h in words), default=0) < 85
        ]
        score = (max(scores, default=0.0), sum(s >= 85 for s in scores), -len(unsaid))
        if score > best_score:
            best, best_score, tied = line, score, False
        elif score == best_score:
            tied = True
    # Two lines the words name alike ("cancel the ibuprofen" of the gel and the strong
    # tablets): neither; the caller is asked.
    return best if best_score[0] >= 85 and not tied else None


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


def _removal(text: str, lines: Sequence[LineView], *, ending: bool = False) -> Remove | None:
    """The line the words take off. `ending`: said with the end of the order, where
    "without the gel" asks a total and "drop it off later" is an errand."""
    removal = _REMOVE.search(text)
    if removal is not None and not (ending and removal.group("d")):
        # The clause the removal is in: "remove the ibuprofen, keep the gel".
        words = _CLAUSE.split(next(g for g in removal.groups() if g))[0]
        line = named_line(words, lines, strict=True)
        if line is None and _PRONOUN.fullmatch(words):
            # "my wife bought paracetamol, so take those off": the line named before
            # it; "take it off" alone, the last one. Measured: the last line went.
            line = named_line(text[: removal.start()], lines) or lines[-1]
        if line is not None:
            return Remove(line.name)
    # "does the paracetamol cancel out the ibuprofen?", "I don't need a prescription for
    # it, do I?": questions about a line, not changes to it.
    named_removals = [] if _ASKS.search(text) else _REMOVE_NAMED.finditer(text)
    for named in named_removals:
        words = next(g for g in named.groups() if g)
        if _COUNTED.search(words):
            continue  # fewer packs, not the line
        # "the tube of gel, can you cancel that bit?": the line named before it; not
        # "cancel that, keep the gel", which names the line kept after it.
        pointing = _PRONOUN.fullmatch(words) or words.lower() in ("bit", "one", "ones")
        line = (
            named_line(text[: named.start()], lines)
            if pointing
            else named_line(words, lines, strict=True)
        )
        if line is not None:
            return Remove(line.name)
    return None


_ASKS = re.compile(
    r"^\W*(?:does|do|did|is|are|will|should|can (?:it|they|you take)|could it)\b"
    r"|,? (?:do|does|is|will|can|should) (?:i|it|they|you)\W*$",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"[,.;!?]|\b(?:but|keep|just|and keep|leave)\b", re.IGNORECASE)
# What a removal's words are when they only point: not "it off later", "them to run out".
_PRONOUN = re.compile(
    r"\s*(?:it|that|them|those|this|that one|those ones|that bit)"
    r"(?:\s+(?:off|out|please|now|then|too|as well|for me))*\s*",
    re.IGNORECASE,
)


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
    text = clean(said)
    if read_back_heard and is_clear_yes(said):  # as said: `clean` drops "please"
        # confirm_order decides whether it is consent: a yes with more in it ("sure,
        # I'll call back to decide") is asked for a plain yes or no.
        return Confirm()
    if not lines:
        return None
    if READ_BACK.search(text) or _DONE.search(text):
        # "remove the plasters and that's all": the removal, which then reads the order
        # back (`remove_from_order`). Read as the read-back alone, the plasters stayed.
        # A swap or one fewer said so is that move; the caller hears the order after it.
        rest = READ_BACK.sub(" ", _DONE.sub(" ", text))
        if _SWAP.search(rest) or _LESS.search(rest) or _removal(rest, lines, ending=True):
            move = order_move(rest, lines, read_back_heard=False, names_other=names_other)
            if isinstance(move, Remove | Swap | SetQuantity):
                return move
        return ReadBack()
    target = named_line(text, lines)
    other = _names_something_else(text, lines) if names_other is None else names_other
    swap = _SWAP.search(text)
    if swap:
        old = next(g for g in swap.groups()[:6] if g)
        line = named_line(old, lines) or (lines[-1] if _IT.fullmatch(old) else None)
        new = swap.group("new")
        if _POINTING.fullmatch(new.strip(" ,.!?")):
            # "do you have the allegra one instead, the fexofenadine, swap it for that"
            new = text[: swap.start()].strip(" ,.") or new
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
    if swap is None and (implied := _instead(text, lines, other)) is not None:
        return implied
    less = _LESS.search(text)
    if less:
        line = target or lines[-1]
        fewer = _count(less.group("n") or less.group("m"))
        if fewer >= line.quantity:
            return Remove(line.name)
        return SetQuantity(line.name, line.quantity - fewer)
    to_count = _TO_COUNT.search(text)
    if to_count and (target is not None or not other) and not DOSE_TALK.search(text):
        return SetQuantity((target or lines[-1]).name, _count(to_count.group("n")))
    removal = _removal(text, lines)
    if removal is not None or _REMOVE.search(text):
        return removal
    if target is None and other:
        return None  # "one more box of aspirin" adds aspirin; it changes no line
    line = target or lines[-1]
    nth = _NTH.search(text)
    if nth:
        return SetQuantity(line.name, _ORDINAL[nth.group("nth").lower()])
    more = _MORE.search(text)
    if more:
        count = more.group("n") or more.group("k")
        return SetQuantity(line.name, line.quantity + (_count(count) if count else 1))
    if _DOUBLE.search(text):
        return SetQuantity(line.name, 2 * line.quantity)
    # The last of several: "four's a bit silly, no, just make it two" means two.
    setting = next(reversed(list(_SET.finditer(text))), None)
    if setting and not DOSE_TALK.search(text):
        return SetQuantity(line.name, _count(setting.group("n") or setting.group("m")))
    return None
