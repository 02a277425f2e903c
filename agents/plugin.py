"""The pharmacy as an agency the gateway can serve (`CALLSWARM_AGENCY=pharmacy`, the default)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from sqlalchemy.engine import Engine as Database
from sqlmodel import Session

from agents.agency import build_pharmacy
from agents.deps import Pharmacy, ShopInfo
from agents.prompts import greeting
from agents.risk import ORDER_PROBE_FILE, NoReader, ProbeReader, RiskReader, load_probe
from agents.safety import SafetyLines
from agents.scripted import pharmacy_script
from agents.tools.catalogue import answer_search, choose_product, several_products
from agents.tools.navigation import SALES, TRANSFER_TOOL, TRANSFER_WORDS, TRIAGE
from callswarm.agency import Agency, AgencyBuild, Business
from models import drug_names, sounds
from models.catalogue import catalogue_is_empty, load_catalogue
from models.search import catalogue_vocabulary
from swarm import CompletionBackend

BENCH = Path(__file__).parent / "bench"
log = logging.getLogger("callswarm.app")


def shop_info(business: Business) -> ShopInfo:
    return ShopInfo(
        name=business.name,
        address=business.address,
        hours=business.hours,
        currency=business.currency,
        safety=SafetyLines(business.emergency_number, business.crisis_line),
    )


def _risk(build: AgencyBuild) -> RiskReader:
    if build.embedder is None:
        log.warning("safety_probe=off: the safety phrases alone screen callers")
        return NoReader()
    return ProbeReader(build.embedder, load_probe(), order_probe=load_probe(ORDER_PROBE_FILE))


def _build(build: AgencyBuild) -> str:
    return build_pharmacy(
        build.engine,
        Pharmacy(build.db, shop_info(build.business), _risk(build)),
        build.completions,
        # Hosted models tell search_products and get_product apart; the 0.5B does not.
        detailed_tools=SALES in build.hosted,
        routers=build.routers,
    )


# A request as a first caller makes it: its turn reads the search's word lists and
# builds the search's tables of the catalogue.
_FIRST_LINE = "Hello, I would like two boxes of paracetamol for my fever, please."


def _warm_first_turn(db: Database) -> None:
    """What a caller's first turn would otherwise read: the drug names (about two
    seconds), GCIDE and wordfreq's list, and the search's tables. Without it the first
    line after a start took 0.70 s to its reply against 0.19 s for the same line later
    (`benchmarks/first_turn.py`)."""
    started = time.perf_counter()
    try:
        drug_names.load()
        sounds.load()
        with Session(db) as session:
            answer_search(session, _FIRST_LINE, _FIRST_LINE, _SHOP.currency)
            several_products(session, _FIRST_LINE)
            choose_product(session, [_FIRST_LINE], _FIRST_LINE)
    except Exception as error:  # the first caller then reads it: slower, not broken
        log.warning("first_turn_warm_failed error=%r", error)
        return
    log.info("first_turn_warmed ms=%.0f", (time.perf_counter() - started) * 1000)


def _prepare(db: Database) -> None:
    if catalogue_is_empty(db):
        result = load_catalogue(db)
        log.info("catalogue_first_load added=%d", result.added)


def _vocabulary(db: Database) -> list[str]:
    with Session(db) as session:
        return catalogue_vocabulary(session)


def _scripted(business: Business) -> CompletionBackend:
    return pharmacy_script(shop_info(business))


_SHOP = ShopInfo()

AGENCY = Agency(
    name="pharmacy",
    agents=(TRIAGE, SALES),
    build=_build,
    business=Business(
        name=_SHOP.name,
        address=_SHOP.address,
        hours=_SHOP.hours,
        currency=_SHOP.currency,
    ),
    greeting=lambda business: greeting(shop_info(business)),
    scripted=_scripted,
    transfer_tool=TRANSFER_TOOL,
    transfer_words=TRANSFER_WORDS,
    prepare=_prepare,
    vocabulary=_vocabulary,
    scenarios=BENCH / "scenarios",
    heldout=BENCH / "heldout",
    embeds=True,  # the safety probe (agents/risk.py)
    warm=_warm_first_turn,
)
