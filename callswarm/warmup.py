"""What `serve` loads after its socket is open, in the order callers need it.

A caller's first need is the greeting (Piper), then their words heard (Whisper and
the end-of-turn model), and only then a model's answer. So the voice engines load
first, one after another, while the local models read their agents' prompts beside
them (the default agent first). `/api/ready` reports each stage.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Protocol, TypeVar

from callswarm.app import Services
from web.gateway import Readiness, Stage, VoiceEngines

log = logging.getLogger("callswarm.warmup")

T = TypeVar("T")

VOICE_STAGES = ("piper", "whisper", "end_of_turn")


class Step(Protocol):
    """Run one named stage of loading, reported in `/api/ready` and the log."""

    def __call__(self, name: str, load: Callable[[], T]) -> T: ...


VoiceLoader = Callable[[Step], VoiceEngines]


class Warmup:
    """Implements `web.gateway.Warming` for a gateway that serves while it loads.

    `load_voice` builds the engines stage by stage through `step`, in a worker thread;
    None means a text-only gateway."""

    def __init__(
        self,
        services: Services,
        load_voice: VoiceLoader | None,
    ) -> None:
        self._services = services
        self._load_voice = load_voice
        self._started = time.monotonic()
        self._stages: dict[str, Stage] = {}
        if load_voice is not None:
            self._stages.update(dict.fromkeys(VOICE_STAGES, Stage.WAITING))
        for agent in services.engine.registry.swarms[services.swarm].agents:
            self._stages[f"model:{agent}"] = Stage.WAITING
        self._engines: asyncio.Future[VoiceEngines] = asyncio.get_running_loop().create_future()
        self._done = asyncio.Event()

    @property
    def has_voice(self) -> bool:
        return self._load_voice is not None

    def readiness(self) -> Readiness:
        return Readiness(
            ready=self._done.is_set(),
            voice=self._engines.done() and self._engines.exception() is None,
            stages=dict(self._stages),
            seconds=round(time.monotonic() - self._started, 3),
        )

    async def voice(self) -> VoiceEngines:
        if self._load_voice is None:
            raise RuntimeError("voice is not enabled on this gateway")
        return await asyncio.shield(self._engines)

    async def wait(self) -> None:
        """Until every stage is done: benchmarks and tests."""
        await self._done.wait()

    async def run(self) -> None:
        """Load everything; a stage that fails is logged and reported, never raised."""
        loop = asyncio.get_running_loop()
        models = self._services.begin_warm_up()
        watch = loop.create_task(self._watch_models())
        try:
            if self._load_voice is not None:
                try:
                    engines = await asyncio.to_thread(self._load_voice, self._step_from(loop))
                except Exception as exc:
                    log.error("voice_load_failed error=%r", exc)
                    self._engines.set_exception(RuntimeError(f"voice could not load: {exc}"))
                else:
                    self._engines.set_result(engines)
            await asyncio.gather(*models, return_exceptions=True)
            await watch
        finally:
            watch.cancel()
            self._done.set()
            log.info(
                "warm_up_done seconds=%.1f stages=%s",
                time.monotonic() - self._started,
                ",".join(f"{name}:{stage}" for name, stage in self._stages.items()),
            )

    def _step_from(self, loop: asyncio.AbstractEventLoop) -> Step:
        def step(name: str, load: Callable[[], T]) -> T:
            loop.call_soon_threadsafe(self._stages.__setitem__, name, Stage.WARMING)
            started = time.perf_counter()
            try:
                value = load()
            except Exception:
                loop.call_soon_threadsafe(self._stages.__setitem__, name, Stage.FAILED)
                raise
            loop.call_soon_threadsafe(self._stages.__setitem__, name, Stage.READY)
            log.info("warm_stage stage=%s ms=%.0f", name, (time.perf_counter() - started) * 1000)
            return value

        return step

    async def _watch_models(self) -> None:
        """Mirror each agent's warm-up into the stages, as each finishes."""
        from swarm import WarmingBackend

        registry = self._services.engine.registry

        async def one(agent: str) -> None:
            backend = registry.completions[registry.agents[agent].completion]
            self._stages[f"model:{agent}"] = Stage.WARMING
            warm = await backend.ready(agent) if isinstance(backend, WarmingBackend) else True
            self._stages[f"model:{agent}"] = Stage.READY if warm else Stage.FAILED

        await asyncio.gather(
            *(one(agent) for agent in registry.swarms[self._services.swarm].agents)
        )
