from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

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
