"""This gateway's beat, and the calls of peers that stopped beating, ended here.

Gateways sharing a database each raise a count every `every_s` (`models.gateways`).
When a peer's count stands still for `lost_after_s` of our own good rounds, the peer is
dead: its calls are ended as `gateway_lost`, settled from what it committed, shown in
the consoles (`call_ended`; on PostgreSQL every gateway's) and counted in `/metrics` (`callswarm_calls_lost_total`).
A gateway that stops cleanly closes its calls and removes its row, so it is not judged.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress

from sqlalchemy.engine import Engine as Database
from sqlmodel import Session

from models.calls import CallRow
from models.gateways import Judge, beat, claim_lost, leave, peers
from web.live import LiveCalls

log = logging.getLogger("web.peers")


class PeerWatch:
    def __init__(
        self, db: Database, calls: LiveCalls, *, every_s: float, lost_after_s: float
    ) -> None:
        self._db, self._calls = db, calls
        self._instance = calls.options.instance
        self._every_s = every_s
        # A read later than this restarts every judgement (a hung database held the
        # peers' beats as it held ours). Up to half the window is safe: a peer that was
        # held gets the other half, several beats (settings check that), to beat again;
        # a tighter one could keep a loaded machine restarting the judgement for ever.
        self._judge = Judge(lost_after_s, max_gap=max(2 * every_s, lost_after_s / 2))
        self._beaten = False
        # Its own thread: a round queued behind the model's or the purge's work in
        # asyncio's shared pool would look, to our peers, like a dead gateway.
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="peers")
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def first_beat(self) -> None:
        """Blocking, before the gateway takes calls: peers see it from its first call."""
        with Session(self._db) as db:
            beat(db, self._instance)
        self._beaten = True

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="peers")

    async def close(self) -> None:
        """Once this gateway's calls are closed: finish the round under way (a claim is
        announced, a beat is not left to land after we leave), then leave the table."""
        self._stop.set()
        if self._task is not None:
            await self._task
        try:
            await asyncio.get_running_loop().run_in_executor(self._thread, self._leave)
        except Exception as exc:
            # Then a peer ends nothing (our calls are closed) and removes the row.
            log.error("gateway_leave_failed instance=%s error=%r", self._instance, exc)
        self._thread.shutdown()

    async def _run(self) -> None:
        while not self._stop.is_set():
            await self.round()
            with suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self._every_s)

    async def round(self) -> list[CallRow]:
        """One beat and one judgement; the calls ended for lost peers. A database that
        does not answer costs this round only (and resets the judgement)."""
        loop = asyncio.get_running_loop()
        try:
            counts = await loop.run_in_executor(self._thread, self._beat)
        except Exception as exc:
            self._judge.unreadable()
            log.error("gateway_beat_failed instance=%s error=%r", self._instance, exc)
            return []
        ended: list[CallRow] = []
        for peer, beats in self._judge.read(counts, time.monotonic()):
            try:
                calls = await loop.run_in_executor(self._thread, self._claim, peer, beats)
            except Exception as exc:
                log.error("gateway_claim_failed instance=%s error=%r", peer, exc)
                continue  # judged again from its count next round
            if calls is not None:
                self._calls.announce_lost(calls)
                ended += calls
        return ended

    def _beat(self) -> dict[str, int]:
        with Session(self._db) as db:
            if not beat(db, self._instance) and self._beaten:
                # Silent for longer than a peer would wait (a stalled process, a cut
                # network): a peer may have ended our calls, which go on here.
                log.warning("gateway_judged_lost instance=%s", self._instance)
            self._beaten = True
            return peers(db, self._instance)

    def _claim(self, peer: str, beats: int) -> list[CallRow] | None:
        with Session(self._db, expire_on_commit=False) as db:
            calls = claim_lost(db, peer, beats, self._calls.options.transfer_tools)
        if calls is not None:  # None: it beat at the last moment, or a peer claimed it
            log.warning("gateway_lost instance=%s by=%s calls=%d", peer, self._instance, len(calls))
        return calls

    def _leave(self) -> None:
        with Session(self._db) as db:
            leave(db, self._instance)
