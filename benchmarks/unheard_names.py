"""Where voice/stt.py's two lines for a made-up name come from: UNHEARD_NAME, DOUBTED_DECODE.

Each sentence of a set (benchmarks/data/product_sentences.yaml) is spoken, conditioned
and decoded as `product_names.py` does, with the catalogue's prompt and the check off.
Each word of the transcript that the prompt lists is read again without the prompt
(`WhisperSTT.listed_scores_sync`): its tokens' mean log-probability. A word is *said*
when the caller's sentence holds it. Prints how the scores of said and made-up words
spread, how many of each fall below a line, and how sure the decodes holding a made-up
word were.

    .venv/bin/python benchmarks/unheard_names.py --sets daily,fresh [--voices all]
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _callers import VOICE_SETS, condition, speak  # noqa: E402
from _harness import REPO, gateway_vocabulary, pct  # noqa: E402
from product_names import NOISES, sentences  # noqa: E402

sys.path.insert(0, str(REPO))

LINES = (-5.0, -6.0, -6.5, -7.0, -7.5, -8.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="daily,fresh")
    parser.add_argument("--voices", default="all", choices=tuple(VOICE_SETS))
    parser.add_argument("--conditions", default="clean,phone10")
    args = parser.parse_args()

    import voice.stt
    from voice.stt import WhisperSTT, bundled_whisper

    voice.stt.DOUBTED_DECODE = -math.inf  # each biased reading as it was, never re-decoded
    stt = WhisperSTT(bundled_whisper(), vocabulary=gateway_vocabulary(), workers=1)
    said: list[float] = []
    made_up: list[float] = []
    doubt_said: list[float] = []  # decode log-probability per token, by transcript
    doubt_made_up: list[float] = []
    transcripts = 0
    for which in args.sets.split(","):
        for i, case in enumerate(sentences(which)):
            text = case["text"].lower()
            for j, voice_name in enumerate(VOICE_SETS[args.voices]):
                for cond in args.conditions.split(","):
                    band = "clean" if cond == "clean" else "phone"
                    snr = float(cond[5:]) if cond.startswith("phone") and cond[5:] else None
                    pcm = b"\0\0" * 4800 + speak(case["text"], voice_name) + b"\0\0" * 4800
                    audio = condition(pcm, band, snr, NOISES[(i + j) % 3], seed=i * 31 + j)
                    heard = stt.transcribe_sync(audio)
                    transcripts += 1
                    scores = stt.listed_scores_sync(audio, heard.text)
                    ours = [(s, re.search(rf"\b{re.escape(w.lower())}\b", text)) for w, s in scores]
                    said += [s for s, hit in ours if hit]
                    made_up += [s for s, hit in ours if not hit]
                    decode = math.log(max(heard.confidence, 1e-12))
                    if any(not hit for _, hit in ours):
                        doubt_made_up.append(decode)
                    elif ours:
                        doubt_said.append(decode)
    print(f"sets {args.sets}, voices {args.voices}, {transcripts} transcripts")
    print(f"{'listed words':<22} {'n':>4} {'min':>6} {'p5':>6} {'p50':>6} {'p95':>6} {'max':>6}")
    for label, values in (("said", said), ("made up", made_up)):
        if values:
            print(
                f"{label:<22} {len(values):>4} {min(values):>6.2f} {pct(values, 0.05):>6.2f} "
                f"{pct(values, 0.5):>6.2f} {pct(values, 0.95):>6.2f} {max(values):>6.2f}"
            )
    print(f"{'below the line':<22} " + " ".join(f"{line:>6.1f}" for line in LINES))
    for label, values in (("said", said), ("made up", made_up)):
        print(f"{label:<22} " + " ".join(f"{sum(v < line for v in values):>6}" for line in LINES))
    for label, values in (
        ("decodes, all said", doubt_said),
        ("decodes, one made up", doubt_made_up),
    ):
        if values:
            print(f"{label:<22} n {len(values)}, log-probability per token up to {max(values):.2f}")


if __name__ == "__main__":
    main()
