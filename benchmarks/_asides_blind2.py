"""Fresh aside list for the overlap classifier, set ``fresh5``.

Written blind on 2026-12-06 by a helper who saw neither the gateway's overlap rules nor the
project's other lists, before any run; used by `benchmarks/asides.py --set fresh5`.
"""

from __future__ import annotations

BACKCHANNELS = (
    "Mm-hmm.",
    "Yep.",
    "Right.",
    "Grand.",
    "Okay.",
    "Lovely.",
    "Sure.",
    "Aye.",
    "Uh-huh.",
    "Gotcha.",
    "Yeah, yeah.",
    "Right, right, okay.",
    "Oh, lovely.",
    "Go on.",
    "Ah, I see.",
    "Yeah, carry on.",
    "Okay, I'm with you.",
    "Ah, grand, grand.",
    "Oh right, yeah.",
    "Yeah, I'm listening.",
    "Fair enough.",
    "Sure, sure.",
    "Oh, is that right?",
    "Right you are.",
    "Uh-huh, yeah.",
    "Yes, love.",
    "Oh aye, aye.",
    "Mm, yeah, okay.",
    "Okay, cool, cool.",
    "Sound, yeah.",
)

STOPS = (
    "Hang on, hang on.",
    "Sorry, what was that?",
    "Wait, wait, wait.",
    "No, no, that's not it.",
    "Hold on a sec.",
    "Stop there, love.",
    "Whoa, hang on a minute.",
    "Wait, how much?",
    "Ah no, not a syrup.",
    "Sorry, you're breaking up.",
    "Nah, hold up.",
    "No, it's a chesty one.",
    "Pardon?",
    "Come again?",
    "Excuse me, excuse me.",
    "It's a chesty cough, actually.",
    "Actually, it's for my husband.",
    "Is that sugar-free?",
    "Whoa, whoa, slow down.",
    "What was the first one?",
    "I'm on warfarin, mind.",
    "Eh? Three pounds what?",
    "Can I just ask something?",
    "It's for a toddler, though.",
)

ANSWERS = (
    "Two of them, please.",
    "The Simple Linctus, yeah.",
    "Yeah, the honey one.",
    "Just the one bottle.",
    "Three, please.",
    "It's for Maureen Kelly.",
    "Yes, the sugar-free one.",
    "Benylin, if you've got it.",
    "For my son, Jack.",
    "Yeah, the cheaper one.",
    "Go on, two bottles.",
    "Lemsip instead, please.",
)

HELP = (
    "My dad's just collapsed!",
    "The baby's swallowed a battery!",
    "He's taken the whole packet.",
    "I can't breathe properly.",
    "She's not breathing, help!",
    "Our Tom's eaten Nana's pills!",
)
