from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy.engine import Engine

from models import make_engine, sqlite_url
from models.catalogue import load_catalogue


@pytest.fixture
def db(tmp_path) -> Iterator[Engine]:
    engine = make_engine(sqlite_url(tmp_path / "shop.db"))
    load_catalogue(engine)
    yield engine
    engine.dispose()
