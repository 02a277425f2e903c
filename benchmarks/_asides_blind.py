"""Asides said over a spoken reply, for the backchannel-versus-stop classifier.

Written blind on 2026-12-06 by a helper who saw neither the gateway's overlap rules
nor the project's other lists, before any run. Used by `benchmarks/asides.py --set fresh4`.
"""

from __future__ import annotations

# Listener feedback: the caller wants the assistant to carry on talking.
BACKCHANNELS = (
    "Mm-hm.",
    "Yeah.",
    "Uh-huh.",
    "Hmm.",
    "Aye.",
    "Righto.",
    "Lovely.",
    "Gotcha.",
    "Yep, yep.",
    "Ah, right.",
    "Go on.",
    "Sure, sure.",
    "I see.",
    "Mm, okay.",
    "Okay, got it.",
    "Oh right, yeah.",
    "Cheers, yeah.",
    "Fair enough.",
    "Right you are.",
    "Sounds good.",
    "Yeah, I'm with you.",
    "Yeah, that's fine.",
    "Okay, keep going.",
    "Brilliant, go on then.",
)

# Said over the reply to stop or redirect it; several carry no obvious stop word.
STOPS = (
    "Hang on a sec.",
    "Wait, wait.",
    "Pardon?",
    "Excuse me.",
    "Sorry, what?",
    "Eh? Say again?",
    "Sorry, can you repeat that?",
    "Whoa, whoa, slow down.",
    "Sorry, you've lost me.",
    "No no no, the other one.",
    "That's the wrong one.",
    "No, not that one.",
    "No, I'm allergic to that.",
    "I've already tried those.",
    "I meant ibuprofen.",
    "Not tablets, liquid.",
    "Just the cetirizine, please.",
    "It's for my daughter, actually.",
    "Erm, sorry, the nasal spray?",
    "How much was that?",
    "What was the first one?",
    "Is that drowsy?",
    "Do you do delivery?",
    "Can I just ask something?",
)

# Urgent or safety-related asides that must cut the reply short.
HELP = (
    "My husband's just collapsed!",
    "She's taken too many pills.",
    "My toddler swallowed some tablets.",
    "I've got chest pains.",
    "He's not breathing, help!",
    "I think it's an overdose.",
)
