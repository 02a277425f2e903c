"""Issue 4's peer, measured in the same hour as callswarm: pipecat's cost per turn.

Issue 4 states its targets against pipecat 1.14 on this machine (1.30 s voice to voice,
1.7 CPU-s per turn). Absolute CPU figures here move with the host (an EPYC one day, a
Xeon the next) and the hour, so the CPU target is checked as a ratio, the peer and
callswarm run one after the other: 1.0 / 1.7 = 0.59 x the peer's CPU per turn.

pipecat lives in a venv of its own (it pins its own onnxruntime and numpy):

    python3 -m venv /tmp/peer && /tmp/peer/bin/pip install "pipecat-ai[whisper,piper]==1.14.0"
    .venv/bin/python benchmarks/pipecat_peer.py --prepare /tmp/peer-input
    /tmp/peer/bin/python benchmarks/pipecat_peer.py --input /tmp/peer-input [--turns 10]

`--prepare` (callswarm's venv) writes the caller (issue 4's utterance, spoken by the
shipped Piper voice, then 1 s of silence, 16 kHz), the reply callswarm's scripted agents
give to it, and where the bundled tiny.en and Piper voice are. The peer's pipeline is
Silero VAD (stop_secs=0.5) -> pipecat's faster-whisper service on that tiny.en ->
a zero-latency LLM that answers the same reply at once -> pipecat's Piper service on
that voice. The caller is paced in 20 ms frames on the wall clock, as voice_latency.py
paces it; a turn runs from its first frame until Piper has said the whole reply. CPU is
process time (all threads), as in voice_latency.py. The peer has no output transport,
so it is not billed for pacing the reply out: callswarm is. pipecat's log is kept at
WARNING, so it is not billed for its DEBUG lines either.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import wave
from pathlib import Path

FRAME = 640  # 20 ms of 16 kHz PCM16


async def scripted_reply(words: str) -> str:
    """What callswarm's agents answer to these words on the scripted provider."""
    from _harness import fresh_services

    async with fresh_services("scripted", None) as (services, _):
        return await services.engine.session("peer", services.swarm).complete(words)


