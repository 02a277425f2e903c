"""Wiring: settings → database → completion backends → engine → the pharmacy agency.

Everything heavy is built here once per process and handed down.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from sqlalchemy.engine import Engine as Database

from agents.agency import build_pharmacy
from agents.deps import Pharmacy, ShopInfo
from agents.prompts import greeting
from agents.safety import SafetyLines
from agents.scripted import pharmacy_script
from agents.tools.navigation import SALES, TRIAGE
from callswarm.bundled import BUNDLED, ensure_model
from callswarm.settings import Provider, Settings
from models import SqlSessionStore, make_engine
from models.catalogue import catalogue_is_empty, load_catalogue
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

    async def warm_up(self) -> None:
        """Read each agent's prompt into its local model once, before the first caller."""
        from swarm.backends.local import LlamaCppBackend

        registry = self.engine.registry
        for name, backend in self.backends.items():
            if isinstance(backend, LlamaCppBackend):
                await backend.warm_up(
                    [
                        self.engine.prefix_args(self.swarm, agent)
                        for agent in registry.swarms[self.swarm].agents
                        if registry.agents[agent].completion == name
                    ]
                )

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

    path = settings.local_model_path or ensure_model(
        BUNDLED[settings.local_model], settings.data_dir
    )
    return LlamaCppBackend(
        path, LocalModelOptions(n_ctx=settings.local_context, n_threads=settings.local_threads)
    )


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
        store=SqlSessionStore(db),
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
