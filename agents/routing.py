"""What code can tell from the caller's words alone, before any model is asked.

Shared by the triage router and the scripted provider's rules, so the two agree.
"""

from __future__ import annotations

import re

from swarm import RoutedCall

PERSON = r"\b(operator|human|real person|a person|someone|somebody|staff|pharmacist|manager)\b"
HOURS = r"\b(open|opening|close|closing|hours)\b"
WHERE = r"\b(where are you|address|located|location|find you)\b"
SHOPPING = (
    r"\b(buy|order|need|want|looking for|have you got|do you (have|sell)|price|cost|something for|"
    r"pain|ache|headache|cough|cold|fever|flu|allerg\w*|hay ?fever|medicine|tablets?|pills?|"
    r"cream|spray|drops|vitamins?|sore|itch\w*|i'?d like|would like|like to|can i (get|have)|"
    r"get some)\b"
)

# Not the pharmacy's business: answered politely, never searched in the catalogue.
OFF_TOPIC = (
    r"\b(weather|jokes?|football|soccer|news|politics|election|lottery|recipes?|movies?|songs?|"
    r"poems?|system prompt|your (instructions|prompt)|ignore (all |your |previous )*instructions)\b"
)
# Courtesies: answered in kind.
SMALL_TALK = r"^\W*(thanks?|thank you|bye|goodbye|cheers)\b"
HOW_ARE_YOU = r"^\W*(how are you|are you a (robot|bot|machine))\b"

_OTHER_BUSINESS = re.compile("|".join((PERSON, HOURS, WHERE)), re.IGNORECASE)
_SHOPPING = re.compile(SHOPPING, re.IGNORECASE)


def triage_router(said: str) -> RoutedCall | None:
    """Plain shopping goes straight to sales; anything else is the triage model's call.

    Measured on the embedded model, a hand-off cost two model calls (triage routes,
    then sales acts), about half of a turn's time (docs/performance.md). Words that
    also ask for a person, the hours or the address are left to the model."""
    if _OTHER_BUSINESS.search(said) or not _SHOPPING.search(said):
        return None
    return RoutedCall("navigate_to_sales")
