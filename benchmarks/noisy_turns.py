"""Does a caller's turn end when room noise goes on under it? When the turn detector
(webrtcvad, `voice.vad.TurnDetector`) ends a complete sentence said over babble, street
noise or a hum, at 20, 10 and 5 dB SNR, wide band and through the phone band.

Every pause and end of turn starts from the detector's silence: the end-of-turn model
is asked only after `early_ms` of it, and a turn with none ends at `max_utterance_s`.
Each sentence is followed by 16 s of the same noise, in stream time (the figures do
not depend on the host).

`--switched-on S`: the room changes during the call. The line is quiet for a first
turn ("Hello, I need a bit of help, please.", same voice) and 2 s after it; then the
noise comes on, S seconds before the sentence measured, and goes on after it (a
television switched on between two turns).

    .venv/bin/python benchmarks/noisy_turns.py [--voices tuned|new|all] [--snr 20,10,5]
        [--noise babble,street,hum] [--aggressiveness 0-3] [--webrtc-only] [--switched-on S]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _callers import VOICE_SETS, condition, speak  # noqa: E402
from end_of_turn import COMPLETE, HELDOUT_COMPLETE, trim, voiced_end  # noqa: E402

from voice.degrade import telephone  # noqa: E402
from voice.vad import SpeechEnded, SpeechStarted, TurnDetector, VadConfig  # noqa: E402
from voice.voiced import silero_latest  # noqa: E402

FRAME = 640
AGGRESSIVENESS = [VadConfig().aggressiveness]
WEBRTC_ONLY = [False]
LEAD_S = 0.5
AFTER_S = 16.0
OPENING = "Hello, I need a bit of help, please."
QUIET_AFTER_OPENING_S = 2.0


def switched_on(
    said: bytes, voice: str, band: str, snr: float | None, kind: str, before_s: float, seed: int
) -> tuple[bytes, float]:
    """A quiet first turn, then the noise from `before_s` before `said` on (which is the
    lead and the sentence): the audio, and where `said` starts in it, in seconds."""
    quiet = b"\0\0" * int(16000 * LEAD_S) + trim(speak(OPENING, voice))
    quiet += b"\0\0" * int(16000 * QUIET_AFTER_OPENING_S)
    room = b"\0\0" * int(16000 * before_s) + said + b"\0\0" * int(16000 * AFTER_S)
    # The room's noise as every benchmark mixes it; the phone band over the whole line.
    line = quiet + condition(room, "wide", snr, kind, seed=seed)
    return (telephone(line) if band == "phone" else line), (
        len(quiet) / 2 + 16000 * before_s
    ) / 16000


def end_after(audio: bytes, first: float, last: float) -> tuple[float | None, bool, bool]:
    """Seconds from the last word to the end of the turn that holds it (None if none
    ended: an utterance cut at `max_utterance_s` before the last word is not it),
    whether the noise alone then started another turn, which would cut the reply, and
    whether a turn ended between the first word and the last (a reply too soon)."""
    detector = TurnDetector(
        VadConfig(aggressiveness=AGGRESSIVENESS[0]), gauge=None if WEBRTC_ONLY[0] else silero_latest
    )
    ended: float | None = None
    split = False
    for i in range(0, len(audio), FRAME):
        for event in detector.feed(audio[i : i + FRAME]):
            if isinstance(event, SpeechEnded) and event.at >= last and ended is None:
                ended = event.at - last
            elif isinstance(event, SpeechEnded) and first < event.at < last:
                split = True
            elif isinstance(event, SpeechStarted) and ended is not None:
                return ended, True, split
    return ended, False, split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--voices", default="new", choices=tuple(VOICE_SETS))
    parser.add_argument("--snr", default="20,10,5")
    parser.add_argument("--noise", default="babble,street,hum")
    parser.add_argument("--aggressiveness", type=int, default=VadConfig().aggressiveness)
    parser.add_argument(
        "--webrtc-only", action="store_true", help="webrtcvad alone, as before 2026-12-06"
    )
    parser.add_argument("--switched-on", type=float, default=0.0, metavar="S")
    args = parser.parse_args()
    AGGRESSIVENESS[0] = args.aggressiveness
    WEBRTC_ONLY[0] = args.webrtc_only
    voices = VOICE_SETS[args.voices]
    sentences = COMPLETE + HELDOUT_COMPLETE
    print(f"{len(sentences)} complete sentences, voices {', '.join(voices)}; seconds after the")
    print("last word until the turn ends (the 500 ms stop in quiet)")
    print(
        f"{'noise':<7} {'SNR':>4} {'band':<6} {'n':>4} {'<= 1 s':>7} {'<= 2 s':>7}"
        f" {'> 10 s':>7} {'p50':>7} {'noise starts a turn after':>26} {'split':>6}"
    )
    conditions = [("none", None)] + [
        (kind, float(snr)) for kind in args.noise.split(",") for snr in args.snr.split(",")
    ]
    for kind, snr in conditions:
        for band in ("wide", "phone"):
            waits: list[float] = []
            restarted = splits = 0
            for i, sentence in enumerate(sentences):
                for j, voice in enumerate(voices):
                    said = b"\0\0" * int(16000 * LEAD_S) + trim(speak(sentence, voice))
                    if args.switched_on:
                        audio, at = switched_on(
                            said, voice, band, snr, kind, args.switched_on, seed=i + j
                        )
                    else:
                        line = said + b"\0\0" * int(16000 * AFTER_S)
                        audio = condition(line, band, snr, kind if snr else "hum", seed=i + j)
                        at = 0.0
                    last = at + voiced_end(said)
                    wait, again, split = end_after(audio, at + LEAD_S, last)
                    waits.append(AFTER_S if wait is None else wait)
                    restarted += again
                    splits += split
            n = len(waits)
            print(
                f"{kind:<7} {snr or '-'!s:>4} {band:<6} {n:>4}"
                f" {sum(w <= 1 for w in waits):>7} {sum(w <= 2 for w in waits):>7}"
                f" {sum(w > 10 for w in waits):>7} {statistics.median(waits):>6.2f}s"
                f" {restarted:>26} {splits:>6}",
                flush=True,
            )


if __name__ == "__main__":
    main()
