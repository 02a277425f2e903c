"""Synthesised callers: Piper and espeak-ng voices, silences and noise, as 16 kHz PCM16."""

from __future__ import annotations

import io
import json
import subprocess
import wave
from functools import lru_cache
from pathlib import Path

import numpy as np
import onnxruntime
from piper import PiperVoice
from piper.config import PiperConfig, SynthesisConfig

from voice.resample import resample
from voice.tts import bundled_voice

RATE = 16000
ESPEAK_VOICES = ("en-us", "en-gb+f3", "en-us+m5")


def from_wav(data: bytes) -> bytes:
    with wave.open(io.BytesIO(data)) as w:
        assert w.getnchannels() == 1 and w.getsampwidth() == 2
        return resample(w.readframes(w.getnframes()), w.getframerate(), RATE)


def espeak(text: str, voice: str = "en-us", speed: int = 150) -> bytes:
    wav = subprocess.run(
        ["espeak-ng", "-v", voice, "-s", str(speed), "--stdout", text],
        capture_output=True,
        check=True,
    ).stdout
    return from_wav(wav)


@lru_cache(maxsize=1)
def _caller_voice() -> PiperVoice:
    # Callers speak with the voice as shipped, through Piper's own synthesis (each
    # sentence scaled to full scale), not the gateway's rewritten, parted graph at one
    # gain: tiny.en is on a knife edge for some words ("ibuprofen" became "Ibupuril
    # Fen"; "Could I get a box of" lost its "of" at the gateway's level), so the tests'
    # callers keep the audio they were written against.
    options = onnxruntime.SessionOptions()  # as the gateway's voice ran it until then
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    model = bundled_voice()
    session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    config = PiperConfig.from_dict(json.loads(Path(f"{model}.json").read_text()))
    return PiperVoice(config=config, session=session)


def piper(text: str) -> bytes:
    voice = _caller_voice()
    noiseless = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0)
    pcm = b"".join(chunk.audio_int16_bytes for chunk in voice.synthesize(text, noiseless))
    return resample(pcm, voice.config.sample_rate, RATE)


def trim(pcm: bytes, threshold: int = 300) -> bytes:
    """Drop the silence a synthesiser pads its speech with, so gaps are exactly what a test says."""
    samples = np.frombuffer(pcm, dtype="<i2")
    loud = np.flatnonzero(np.abs(samples) > threshold)
    return samples[loud[0] : loud[-1] + 1].tobytes() if loud.size else b""


def silence(seconds: float) -> bytes:
    return b"\x00\x00" * int(RATE * seconds)


def noise(seconds: float, level: float = 300.0, seed: int = 1) -> bytes:
    rng = np.random.default_rng(seed)
    return rng.normal(0, level, int(RATE * seconds)).astype("<i2").tobytes()


def cough(seconds: float = 0.1, seed: int = 2) -> bytes:
    """A short loud burst: voice-like enough for a VAD frame or two, far too short for a turn."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(RATE * seconds)) / RATE
    burst = 8000 * np.sin(2 * np.pi * 180 * t) * rng.uniform(0.5, 1.0, t.size)
    return burst.astype("<i2").tobytes()


def hacking_cough(seconds: float = 0.4, seed: int = 0) -> bytes:
    """A cough as long as a word: a burst of breath over a low voiced note, falling away.
    Voiced enough for the VAD to take it for the start of a turn."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(RATE * seconds)) / RATE
    body = 0.6 * rng.normal(0, 1, t.size) + np.sin(2 * np.pi * rng.uniform(150, 300) * t)
    falling = np.exp(-3 * t / seconds) * np.minimum(1, t / 0.01)
    return (9000 * body * falling).clip(-32768, 32767).astype("<i2").tobytes()


def mix(pcm: bytes, noise_level: float, seed: int = 3) -> bytes:
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    rng = np.random.default_rng(seed)
    noisy = samples + rng.normal(0, noise_level, samples.size)
    return np.clip(noisy, -32768, 32767).astype("<i2").tobytes()


def frames(pcm: bytes, ms: int = 20) -> list[bytes]:
    step = RATE * ms // 1000 * 2
    return [pcm[i : i + step] for i in range(0, len(pcm), step)]


@lru_cache(maxsize=1)
def _catalogue():  # noqa: ANN202 (an engine, built once per process)
    from models import make_engine
    from models.catalogue import load_catalogue

    engine = make_engine("sqlite:///:memory:")
    load_catalogue(engine)
    return engine


def names(heard: str, product: str) -> bool:
    """Whether the catalogue reads `heard` as naming `product`, as the agents would.

    Whisper's spelling of a drug name varies with the CPU's int8 kernels: the same
    audio gave "ibuprofen" on one machine, "Iboprophen" and "ibupurlfin" on another.
    A test of the call path checks that the caller was understood, not the spelling."""
    from sqlmodel import Session

    from models.search import search_products

    with Session(_catalogue()) as db:
        hits = search_products(db, heard, limit=1)
    return bool(hits) and hits[0].product.name.lower().startswith(product.lower())
