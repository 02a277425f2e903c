"""The SIP front against pyVoIP's parser alone: what each makes of what peers send.

    .venv/bin/python benchmarks/sip_front.py [--mutations 10000] [--seed 1]

Three sets: RFC 4475's 49 torture messages, the INVITEs that baresip 1.0 and linphonec
5.1 sent here (tests/telephony/peers/), and mutations of valid requests (the fuzzer's
edits, drawn with a fixed seed). For each message:

- **pyVoIP alone**: `SIPMessage(raw)` parses, raises its own `SIPParseError`, or
  crashes with another exception (IndexError, KeyError, ValueError…), which is what
  left a caller with a 400 or no answer at all;
- **front**: `sipmsg.parse` + `check_request` refuse it with a status, or pass it on,
  and then pyVoIP parses the canonical form (a crash there would be the front's bug).

Also the cost: median and p95 µs per message of each path, on the valid messages.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# First: pyVoIP.SIP and pyVoIP.VoIP import each other, and only this order resolves.
import pyVoIP.VoIP  # noqa: E402, F401
from pyVoIP import SIP  # noqa: E402

from telephony import sipmsg  # noqa: E402

CORPUS = ROOT / "tests" / "telephony" / "rfc4475"
PEERS = ROOT / "tests" / "telephony" / "peers"
NASTY = [b"", b" ", b"\r\n", b"\r\n ", b":", b": ", b";", b",", b"<", b">", b'"', b"\\",
         b"\x00", b"\xff", b"tag=", b";tag=", b"0", b"4294967296", b"m=audio", b"a" * 200]  # fmt: skip


def mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(out)) if out else 0
        span = rng.randint(0, 40)
        match rng.randrange(4):
            case 0:
                del out[at : at + span]
            case 1:
                out[at:at] = rng.choice(NASTY)
            case 2:
                out[at : at + span] = rng.choice(NASTY)
            case _:
                lines = bytes(out).split(b"\r\n")
                index = rng.randrange(len(lines))
                lines.insert(index, lines[index]) if rng.random() < 0.5 else lines.pop(index)
                out = bytearray(b"\r\n".join(lines))
    return bytes(out)


def pyvoip_alone(raw: bytes) -> str:
    try:
        SIP.SIPMessage(raw)
        return "parsed"
    except SIP.SIPParseError:
        return "refused (SIPParseError)"
    except Exception as exc:
        return f"crashed ({type(exc).__name__})"


def front(raw: bytes) -> str:
    try:
        message = sipmsg.parse(raw)
        if message.is_request:
            sipmsg.check_request(message)
    except sipmsg.SipError as exc:
        return f"refused ({exc.status // 100}xx)"
    if message.method in ("OPTIONS", "INFO") or not message.is_request:
        return "answered by the front" if message.is_request else "dropped (a stray response)"
    try:
        SIP.SIPMessage(message.canonical())
        return "passed, pyVoIP parsed it"
    except Exception as exc:
        return f"passed, pyVoIP crashed ({type(exc).__name__})"


def timed(path, messages: list[bytes], rounds: int = 20) -> tuple[float, float]:
    times = []
    for _ in range(rounds):
        for raw in messages:
            start = time.perf_counter()
            path(raw)
            times.append((time.perf_counter() - start) * 1e6)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95)]


def table(title: str, messages: list[bytes]) -> None:
    alone = Counter(pyvoip_alone(raw) for raw in messages)
    ours = Counter(front(raw) for raw in messages)
    print(f"\n{title} ({len(messages)} messages)\n")
    print("| path | outcome | messages |\n|---|---|---|")
    for name, counts in (("pyVoIP alone", alone), ("front + pyVoIP", ours)):
        for outcome, count in counts.most_common():
            print(f"| {name} | {outcome} | {count} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mutations", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    corpus = [path.read_bytes() for path in sorted(CORPUS.glob("*.dat"))]
    peers = [path.read_bytes() for path in sorted(PEERS.glob("*.sip"))]
    rng = random.Random(args.seed)
    mutations = [mutate(rng.choice(peers), rng) for _ in range(args.mutations)]
    table("RFC 4475 torture messages", corpus)
    table("softphones' INVITEs", peers)
    table(f"mutated softphone INVITEs (seed {args.seed})", mutations)
    parses = [raw for raw in peers + corpus if pyvoip_alone(raw) == "parsed"]
    alone = timed(pyvoip_alone, parses)
    ours = timed(front, parses)
    print(f"\ncost per message, on the {len(parses)} that pyVoIP alone parses\n")
    print("| path | median µs | p95 µs |\n|---|---|---|")
    print(f"| pyVoIP alone | {alone[0]:.0f} | {alone[1]:.0f} |")
    print(f"| front + pyVoIP | {ours[0]:.0f} | {ours[1]:.0f} |")
    print(f"| ratio | {ours[0] / alone[0]:.2f}× | {ours[1] / alone[1]:.2f}× |")


if __name__ == "__main__":
    main()
