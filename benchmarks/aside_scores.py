"""What Whisper and Silero make of speech and of coughs over a reply: the evidence for the
noise rule's thresholds (`voice.noise`), in noise `asides.py` does not add.

Every stop and barge-in of `asides.py`'s lists, said in nine voices, and every cough
and sound (`_sounds.py`), each cut as the VAD cuts it, wide and through the phone band,
clean and at 10 and 5 dB SNR (babble, street, hum in turn). For each: Silero's highest
speech probability, Whisper's no-speech probability and log-probability per token
(plain decode, as an aside is read), and whether `aside()` takes it for noise. Speech
taken for noise is a caller's words lost; it must be 0.

    .venv/bin/python benchmarks/aside_scores.py [--voices tuned|new|all] [--show]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _sounds  # noqa: E402
from _callers import VOICE_SETS, condition, speak  # noqa: E402
from asides import REPLY, SETS, utterance  # noqa: E402
from barge_in import BARGE_INS, cough  # noqa: E402

from voice.overlap import aside  # noqa: E402
from voice.stt import WhisperSTT, bundled_whisper  # noqa: E402
from voice.voiced import silero_voiced  # noqa: E402

CONDITIONS = (("wide", None), ("phone", None), ("wide", 10.0), ("phone", 10.0), ("wide", 5.0))
CONDITIONS += (("phone", 5.0),)
NOISES = ("babble", "street", "hum")


def items(voices: tuple[str, ...]) -> list[tuple[str, str, bytes]]:
    said = sorted({t for s in SETS.values() for t in s["stop"]}) + list(BARGE_INS)
    seeds = sorted({s for st in SETS.values() for s in st["cough"]})
    return (
        [("speech", f"{v}: {t}", speak(t, v)) for v in voices for t in said]
        + [("cough", f"seed {s}", cough(0.15 + 0.3 * (s % 7) / 6, s)) for s in seeds]
        + [("sound", label, make()) for label, make in _sounds.SOUNDS]
    )


async def run(voices: tuple[str, ...], show: bool) -> None:
    stt = WhisperSTT(bundled_whisper())
    print(
        f"{'kind':<7} {'condition':<10} {'n':>5} {'silero<0.5':>11} {'their no-speech max':>20}"
        f" {'noise':>6} {'by silero':>10}"
    )
    everything = items(voices)
    for band, snr in CONDITIONS:
        name = band + ("" if snr is None else f" {snr:.0f}dB")
        rows: dict[str, list[tuple[float, float, bool, bool]]] = {}
        for i, (kind, label, pcm) in enumerate(everything):
            audio = utterance(condition(pcm, band, snr, NOISES[i % 3], seed=i))
            if audio is None:
                continue
            voiced = silero_voiced(audio)
            heard = await stt.transcribe(audio, plain=True)
            scores = {"no_speech": heard.no_speech, "confidence": heard.confidence}
            noise = aside(heard.text, REPLY, **scores, voiced=voiced) == "noise"
            alone = aside(heard.text, REPLY, **scores) == "noise"
            rows.setdefault(kind, []).append((voiced, heard.no_speech, noise, noise and not alone))
            if show and noise == (kind == "speech"):
                logprob = math.log(max(heard.confidence, 1e-12))
                print(
                    f"  WRONG {kind:<6} {name:<10} {label:<40} {heard.text!r} silero={voiced:.2f}"
                    f" no_speech={heard.no_speech:.2f} logprob={logprob:.2f}"
                )
        for kind, found in rows.items():
            quiet = [r for r in found if r[0] < 0.5]
            top = max((r[1] for r in quiet), default=0.0)
            print(
                f"{kind:<7} {name:<10} {len(found):>5} {len(quiet):>11} {top:>20.2f}"
                f" {sum(r[2] for r in found):>6} {sum(r[3] for r in found):>10}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--voices", default="all", choices=tuple(VOICE_SETS))
    parser.add_argument(
        "--show", action="store_true", help="list speech taken for noise, and sounds not"
    )
    args = parser.parse_args()
    asyncio.run(run(VOICE_SETS[args.voices], args.show))


if __name__ == "__main__":
    main()
