from __future__ import annotations

from voice.tts import PiperTTS, bundled_voice


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
    assert len(saved) == 2  # one graph per thread count (the urgent voice uses two)
    stamps = [p.stat().st_mtime_ns for p in saved]
    again = PiperTTS(bundled_voice(), deterministic=True, workers=1, cache_dir=tmp_path)
    assert [p.stat().st_mtime_ns for p in saved] == stamps  # read, not written again
    for urgent in (False, True):
        assert again.synthesize_sync(line, urgent=urgent) == first.synthesize_sync(
            line, urgent=urgent
        )
        first.clear_cache()
        again.clear_cache()


def test_a_damaged_saved_graph_is_optimised_again_and_replaced(tmp_path, caplog) -> None:
    PiperTTS(bundled_voice(), deterministic=True, workers=1, cache_dir=tmp_path)
    for path in tmp_path.glob("*.onnx"):
        path.write_bytes(b"not an onnx graph")
    tts = PiperTTS(bundled_voice(), deterministic=True, workers=1, cache_dir=tmp_path)
    assert sum("tts_cache_unusable" in r.getMessage() for r in caplog.records) == 2
    assert all(p.stat().st_size > 1_000_000 for p in tmp_path.glob("*.onnx"))
    assert len(tts.synthesize_sync("Hello.")) > tts.sample_rate // 4
