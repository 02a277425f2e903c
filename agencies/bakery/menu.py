"""The bakery's menu: loaded into the shared products table, with its allergens beside it.

Prices and stock live in the database like any shop's; what each item contains is
the bakery's own data (menu.json), read by code whenever a caller asks.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import Engine as Database
from sqlmodel import Session, select

from agencies.bakery.words import listed
from callswarm.agency import Business
from models.catalogue import load_catalogue
from models.search import search_products
from models.shop import Product
from swarm import SessionHandle, ToolContext

MENU = Path(__file__).parent / "menu.json"
T = TypeVar("T")

# Said with every allergen answer: a small kitchen cannot promise an item is free of traces.
KITCHEN = (
    "Everything is baked in one kitchen that also uses wheat, milk, eggs, nuts, sesame and "
    "soya, so we can't promise any item is free of traces."
)


class BakerySettings(BaseSettings):
    """The bakery's own settings (`CALLSWARM_BAKERY_*`)."""

    model_config = SettingsConfigDict(env_prefix="CALLSWARM_BAKERY_", extra="ignore", frozen=True)

    ready_in_minutes: int = 30


def allergens(path: Path = MENU) -> dict[str, tuple[str, ...]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {sku: tuple(found) for sku, found in data["allergens"].items()}


@dataclass(frozen=True, slots=True)
class Bakery:
    """What the bakery's tools and screen are handed (`Engine.deps`)."""

    db: Database
    business: Business
    settings: BakerySettings = field(default_factory=BakerySettings)
    contains: Mapping[str, tuple[str, ...]] = field(default_factory=allergens)

    async def run(self, work: Callable[[Session], T]) -> T:
        """Blocking database work in a worker thread, with its own session."""

        def call() -> T:
            with Session(self.db) as session:
                return work(session)

        return await asyncio.to_thread(call)

    def allergen_words(self, product: Product) -> str:
        if product.sku not in self.contains:
            # No data is not "no allergens": a person must answer.
            return (
                f"I don't have the allergens of our {product.name} to hand; please ask "
                "someone in the bakery before you eat it."
            )
        found = self.contains[product.sku]
        if not found:
            return f"Our {product.name} has none of the common allergens in its recipe."
        return f"Our {product.name} contains {listed(list(found))}."


def bakery(holder: ToolContext | SessionHandle) -> Bakery:
    """The bakery's deps, from a tool's context or the screen's session."""
    deps = holder.deps
    if not isinstance(deps, Bakery):
        raise RuntimeError("the bakery agency needs Engine(deps=Bakery(...))")
    return deps


def find_items(db: Session, said: str, *, by_name: bool = False) -> list[Product]:
    """The menu items the words name: a confident match only, so "something sweet" names
    nothing rather than a guess; two when they fit the words equally ("croissant" said
    of the plain and the almond one alike). `by_name`: the item's name was said, not
    only a word it is known by ("for a party" orders no birthday cake)."""
    hits = [
        h
        for h in search_products(db, said, limit=3, min_score=0.75)
        if h.name_score > 0 or not by_name
    ][:2]
    if len(hits) == 2 and hits[0].score - hits[1].score < 0.02 and hits[1].name_score > 0:
        return [h.product for h in hits]
    return [h.product for h in hits[:1]]


def find_item(db: Session, *said: str) -> Product | None:
    """The one item the first words that name one name."""
    for words in said:
        hits = find_items(db, words)
        if hits:
            return hits[0]
    return None


class NotABakery(RuntimeError):
    """The database holds another business's catalogue."""


def prepare(db: Database) -> None:
    """The menu, on the first start. A database that holds another catalogue is refused:
    its products would be sold, and answered for, as the bakery's."""
    with Session(db) as session:
        skus = set(session.exec(select(Product.sku)).all())
    if not skus:
        load_catalogue(db, MENU)
    elif not skus & set(allergens()):
        raise NotABakery(
            "this database holds another catalogue: give the bakery its own "
            "(CALLSWARM_DATA_DIR or CALLSWARM_DATABASE_URL)"
        )


def vocabulary(db: Database) -> list[str]:
    """The item names, for the recogniser: "Focaccia" and "Pain au Chocolat" are not in
    its everyday English."""
    with Session(db) as session:
        return [p.name for p in session.exec(select(Product).order_by(Product.sku)).all()]
