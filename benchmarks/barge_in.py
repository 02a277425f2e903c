"""Speech over a reply: which of it cuts the reply, and how fast. Issue 19's barge-in figures.

A reply plays (Piper, paced in real time as a caller hears it) and the caller's line
carries, over it, one of:

- a backchannel ("mm-hmm", "okay", "yeah, right", ...), in every voice;
- a cough (bursts of 0.15 to 0.45 s);
- the reply's own echo, as a speakerphone sends it back: 40 to 250 ms late, at a
  third to half its level, wide band or through the telephone band;
- a real barge-in ("no, wait, I wanted ibuprofen"), in every voice.

The first three must not cut the reply (a false barge-in); the last must, and the
reply must stop within 300 ms of the caller's first voiced sample: the time from
that sample reaching the session to the hold, plus the audio the transport still
held (the session's 100 ms lead). The caller's line runs on the wall clock, 20 ms
a frame, as a transport feeds it.

    .venv/bin/python benchmarks/barge_in.py [--voices tuned|new|all] [--kinds ...]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections import deque
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _callers import VOICE_SETS, Mute, show_logs, speak  # noqa: E402
from _harness import gateway_vocabulary, pct  # noqa: E402

from voice.degrade import telephone  # noqa: E402
from voice.events import (  # noqa: E402
    InterruptedEvent,
    ReplyAudioEvent,
    ReplyDoneEvent,
    ReplyHeldEvent,
    ReplyResumedEvent,
)
from voice.frames import AudioFrame  # noqa: E402
from voice.session import VoiceSession  # noqa: E402
from voice.stt import WhisperSTT, bundled_whisper  # noqa: E402
from voice.tts import PiperTTS, bundled_voice  # noqa: E402

REPLY = (
    "We have three options for a headache. Paracetamol costs 2 dollars 99 for sixteen "
    "tablets, ibuprofen costs 3 dollars 99, and aspirin 2 dollars 49. All are in stock today."
)
BACKCHANNELS = ("Mm-hmm.", "Okay.", "Yeah.", "Right.", "Uh-huh.", "Okay, thanks.", "Yeah, right.")
BARGE_INS = (
    "No, wait, I wanted ibuprofen.",
    "Sorry, stop, that's not what I asked.",
    "Hang on, can I ask something else?",
    "Actually, just the paracetamol please.",
    "Excuse me, is the pharmacist there?",
)
FRAME = 640
LEAD_S = 0.1


def cough(seconds: float, seed: int) -> bytes:
    """A cough: a noisy burst with a falling envelope, voiced enough for the VAD."""
    rng = np.random.default_rng(seed)
    n = int(16000 * seconds)
    t = np.arange(n) / 16000
    body = rng.normal(0, 1, n) * 0.6 + np.sin(2 * np.pi * rng.uniform(150, 300) * t)
    envelope = np.exp(-t / (seconds / 3)) * np.minimum(1, t / 0.01)
    return (9000 * body * envelope).clip(-32768, 32767).astype("<i2").tobytes()


async def trial(
    stt: WhisperSTT, tts: PiperTTS, over: bytes | None, echo: tuple[float, float, bool] | None
) -> dict[str, object]:
    """The reply, and `over` said 0.6 s into it (or its echo); what happened to it."""
    voice = VoiceSession("bench", Mute(), stt=stt, tts=tts, realtime=True, lead_s=LEAD_S)
    await voice.say(REPLY)
    played: list[bytes] = []
    onset: float | None = None
    result: dict[str, object] = {"held": False, "cut": False, "resumed": None}

    async def line() -> None:
        nonlocal onset
        caller = b"\0\0" * int(16000 * 0.6) + (over or b"")
        delay_frames, gain, phone = echo or (0, 0.0, False)
        # The line goes on, in silence after the caller's words, until the trial ends.
        # Each frame of the reply comes back once, `delay_frames` frames after it went out.
        quiet = b"\0" * FRAME
        delayed = deque([quiet] * int(delay_frames))
        i = echoed = 0
        # Paced on the wall clock, not by sleeping 20 ms after each frame: that ran slower
        # than the reply whenever the session worked, and the echo fell further behind it
        # with every frame (0.58 s late by the end of a reply, past what an echo can be).
        due = time.monotonic()
        while True:
            frame = np.frombuffer(caller[i : i + FRAME].ljust(FRAME, b"\0"), "<i2").astype(float)
            i += FRAME
            if echo is not None:
                delayed.append(played[echoed] if echoed < len(played) else quiet)
                echoed += echoed < len(played)
                sound = delayed.popleft()
                if phone:
                    sound = telephone(sound)
                frame = frame + gain * np.frombuffer(sound[:FRAME].ljust(FRAME, b"\0"), "<i2")
            if onset is None and over is not None and np.abs(frame).max() > 328:
                onset = time.monotonic()
            await voice.push(AudioFrame(frame.clip(-32768, 32767).astype("<i2").tobytes(), 16000))
            due += 0.02
            await asyncio.sleep(max(0.0, due - time.monotonic()))

    feeder = asyncio.get_running_loop().create_task(line())
    try:
        while True:
            event = await asyncio.wait_for(voice.events.get(), timeout=60)
            if isinstance(event, ReplyAudioEvent):
                played.append(event.frame.pcm)
            elif isinstance(event, ReplyHeldEvent) and not result["held"]:
                result["held"] = True
                if onset is not None:
                    result["stop_s"] = event.time - onset + LEAD_S
            elif isinstance(event, ReplyResumedEvent):
                result["resumed"] = event.reason
            elif isinstance(event, InterruptedEvent):
                result["cut"] = True
                break
            elif isinstance(event, ReplyDoneEvent):
                break
    finally:
        feeder.cancel()
        await voice.close()
    return result


async def run(voices: tuple[str, ...], kinds: list[str]) -> None:
    stt = WhisperSTT(bundled_whisper(), vocabulary=gateway_vocabulary(), workers=1)
    tts = PiperTTS(bundled_voice(), deterministic=True)
    print(
        f"{'kind':<12} {'trials':>6} {'cut':>5} {'held':>5} {'stop p50':>9} {'p95':>6} {'≤300ms':>7}"
    )
    for kind in kinds:
        outcomes = []
        if kind == "backchannel":
            for word in BACKCHANNELS:
                for v in voices:
                    outcomes.append(await trial(stt, tts, speak(word, v), None))
        elif kind == "cough":
            for seed in range(12):
                outcomes.append(await trial(stt, tts, cough(0.15 + 0.025 * seed, seed), None))
        elif kind == "echo":
            for delay in (2, 6, 12):  # frames: 40, 120, 240 ms
                for gain in (0.3, 0.5):
                    for phone in (False, True):
                        outcomes.append(await trial(stt, tts, None, (delay, gain, phone)))
        elif kind == "barge-in":
            for words in BARGE_INS:
                for v in voices:
                    outcomes.append(await trial(stt, tts, speak(words, v), None))
        cut = sum(bool(o["cut"]) for o in outcomes)
        held = sum(bool(o["held"]) for o in outcomes)
        stops = [float(o["stop_s"]) for o in outcomes if "stop_s" in o]  # type: ignore[arg-type]
        fast = sum(s <= 0.3 for s in stops)
        print(
            f"{kind:<12} {len(outcomes):>6} {cut:>5} {held:>5} "
            + (
                f"{statistics.median(stops):>8.3f}s {pct(stops, 0.95):>5.3f}s "
                f"{fast:>3}/{len(outcomes):<3}"
                if kind == "barge-in" and stops
                else f"{'-':>9} {'-':>6} {'-':>7}"
            ),
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--voices", default="all", choices=tuple(VOICE_SETS))
    parser.add_argument("--kinds", default="backchannel,cough,echo,barge-in")
    parser.add_argument("--show", action="store_true", help="log each hold and its outcome")
    args = parser.parse_args()
    if args.show:
        show_logs("voice.session", "voice.overlap")
    voices = VOICE_SETS[args.voices]
    asyncio.run(run(voices, args.kinds.split(",")))


if __name__ == "__main__":
    main()
