"""What `serve` loads after its socket is open, one thing at a time, cheapest need first.

Two cores do not load two things faster than one: loaded side by side, the model took
2.05 s instead of 0.56 s and Piper's voice 2.3 s instead of 0.9 s. So the stages run one
after another. After a restart the default agent's model comes first: it loads from its
saved state in under a second, and a typed caller needs nothing else. On a first start
reading its prompt takes 5-10 s, so the voice comes first (Piper, Whisper, the
end-of-turn model: a voice caller is greeted by code and heard meanwhile). The other
agents come last. `/api/ready` reports each stage.
"""

from __future__ import annotations

import asyncio
import logging
import threading
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
        spec = services.engine.registry.swarms[services.swarm]
        self._first = f"model:{spec.default_agent}"
        self._others = [f"model:{a}" for a in spec.agents if a != spec.default_agent]
        self._voice = list(VOICE_STAGES) if load_voice is not None else []
        # Until `run` knows whether the default agent is saved; `/api/ready` lists them.
        self._order = [*self._voice, self._first, *self._others]
        self._stages: dict[str, Stage] = dict.fromkeys(self._order, Stage.WAITING)
        # Set when a stage is over (ready or failed), or when the warm-up stops.
        self._over = {name: threading.Event() for name in self._order}
        self._ordered = threading.Event()  # `_order` is final
        self._stopped = False
        self._voice_failed = False
        self._engines: asyncio.Future[VoiceEngines] = asyncio.get_running_loop().create_future()
        self._done = asyncio.Event()

    @property
    def has_voice(self) -> bool:
        """False once the voice failed to load: the page then says so, not "warming"."""
        return self._load_voice is not None and not self._voice_failed

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

        def model_turn(agent: str) -> None:
            self._turn_of(f"model:{agent}")
            loop.call_soon_threadsafe(self._stages.__setitem__, f"model:{agent}", Stage.WARMING)

        # First, before any await: a caller's turn from now on waits for its agent.
        models = self._services.begin_warm_up(model_turn)
        watch = loop.create_task(self._watch_models())
        try:
            try:
                if await asyncio.to_thread(self._services.default_agent_is_saved):
                    self._order = [self._first, *self._voice, *self._others]
            except Exception as exc:  # the model's own warm-up will fail and say so
                log.warning("warm_up_order_unknown error=%r", exc)
            finally:
                self._ordered.set()
            log.info("warm_up_order stages=%s", ",".join(self._order))
            if self._load_voice is not None:
                try:
                    engines = await asyncio.to_thread(self._load_voice, self._step_from(loop))
                except Exception as exc:
                    log.error("voice_load_failed error=%r", exc)
                    self._voice_failed = True
                    self._engines.set_exception(RuntimeError(f"voice could not load: {exc}"))
                    for name in VOICE_STAGES:  # the stages after the failed one never ran
                        if self._stages[name] is Stage.WAITING:
                            self._stages[name] = Stage.FAILED
                        self._over[name].set()
                else:
                    self._engines.set_result(engines)
            await asyncio.gather(*models, return_exceptions=True)
            await watch
        finally:
            watch.cancel()
            self._stopped = True  # a loading thread still running stops at its next stage
            if not self._engines.done():
                self._engines.set_exception(RuntimeError("the warm-up stopped"))
                self._engines.exception()  # retrieved: nobody may be waiting
            self._ordered.set()
            for over in self._over.values():
                over.set()  # nothing waits for a stage that will not come
            self._done.set()
            log.info(
                "warm_up_done seconds=%.1f stages=%s",
                time.monotonic() - self._started,
                ",".join(f"{name}:{stage}" for name, stage in self._stages.items()),
            )

    def _step_from(self, loop: asyncio.AbstractEventLoop) -> Step:
        def step(name: str, load: Callable[[], T]) -> T:
            self._turn_of(name)
            if self._stopped:
                raise RuntimeError("the warm-up stopped")
            loop.call_soon_threadsafe(self._stages.__setitem__, name, Stage.WARMING)
            started = time.perf_counter()
            try:
                value = load()
            except Exception:
                loop.call_soon_threadsafe(self._stages.__setitem__, name, Stage.FAILED)
                raise
            finally:
                self._over[name].set()
            loop.call_soon_threadsafe(self._stages.__setitem__, name, Stage.READY)
            log.info("warm_stage stage=%s ms=%.0f", name, (time.perf_counter() - started) * 1000)
            return value

        return step

    def _turn_of(self, name: str) -> None:
        """Block (a loading thread) until the stage before `name` is over, and no caller
        is being answered: their answer first, the loading after."""
        self._ordered.wait()
        at = self._order.index(name)
        if at > 0:
            self._over[self._order[at - 1]].wait()
        self._services.wait_models_idle()

    async def _watch_models(self) -> None:
        """Mirror each agent's warm-up into the stages, as each finishes."""
        from swarm import WarmingBackend

        registry = self._services.engine.registry

        async def one(agent: str) -> None:
            backend = registry.completions[registry.agents[agent].completion]
            name = f"model:{agent}"
            # `warmed`, not `ready`: this is no caller, and must not count as one.
            warmed = getattr(backend, "warmed", None)
            if warmed is not None:
                warm = await warmed(agent)
            elif isinstance(backend, WarmingBackend):
                warm = await backend.ready(agent)
            else:
                warm = True
            self._stages[name] = Stage.READY if warm else Stage.FAILED
            self._over[name].set()

        await asyncio.gather(
            *(one(agent) for agent in registry.swarms[self._services.swarm].agents)
        )
