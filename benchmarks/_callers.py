"""Synthetic callers for the voice benchmarks: voices, rooms and the phone line.

Voices the tests tune on (`TUNED_VOICES`, as tests/voice/speech.py speaks) are kept
apart from voices nobody here listened to while tuning (`NEW_VOICES`): other
espeak-ng accents and Piper's joe voice at other speaking rates. Audio is cached on
disk by its text and voice, so a rerun measures the recogniser, not the synthesisers.
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import wave
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from voice.degrade import babble, hum, mix_at_snr, street, telephone  # noqa: E402
from voice.resample import resample  # noqa: E402

RATE = 16000
TUNED_VOICES = ("piper", "en-us", "en-gb+f3", "en-us+m5")
NEW_VOICES = ("piper-fast", "piper-slow", "en-gb-scotland+m3", "en-029+f2", "en-gb-x-rp+m2")
# The benchmarks' --voices choices.
VOICE_SETS = {"tuned": TUNED_VOICES, "new": NEW_VOICES, "all": TUNED_VOICES + NEW_VOICES}
CACHE = Path.home() / ".cache" / "callswarm" / "speech"
# What the babble's speakers say: nothing near a product name.
CHATTER = (
    "Did you see the match on Saturday, it was a proper mess from start to finish.",
    "I told her the bus was late again and she just laughed about it.",
    "We are going to the seaside next week if the weather holds up for us.",
    "The kettle is on, do you want a cup of tea or a coffee this morning.",
)


@cache
def _piper(length_scale: float):  # type: ignore[no-untyped-def]
    from piper import PiperVoice
    from piper.config import SynthesisConfig

    from voice.tts import bundled_voice

    # With alignments: how many samples each phoneme took, to find word boundaries.
    voice = PiperVoice.load(str(bundled_voice()), include_alignments=True)
    synthesis = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0, length_scale=length_scale)
    return voice, synthesis


_SCALES = {"piper": 1.0, "piper-fast": 0.8, "piper-slow": 1.25}


def _synthesize(text: str, voice: str) -> bytes:
    if voice.startswith("piper"):
        engine, synthesis = _piper(_SCALES[voice])
        pcm = b"".join(c.audio_int16_bytes for c in engine.synthesize(text, syn_config=synthesis))
        return resample(pcm, engine.config.sample_rate, RATE)
    wav = subprocess.run(
        ["espeak-ng", "-v", voice, "-s", "150", "--stdout", text], capture_output=True, check=True
    ).stdout
    with wave.open(io.BytesIO(wav)) as w:
        return resample(w.readframes(w.getnframes()), w.getframerate(), RATE)


def speak(text: str, voice: str) -> bytes:
    """16 kHz PCM16 of `text` in `voice`, from the cache when it has been said before."""
    key = hashlib.sha256(f"{voice}\0{text}".encode()).hexdigest()[:24]
    path = CACHE / f"{key}.pcm"
    if path.is_file():
        return path.read_bytes()
    pcm = _synthesize(text, voice)
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pcm)
    return pcm


def _piper_boundary(head: str, tail: str, voice: str) -> tuple[bytes, int]:
    """Piper's whole sentence, and the sample where `head` ends, from its phoneme timing."""
    engine, synthesis = _piper(_SCALES[voice])
    chunks = list(
        engine.synthesize(f"{head} {tail}", syn_config=synthesis, include_alignments=True)
    )
    if len(chunks) != 1 or not chunks[0].phoneme_alignments:
        raise RuntimeError(f"piper said {head!r} in {len(chunks)} pieces, or without timing")
    chunk = chunks[0]
    said = [a.phoneme for a in chunk.phoneme_alignments]
    alone = [ph for sentence in engine.phonemize(head) for ph in sentence]
    # The head's phonemes open the sentence's, after the start mark, up to its own end
    # (alone it ends with a full stop the sentence does not have).
    common = 0
    while common < min(len(alone), len(said) - 1) and said[1 + common] == alone[common]:
        common += 1
    ends = [i for i in range(1, 2 + common) if said[i] in (" ", ",")]
    if not ends:
        raise RuntimeError(f"no word boundary found after {head!r}")
    samples = sum(a.num_samples for a in chunk.phoneme_alignments[: ends[-1]])
    pcm = resample(chunk.audio_int16_bytes, engine.config.sample_rate, RATE)
    return pcm, int(samples * RATE / engine.config.sample_rate)


