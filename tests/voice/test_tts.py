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
