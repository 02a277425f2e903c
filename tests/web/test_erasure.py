"""A caller can be erased: nothing of them is left in any table or file; their orders
stay for the books, on an anonymous customer (models/privacy.py, issue 23)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import String, cast, inspect, or_, select, table
from sqlalchemy import column as sa_column
from sqlmodel import Session
from sqlmodel import select as sm_select

from models.calls import AuditRow, CallRow, Channel
from models.privacy import ERASED
from models.shop import Customer, Order, OrderLine, OrderStatus
from tests.voice.speech import piper, silence

from .client import Caller, caller, typed
from .console import call_ended, operator, text_call

pytestmark = pytest.mark.databases

REPO = Path(__file__).resolve().parents[2]
# Words only this caller said: any trace of them is a trace of the caller.
SAID = "My neighbour Gwendolyn Fairweather said you sell ibuprofen."
TRACES = ("Gwendolyn", "Fairweather", "web-gwen")


def traces_in_database(db, words: tuple[str, ...]) -> list[str]:
    """Every (table, column) whose text holds one of `words`, searched in every table."""
    found = []
    with db.connect() as conn:
        names = inspect(conn)
        for name in names.get_table_names():
            if name.startswith(("product_fts", "alembic")):
                continue
            columns = [c["name"] for c in names.get_columns(name)]
            t = table(name, *(sa_column(c) for c in columns))
            for c in columns:
                where = or_(*(cast(t.c[c], String).contains(w) for w in words))
                if conn.execute(select(t.c[c]).where(where).limit(1)).first() is not None:
                    found.append(f"{name}.{c}")
    return found


def traces_in_files(folder: Path, words: tuple[str, ...]) -> list[str]:
    """Every file under `folder` whose bytes hold one of `words` (the SQLite database,
    its write-ahead log, the recordings)."""
    needles = [w.encode() for w in words] + [w.encode("utf-16-le") for w in words]
    return [
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and any(n in path.read_bytes() for n in needles)
    ]


async def test_an_erased_caller_leaves_nothing_but_their_anonymous_orders(gateway, tmp_path):
    listener = gateway.gateway.journal.hub.listen()
    # A voice call, recorded, then a text call that places an order.
    async with caller(gateway.ws, "web-gwen") as ws:
        c = Caller(ws)
        await c.greeted()
        await c.speak(piper("Do you have any ibuprofen?") + silence(0.3))
        await c.until("reply_done")
    await call_ended(gateway, "web-gwen", listener)
    await text_call(
        gateway, "web-gwen", SAID, "two boxes of paracetamol please", "that's all", "yes"
    )
    await text_call(gateway, "web-other", "Do you have any loratadine?")
    db = gateway.services.db
    with Session(db) as s:
        calls = s.exec(sm_select(CallRow).where(CallRow.client_id == "web-gwen")).all()
        recordings = [c.recording for c in calls if c.recording]
        orders_before = s.exec(sm_select(Order)).all()
    assert recordings and all((tmp_path / "recordings" / r).exists() for r in recordings)
    assert [o.status for o in orders_before] == [OrderStatus.CONFIRMED]
    assert traces_in_database(db, TRACES)  # the search can find the caller
    gateway.gateway.journal.hub.leave(listener)
    listener = gateway.gateway.journal.hub.listen()
    async with operator(gateway) as api:
        # While the caller is on a call, they are not erased.
        async with typed(gateway.ws, "web-gwen") as ws:
            await ws.send("hello")
            await ws.recv()
            busy = await api.delete("/api/callers/web-gwen")
            assert busy.status_code == 409, busy.text
        await call_ended(gateway, "web-gwen", listener)
        erased = await api.delete("/api/callers/web-gwen")
        assert erased.status_code == 200, erased.text
        assert erased.json()["calls"] == 3 and erased.json()["orders_kept"] == 1
        assert (await api.delete("/api/callers/web-gwen")).status_code == 404
        audit = (await api.get("/api/audit", params={"action": "caller_erased"})).json()
    gateway.gateway.journal.hub.leave(listener)
    assert len(audit) == 1 and "calls=3" in audit[0]["detail"]
    assert traces_in_database(db, TRACES) == []
    assert traces_in_files(tmp_path, TRACES) == []
    assert not any((tmp_path / "recordings" / r).exists() for r in recordings)
    # The books keep the order, its lines and total, on no one.
    with Session(db) as s:
        [order] = s.exec(sm_select(Order)).all()
        assert order.total_cents == orders_before[0].total_cents
        assert s.get(Customer, order.customer_id).client_id == ERASED
        assert [(line.sku, line.quantity) for line in s.exec(sm_select(OrderLine)).all()] == [
            ("PAR500-16", 2)
        ]
        assert s.exec(sm_select(AuditRow).where(AuditRow.target == "web-gwen")).first() is None
    # Another caller is untouched.
    assert traces_in_database(db, ("loratadine",)) != []
    assert traces_in_database(db, ("web-other",)) != []


async def test_a_phone_caller_is_erased_by_number_from_the_command_line(
    gateway, tmp_path, database_url
):
    calls = gateway.gateway.calls
    phone = await calls.open("+15550100", Channel.SIP)
    await phone.session.complete(SAID)
    await calls.close(phone, ended_by="caller")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLSWARM_")}
    env |= {"CALLSWARM_DATA_DIR": str(tmp_path), "CALLSWARM_DATABASE_URL": database_url}

    def erase(who: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "callswarm", "caller", "erase", who],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            timeout=120,
        )

    run = await asyncio.to_thread(erase, "15550100")  # as written, without its +
    assert run.returncode == 0, run.stderr
    assert "calls=1" in run.stdout
    assert traces_in_database(gateway.services.db, ("Gwendolyn", "+15550100")) == []
    again = await asyncio.to_thread(erase, "+15550100")
    assert again.returncode == 1 and "no caller" in again.stderr
