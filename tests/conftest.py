from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test reads the developer's CALLSWARM_* settings or provider keys."""
    for key in list(os.environ):
        if key.startswith(("CALLSWARM_", "OPENAI_", "OLLAMA_")):
            monkeypatch.delenv(key)
    yield