def prepare(out: Path) -> None:
    """callswarm's side: the caller's audio, callswarm's reply to it, the model paths."""
    import numpy as np
    from _harness import UTTERANCE, caller_pcm

    from voice.resample import resample
    from voice.stt import bundled_whisper
    from voice.tts import bundled_voice

    # The voice as shipped, as the tests' callers speak (tests/voice/speech.py).
    speech = resample(*caller_pcm(UTTERANCE, rewritten=False), 16000)
    samples = np.frombuffer(speech, dtype=np.int16)
    voiced = np.flatnonzero(np.abs(samples) > 328)  # 1% of full scale
    reply = asyncio.run(scripted_reply(UTTERANCE))
    out.mkdir(parents=True, exist_ok=True)
    with wave.open(str(out / "caller.wav"), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(16000)
        wav.writeframes(speech + b"\0\0" * 16000)
    meta = {
        "utterance": UTTERANCE,
        "reply": reply,
        "last_voiced_s": (int(voiced[-1]) + 1) / 16000,
        "whisper": str(bundled_whisper()),
        "voice": str(bundled_voice()),
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    print(json.dumps(meta, indent=1))


async def peer(folder: Path, turns: int, compute_type: str) -> None:
    """pipecat's side: the same caller through VAD, STT, a zero-latency LLM and Piper."""
    from loguru import logger
    from pipecat.audio.vad.silero import SileroVADAnalyzer
    from pipecat.audio.vad.vad_analyzer import VADParams
    from pipecat.frames.frames import (
        InputAudioRawFrame,
        LLMFullResponseEndFrame,
        LLMFullResponseStartFrame,
        LLMTextFrame,
        TranscriptionFrame,
        TTSAudioRawFrame,
        TTSStoppedFrame,
        VADUserStoppedSpeakingFrame,
    )
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.processors.audio.vad_processor import VADProcessor
    from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
    from pipecat.services.piper.tts import PiperTTSService
    from pipecat.services.whisper.stt import WhisperSTTService
    from pipecat.workers.runner import WorkerRunner

    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    meta = json.loads((folder / "meta.json").read_text())
    with wave.open(str(folder / "caller.wav"), "rb") as wav:
        caller = wav.readframes(wav.getnframes())
    voice = Path(meta["voice"])

    marks: dict[str, float] = {}
    heard: list[str] = []
    done = asyncio.Event()

    class ZeroLatencyLLM(FrameProcessor):
        """Answers every transcript at once with callswarm's reply, as one text frame."""

        async def process_frame(self, frame, direction: FrameDirection) -> None:
            await super().process_frame(frame, direction)
            await self.push_frame(frame, direction)
            if isinstance(frame, TranscriptionFrame):
                heard.append(frame.text)
                marks.setdefault("transcript", time.monotonic())
                await self.push_frame(LLMFullResponseStartFrame())
                await self.push_frame(LLMTextFrame(meta["reply"]))
                await self.push_frame(LLMFullResponseEndFrame())

    class Ear(FrameProcessor):
        """The end of the line: when the VAD stopped, the first reply audio, the last."""

        async def process_frame(self, frame, direction: FrameDirection) -> None:
            await super().process_frame(frame, direction)
            now = time.monotonic()
            if isinstance(frame, VADUserStoppedSpeakingFrame):
                marks.setdefault("vad_stop", now)
            elif isinstance(frame, TTSAudioRawFrame):
                marks.setdefault("first_audio", now)
            elif isinstance(frame, TTSStoppedFrame):
                done.set()
            await self.push_frame(frame, direction)

    pipeline = Pipeline(
        [
            VADProcessor(vad_analyzer=SileroVADAnalyzer(params=VADParams(stop_secs=0.5))),
            WhisperSTTService(
                settings=WhisperSTTService.Settings(model=meta["whisper"]),
                device="cpu",
                compute_type=compute_type,
            ),
            ZeroLatencyLLM(),
            PiperTTSService(
                settings=PiperTTSService.Settings(voice=voice.stem), download_dir=voice.parent
            ),
            Ear(),
        ]
    )
    worker = PipelineWorker(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=16000, audio_out_sample_rate=16000),
        enable_rtvi=False,
        idle_timeout_secs=None,
    )
    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    running = asyncio.get_running_loop().create_task(runner.run())
    rows: dict[str, list[float]] = {
        "vad_stop_s": [],
        "stt_s": [],
        "first_audio_s": [],
        "voice_to_voice_s": [],
        "cpu_s": [],
    }
    print(
        f"pipecat 1.14, whisper compute_type={compute_type}, caller "
        f"{meta['last_voiced_s']:.2f} s voiced then silence, {turns} turns (+1 warm-up)"
    )
    for n in range(turns + 1):  # the first turn loads and warms the models
        marks.clear()
        done.clear()
        cpu = time.process_time()
        start = time.monotonic()
        for i in range(0, len(caller), FRAME):
            await asyncio.sleep(max(0.0, start + i / 32000 - time.monotonic()))
            chunk = caller[i : i + FRAME].ljust(FRAME, b"\0")
            await worker.queue_frame(
                InputAudioRawFrame(audio=chunk, sample_rate=16000, num_channels=1)
            )
        async with asyncio.timeout(60):
            await done.wait()
        spent = time.process_time() - cpu
        if n == 0:
            continue
        speech_end = start + meta["last_voiced_s"]
        rows["vad_stop_s"].append(marks["vad_stop"] - speech_end)
        rows["stt_s"].append(marks["transcript"] - marks["vad_stop"])
        rows["first_audio_s"].append(marks["first_audio"] - marks["transcript"])
        rows["voice_to_voice_s"].append(marks["first_audio"] - speech_end)
        rows["cpu_s"].append(spent)
    await worker.cancel()
    await running
    print(f"heard: {heard[-1]!r}")
    print(f"{'stage':<17} {'p50':>7} {'p95':>7}")
    for stage, values in rows.items():
        # _harness.pct's nearest rank, restated: _harness imports callswarm, which the
        # peer's venv does not have.
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        print(f"{stage:<17} {statistics.median(values):>6.2f}s {p95:>6.2f}s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--prepare", type=Path, help="write the caller and reply here")
    parser.add_argument("--input", type=Path, help="a folder --prepare wrote")
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--compute-type", default="default", help="pipecat's default")
    options = parser.parse_args()
    if options.prepare:
        prepare(options.prepare)
    elif options.input:
        asyncio.run(peer(options.input, options.turns, options.compute_type))
    else:
        parser.error("give --prepare DIR or --input DIR")
