"""The catalogue data file and its loading. Loading twice changes nothing."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from models.shop import Product

log = logging.getLogger("models.catalogue")


@dataclass(frozen=True, slots=True)
class LoadResult:
    added: int
    unchanged: int
    currency: str


def bundled_catalogue() -> Path:
    return Path(str(resources.files("models") / "data" / "catalogue.json"))


def read_catalogue(path: Path | None = None) -> tuple[str, list[Product]]:
    data = json.loads((path or bundled_catalogue()).read_text(encoding="utf-8"))
    return data.get("currency", "USD"), [Product(**item) for item in data["products"]]


def load_catalogue(engine: Engine, path: Path | None = None) -> LoadResult:
    """Insert the products the database does not have yet; existing rows (and their stock) stay."""
    currency, products = read_catalogue(path)
    with Session(engine) as db:
        known = set(db.exec(select(Product.sku)).all())
        new = [p for p in products if p.sku not in known]
        db.add_all(new)
        db.commit()
    rebuild_search_index(engine)
    log.info("catalogue_loaded added=%d unchanged=%d", len(new), len(products) - len(new))
    return LoadResult(added=len(new), unchanged=len(products) - len(new), currency=currency)


def catalogue_is_empty(engine: Engine) -> bool:
    with Session(engine) as db:
        return db.exec(select(Product.sku).limit(1)).first() is None


def rebuild_search_index(engine: Engine) -> None:
    """SQLite keeps an FTS5 index beside the table; PostgreSQL indexes on the fly."""
    if engine.dialect.name != "sqlite":
        return
    with engine.begin() as conn:
        conn.execute(
            text(
                "CREATE VIRTUAL TABLE IF NOT EXISTS product_fts USING fts5("
                "sku UNINDEXED, name, active_ingredient, keywords, description, "
                "tokenize='porter unicode61')"
            )
        )
        conn.execute(text("DELETE FROM product_fts"))
        conn.execute(
            text(
                "INSERT INTO product_fts (sku, name, active_ingredient, keywords, description) "
                "SELECT sku, name, active_ingredient, keywords, description FROM products"
            )
        )
