"""Would an int8 Piper voice be cheaper and still sound right? (It was rejected.)

    .venv/bin/pip install onnx pesq   # not project dependencies
    .venv/bin/python benchmarks/piper_int8.py

Quantises the bundled voice's decoder convolutions (static, QDQ, per channel,
calibrated on a few pharmacy sentences; the first and last layers stay float, so
durations and alignment are unchanged), then prints CPU per second of speech and
wideband PESQ against the float voice. For scale, the float voice through the
phone line (8 kHz, G.711 μ-law) is scored the same way.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
from _harness import pct
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from pesq import pesq
from piper import PiperVoice
from piper.config import PiperConfig, SynthesisConfig

from voice.codecs import pcm16_to_ulaw, ulaw_to_pcm16
from voice.resample import resample
from voice.tts import bundled_voice

CALIBRATION = [
    "Hello, thank you for calling the pharmacy. How can I help you today?",
    "I've added 3 packs of Ibuprofen, at 4 dollars 49 each.",
    "We are open from nine in the morning until six in the evening, Monday to Saturday.",
    "Cetirizine helps with hay fever. Would you like some?",
]
SAID = [
    "I've added 2 packs of Paracetamol, at 2 dollars 99 each.",
    "That's 5 dollars 98. Anything else?",
    "Loratadine 10 milligram, a pack of 30, costs 6 dollars 25.",
    "I'm sorry, amoxicillin is prescription only, so we can't take an order for it by phone.",
]
NOISELESS = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0)


def voice(path: Path, config: PiperConfig) -> PiperVoice:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return PiperVoice(config=config, session=session)


def say(piper: PiperVoice, text: str) -> bytes:
    return b"".join(chunk.audio_int16_bytes for chunk in piper.synthesize(text, NOISELESS))


def wideband(pcm: bytes, rate: int) -> np.ndarray:
    return np.frombuffer(resample(pcm, rate, 16000), "<i2").astype(np.float32) / 32768


class Sentences(CalibrationDataReader):
    def __init__(self, piper: PiperVoice) -> None:
        ids = [piper.phonemes_to_ids(p) for t in CALIBRATION for p in piper.phonemize(t)]
        self._feeds = iter(
            {
                "input": np.array([i], dtype=np.int64),
                "input_lengths": np.array([len(i)], dtype=np.int64),
                "scales": np.array([0.0, 1.0, 0.0], dtype=np.float32),
            }
            for i in ids
        )

    def get_next(self) -> dict | None:
        return next(self._feeds, None)


def main() -> None:
    path = bundled_voice()
    config = PiperConfig.from_dict(json.loads(Path(f"{path}.json").read_text()))
    rate = config.sample_rate
    float_voice = voice(path, config)
    decoder = [
        n.name
        for n in onnx.load(str(path)).graph.node
        if n.op_type in ("Conv", "ConvTranspose")
        and n.name.startswith("/dec/")
        and not any(edge in n.name for edge in ("conv_pre", "conv_post"))
    ]
    with tempfile.TemporaryDirectory() as tmp:
        int8_path = Path(tmp) / "int8.onnx"
        quantize_static(
            str(path),
            str(int8_path),
            Sentences(float_voice),
            quant_format=QuantFormat.QDQ,
            op_types_to_quantize=["Conv", "ConvTranspose"],
            nodes_to_quantize=decoder,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        )
        int8_voice = voice(int8_path, config)
        reference = {text: say(float_voice, text) for text in SAID}
        rows = []
        for label, piper in (("float (shipped)", float_voice), ("int8 decoder", int8_voice)):
            cpu, scores = [], []
            for text in SAID * 3:
                started = time.thread_time()
                pcm = say(piper, text)
                cpu.append((time.thread_time() - started) / (len(pcm) / 2 / rate))
                ref, out = wideband(reference[text], rate), wideband(pcm, rate)
                scores.append(pesq(16000, ref, out[: len(ref)], "wb"))
            rows.append((label, statistics.median(cpu), pct(cpu, 0.95), statistics.median(scores)))
    phone = [
        pesq(
            16000,
            wideband(pcm, rate),
            wideband(ulaw_to_pcm16(pcm16_to_ulaw(resample(pcm, rate, 8000))), 8000)[
                : len(wideband(pcm, rate))
            ],
            "wb",
        )
        for pcm in reference.values()
    ]
    print(f"{'voice':<28} {'CPU-s per s p50':>15} {'p95':>7} {'PESQ-wb vs float':>17}")
    for label, p50, p95, score in rows:
        print(f"{label:<28} {p50:>15.3f} {p95:>7.3f} {score:>17.2f}")
    print(f"{'float through G.711 (phone)':<28} {'':>15} {'':>7} {statistics.median(phone):>17.2f}")


if __name__ == "__main__":
    main()
