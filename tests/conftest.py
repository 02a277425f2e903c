from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from voice.stt import WhisperSTT, bundled_whisper
from voice.tts import PiperTTS, bundled_voice

REPO = Path(__file__).resolve().parent.parent
# Read before `clean_environ` hides every CALLSWARM_ variable from the tests.
POSTGRES_URL = os.environ.get("CALLSWARM_TEST_POSTGRES_URL")


@pytest.fixture(scope="session")
def safety_model() -> Path:
    """The model the pharmacy's safety probe reads with, written once into the repo's
    data directory (as `make run` does), not into each test's."""
    from callswarm.reader_model import SAFETY_READER, ensure_cut

    return ensure_cut(SAFETY_READER, REPO / "data")


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch, safety_model: Path) -> Iterator[None]:
    """No test reads the developer's CALLSWARM_* settings or provider keys. Every gateway
    a test builds screens with the real safety probe, on the one assembled model rather
    than a copy in each test's data_dir."""
    for key in list(os.environ):
        if key.startswith(("CALLSWARM_", "OPENAI_", "OLLAMA_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("CALLSWARM_SAFETY_MODEL_PATH", str(safety_model))
    yield


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test on the embedded model is `solo`: it answers against the turn deadline, and a
    second worker's load on the two cores can push it onto the code's fallback."""
    for item in items:
        if "bundled_model" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.solo)


def worker_ports(low: int, high: int) -> tuple[int, int]:
    """This pytest worker's share of a port range. The gateway and the softphones pick
    their RTP ports at random in a fixed range and do not step past one in use, so two
    workers' calls must not draw from the same range."""
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    # A worker that replaces a crashed one gets the next id (gw3 of 3): wrap it round.
    index = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")) % count
    share = (high - low + 1) // count
    assert share >= 100, f"{count} workers leave {share} ports each in {low}-{high}"
    start = low + index * share
    assert start + share - 1 <= high
    return start, start + share - 1


# Tests marked `databases` run once on each; the rest use a SQLite file.
BACKENDS = ("sqlite", "postgresql")


# For what only one of them has (LISTEN/NOTIFY, a GIN index), in a `databases` module.
ONLY_POSTGRESQL = pytest.mark.parametrize("backend", ["postgresql"], indirect=True)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marked = metafunc.definition.get_closest_marker("databases") is not None
    chosen = any(m.args[0] == "backend" for m in metafunc.definition.iter_markers("parametrize"))
    if marked and not chosen and "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", BACKENDS, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    return getattr(request, "param", "sqlite")


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """A PostgreSQL server's URL: `make test` starts one (scripts/test-postgres) and
    exports it; a bare `pytest` starts the same one itself."""
    url = POSTGRES_URL
    if not url:
        started = subprocess.run(
            [str(REPO / "scripts" / "test-postgres"), "start"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert started.returncode == 0, f"no PostgreSQL for the tests: {started.stderr}"
        url = started.stdout.strip()
    return url


@contextmanager
def fresh_database(request: pytest.FixtureRequest, backend: str, folder: Path) -> Iterator[str]:
    """The URL of a new, empty database of `backend`, dropped afterwards."""
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'callswarm.db'}"
        return
    import psycopg

    server = make_url(request.getfixturevalue("postgres_server"))
    name = f"test_{uuid.uuid4().hex[:16]}"
    admin = server.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            # FORCE: a gateway a failing test left behind may still hold connections.
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def database_url(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> Iterator[str]:
    """A new, empty database of `backend`, dropped after the test."""
    with fresh_database(request, backend, tmp_path) as url:
        yield url


@pytest.fixture(scope="session")
def bundled_model() -> Path:
    """The embedded LLM, assembled once into the repo's data directory (as `make run`
    does), when the safety probe's model was written from it."""
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
