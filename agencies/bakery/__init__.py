"""A bakery's order line: the second bundled agency (`CALLSWARM_AGENCY=bakery`).

One agent at the counter takes orders for bread, pastries and cakes to collect;
code answers allergen questions from the menu's data, and an allergic reaction
with the emergency number. docs/agency.md walks through it.
"""

from __future__ import annotations

from pathlib import Path

from agencies.bakery import counter, menu, tools
from callswarm.agency import Agency, Business

AGENCY = Agency(
    name="bakery",
    agents=(counter.COUNTER,),
    build=counter.build,
    business=Business(
        name="Hillside Bakery",
        address="4 Mill Lane, opposite the station",
        hours="Tuesday to Sunday 7 am to 3 pm",
    ),
    greeting=counter.greeting,
    scripted=counter.scripted,
    transfer_tool=tools.TRANSFER_TOOL,
    transfer_words=tools.TRANSFER_WORDS,
    prepare=menu.prepare,
    vocabulary=menu.vocabulary,
    scenarios=Path(__file__).parent / "bench" / "scenarios",
    heldout=Path(__file__).parent / "bench" / "heldout",
    settings=menu.BakerySettings,
)
