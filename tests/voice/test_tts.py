from __future__ import annotations

import asyncio

import numpy as np
import pytest

from voice.speech import SpeechPart
from voice.tts import HEAD_FRAMES, PLAY_MARGIN_S, PiperTTS, bundled_voice


def _parts(tts: PiperTTS, text: str) -> list[SpeechPart]:
    async def spoken() -> list[SpeechPart]:
        return [part async for part in tts.speak(text)]

    return asyncio.run(spoken())


def _samples(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, dtype="<i2").astype(np.int32)


@pytest.mark.parametrize(
    ("text", "seam_in_a_word"),
    [
        ("I've added 2 packs of Paracetamol,", True),
        # Two sentences in one piece, Piper reads them apart: the rest holds the second
        # (the first, short, is all first part here, so the parts meet between them).
        ("Sorry about that. We have three options for a headache, all in stock today.", False),
    ],
)
def test_a_piece_spoken_in_parts_is_the_piece_said_whole(
    tts: PiperTTS, text: str, seam_in_a_word: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first part is decoded alone with its context, and the rest after it: joined,
    they are the whole decode's samples, within float rounding."""
    tts.clear_cache()
    whole = tts.synthesize_sync(text)
    tts.clear_cache()
    # The first part's length follows the decode speed measured lately: this host, idle,
    # whatever ran before.
    monkeypatch.setattr(tts, "_frame_decode_s", 0.0005)
    parts = _parts(tts, text)
    assert [part.last for part in parts] == [False, True]
    head = _samples(parts[0].pcm)
    assert HEAD_FRAMES * 256 <= head.size < _samples(whole).size // 3
    assert 0.0 < parts[0].done < 0.4 and parts[1].done == 1.0
    joined = _samples(b"".join(part.pcm for part in parts))
    assert joined.size == _samples(whole).size
    assert np.abs(joined - _samples(whole)).max() <= 2
    # A seam decoded without context would differ by far more than rounding there.
    seam = head.size
    # Speech there, not a pause (under 100 between these sentences).
    assert (np.abs(joined[seam - 512 : seam + 512]).max() > 300) == seam_in_a_word


def test_a_piece_said_before_is_spoken_whole_from_the_cache(tts: PiperTTS) -> None:
    text = "Anything else I can help with today?"
    tts.clear_cache()
    first = b"".join(part.pcm for part in _parts(tts, text))
    hits = tts.cache_hits
    again = _parts(tts, text)
    assert tts.cache_hits == hits + 1
    assert [(part.pcm, part.done, part.last) for part in again] == [(first, 1.0, True)]


def test_every_piece_has_one_gain_not_its_own_peak(tts: PiperTTS) -> None:
    """One gain per voice, not Piper's scaling of each sentence to full scale: lines
    keep the model's own loudness beside each other, and none is pushed to clip."""
    lines = ("Yes.", "OK.", "Hmm, let me check.", "Could I take your name, please?")
    peaks = [int(np.abs(_samples(tts.synthesize_sync(line))).max()) for line in lines]
    assert max(peaks) < 32000
    assert min(peaks) < 0.8 * max(peaks)


def test_a_sentence_said_again_comes_from_the_cache(tts: PiperTTS) -> None:
    first = tts.synthesize_sync("Is there anything else I can get you?")
    hits = tts.cache_hits
    assert tts.synthesize_sync("Is there anything else I can get you?") == first
    assert tts.cache_hits == hits + 1
    assert len(first) > tts.sample_rate  # over half a second of PCM16: real speech


def test_the_cache_keeps_to_its_size_and_drops_the_oldest() -> None:
    tts = PiperTTS(bundled_voice(), deterministic=True, workers=1, cache_bytes=200_000)
    for text in ("One box.", "Two boxes.", "Three boxes.", "Four boxes.", "Five boxes."):
        tts.synthesize_sync(text)
    assert tts._cache_bytes <= 200_000
    assert "Five boxes." in tts._cache and "One box." not in tts._cache
    before = tts.cache_hits
    tts.synthesize_sync("One box.")
    assert tts.cache_hits == before


def test_a_restart_loads_the_saved_graph_and_speaks_the_same(tmp_path) -> None:
    """The optimised graph is saved on the first start and loaded on the next, unoptimised:
    the same samples, bit for bit."""
    line = "Your order of two boxes of paracetamol is confirmed."
    first = PiperTTS(bundled_voice(), deterministic=True, workers=1, cache_dir=tmp_path)
    saved = sorted(tmp_path.glob("*.onnx"))
    assert len(saved) == 2  # text to frames, frames to audio
    stamps = [p.stat().st_mtime_ns for p in saved]
    again = PiperTTS(bundled_voice(), deterministic=True, workers=1, cache_dir=tmp_path)
    assert [p.stat().st_mtime_ns for p in saved] == stamps  # read, not written again
    for urgent in (False, True):
        assert again.synthesize_sync(line, urgent=urgent) == first.synthesize_sync(
            line, urgent=urgent
        )
        first.clear_cache()
        again.clear_cache()
    assert len(list(tmp_path.glob("*.onnx"))) == 4  # and on two threads, once asked for


def test_a_damaged_saved_graph_is_optimised_again_and_replaced(tmp_path, caplog) -> None:
    PiperTTS(bundled_voice(), deterministic=True, workers=1, cache_dir=tmp_path)
    for path in tmp_path.glob("*.onnx"):
        path.write_bytes(b"not an onnx graph")
    tts = PiperTTS(bundled_voice(), deterministic=True, workers=1, cache_dir=tmp_path)
    assert sum("tts_cache_unusable" in r.getMessage() for r in caplog.records) == 2
    assert all(p.stat().st_size > 1_000_000 for p in tmp_path.glob("*.onnx"))
    assert len(tts.synthesize_sync("Hello.")) > tts.sample_rate // 4


def test_a_slower_host_or_a_longer_piece_gets_a_longer_first_part(tts: PiperTTS) -> None:
    """The first part must play while the rest is decoded: its length follows the decode
    speed measured lately (other calls' load included) and the piece's length."""
    measured = tts._frame_decode_s
    try:
        tts._frame_decode_s = 0.0005  # this host, idle
        idle = tts._head_frames(190, 1.0)
        assert HEAD_FRAMES <= idle < 60
        assert tts._head_frames(190, 0.25) > idle  # three more sentences behind it
        tts._frame_decode_s = 0.003  # six times slower: the rest would outrun the head
        loaded = tts._head_frames(190, 1.0)
        assert loaded > 2 * idle
        # Played while twice the rest is decoded, with the margin: no gap in a word.
        rest_s = 2 * 0.003 * (190 - loaded + 28)
        assert loaded * tts._frame_s >= rest_s + PLAY_MARGIN_S
        tts._frame_decode_s = 0.05  # a host that cannot keep up: the piece said whole
        assert tts._head_frames(190, 1.0) == 190
    finally:
        tts._frame_decode_s = measured
