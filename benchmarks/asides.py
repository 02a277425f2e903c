"""What is said over a reply, read offline: how many asides are taken for asides, and how
many short stops for stops. Issue 19's backchannel figures, on more words than
`barge_in.py` has time for.

`barge_in.py` plays a reply in real time and says 7 backchannels over it. This reads
the same decision (`voice.overlap.read_aside`) straight from each utterance as the
VAD cuts it, so it can afford many more: backchannels, coughs, short stops ("No.",
"Pardon?", "Hang on.") and real barge-ins, in the tuned and the new voices, wide band
and through the telephone band. The daily lists were looked at while tuning; the
held-out lists were written before any run and are not to be tuned on.

    .venv/bin/python benchmarks/asides.py [--set daily|heldout|fresh|fresh2|fresh3|fresh4|fresh5]
        [--voices tuned|new|all]
        [--conditions wide,phone] [--show]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _asides_blind  # noqa: E402
import _asides_blind2  # noqa: E402
import _sounds  # noqa: E402
from _callers import VOICE_SETS, show_logs, speak  # noqa: E402
from _harness import pct  # noqa: E402
from barge_in import BARGE_INS, REPLY, cough  # noqa: E402

from voice.degrade import telephone  # noqa: E402
from voice.stt import WhisperSTT, bundled_whisper  # noqa: E402
from voice.vad import SpeechEnded, TurnDetector  # noqa: E402

try:
    from voice.overlap import read_aside
except ImportError:  # the code before read_aside, for a baseline run from a worktree
    read_aside = None  # type: ignore[assignment]

SETS = {
    "daily": {
        "backchannel": (
            "Mm-hmm.", "Okay.", "Yeah.", "Right.", "Uh-huh.", "Okay, thanks.", "Yeah, right.",
            "Sure.", "I see.", "Alright.", "Mm.", "Yes.", "Got it.", "Okay, great.", "Yep.",
            "Oh, right.", "Hmm.", "Yeah, yeah.",
        ),
        "stop": (
            "No.", "Stop.", "Wait.", "Hold on.", "No, no.", "Sorry?", "What?", "Hang on.",
            "Excuse me.", "Pardon?", "Nope.", "Cancel that.", "Not that one.", "Too expensive.",
            "Hello?", "Hmm, no.", "Okay, but no.", "Yeah, but how much?", "Mm, what?",
        ),
        "cough": tuple(range(12)),
    },
    "heldout": {
        "backchannel": (
            "Mhm.", "Okay, okay.", "Right, right.", "Oh, okay.", "Uh-huh, yeah.", "Yes, I see.",
            "Great.", "Fine.",
        ),
        "stop": (
            "Wait, what?", "Sorry, what?", "No, that's wrong.", "Hold on a second.",
            "Stop there.", "Um, no.", "Can you repeat that?",
        ),
        "cough": tuple(range(12, 24)),
    },
    # Written on 2026-12-04 after the stop-32 changes, as callers say them; run once.
    "fresh": {
        "backchannel": (
            "Yeah, go on.", "Mm, okay.", "Right, yes.", "Oh, lovely.", "Okay, cheers.",
            "Yep, yep.", "Uh-huh, right.", "Ah, okay.",
        ),
        "stop": (
            "Hang on, hang on.", "No, sorry.", "Wait, is that safe for kids?",
            "Hold on, what dose?", "Stop, stop.", "Sorry, how much?", "No no no.",
            "Er, actually no.",
        ),
        "cough": tuple(range(24, 36)),
    },
    # Written on 2026-12-04 at 21:00 UTC, before "go on" and its like were added to the
    # backchannels, as callers say them; run once before that change and once after.
    "fresh2": {
        "backchannel": (
            "Go on.", "Carry on.", "Okay, yeah.", "Mm, right.", "Yeah, sure.", "Cool.",
            "Uh-huh, okay.", "Right, got it.",
        ),
        "stop": (
            "No, wait.", "Hang on, sorry.", "Stop, that's wrong.", "Sorry, say that again?",
            "Wait, which one?", "No, not that.", "Hold on, how much?", "Er, no.",
        ),
        "cough": tuple(range(36, 48)),
    },
    # Written on 2026-12-05 by a helper who saw neither these lists nor the rules, with
    # 19 sounds of its own making (coughs, a sneeze, a door, ...) in place of our coughs.
    "fresh3": {
        "backchannel": _sounds.BACKCHANNELS,
        "stop": _sounds.STOPS,
        "cough": (),
        "sounds": _sounds.SOUNDS,
    },
    # Written on 2026-12-06 by a helper who saw neither these lists nor the rules, before
    # any run: calls for help count as stops, since they must cut the reply too.
    "fresh4": {
        "backchannel": _asides_blind.BACKCHANNELS,
        "stop": _asides_blind.STOPS + _asides_blind.HELP,
        "cough": (),
    },
    # Written on 2026-12-06 by another helper, blind, after the first run of fresh4: a
    # caller's answers said over the reply (a quantity, a choice) must cut it as stops do.
    "fresh5": {
        "backchannel": _asides_blind2.BACKCHANNELS,
        "stop": _asides_blind2.STOPS + _asides_blind2.ANSWERS + _asides_blind2.HELP,
        "cough": (),
    },
}  # fmt: skip
# Asides must not stop the reply; the rest must.
ASIDES = ("backchannel", "cough")


def utterance(pcm: bytes) -> bytes | None:
    """The utterance as the session's VAD cuts it out of the line, or None when the VAD
    never confirms speech (the reply then goes on, as after noise)."""
    detector = TurnDetector()
    line = b"\0\0" * 8000 + pcm + b"\0\0" * 16000
    for i in range(0, len(line), 640):
        for event in detector.feed(line[i : i + 640]):
            if isinstance(event, SpeechEnded):
                return event.audio
    for event in detector.flush():
        if isinstance(event, SpeechEnded):
            return event.audio
    return None


async def decide(stt: WhisperSTT, audio: bytes) -> tuple[str | None, str, str]:
    """(why it is an aside or None, what was heard, the primed reading if any)."""
    if read_aside is None:
        from voice.overlap import aside

        heard = (await stt.transcribe(audio, plain=True)).text
        return aside(heard, REPLY), heard, ""
    reading = await read_aside(stt, audio, REPLY, b"")
    assert reading is not None
    return reading.reason, reading.heard, reading.reread or ""


async def run(set_name: str, voices: tuple[str, ...], conditions: list[str], show: bool) -> None:
    stt = WhisperSTT(bundled_whisper())
    lists = SETS[set_name]
    print(f"set {set_name}, voices {', '.join(voices)}")
    print(
        f"{'kind':<12} {'condition':<9} {'n':>4} {'taken as aside':>15} {'cut':>5}"
        f" {'reread':>7} {'read p50':>9} {'p95':>7}"
    )
    for condition in conditions:
        for kind in ("backchannel", "cough", "stop", "barge-in"):
            if kind == "cough":
                items = [(f"seed {s}", cough(0.15 + 0.3 * (s % 7) / 6, s)) for s in lists["cough"]]
                items += [(label, make()) for label, make in lists.get("sounds", ())]
            else:
                said = BARGE_INS if kind == "barge-in" else lists[kind]
                items = [(f"{v}: {t}", speak(t, v)) for v in voices for t in said]
            taken = rereads = 0
            seconds: list[float] = []
            for label, pcm in items:
                audio = utterance(telephone(pcm) if condition == "phone" else pcm)
                if audio is None:
                    why, heard, reread = "no turn", "", ""
                else:
                    started = time.perf_counter()
                    why, heard, reread = await decide(stt, audio)
                    seconds.append(time.perf_counter() - started)
                rereads += bool(reread)
                taken += why is not None
                wrong = (why is None) == (kind in ASIDES)
                if show and (wrong or reread):
                    mark = "WRONG" if wrong else "     "
                    print(f"  {mark} {kind:<11} {label:<40} {why!s:<11} {heard!r} {reread!r}")
            cut = len(items) - taken
            p50, p95 = (f"{pct(seconds, q) * 1000:.0f}ms" if seconds else "-" for q in (0.5, 0.95))
            print(
                f"{kind:<12} {condition:<9} {len(items):>4} {taken:>15} {cut:>5}"
                f" {rereads:>7} {p50:>9} {p95:>7}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="daily", choices=tuple(SETS))
    parser.add_argument("--voices", default="new", choices=tuple(VOICE_SETS))
    parser.add_argument("--conditions", default="wide,phone")
    parser.add_argument("--show", action="store_true", help="list each wrong or reread one")
    args = parser.parse_args()
    if args.show:
        show_logs("voice.overlap")  # each reread's two readings and their scores' gap
    voices = VOICE_SETS[args.voices]
    asyncio.run(run(args.set, voices, args.conditions.split(","), args.show))


if __name__ == "__main__":
    main()
