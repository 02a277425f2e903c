"""Is the product a caller names the one the gateway finds? Issue 19's recognition figures.

Each sentence of benchmarks/data/product_sentences.yaml names one catalogue product.
It is spoken by each voice, passed through a condition (clean wide band, or the
telephone band with noise under it), transcribed as the gateway transcribes, and
looked up as the agents look it up. A product counts as found when the transcript
holds its name or the search's top hit is it; as *wrong* when the search's top hit is
a product the caller did not name (the worst outcome: a wrong drug offered). *Named*
counts transcripts that hold a product name the caller did not say (the recogniser's
own invention, such as "Cough Syrup" for a whole sentence). The search's time per
transcript is printed as well.

    .venv/bin/python benchmarks/product_names.py [--set daily|heldout|fresh|all]
        [--voices tuned|new|all] [--conditions clean,phone10] [--model tiny|base]
        [--rescore K [--margin M]] [--gate T]

`--rescore K`: when no catalogue name is in the transcript, the K readings with a name
in place of the words most like it (voice/names.py) are scored against the audio with
Whisper's decoder (`WhisperSTT.score_sync`); the best replaces the transcript if its
log-probability is at least the transcript's less M.

`--gate T`: when the search's top hit is not named in the transcript, the reading with
its name in place is scored against the audio beside the transcript; below T (mean
log-probability per token, reading less transcript) the hit counts as *asked* (a
confirmation question), not offered. Prints how many right and wrong hits each way.

Conditions: `clean` (wide band, no noise), `phone` (8 kHz μ-law, no noise),
`phoneN` (the telephone band with babble, street and hum in turn at N dB SNR).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _callers import VOICE_SETS, condition, speak  # noqa: E402
from _harness import REPO, gateway_vocabulary, pct  # noqa: E402

NOISES = ("babble", "street", "hum")
CATALOGUE = REPO / "models/data/catalogue.json"


def sentences(which: str) -> list[dict]:
    data = yaml.safe_load((REPO / "benchmarks/data/product_sentences.yaml").read_text())
    return {"daily": data["daily"], "heldout": data["heldout"], "fresh": data["fresh"]}.get(
        which, data["daily"] + data["heldout"]
    )


def named(transcript: str, product: str) -> bool:
    """The transcript holds the product's distinctive word(s)."""
    heard = re.sub(r"[^a-z0-9 ]", " ", transcript.lower())
    words = [w for w in re.sub(r"[^a-z0-9 ]", " ", product.lower()).split() if len(w) > 3]
    generic = {"cream", "tablets", "spray", "nasal", "drops", "lotion", "syrup", "solution"}
    key = [w for w in words if w not in generic] or words
    return all(re.search(rf"\b{re.escape(w)}\b", heard) for w in key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="daily", choices=("daily", "heldout", "fresh", "all"))
    parser.add_argument("--voices", default="new", choices=tuple(VOICE_SETS))
    parser.add_argument("--conditions", default="clean,phone10")
    parser.add_argument("--model", default="tiny", choices=("tiny", "base"))
    parser.add_argument("--no-hotwords", action="store_true")
    parser.add_argument("--beam", type=int, default=3)
    parser.add_argument(
        "--alternatives", type=int, default=0, help="also count a product any beam reading finds"
    )
    parser.add_argument("--rescore", type=int, default=0, metavar="K")
    parser.add_argument("--margin", type=float, default=0.0, metavar="M")
    parser.add_argument("--gate", type=float, default=None, metavar="T")
    parser.add_argument("--show", action="store_true", help="print every miss and wrong hit")
    args = parser.parse_args()

    from sqlmodel import Session

    from models import make_engine
    from models.catalogue import load_catalogue
    from models.search import search_products
    from voice.stt import WhisperSTT, bundled_whisper

    voices = VOICE_SETS[args.voices]
    vocabulary = [] if args.no_hotwords else gateway_vocabulary()
    if args.model == "tiny":
        path = bundled_whisper()
    else:
        from voice.stt import bundled_whisper_base

        path = bundled_whisper_base(REPO / "data")
    stt = WhisperSTT(
        path, vocabulary=vocabulary, workers=1, beam_size=args.beam, alternatives=args.alternatives
    )
    from voice.names import names_in_place

    db = make_engine("sqlite:///:memory:")
    load_catalogue(db)
    names = [p["name"] for p in json.loads(CATALOGUE.read_text())["products"]]
    cases = sentences(args.set)
    print(
        f"model {args.model}, set {args.set} ({len(cases)} sentences), voices {args.voices} "
        f"({len(voices)}), hotwords {'off' if args.no_hotwords else 'on'}"
    )
    print(
        f"{'condition':<10} {'n':>4} {'in text':>8} {'top hit':>8} {'found':>8} "
        f"{'wrong':>6} {'named':>6} {'any beam':>8} {'decode p50':>10} {'p95':>6} "
        f"{'search p50':>10} {'p95':>6}"
    )
    for cond in args.conditions.split(","):
        band = "clean" if cond == "clean" else "phone"
        snr = float(cond[5:]) if cond.startswith("phone") and cond[5:] else None
        in_text = top = found = wrong = n = any_reading = changed = invented = 0
        decode: list[float] = []
        searching: list[float] = []
        rescoring: list[float] = []
        gated = {"offered right": 0, "offered wrong": 0, "asked right": 0, "asked wrong": 0}
        for i, case in enumerate(cases):
            right = {case["product"], *case.get("also", [])}
            for j, voice in enumerate(voices):
                kind = NOISES[(i + j) % len(NOISES)]
                pcm = speak(case["text"], voice)
                pcm = b"\0\0" * 4800 + pcm + b"\0\0" * 4800
                audio = condition(pcm, band, snr, kind, seed=i * 31 + j)
                started = time.perf_counter()
                transcript = stt.transcribe_sync(audio)
                heard = transcript.text
                decode.append(time.perf_counter() - started)
                if args.rescore and not any(named(heard, name) for name in names):
                    started = time.perf_counter()
                    others = names_in_place(heard, names, args.rescore)
                    if others:
                        scores = stt.score_sync(audio, [heard, *(r.text for r in others)])
                        best = max(range(len(others)), key=lambda k: scores[k + 1])
                        if scores[best + 1] >= scores[0] - args.margin:
                            heard = others[best].text
                            changed += 1
                    rescoring.append(time.perf_counter() - started)
                with Session(db) as s:
                    started = time.perf_counter()
                    hits = search_products(s, heard, limit=1)
                    searching.append(time.perf_counter() - started)
                hit = hits[0].product.name if hits else None
                invented += any(
                    named(heard, name) and not named(case["text"], name) for name in names
                )
                said = any(named(heard, p) for p in right)
                if args.gate is not None and hit is not None:
                    sure = named(heard, hit)
                    if not sure:
                        [in_place, *_] = names_in_place(heard, [hit], 1) or [None]
                        if in_place is not None:
                            plain, named_in = stt.score_sync(audio, [heard, in_place.text])
                            sure = named_in - plain >= args.gate
                    way = "offered" if sure else "asked"
                    gated[f"{way} {'right' if hit in right else 'wrong'}"] += 1
                n += 1
                in_text += said
                top += hit in right
                found += said or hit in right
                bad = hit is not None and hit not in right
                readings = [heard, *transcript.alternatives]
                with Session(db) as s:
                    firsts = [search_products(s, r, limit=1) for r in readings]
                any_reading += any(
                    any(named(r, p) for p in right) or (h and h[0].product.name in right)
                    for r, h in zip(readings, firsts, strict=True)
                )
                wrong += bad
                if args.show and (bad or not (said or hit in right)):
                    label = "WRONG" if bad else "miss "
                    print(f"  {label} {cond} {voice:<18} {case['text']!r} -> {heard!r} -> {hit}")
        print(
            f"{cond:<10} {n:>4} {100 * in_text / n:>7.1f}% {100 * top / n:>7.1f}% "
            f"{100 * found / n:>7.1f}% {wrong:>6} {invented:>6} {100 * any_reading / n:>7.1f}% "
            f"{statistics.median(decode):>9.2f}s "
            f"{pct(decode, 0.95):>5.2f}s "
            f"{1000 * statistics.median(searching):>8.1f}ms {1000 * pct(searching, 0.95):>4.1f}ms"
        )
        if args.gate is not None:
            print(f"{'':<10} gate {args.gate}: " + ", ".join(f"{k} {v}" for k, v in gated.items()))
        if rescoring:
            print(
                f"{'':<10} rescored {len(rescoring)} of {n}, changed {changed}; rescoring "
                f"p50 {statistics.median(rescoring):.3f}s p95 {pct(rescoring, 0.95):.3f}s"
            )
    db.dispose()


if __name__ == "__main__":
    main()
