"""What a caller's yes to placing an order may hold, for every agency: code, not the
model, decides that the caller consented. Agencies reach it through `callswarm.agency`."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rapidfuzz.fuzz import ratio

from swarm import Message, Mode, Role

# What may stand beside a yes that places an order: politeness, agreement, and words
# that only say the yes again ("yes please, go ahead and place my order, thanks"). Any
# other word makes the answer unclear and the order is read back again: a hedge keeps its
# yes-word ("okay, let me think about it first", "sure, I'll call back to decide",
# "right, that's too expensive", "yes, maybe"), and no list of hedges can be complete,
# so this lists what may stay. Left out on purpose: later, first, think, maybe, guess,
# suppose, wait, check, ask, too, lot ("that's a lot"), well and hmm (hesitation).
CONSENT_ONLY = frozenset(
    """please thanks thank you ta cheers lovely great perfect brilliant fine good
    wonderful excellent fab fantastic super cool grand ace sorted alright ok okay all
    everything that that's thats it it's is are was this these those them they the a an
    order place placing put through book buy get have take collect pick up go on then
    ahead do done deal and so oh um uh er erm ah mm mhm huh just that'd that'll would
    will be i i'm i've i'd i'll me my we we're we'll us our let's you you're your can
    love dear darling mate sir ma'am madam very much to for with of in happy exactly
    indeed course now like want wanted need needed sounds sound works work looks seems
    right correct confirm confirmed definitely absolutely certainly sure yes yeah yep
    yup aye bye goodbye thing spot bang box boxes pack packs packet packets bottle bottles
    tube tubes what about one proceed kindly needful ever hen pet pal buddy hun honey
    sweetheart ya yah yeh yea ja send submit process ordered chuck pop stick away may
    shall o""".split()
)
# Counts a yes may repeat only when they are the order's own (`nothing_but_consent`).
_COUNTS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2,
    "pair": 2, "dozen": 12,
}  # fmt: skip
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


# Said to be polite, with a word left out of `CONSENT_ONLY` on its own ("a lot").
_POLITE = re.compile(
    r"\bthank(?:s| you) (?:a lot|a million)\b|\bsweet as\b|\bthe lot\b|\btoo right\b"
    r"|\bsee you (?:soon|then|later)\b"
    # Yes said the way it is in Ireland, Scotland and Australia: "fire ahead", "on ye
    # go", "too easy".
    r"|\bfire (?:ahead|away)\b|\btoo easy\b|\bcrack on\b|\b(?:on|away|off) (?:ye|you|yous|youse) go\b"
    r"|\bhave a (?:good|nice|lovely|great) (?:day|one|evening|afternoon)\b"
)
# "the one" names, it does not count; "a box" counts one.
_NOT_COUNTS = frozenset(("the", "that", "this"))
_UNITS = frozenset("box pack packet bottle tube".split())


def nothing_but_consent(rest: str, order: Sequence[tuple[str, int]] = ()) -> bool:
    """Whether `rest`, the caller's answer with its yes taken out, holds only politeness
    or agreement (`CONSENT_ONLY`), words of the names in `order` ((name, quantity) of
    each line: "yes please, the paracetamol"), and counts that are the order's own: a
    count before a line's name must be that line's ("the two ibuprofen and the
    paracetamol"), and one on its own every line's. "Yes, three croissants" to two, or
    "yes, two paracetamol" to one, is no consent."""
    lines = [
        ([w for w in _WORD.findall(name.lower()) if not w.isdigit()], quantity)
        for name, quantity in order
    ]
    words = _WORD.findall(_POLITE.sub(" ", rest.lower().replace("\u2019", "'")))

    def line_named(word: str) -> int | None:
        found = [q for names, q in lines if any(ratio(word, n) >= 85 for n in names)]
        return found[0] if found else None

    alone: list[int] = []  # counts said without a name after them
    for index, word in enumerate(words):
        count = int(word) if word.isdigit() else _COUNTS.get(word)
        after = words[index + 1] if index + 1 < len(words) else ""
        if word in ("a", "an") and after in _UNITS:
            count = 1  # "yes, a box of them"
        if word == "one" and index and words[index - 1] in _NOT_COUNTS:
            count = None
        if count is not None:
            named = next(
                (q for w in words[index + 1 : index + 5] if (q := line_named(w)) is not None),
                None,
            )
            if named is None:
                alone.append(count)
            elif named != count:
                return False
        elif word not in CONSENT_ONLY and line_named(word) is None:
            return False
    # Counts on their own are the order's, all of them: "one and three" to 1 and 3.
    return not alone or set(alone) == {q for _, q in lines}


def read_back_answer(
    log: Sequence[Message], read_back_seq: int | None, question: str
) -> str | None:
    """The caller's reply to the order's read-back (the message `read_back_seq`), if
    their latest words are exactly that reply and they heard the read-back to its
    `question`: a barge-in revises a reply to the words played, and a yes to "Your order
    is" is not a yes to the order."""
    if read_back_seq is None:
        return None
    read_back = next((m for m in log if m.seq == read_back_seq), None)
    if read_back is None or not read_back.content.rstrip().endswith(question):
        return None
    replies = [
        m for m in log if m.role is Role.USER and m.mode is Mode.USER and m.seq > read_back_seq
    ]
    return replies[0].content if len(replies) == 1 else None
