"""Wiring: settings → database → completion backends → engine → the pharmacy agency.

Everything heavy is built here once per process and handed down.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.engine import Engine as Database

from agents.agency import build_pharmacy
from agents.deps import Pharmacy, ShopInfo
from agents.prompts import greeting
from agents.safety import SafetyLines
from agents.scripted import pharmacy_script
from agents.tools.navigation import SALES, TRIAGE
from callswarm.bundled import (
    BUNDLED,
    ModelUnavailable,
    assembled,
    ensure_model,
    installed_parts,
)
from callswarm.settings import Provider, Settings
from models import SqlSessionStore, make_engine
from models.catalogue import catalogue_is_empty, load_catalogue
from models.redact import Redaction
from swarm import CompletionBackend, Engine

log = logging.getLogger("callswarm.app")


@dataclass
class Services:
    settings: Settings
    db: Database
    engine: Engine
    swarm: str
    greeting: str
    backends: dict[str, CompletionBackend] = field(default_factory=dict)

    def begin_warm_up(
        self, before: Callable[[str], None] | None = None
    ) -> list[asyncio.Task[None]]:
        """Start reading each agent's prompt into its local model, the default agent first;
        a caller's turn waits only for its own agent (`WarmingBackend.ready`). `before`:
        see `LlamaCppBackend.begin_warm_up`."""
        from swarm.backends.local import LlamaCppBackend

        registry = self.engine.registry
        spec = registry.swarms[self.swarm]
        order = sorted(spec.agents, key=lambda agent: agent != spec.default_agent)
        return [
            backend.begin_warm_up(
                [
                    self.engine.prefix_args(self.swarm, agent)
                    for agent in order
                    if registry.agents[agent].completion == name
                ],
                before,
            )
            for name, backend in self.backends.items()
            if isinstance(backend, LlamaCppBackend)
        ]

    def default_agent_is_saved(self) -> bool:
        """Whether the default agent's model will warm from a saved state (a restart):
        then it is quick enough to come first. From a worker thread."""
        from swarm.backends.local import LlamaCppBackend

        spec = self.engine.registry.swarms[self.swarm]
        backend = self.engine.registry.completions[
            self.engine.registry.agents[spec.default_agent].completion
        ]
        if not isinstance(backend, LlamaCppBackend):
            return True  # nothing to read: no wait
        return backend.has_saved_state(self.engine.prefix_args(self.swarm, spec.default_agent))

    def wait_models_idle(self, timeout: float = 30) -> None:
        """Block (a loading thread) while a local model is answering a caller."""
        from swarm.backends.local import LlamaCppBackend

        for backend in self.backends.values():
            if isinstance(backend, LlamaCppBackend):
                backend.wait_idle(timeout)

    async def warm_up(self) -> None:
        """Warm every agent and return when all are done."""
        for task in self.begin_warm_up():
            await task

    async def aclose(self) -> None:
        await self.engine.aclose()
        self.db.dispose()


def shop_info(settings: Settings) -> ShopInfo:
    return ShopInfo(
        name=settings.shop_name,
        address=settings.shop_address,
        hours=settings.shop_hours,
        currency=settings.currency,
        safety=SafetyLines(settings.emergency_number, settings.crisis_line),
    )


def make_backend(settings: Settings, provider: Provider) -> CompletionBackend:
    if provider == "scripted":
        return pharmacy_script(shop_info(settings))
    if provider == "ollama":
        from swarm.backends.ollama import OllamaBackend

        return OllamaBackend(model=settings.ollama_model, host=settings.ollama_host)
    if provider == "openai":
        from swarm.backends.openai import OpenAIBackend

        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        return OpenAIBackend(
            model=settings.openai_model, base_url=settings.openai_base_url, api_key=key
        )
    from swarm.backends.local import LlamaCppBackend, LocalModelOptions

    options = LocalModelOptions(n_ctx=settings.local_context, n_threads=settings.local_threads)
    states = settings.data_dir / "llama-state"
    if settings.local_model_path is not None:
        if not settings.local_model_path.is_file():  # told now, not at the first caller
            raise ModelUnavailable(
                f"CALLSWARM_LOCAL_MODEL_PATH={settings.local_model_path} is not a file"
            )
        return LlamaCppBackend(settings.local_model_path, options, state_dir=states)
    bundled = BUNDLED[settings.local_model]
    path = assembled(bundled, settings.data_dir)
    if path is None:
        installed_parts(bundled)  # a missing package is told now, not at the first caller

        def assemble() -> Path:
            # The first start copies and checks half a gigabyte: in the warm-up, not before
            # the socket opens. No progress bar: it would interleave with the log.
            return ensure_model(bundled, settings.data_dir, progress=lambda done, total: None)

        return LlamaCppBackend(assemble, options, state_dir=states, model_sha256=bundled.sha256)
    return LlamaCppBackend(path, options, state_dir=states, model_sha256=bundled.sha256)


def open_database(settings: Settings) -> Database:
    db = make_engine(settings.resolved_database_url)
    if catalogue_is_empty(db):
        result = load_catalogue(db)
        log.info("catalogue_first_load added=%d", result.added)
    return db


def build_services(
    settings: Settings, *, provider: Provider | None = None, routers: bool = True
) -> Services:
    db = open_database(settings)
    engine = Engine(
        store=SqlSessionStore(db, Redaction(settings.redact_transcripts)),
        completion_timeout=settings.completion_timeout,
        max_nested=settings.max_nested_calls,
        max_model_calls=settings.turn_model_calls,
        turn_deadline=settings.turn_deadline,
        idle_timeout=settings.idle_timeout,
    )
    default = provider or settings.provider
    chosen = {agent: settings.agent_providers.get(agent, default) for agent in (TRIAGE, SALES)}
    if provider is not None:  # an explicit --provider means every agent
        chosen = {agent: provider for agent in chosen}
    backends: dict[str, CompletionBackend] = {}
    for name in sorted(set(chosen.values())):
        backends[name] = make_backend(settings, name)
        engine.add_completion(name, backends[name])
    hosted = {"ollama", "openai"}
    swarm = build_pharmacy(
        engine,
        Pharmacy(db, shop_info(settings)),
        chosen,
        detailed_tools=chosen[SALES] in hosted,
        routers=routers,
    )
    return Services(
        settings=settings,
        db=db,
        engine=engine,
        swarm=swarm,
        greeting=greeting(shop_info(settings)),
        backends=backends,
    )
