"""The safety screen's second reader: a linear probe on a small model's hidden states.

The phrases in agents/safety.py are what reviewers wrote down, and callers' own words
slip past them: on a set written by someone who saw no code, a third of the
emergencies, self-harm and dose questions reached sales. Asked outright, the bundled
0.5B model called nearly every shopping line a concern. Its hidden states, though,
carry what a line is about: a multinomial logistic regression on their mean, trained
on lines written by helpers who saw no code (scripts/train_safety_probe.py), reads
phrasings it never saw. The weights ship in `agents/data/safety_probe.json`, made
from one embedding model; a probe is refused on any other.

The probe only adds concerns: what the phrases catch is never overruled, and a line
the probe flags gets the same fixed words as one the phrases flag.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from agents.safety import Concern
from swarm.backends.embed import Embedder

log = logging.getLogger("agents.risk")

PROBE_FILE = Path(__file__).with_name("data") / "safety_probe.json"
# The probe for a line that changes the caller's order in progress, trained also on
# ordinary order talk (scripts/train_safety_probe.py says why it is kept to those lines).
ORDER_PROBE_FILE = Path(__file__).with_name("data") / "safety_probe_orders.json"
ORDINARY = "ordinary"
# The labels of the training files, in the probe's order; "dose" lines are Concern.DOSING.
LABELS = (ORDINARY, "emergency", "self_harm", "dose")
_CONCERN = {"emergency": Concern.EMERGENCY, "self_harm": Concern.SELF_HARM, "dose": Concern.DOSING}


@dataclass(frozen=True, slots=True)
class Probe:
    model_id: str  # the embedder whose vectors it was trained on
    labels: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[tuple[float, ...], ...]  # one row per label
    bias: tuple[float, ...]
    # A line is a concern when its probability of being ordinary is below this.
    ordinary_below: float
    data_sha256: str  # of the training files, so a test catches weights left stale

    def probabilities(self, vector: Sequence[float]) -> dict[str, float]:
        x = (np.asarray(vector, dtype=np.float64) - np.asarray(self.mean)) / np.asarray(self.scale)
        logits = np.asarray(self.weights) @ x + np.asarray(self.bias)
        odds = np.exp(logits - logits.max())
        return dict(zip(self.labels, (odds / odds.sum()).tolist(), strict=True))

    def concern(self, vector: Sequence[float]) -> Concern | None:
        p = self.probabilities(vector)
        if p[ORDINARY] >= self.ordinary_below:
            return None
        return _CONCERN[max((label for label in p if label != ORDINARY), key=p.__getitem__)]


def load_probe(path: Path = PROBE_FILE) -> Probe:
    raw = json.loads(path.read_text())
    return Probe(
        model_id=raw["model_id"],
        labels=tuple(raw["labels"]),
        mean=tuple(raw["mean"]),
        scale=tuple(raw["scale"]),
        weights=tuple(tuple(row) for row in raw["weights"]),
        bias=tuple(raw["bias"]),
        ordinary_below=raw["ordinary_below"],
        data_sha256=raw["data_sha256"],
    )


def save_probe(probe: Probe, path: Path = PROBE_FILE) -> None:
    def rounded(values: Iterable[float]) -> list[float]:
        return [round(v, 6) for v in values]

    raw = {
        "model_id": probe.model_id,
        "labels": list(probe.labels),
        "ordinary_below": probe.ordinary_below,
        "data_sha256": probe.data_sha256,
        "mean": rounded(probe.mean),
        "scale": rounded(probe.scale),
        "bias": rounded(probe.bias),
        "weights": [rounded(row) for row in probe.weights],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(raw, separators=(",", ":")) + "\n")


def data_sha256(paths: Iterable[Path]) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths, key=lambda p: p.name):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def train(
    vectors: Sequence[Sequence[float]],
    labels: Sequence[str],
    *,
    model_id: str,
    data: str,
    l2: float = 30.0,
    steps: int = 1500,
    ordinary_below: float = 0.3,
) -> Probe:
    """Multinomial logistic regression by gradient descent; each label weighs the same
    whatever its count, so the many shopping lines do not drown the few emergencies."""
    x = np.asarray(vectors, dtype=np.float64)
    index = {label: n for n, label in enumerate(LABELS)}
    y = np.asarray([index[label] for label in labels])
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    x = (x - mean) / scale
    onehot = np.eye(len(LABELS))[y]
    counts = np.bincount(y, minlength=len(LABELS)).astype(np.float64)
    per_row = (len(y) / (len(LABELS) * np.maximum(counts, 1)))[y]
    w = np.zeros((len(LABELS), x.shape[1]))
    b = np.zeros(len(LABELS))
    rate = 0.05
    for _ in range(steps):
        logits = x @ w.T + b
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) * per_row[:, None]
        w -= rate * (g.T @ x / len(y) + l2 * w / len(y))
        b -= rate * g.mean(axis=0)
    return Probe(
        model_id=model_id,
        labels=LABELS,
        mean=tuple(mean.tolist()),
        scale=tuple(scale.tolist()),
        weights=tuple(tuple(row) for row in w.tolist()),
        bias=tuple(b.tolist()),
        ordinary_below=ordinary_below,
        data_sha256=data,
    )


# Words that say nothing about a caller's safety: greetings, yes and thanks, counts,
# packs, and asking to buy. A line of nothing else ("I want to buy something", "yes
# please", "just the two") carries no concern, and the probe, which sees only meaning,
# once read "I want to buy something" as self-harm ("I want to..."). Not "tablets",
# "many" or "take": "how many tablets" may be a dose question; not "help": "I need help".
_SAYS_NOTHING = frozenset(
    """
    i i'm im i'd id i'll me my we we'd us our you your yeah yes yep yup ok okay hi hello
    hiya hey um uh er erm like just please thanks thank cheers love mate a an the some
    any something anything one two three four five six seven eight nine ten couple
    want wanna need would get got have buy buying order ordering pick up collect can
    could may do does is are be to for of and or but so with on in at from it that this
    these those there what whats what's how much price cost looking look sell
    stock box boxes pack packs packet packets bottle bottles tube tubes
    """.split()
)
_WORD = re.compile(r"[a-z0-9']+")


def says_nothing_of_safety(said: str) -> bool:
    return all(word in _SAYS_NOTHING for word in _WORD.findall(said.lower()))


class RiskReader(Protocol):
    async def concern(
        self, said: str, *, client_id: str = "", order_talk: bool = False
    ) -> Concern | None:
        """`order_talk`: the line changes the caller's order in progress ("get rid of the
        tablets, that's me done"), read by the probe that knows such talk."""
        ...


