"""Short turns most like a cough or a hum, written on 2026-12-05 by someone who saw no
rule and no figures: words a noise filter must never drop.

Forty caller turns of one to three words, as British and American callers say them on
the phone to a pharmacy assistant, punctuated as spoken.
"""

from __future__ import annotations

SHORT_TURNS: tuple[str, ...] = (
    # mumbled or clipped yes and no
    "Mm.",
    "Mhm, yes.",
    "Ta.",
    "'Kay.",
    "Yup.",
    "Uh-uh.",
    "Mm-mm.",
    "Uh-huh.",
    "Nah.",
    "Hmm, no.",
    # one-syllable numbers and answers
    "Six.",
    "Both.",
    "Ten.",
    "Cash.",
    "Two.",
    "Eight.",
    "Card.",
    "Half.",
    "Er, four.",
    "Mm, both.",
    # breathy or hesitant answers
    "Ah, no.",
    "Oh, yes.",
    "Oh. Right.",
    "Um, nine.",
    "Ahh, yeah.",
    "Hm, nope.",
    # very short questions
    "Eh?",
    "Hm?",
    "Which?",
    "Pardon?",
    "Huh, what?",
    "Sorry?",
    "How much?",
    # short product names
    "Lemsip.",
    "Strepsils.",
    "Calpol.",
    "Gaviscon.",
    "Tums.",
    "Advil.",
    "NyQuil.",
)

__all__ = ["SHORT_TURNS"]
