"""What the benchmarks share: percentiles, and timing one caller turn with its events."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from callswarm.app import Services, build_services  # noqa: E402
from callswarm.reader_model import SAFETY_READER, ensure_cut  # noqa: E402
from callswarm.serve import listen  # noqa: E402
from callswarm.settings import Settings  # noqa: E402
from swarm import Engine, Session, SwarmEvent  # noqa: E402
from web import Gateway, create_app  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
# Every benchmark's gateway, whatever its temporary data_dir, reads with the safety
# probe on the one copy of its model in the repo's data/ (as `make run`), rather than
# writing a quarter of a gigabyte into each.
if "CALLSWARM_SAFETY_MODEL_PATH" not in os.environ:
    os.environ["CALLSWARM_SAFETY_MODEL_PATH"] = str(ensure_cut(SAFETY_READER, REPO / "data"))
# Issue 4's reference caller: the utterance every voice benchmark speaks.
UTTERANCE = "Hello, I would like to buy two boxes of paracetamol for my fever, please."


@functools.lru_cache(maxsize=2)
def _caller_voice(rewritten: bool) -> Any:
    import onnx
    import onnxruntime
    from piper import PiperVoice
    from piper.config import PiperConfig

    from voice.piper_graph import conv1d_as_2d
    from voice.tts import bundled_voice

    model = bundled_voice()
    graph = onnx.load(str(model))
    if rewritten:
        conv1d_as_2d(graph)
    options = onnxruntime.SessionOptions()  # as the gateway's voice ran until 2026-12-06
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = onnxruntime.InferenceSession(
        graph.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    config = PiperConfig.from_dict(json.loads(Path(f"{model}.json").read_text()))
    return PiperVoice(config=config, session=session)


def caller_pcm(text: str, *, rewritten: bool = True) -> tuple[bytes, int]:
    """A caller saying `text`, and its sample rate: Piper's own synthesis, each sentence
    scaled to full scale, noiseless; the voice's graph rewritten as the gateway's
    (`rewritten=False`: as shipped, as the tests' callers speak). Who calls does not
    change when the gateway's voice does: these are the samples the benchmarks' caller
    had before the gateway's voice went to parts at one gain (2026-12-06), which moved
    its level by 2 dB and, under load, its transcripts and CPU."""
    from piper.config import SynthesisConfig

    voice = _caller_voice(rewritten)
    noiseless = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0)
    pcm = b"".join(chunk.audio_int16_bytes for chunk in voice.synthesize(text, noiseless))
    return pcm, int(voice.config.sample_rate)


def gateway_vocabulary() -> list[str]:
    """The catalogue's words, as the gateway biases recognition (its real prompt length)."""
    from sqlmodel import Session as DbSession

    from models import make_engine
    from models.catalogue import load_catalogue
    from models.search import catalogue_vocabulary

    db = make_engine("sqlite:///:memory:")
    try:
        load_catalogue(db)
        with DbSession(db) as s:
            return catalogue_vocabulary(s)
    finally:
        db.dispose()


def pct(values: list[float], q: float) -> float:
    """The q-quantile by nearest rank: with few samples, no interpolation pretends precision."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def timed_turn(
    engine: Engine, session: Session, line: str
) -> tuple[float, str, list[SwarmEvent]]:
    """One caller line: seconds until the reply, the reply, and the events it published."""
    with engine.bus.subscribe() as events:
        started = time.perf_counter()
        reply = await session.complete(line)
        elapsed = time.perf_counter() - started
        return elapsed, reply, events.drain()


@asynccontextmanager
async def fresh_services(
    provider: str, model: Path | None
) -> AsyncIterator[tuple[Services, float]]:
    """The whole service on a throwaway database, warmed up; yields it and the warm-up seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=Path(tmp), provider=provider, local_model_path=model, idle_timeout=None
        )
        services = build_services(settings)
        started = time.perf_counter()
        await services.warm_up()
        try:
            yield services, time.perf_counter() - started
        finally:
            await services.aclose()


async def start_watcher(script: str, *args: str) -> asyncio.subprocess.Process:
    """A benchmark's SSE watchers, in their own process (`script --watch ARGS`) so their
    parsing does not share the gateway's loop; returns once the process prints "ready"."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, script, "--watch", *args, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    assert (await process.stdout.readline()).strip() == b"ready"
    return process


async def watcher_result(process: asyncio.subprocess.Process) -> Any:
    """What the watchers' process printed last, as JSON, once it has finished."""
    out, _ = await asyncio.wait_for(process.communicate(), 300)
    return json.loads(out.decode().strip().splitlines()[-1])


async def as_caller(url: str, client_id: str) -> dict[str, str]:
    """Headers that open a caller socket as `client_id`'s browser: the signed cookie the
    gateway gives (`POST /api/v1/caller`). `url`: the gateway's ws:// or http:// URL."""
    import httpx

    from web.callers import COOKIE

    http = url.replace("ws://", "http://", 1)
    async with httpx.AsyncClient(base_url=http, timeout=30) as client:
        response = await client.post("/api/v1/caller", json={"client_id": client_id})
    response.raise_for_status()
    if response.json()["client_id"] != client_id:
        raise RuntimeError(f"the gateway gave another id than {client_id}")
    return {"Cookie": f"{COOKIE}={response.cookies[COOKIE]}"}


@asynccontextmanager
async def serving(gateway: Gateway) -> AsyncIterator[str]:
    """The gateway under uvicorn on a free loopback port; yields its ws:// URL, then stops
    in `serve`'s order (event streams, uvicorn, the journal)."""
    import uvicorn

    sock = listen("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(create_app(gateway), log_config=None, lifespan="off"))
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    try:
        yield f"ws://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        gateway.journal.hub.close()
        server.should_exit = True
        await task
        await gateway.aclose()


async def sip_gateway(
    data: Path, sip_port: int, provider: str, env: dict[str, str] | None = None
) -> tuple[asyncio.subprocess.Process, str]:
    """`callswarm serve --sip` in its own process, as in production, on a fresh
    environment (no CALLSWARM_* of ours) with `data` as its folder; returned once its
    phone line is open (after the web, once the voice is loaded), with its web URL."""
    import os
    import re

    clean = {k: v for k, v in os.environ.items() if not k.startswith("CALLSWARM_")}
    clean |= {"CALLSWARM_DATA_DIR": str(data), "CALLSWARM_SIP_MAX_CALLS": "64", **(env or {})}
    gateway = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "callswarm", "serve", "--port", "0", "--provider", provider),
        *("--sip", "--sip-port", str(sip_port)),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=clean,
        cwd=REPO,
    )
    assert gateway.stdout is not None and gateway.stderr is not None
    lines: list[bytes] = []
    while not lines or b"answering SIP" not in lines[-1]:
        line = await gateway.stdout.readline()
        assert line, "the gateway exited before answering SIP"
        lines.append(line)
    found = re.search(rb"serving on (http://[\d.:]+)/", b"".join(lines))
    assert found is not None, lines
    return gateway, found.group(1).decode()
