"""Which answers to "Shall I place the order?" place it: callers' own words, written by
helpers who saw no code (`benchmarks/data/consent_blind*.json`: replies that consent,
and replies with a yes-word that do not).

The decision is the pharmacy's: its screen's move on the read-back's answer
(`agents.moves.order_move`), then `confirm_order`'s consent in code (`consents`). `--repo` runs the same sets against
another tree, such as the code before a change (`git archive REV`).

    .venv/bin/python benchmarks/consent.py [--repo /tmp/before]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=HERE.parent)
    args = parser.parse_args()
    sys.path.insert(0, str(args.repo))
    from agents.moves import Confirm, order_move
    from models.orders import LineView

    try:  # the code since confirm_order decides consent (before, the move did)
        from agents.guards import consents
        from agents.moves import described_by
    except ImportError:
        consents = None

    print(f"{'set':<18} {'consents placed':>16} {'others placed':>14}   refused / placed")
    for path in sorted((HERE / "data").glob("consent_blind*.json")):
        corpus = json.loads(path.read_text())
        lines = tuple(
            LineView(name.upper(), name, "", "", quantity, 100)
            for name, quantity in corpus["order"]
        )

        def places(said: str, lines: tuple[LineView, ...] = lines) -> bool:
            move = order_move(said, lines, read_back_heard=True) == Confirm()
            return move and (consents is None or consents(said, described_by(lines)))

        refused = [s for s in corpus["consent"] if not places(s)]
        placed = [s for s in corpus["not_consent"] if places(s)]
        n_yes, n_no = len(corpus["consent"]), len(corpus["not_consent"])
        print(f"{path.stem:<18} {n_yes - len(refused):>9}/{n_yes:<6} {len(placed):>7}/{n_no:<6}")
        for said in refused:
            print(f"{'':<44}refused: {said!r}")
        for said in placed:
            print(f"{'':<44}placed:  {said!r}")


if __name__ == "__main__":
    main()
