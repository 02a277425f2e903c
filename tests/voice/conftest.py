from __future__ import annotations

import pytest
from sqlmodel import Session

from models import make_engine
from models.catalogue import load_catalogue
from models.search import catalogue_vocabulary
from voice.stt import WhisperSTT, bundled_whisper
from voice.tts import PiperTTS, bundled_voice


def _catalogue_vocabulary() -> list[str]:
    engine = make_engine("sqlite:///:memory:")
    load_catalogue(engine)
    with Session(engine) as db:
        names = catalogue_vocabulary(db)
    engine.dispose()
    return names


# The catalogue's names, as the gateway biases recognition with them.
VOCABULARY = _catalogue_vocabulary()


@pytest.fixture(scope="session")
def tts() -> PiperTTS:
    return PiperTTS(bundled_voice(), deterministic=True)


@pytest.fixture(scope="session")
def stt() -> WhisperSTT:
    engine = WhisperSTT(bundled_whisper(), vocabulary=VOCABULARY)
    engine.warm_up()
    return engine
