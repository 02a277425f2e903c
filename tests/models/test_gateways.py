"""Gateways' beats, the judgement of a silent peer, and the claim of its calls."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from sqlmodel import Session, select

from models.calls import LOST, CallRow
from models.gateways import GatewayRow, Judge, beat, claim_lost, leave, peers

pytestmark = pytest.mark.databases

TOOLS = frozenset({"transfer_to_human"})


def open_call(db, call_id: str, instance: str) -> None:
    with Session(db) as s:
        s.add(
            CallRow(
                id=call_id,
                client_id=f"web-{call_id}",
                channel="web",
                instance=instance,
                started_at=datetime.now(UTC),
            )
        )
        s.commit()


def test_a_beat_raises_the_count_and_a_missing_row_is_made_again(db) -> None:
    with Session(db) as s:
        assert beat(s, "a") is False  # new
        assert beat(s, "a") is True
        beat(s, "b")
        assert peers(s, "a") == {"b": 1}
        assert peers(s, "b") == {"a": 2}
        leave(s, "a")
        assert peers(s, "b") == {}
        assert beat(s, "a") is False  # a peer took it for dead


def test_a_claim_ends_the_silent_peers_open_calls_only(db) -> None:
    open_call(db, "c1", "a")
    open_call(db, "c2", "b")
    with Session(db) as s:
        beat(s, "a")
        beat(s, "b")
    with Session(db, expire_on_commit=False) as s:
        [ended] = claim_lost(s, "a", 1, TOOLS)
    assert ended.id == "c1" and ended.ended_by == LOST
    with Session(db) as s:
        rows = {c.id: c for c in s.exec(select(CallRow)).all()}
        assert rows["c1"].ended_at is not None and rows["c2"].ended_at is None
        assert [g.instance for g in s.exec(select(GatewayRow)).all()] == ["b"]


def test_a_peer_that_beat_since_it_was_read_is_not_claimed(db) -> None:
    open_call(db, "c1", "a")
    with Session(db) as s:
        beat(s, "a")
        beat(s, "a")  # after the survivor read 1
        assert claim_lost(s, "a", 1, TOOLS) is None
    with Session(db) as s:
        assert s.get(CallRow, "c1").ended_at is None
        assert s.get(GatewayRow, "a").beats == 2


def test_of_two_survivors_claiming_at_once_one_ends_the_calls(db) -> None:
    open_call(db, "c1", "a")
    open_call(db, "c2", "a")
    with Session(db) as s:
        beat(s, "a")
    start = threading.Barrier(2)
    results: list[list[CallRow] | None] = []

    def survivor() -> None:
        with Session(db, expire_on_commit=False) as s:
            start.wait()
            results.append(claim_lost(s, "a", 1, TOOLS))

    threads = [threading.Thread(target=survivor) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 2  # neither survivor failed
    won = [r for r in results if r is not None]
    assert len(won) == 1 and sorted(c.id for c in won[0]) == ["c1", "c2"]


def rounds(judge: Judge, counts: dict[str, int], start: float, end: float) -> list:
    """Reads every 5 s from `start` to `end`, both included; what the last one judged."""
    lost: list = []
    now = start
    while now <= end:
        lost = judge.read(counts, now)
        now += 5
    return lost


def test_a_count_that_moves_is_alive_and_one_that_stands_still_is_lost() -> None:
    judge = Judge(lost_after=30, max_gap=10)
    for now in range(0, 30, 5):
        assert judge.read({"a": now, "b": 7}, now) == []
    assert judge.read({"a": 30, "b": 7}, now=30) == [("b", 7)]
    # a stops at 35, and is lost 30 s after it was first seen there.
    assert rounds(judge, {"a": 35}, 35, 60) == []
    assert judge.read({"a": 35}, now=65) == [("a", 35)]


def test_a_round_without_the_database_gives_every_peer_its_time_again() -> None:
    judge = Judge(lost_after=30, max_gap=10)
    assert rounds(judge, {"a": 1}, 0, 25) == []
    judge.unreadable()  # we were cut off, and the peer may have been too
    assert rounds(judge, {"a": 1}, 30, 55) == []
    assert judge.read({"a": 1}, now=60) == [("a", 1)]


def test_reads_far_apart_give_every_peer_its_time_again() -> None:
    """A database that hung instead of failing: our read came back late, and the
    peers' beats were held up as ours was."""
    judge = Judge(lost_after=30, max_gap=10)
    assert judge.read({"a": 1}, now=0) == []
    assert judge.read({"a": 1}, now=45) == []  # would be lost, were the gap believed
    assert rounds(judge, {"a": 1}, 50, 70) == []
    assert judge.read({"a": 1}, now=75) == [("a", 1)]


def test_a_peer_that_left_and_came_back_is_judged_afresh() -> None:
    judge = Judge(lost_after=30, max_gap=10)
    judge.read({"a": 9}, now=0)
    assert judge.read({}, now=5) == []
    # Back under the same name, and by chance at the same count.
    assert rounds(judge, {"a": 9}, 10, 35) == []
    assert judge.read({"a": 9}, now=40) == [("a", 9)]
