from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from voice.stt import WhisperSTT, bundled_whisper
from voice.tts import PiperTTS, bundled_voice

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test reads the developer's CALLSWARM_* settings or provider keys."""
    for key in list(os.environ):
        if key.startswith(("CALLSWARM_", "OPENAI_", "OLLAMA_")):
            monkeypatch.delenv(key)
    yield


@pytest.fixture(scope="session")
def bundled_model() -> Path:
    """The embedded LLM, assembled once into the repo's data directory (as `make run` does)."""
    from callswarm.bundled import QWEN_05B, ensure_model

    return ensure_model(QWEN_05B, REPO / "data")


@pytest.fixture(scope="session")
def tts() -> PiperTTS:
    return PiperTTS(bundled_voice(), deterministic=True)


@pytest.fixture(scope="session")
def stt() -> WhisperSTT:
    engine = WhisperSTT(bundled_whisper(), vocabulary=catalogue_words())
    engine.warm_up()
    return engine


def catalogue_words() -> list[str]:
    """The catalogue's names, as the gateway biases recognition with them."""
    from sqlmodel import Session

    from models import make_engine
    from models.catalogue import load_catalogue
    from models.search import catalogue_vocabulary

    engine = make_engine("sqlite:///:memory:")
    load_catalogue(engine)
    with Session(engine) as db:
        names = catalogue_vocabulary(db)
    engine.dispose()
    return names
