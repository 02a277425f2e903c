"""The gateway's own events, one frozen class per kind: calls starting and ending,
voice turns, operators' actions. They travel the swarm's bus beside its events.

Metrics and the journal read them by type. `kind` and `data()` are their wire form
only (the console's SSE, the `call_events` table), written here once per class.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from swarm import SwarmEvent
from voice.events import TurnMetrics


@dataclass(frozen=True, slots=True, kw_only=True)
class CallEvent(SwarmEvent):
    """`call_id` empty: the caller's live call, if any."""

    kind: ClassVar[str]
    call_id: str = ""

    def data(self) -> dict[str, Any]:
        """The event's own fields, as the console receives them."""
        skip = {f.name for f in dataclasses.fields(CallEvent)}
        return {
            f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in skip
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class CallStarted(CallEvent):
    kind: ClassVar[str] = "call_started"
    channel: str
    caller: str
    started_at: str  # ISO 8601
    instance: str
    operator: str | None = None

    def data(self) -> dict[str, Any]:
        return {"id": self.call_id, "client_id": self.session_id, **CallEvent.data(self)}


@dataclass(frozen=True, slots=True, kw_only=True)
class CallEnded(CallEvent):
    kind: ClassVar[str] = "call_ended"
    ended_by: str | None
    outcome: str | None  # None: the call's row could not be saved
    agents: tuple[str, ...] | None = None
    recording_lost: bool = False
    instance: str | None = None  # set when ended for a gateway that died with it

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ended_by": self.ended_by, "outcome": self.outcome}
        if self.agents is not None:
            out["agents"] = list(self.agents)
        if self.recording_lost:
            out["recording_lost"] = True
        if self.instance is not None:
            out["instance"] = self.instance
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnTaken(CallEvent):
    """A voice turn's transcript and latencies."""

    kind: ClassVar[str] = "turn"
    transcript: str
    metrics: TurnMetrics

    def data(self) -> dict[str, Any]:
        return {"transcript": self.transcript, **dataclasses.asdict(self.metrics)}


@dataclass(frozen=True, slots=True, kw_only=True)
class TransferRequested(CallEvent):
    kind: ClassVar[str] = "transfer_requested"


@dataclass(frozen=True, slots=True, kw_only=True)
class TakenOver(CallEvent):
    kind: ClassVar[str] = "takeover"
    operator: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatorSaid(CallEvent):
    kind: ClassVar[str] = "operator_said"
    operator: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HandedBack(CallEvent):
    kind: ClassVar[str] = "handed_back"
    operator: str
