from __future__ import annotations

import pytest

from voice.stt import WhisperSTT, bundled_whisper
from voice.tts import PiperTTS, bundled_voice

# The catalogue's names, as the gateway biases recognition with them.
VOCABULARY = [
    "Paracetamol",
    "Ibuprofen",
    "Loratadine",
    "Cetirizine",
    "Fexofenadine",
    "Omeprazole",
    "Loperamide",
    "Aspirin",
    "Amoxicillin",
    "Gaviscon",
]


@pytest.fixture(scope="session")
def tts() -> PiperTTS:
    return PiperTTS(bundled_voice(), deterministic=True)


@pytest.fixture(scope="session")
def stt() -> WhisperSTT:
    engine = WhisperSTT(bundled_whisper(), vocabulary=VOCABULARY)
    engine.warm_up()
    return engine