def paused(head: str, tail: str, voice: str, pause: float) -> tuple[bytes, float, float]:
    """One sentence said with a thinking pause after `head`: the caller's prosody runs on
    through the pause, as a real caller's does (two sentences glued together would each
    fall at their end, which no caller's pause does). Returns the audio and the
    pause's start and end in seconds.

    espeak-ng pauses inside the sentence with SSML; Piper has no such mark, so its whole
    sentence is cut where its own phoneme timing puts the end of `head`."""
    import numpy as np

    gap = b"\0\0" * int(RATE * pause)
    if voice.startswith("piper"):
        whole, cut = _piper_boundary(head, tail, voice)
        audio = whole[: 2 * cut] + gap + whole[2 * cut :]
        return audio, cut / RATE, cut / RATE + pause
    key = f"<speak>{head} <break time='{int(pause * 1000)}ms'/> {tail}</speak>"
    path = CACHE / (hashlib.sha256(f"{voice}\0{key}".encode()).hexdigest()[:24] + ".pcm")
    if path.is_file():
        audio = path.read_bytes()
    else:
        wav = subprocess.run(
            ["espeak-ng", "-m", "-v", voice, "-s", "150", "--stdout", key],
            capture_output=True,
            check=True,
        ).stdout
        with wave.open(io.BytesIO(wav)) as w:
            audio = resample(w.readframes(w.getnframes()), w.getframerate(), RATE)
        CACHE.mkdir(parents=True, exist_ok=True)
        path.write_bytes(audio)
    # The break is the longest quiet run inside the speech.
    quiet = np.abs(np.frombuffer(audio, dtype="<i2")) < 100
    edges = np.diff(np.concatenate(([0], quiet.astype(np.int8), [0])))
    runs = zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True)
    inside = [(a, b) for a, b in runs if a > 0 and b < quiet.size]
    start, end = max(inside, key=lambda run: run[1] - run[0])
    return audio, start / RATE, end / RATE


@cache
def noise(kind: str, seconds: float = 20.0) -> bytes:
    if kind == "hum":
        return hum(seconds)
    if kind == "street":
        return street(seconds)
    if kind == "babble":
        return babble(
            [speak(line, v) for line, v in zip(CHATTER, TUNED_VOICES, strict=True)], seconds
        )
    raise ValueError(f"no noise called {kind}")


def condition(pcm: bytes, band: str, snr_db: float | None, kind: str, seed: int = 0) -> bytes:
    """The caller's audio as the gateway would get it: room noise, then the line."""
    if snr_db is not None:
        background = noise(kind)
        start = (seed * 7919 * 2) % max(2, len(background) - len(pcm))
        pcm = mix_at_snr(pcm, background[start - start % 2 :], snr_db)
    return telephone(pcm) if band == "phone" else pcm


class Mute:
    """A responder that answers nothing: for benchmarks of when turns end or replies
    are cut, where what is answered does not matter."""

    async def reply(self, text: str):  # type: ignore[no-untyped-def]
        return
        yield

    async def interrupted(self, spoken: str) -> None:
        pass


def show_logs(*loggers: str) -> None:
    """Print the named loggers' INFO lines, indented under the benchmark's rows (--show)."""
    import logging

    logging.basicConfig(level=logging.WARNING, format="  %(message)s")
    for name in loggers:
        logging.getLogger(name).setLevel(logging.INFO)
