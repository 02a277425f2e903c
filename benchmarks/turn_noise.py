"""Coughs and sounds heard while no reply plays, and short words said then: how many
of each the voice loop takes for noise (`voice.noise.noise_turn`) instead of a turn.

Each is cut as the VAD cuts it and read as every turn is, with the catalogue's prompt;
`noise_turn` then gives its verdict. Speech taken for noise is a caller's words lost:
it must be 0. The speech is every stop, backchannel and barge-in of `asides.py`'s
lists and `_short_turns.py` (60 short turns written by someone who saw no rule); the
sounds are `barge_in.py`'s coughs and `_sounds.py`.

    .venv/bin/python benchmarks/turn_noise.py [--voices tuned|new|all] [--set ours|fresh]
        [--conditions wide,phone,phone10,phone5,wide10,wide5] [--held S] [--show]

`--set fresh` is `_short_turns2.py` and `_sounds2.py`, written after the thresholds
were chosen by someone who saw neither them nor these figures. `--held 1.1` adds the
silence a turn has when the end-of-turn model held it to the 1.6 s cap instead of the
500 ms stop the VAD alone gives.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _sounds  # noqa: E402
from _callers import VOICE_SETS, condition, show_logs, speak  # noqa: E402
from _harness import gateway_vocabulary, pct  # noqa: E402
from _short_turns import SHORT_TURNS  # noqa: E402
from asides import SETS, utterance  # noqa: E402
from barge_in import BARGE_INS, cough  # noqa: E402

from voice.noise import noise_turn  # noqa: E402
from voice.stt import WhisperSTT, bundled_whisper  # noqa: E402
from voice.voiced import load_silero  # noqa: E402

NOISES = ("babble", "street", "hum")


def _condition(name: str) -> tuple[str, float | None]:
    """ "phone10" is the phone band at 10 dB SNR; "wide" is wide band, clean."""
    band = name.rstrip("0123456789")
    snr = name[len(band) :]
    return band, float(snr) if snr else None


def items(voices: tuple[str, ...], fresh: bool = False) -> list[tuple[str, str, bytes]]:
    if fresh:  # written after the thresholds were chosen, by someone who saw none of this
        import _short_turns2
        import _sounds2

        said = list(_short_turns2.SHORT_TURNS)
        sounds = [("sound", label, make()) for label, make in _sounds2.SOUNDS]
    else:
        lists = SETS.values()
        said = sorted({t for s in lists for kind in ("stop", "backchannel") for t in s[kind]})
        said += [*BARGE_INS, *SHORT_TURNS]
        seeds = sorted({s for st in lists for s in st["cough"]})
        sounds = [("sound", f"cough {s}", cough(0.15 + 0.3 * (s % 7) / 6, s)) for s in seeds]
        sounds += [("sound", label, make()) for label, make in _sounds.SOUNDS]
    return [("speech", f"{v}: {t}", speak(t, v)) for v in voices for t in said] + sounds


async def run(
    voices: tuple[str, ...], conditions: list[str], fresh: bool, held_s: float, show: bool
) -> None:
    stt = WhisperSTT(bundled_whisper(), vocabulary=gateway_vocabulary(), workers=1)
    load_silero()
    everything = items(voices, fresh)
    print(f"voices {', '.join(voices)}")
    print(
        f"{'kind':<7} {'condition':<9} {'n':>5} {'no turn':>8} {'heard nothing':>14}"
        f" {'noise':>6} {'a turn':>7} {'check p50':>10} {'p95':>7}"
    )
    for name in conditions:
        band, snr = _condition(name)
        counts: dict[str, dict[str, int]] = {}
        seconds: list[float] = []
        for i, (kind, label, pcm) in enumerate(everything):
            row = counts.setdefault(kind, {"n": 0, "vad": 0, "empty": 0, "noise": 0, "turn": 0})
            row["n"] += 1
            audio = utterance(condition(pcm, band, snr, NOISES[i % 3], seed=i))
            if audio is None:
                row["vad"] += 1
                continue
            audio += b"\0\0" * int(16000 * held_s)
            heard = (await stt.transcribe(audio)).text
            if not heard.strip():
                row["empty"] += 1
                continue
            started = time.perf_counter()
            noise = await noise_turn(stt, audio, heard)
            seconds.append(time.perf_counter() - started)
            row["noise" if noise else "turn"] += 1
            if show and noise == (kind == "speech"):
                print(f"  WRONG {kind:<6} {name:<9} {label:<40} {heard!r}")
        p50, p95 = (f"{pct(seconds, q) * 1000:.0f}ms" for q in (0.5, 0.95))
        for kind, row in counts.items():
            print(
                f"{kind:<7} {name:<9} {row['n']:>5} {row['vad']:>8} {row['empty']:>14}"
                f" {row['noise']:>6} {row['turn']:>7} {p50:>10} {p95:>7}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--voices", default="new", choices=tuple(VOICE_SETS))
    parser.add_argument("--conditions", default="wide,phone,phone10,phone5")
    parser.add_argument("--set", default="ours", choices=("ours", "fresh"))
    parser.add_argument(
        "--held", type=float, default=0.0, help="seconds of silence more, as a held turn ends"
    )
    parser.add_argument("--show", action="store_true", help="list each wrong verdict")
    args = parser.parse_args()
    if args.show:
        show_logs("voice.noise")  # each gauged turn's scores
    voices, conditions = VOICE_SETS[args.voices], args.conditions.split(",")
    asyncio.run(run(voices, conditions, args.set == "fresh", args.held, args.show))


if __name__ == "__main__":
    main()
