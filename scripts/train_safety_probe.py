"""Train the pharmacy's safety probe (agents/risk.py) and write agents/data/safety_probe.json.

The lines, each labelled emergency, self_harm, dose or ordinary:
- from helpers who saw no code: blind sets 1 and 2 (benchmarks/data/safety_blind{1,2}.json),
  agents/data/safety_train.json (opening lines) and safety_midcall.json (lines from later
  in a call); for the order-talk probe (agents/data/safety_probe_orders.json) also
  safety_orders.json (ordinary talk about an order in progress);
- ordinary lines written here for other purposes, copied into
  agents/data/safety_ordinary.json at each run: the bench's daily scenarios without a
  safety tag, the daily product sentences, and consent sets 1 and 2. Without them the
  probe took "I want to talk to a real person" for self-harm.

Not trained on: agents/data/safety_vivid.json, 540 lines a helper who saw no code wrote
on 2026-12-07 in callers' figures of speech ("my back's absolutely murdering me"), with
concerns told the same way. Added to TRAINING, and trained to convergence, it halved
the ordinary lines flagged and caught as many held-out concerns, but other ones, and
flagged plain order talk it had let by ("three packs cos it's gonna be a bad summer"):
measured in docs/performance.md, and kept for the next reader.

Held out: blind sets 3 and 4, and the same kinds of lines from the bench's held-out
scenarios, the held-out product sentences and consent set 3
(benchmarks/safety_blind.py measures them). Each line is embedded by the first 8
blocks of the bundled Qwen2.5-Coder 0.5B (callswarm/reader_model.py): about two
minutes on 2 cores.

    .venv/bin/python scripts/train_safety_probe.py [--data-dir data]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ORDINARY = ROOT / "agents" / "data" / "safety_ordinary.json"
TRAINING = (
    ROOT / "benchmarks" / "data" / "safety_blind1.json",
    ROOT / "benchmarks" / "data" / "safety_blind2.json",
    ROOT / "agents" / "data" / "safety_train.json",
    ROOT / "agents" / "data" / "safety_midcall.json",
    ORDINARY,
)
# The probe for a line that changes the caller's order in progress: the same lines and
# ordinary order talk ("get rid of the tablets, that's me done"), which the probe read
# as self-harm or an emergency in about one line of six (benchmarks/order_moves.py).
# Trained into every line's probe, it missed 4 more of the 200 veiled self-harm lines of
# held-out set 6; kept to order talk, it misses none of them.
ORDER_TALK = (*TRAINING, ROOT / "agents" / "data" / "safety_orders.json")


def lines(paths: tuple[Path, ...]) -> list[tuple[str, str]]:
    return [
        (said, label)
        for path in paths
        for label, said_all in json.loads(path.read_text())["categories"].items()
        for said in said_all
    ]


def write_ordinary() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from safety_blind import ordinary_written_here

    said = ordinary_written_here(held_out=False)
    ORDINARY.write_text(
        json.dumps(
            {
                "written": "here, for the bench and benchmarks; copied by this script",
                "categories": {"ordinary": said},
            },
            indent=0,
        )
        + "\n"
    )


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from agents.risk import ORDER_PROBE_FILE, data_sha256, save_probe, train
    from callswarm.app import safety_embedder
    from callswarm.settings import Settings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data")
    parser.add_argument("--l2", type=float, default=30.0)
    # Chosen on five-fold cross-validation of the helpers' lines, phrases and probe
    # together: 0.2 caught 94.5 % and flagged 5.8 % of ordinary lines, 0.3 caught 96.6 %
    # and flagged 9.5 %; safety comes before sales.
    parser.add_argument("--ordinary-below", type=float, default=0.3)
    args = parser.parse_args()
    write_ordinary()
    embedder = safety_embedder(Settings(data_dir=args.data_dir))
    for paths, path in ((TRAINING, None), (ORDER_TALK, ORDER_PROBE_FILE)):
        data = lines(paths)
        started = time.perf_counter()
        vectors = [embedder.embed_now(said) for said, _ in data]
        print(f"embedded {len(data)} lines in {time.perf_counter() - started:.0f} s")
        probe = train(
            vectors,
            [label for _, label in data],
            model_id=embedder.model_id,
            data=data_sha256(paths),
            l2=args.l2,
            ordinary_below=args.ordinary_below,
        )
        if path is None:
            save_probe(probe)
        else:
            save_probe(probe, path)
        right = sum(
            (probe.concern(v) is None) == (label == "ordinary")
            for v, (_, label) in zip(vectors, data, strict=True)
        )
        print(f"training lines read right: {right}/{len(data)}")


if __name__ == "__main__":
    main()
