from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from callswarm.app import Services, build_services
from callswarm.settings import Settings


@pytest.fixture
async def shop(tmp_path) -> AsyncIterator[Services]:
    """The real pharmacy on the scripted provider, with its own SQLite file."""
    services = build_services(Settings(data_dir=tmp_path, provider="scripted", idle_timeout=None))
    yield services
    await services.aclose()
