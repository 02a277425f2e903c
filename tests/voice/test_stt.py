"""Speech to text on synthesised callers, biased with the catalogue's names.

What the product needs is the chain: what the recogniser hears must lead the
catalogue search to the right product first (search is built for near-misses
such as "momprazole").
"""

from __future__ import annotations

import pytest
from sqlmodel import Session

from models import make_engine
from models.catalogue import load_catalogue
from models.search import search_products

from .speech import espeak, mix, piper, silence

PHRASES = [
    ("I would like two boxes of paracetamol please.", "paracetamol"),
    ("Do you have any ibuprofen?", "ibuprofen"),
    ("I need loratadine for my hay fever.", "loratadine"),
    ("Can I get some omeprazole?", "omeprazole"),
]
# Known defect, issue 4 open: biased tiny.en hears espeak en-us "for my hay fever" as
# "for my Cetirizine", and search then ranks Cetirizine first. Strict: it fails once fixed.
BIAS_SUBSTITUTES = pytest.mark.xfail(
    strict=True, reason="hotword bias substitutes a product name for 'hay fever' (issue 4)"
)


@pytest.fixture(scope="module")
def catalogue():
    engine = make_engine("sqlite:///:memory:")
    load_catalogue(engine)
    yield engine
    engine.dispose()


CASES = [
    pytest.param(
        phrase,
        name,
        voice,
        marks=BIAS_SUBSTITUTES if (voice, name) == ("en-us", "loratadine") else (),
    )
    for phrase, name in PHRASES
    for voice in ("piper", "en-us", "en-gb+f3")
]


@pytest.mark.parametrize(("phrase", "name", "voice"), CASES)
def test_what_is_heard_finds_the_right_product(stt, tts, catalogue, phrase, name, voice) -> None:
    audio = piper(tts, phrase) if voice == "piper" else espeak(phrase, voice)
    result = stt.transcribe_sync(mix(silence(0.3) + audio + silence(0.3), noise_level=100))
    with Session(catalogue) as db:
        hits = search_products(db, result.text, limit=1)
    assert hits and hits[0].product.name.lower().startswith(name), result.text
    assert 0.0 < result.confidence <= 1.0
    assert result.audio_s > 1.0


def test_the_transcript_is_the_same_for_the_same_audio(stt, tts) -> None:
    audio = piper(tts, "Do you have any cetirizine tablets?")
    assert stt.transcribe_sync(audio).text == stt.transcribe_sync(audio).text