class ProbeReader:
    """Reads a caller's line with the probe. An embedding that fails or takes longer than
    `timeout` is logged and reads as no concern: the phrases have already run, and a
    turn must neither die nor hang of it. The timeout is far above a line's cost (p95
    0.3 s) on purpose: a tighter one, measured with a test suite loading both cores,
    let dose questions through to an order."""

    def __init__(
        self,
        embedder: Embedder,
        probe: Probe,
        *,
        order_probe: Probe | None = None,
        timeout: float = 10.0,
        callers: int = 256,
    ) -> None:
        for each in (probe, order_probe):
            if each is not None and embedder.model_id != each.model_id:
                raise ValueError(
                    f"the safety probe was trained on {each.model_id}, not {embedder.model_id}"
                )
        self._embedder, self._probe, self._timeout = embedder, probe, timeout
        self._order_probe = order_probe or probe
        # Each caller's last reading, kept by a digest of the line, never the words, and
        # never across callers, whose lines are theirs: a turn handed from triage to sales
        # is screened again with the same words, and a reading started while the caller's
        # pause was judged (`pharmacy_anticipate`) is still running when the turn asks. A
        # reading in flight is shared; a failed one is not kept, so the next ask tries again.
        self._last: OrderedDict[str, _Kept] = OrderedDict()
        self._callers = callers

    async def concern(
        self, said: str, *, client_id: str = "", order_talk: bool = False
    ) -> Concern | None:
        if says_nothing_of_safety(said):
            return None
        digest = hashlib.blake2b(said.encode("utf-8", "replace"), digest_size=16).digest()
        kept = self._last.get(client_id) if client_id else None
        if kept is None or kept.digest != digest or _failed(kept.reading):
            kept = _Kept(digest, asyncio.ensure_future(self._read(said, client_id)))
            if client_id:
                self._keep(client_id, kept)
        kept.waiting += 1
        try:
            # Shielded: a turn cut while its line is read leaves the reading to the next
            # ask of that line; only another line of the caller's drops it (`_keep`).
            reading = await asyncio.shield(kept.reading)
            return reading.in_order if order_talk else reading.concern
        finally:
            kept.waiting -= 1

    async def _read(self, said: str, client_id: str) -> _Reading:
        try:
            vector = await asyncio.wait_for(self._embedder.embed(said), self._timeout)
            # Both probes read the one vector: the line's cost is its embedding.
            concern = self._probe.concern(vector)
            in_order = (
                concern if self._order_probe is self._probe else self._order_probe.concern(vector)
            )
            return _Reading(concern, in_order)
        except TimeoutError:
            log.error("safety_probe_timeout client_id=%s seconds=%s", client_id, self._timeout)
        except Exception as exc:  # a model that failed to load, a worker that died
            log.error("safety_probe_failed client_id=%s error=%r", client_id, exc)
        return _Reading(None, None, read=False)

    def _keep(self, client_id: str, kept: _Kept) -> None:
        replaced = self._last.get(client_id)
        self._last[client_id] = kept
        self._last.move_to_end(client_id)
        dropped = [replaced] if replaced is not None else []
        if len(self._last) > self._callers:
            dropped.append(self._last.popitem(last=False)[1])
        for old in dropped:
            if not old.reading.done() and not old.waiting:
                # Words the caller went on from, read ahead: nobody will ask for them, and
                # on the one model worker they would queue ahead of other callers' lines.
                old.reading.cancel()

        def forget_failure(done: asyncio.Future[_Reading]) -> None:
            if _failed(done) and self._last.get(client_id) is kept:
                del self._last[client_id]

        kept.reading.add_done_callback(forget_failure)


def _failed(reading: asyncio.Future[_Reading]) -> bool:
    """Ended without a reading (the loop closing, the model failing): asked again, not kept."""
    if not reading.done():
        return False
    return reading.cancelled() or reading.exception() is not None or not reading.result().read


@dataclass(slots=True)
class _Kept:
    digest: bytes
    reading: asyncio.Future[_Reading]
    waiting: int = 0  # turns and read-aheads awaiting it


@dataclass(frozen=True, slots=True)
class _Reading:
    concern: Concern | None
    in_order: Concern | None  # as order talk (`ORDER_PROBE_FILE`)
    read: bool = True  # False: the model failed or timed out, and the phrases decide


class NoReader:
    """The fake: the phrases alone, for tests that measure them without the probe."""

    async def concern(
        self, said: str, *, client_id: str = "", order_talk: bool = False
    ) -> Concern | None:
        return None
