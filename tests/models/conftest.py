from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy.engine import Engine

from models import make_engine
from models.catalogue import load_catalogue


@pytest.fixture
def db(database_url: str) -> Iterator[Engine]:
    engine = make_engine(database_url)
    load_catalogue(engine)
    yield engine
    engine.dispose()
