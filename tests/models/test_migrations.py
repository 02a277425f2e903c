"""Alembic migrations: they build exactly the models' tables, on both databases, and
upgrade SQLite files written by earlier versions of callswarm without losing a row."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel, select

from callswarm.app import build_services
from callswarm.settings import Settings
from models import make_engine, migrate
from models.calls import CallFilter, list_calls
from models.search import PG_DOCUMENT
from models.shop import Order, OrderStatus
from models.tables import MessageRow

from ..conftest import ONLY_POSTGRESQL
from ..test_cli import base_env, run_cli

pytestmark = pytest.mark.databases

# SQLite files written by earlier versions (tests/models/legacy/make_legacy.py, run on
# the commit in the name): before the console's tables (issue 6), and before migrations.
LEGACY = Path(__file__).parent / "legacy"
LEGACY_FILES = sorted(LEGACY.glob("callswarm-*.db"))


def differences(engine: Engine) -> list:
    """What autogenerate would still write: nothing, if the migrations are complete."""

    def ours(obj, name, kind, reflected, compare_to) -> bool:
        # Search indexes are not models: SQLite's FTS5 tables, PostgreSQL's GIN index.
        return not (name or "").startswith(("product_fts", "ix_products_search"))

    with engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "include_object": ours}
        )
        return compare_metadata(context, SQLModel.metadata)


def test_migrations_build_exactly_the_tables_of_the_models(database_url) -> None:
    engine = make_engine(database_url)
    try:
        assert migrate.current(engine) == migrate.head()
        assert differences(engine) == []
    finally:
        engine.dispose()


def test_every_migration_goes_down_and_up_again(database_url) -> None:
    engine = make_engine(database_url)
    try:
        migrate.downgrade(engine, "base")
        assert migrate.current(engine) is None
        with engine.connect() as connection:
            assert not connection.dialect.has_table(connection, "messages")
        migrate.upgrade(engine)
        assert migrate.current(engine) == migrate.head()
        assert differences(engine) == []
    finally:
        engine.dispose()


@pytest.mark.parametrize("legacy", LEGACY_FILES, ids=lambda p: p.stem)
async def test_a_sqlite_file_from_an_earlier_version_upgrades_and_keeps_its_rows(
    legacy: Path, tmp_path
) -> None:
    shutil.copy(legacy, tmp_path / "callswarm.db")
    settings = Settings(data_dir=tmp_path, provider="scripted", idle_timeout=None)
    services = build_services(settings)  # opens the file: migrates it
    try:
        assert migrate.current(services.db) == migrate.head()
        assert differences(services.db) == []
        with Session(services.db) as db:
            said = db.exec(
                select(MessageRow.content)
                .where(MessageRow.client_id == "legacy-caller", MessageRow.role == "user")
                .order_by(MessageRow.seq)
            ).all()
            assert said == ["hello", "I'd like two boxes of paracetamol", "that's all", "yes"]
            [order] = db.exec(select(Order)).all()
            assert (order.status, order.total_cents) == (OrderStatus.CONFIRMED, 598)
            calls, _ = list_calls(db, CallFilter(), limit=10, offset=0)
        # The console's tables came in after issue 6: its file has no call, the later one
        # has the call it made, now with the new column.
        assert [(c.client_id, c.instance) for c in calls] == (
            [] if "48c8452" in legacy.name else [("legacy-caller", "")]
        )
        # The caller comes back: the conversation goes on where it stopped.
        session = services.engine.session("legacy-caller", services.swarm)
        assert "Ibuprofen" in await session.complete("Do you have any ibuprofen?")
        history = await session.get_raw_history()
        assert history[0].content == "hello" and history[-1].seq > 4
    finally:
        await services.aclose()


@ONLY_POSTGRESQL  # instances share PostgreSQL; SQLite is one machine's file
def test_instances_starting_together_migrate_one_database_once(database_url) -> None:
    engines = [make_engine(database_url, migrate=False) for _ in range(3)]
    failures: list[BaseException] = []
    barrier = threading.Barrier(len(engines))

    def start(engine: Engine) -> None:
        barrier.wait()
        try:
            migrate.upgrade(engine)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=start, args=(e,)) for e in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert failures == []
        assert migrate.current(engines[0]) == migrate.head()
        assert differences(engines[0]) == []
    finally:
        for engine in engines:
            engine.dispose()


@ONLY_POSTGRESQL  # SQLite searches its FTS5 table
def test_postgresql_product_search_uses_its_full_text_index(db) -> None:
    with db.connect() as connection:
        connection.execute(text("SET enable_seqscan = off"))  # 83 rows: force the choice
        plan = connection.execute(
            text(
                f"EXPLAIN SELECT sku FROM products "
                f"WHERE {PG_DOCUMENT} @@ to_tsquery('english', 'headache:*')"
            )
        ).all()
    assert "ix_products_search" in " ".join(row[0] for row in plan)


def test_the_cli_shows_and_upgrades_the_schema(tmp_path) -> None:
    shutil.copy(LEGACY_FILES[-1], tmp_path / "callswarm.db")
    env = base_env(tmp_path)
    head = migrate.head()
    before = run_cli(["db", "current"], "", env)
    assert before.returncode == 0 and before.stdout.strip() == f"empty (newest: {head})"
    upgraded = run_cli(["db", "upgrade"], "", env)
    assert upgraded.returncode == 0 and upgraded.stdout.strip() == f"empty -> {head}"
    after = run_cli(["db", "current"], "", env)
    assert after.stdout.strip() == f"{head} (newest: {head})"


def test_a_catalogue_loaded_before_gets_the_corrected_keywords(database_url) -> None:
    """Migration 0005: rows still holding the bundled keywords are corrected; a shop's
    own keywords are left alone."""
    from models.catalogue import load_catalogue
    from models.shop import Product

    engine = make_engine(database_url)
    try:
        load_catalogue(engine)
        migrate.downgrade(engine, "0004")
        with Session(engine) as s:
            gel, chlor = s.get(Product, "IBUGEL-50"), s.get(Product, "CHLOR4-28")
            assert "voltarol" in gel.keywords  # as the catalogue loaded before held it
            assert "chlorpheniramine" not in chlor.keywords
            chlor.keywords = "our own words"
            s.add(chlor)
            s.commit()
        migrate.upgrade(engine)
        with Session(engine) as s:
            assert "voltarol" not in s.get(Product, "IBUGEL-50").keywords
            assert s.get(Product, "CHLOR4-28").keywords == "our own words"
    finally:
        engine.dispose()
