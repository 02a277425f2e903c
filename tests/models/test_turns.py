"""Turn latencies: stored per turn, summarised by SQL, kept through a database hiccup."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import OperationalError
from sqlmodel import Session

import callswarm.voice_bridge as bridge
from callswarm.voice_bridge import TurnRecorder
from models import SessionRow, make_engine
from models.tables import TurnRow
from models.turns import latency_summary, record_turn
from voice.events import TurnMetrics, TurnMetricsEvent

pytestmark = pytest.mark.databases


@pytest.fixture
def db(database_url):
    engine = make_engine(database_url)
    with Session(engine) as s:
        s.add(SessionRow(client_id="a", swarm="pharmacy", active_agent="triage"))
        s.add(SessionRow(client_id="b", swarm="pharmacy", active_agent="triage"))
        s.commit()
    yield engine
    engine.dispose()


def test_percentiles_are_nearest_rank_per_stage_and_per_caller(db) -> None:
    with Session(db) as s:
        for i in range(1, 21):  # 0.1 .. 2.0 s for caller a
            record_turn(s, TurnRow(client_id="a", speech_s=1.0, voice_to_voice_s=i / 10))
        record_turn(s, TurnRow(client_id="b", speech_s=1.0, voice_to_voice_s=9.0, stt_s=0.4))
        record_turn(s, TurnRow(client_id="b", speech_s=0.3, interrupted=True))
        a = latency_summary(s, client_id="a")["voice_to_voice_s"]
        everyone = latency_summary(s)
        nobody = latency_summary(s, client_id="nobody")
    assert (a.count, a.p50, a.p95) == (20, 1.0, 1.9)
    assert a.mean == pytest.approx(1.05)
    assert everyone["voice_to_voice_s"].count == 21
    assert everyone["voice_to_voice_s"].p95 == 2.0
    # A stage a turn never reached is not counted as zero.
    assert everyone["stt_s"].count == 1 and everyone["stt_s"].p50 == 0.4
    assert nobody["stt_s"].count == 0 and nobody["stt_s"].p50 is None


async def test_a_database_hiccup_delays_a_turns_metrics_but_loses_none(db, monkeypatch) -> None:
    failures = iter([OperationalError("INSERT", {}, Exception("database is locked"))] * 3)

    def flaky(session, row):
        error = next(failures, None)
        if error is not None:
            raise error
        return record_turn(session, row)

    monkeypatch.setattr(bridge, "record_turn", flaky)
    recorder = TurnRecorder(db, "a")
    event = TurnMetricsEvent(
        session_id="a", time=0.0, transcript="two boxes", metrics=TurnMetrics(0.8, stt_s=0.5)
    )
    await recorder.record(event)  # three attempts fail: kept, not lost, not raised
    with Session(db) as s:
        assert latency_summary(s)["stt_s"].count == 0
    assert await recorder.flush()
    with Session(db) as s:
        assert latency_summary(s)["stt_s"].count == 1
