"""Wiring: settings → the agency → database → completion backends → engine → its swarm.

Everything heavy is built here once per process and handed down.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.engine import Engine as Database

from callswarm.agency import Agency, AgencyBuild, Business, load_agency
from callswarm.bundled import (
    BUNDLED,
    ModelUnavailable,
    SplitModel,
    assembled,
    ensure_model,
    installed_parts,
)
from callswarm.settings import AgentModel, Provider, Settings
from models import SqlSessionStore, make_engine
from models.redact import Redaction
from swarm import CompletionBackend, Engine
from swarm.backends.embed import LlamaCppEmbedder

log = logging.getLogger("callswarm.app")


@dataclass
class Services:
    settings: Settings
    db: Database
    engine: Engine
    swarm: str
    greeting: str
    agency: Agency
    business: Business
    backends: dict[str, CompletionBackend] = field(default_factory=dict)
    # The safety probe's model; None when `CALLSWARM_SAFETY_PROBE=false`.
    embedder: LlamaCppEmbedder | None = None
    # The agency's own warm-up (`Agency.warm`) while it runs: closing waits for it, so
    # it never reads a database already disposed.
    agency_warming: list[asyncio.Task[None]] = field(default_factory=list)

    def begin_warm_up(
        self, before: Callable[[str], None] | None = None
    ) -> list[asyncio.Task[None]]:
        """Start reading each agent's prompt into its local model, the default agent first;
        a caller's turn waits only for its own agent (`WarmingBackend.ready`). `before`:
        see `LlamaCppBackend.begin_warm_up`. The probe's model loads beside them, and the
        agency's own reading (`Agency.warm`, kept in `agency_warming`, not returned:
        `/api/ready` never waited for the drug names it reads, and waiting put ready 1.6 s
        later on the scripted provider)."""
        from swarm.backends.local import LlamaCppBackend

        registry = self.engine.registry
        spec = registry.swarms[self.swarm]
        order = sorted(spec.agents, key=lambda agent: agent != spec.default_agent)
        # The probe's model first: a second or so, and every caller's first line needs it.
        probe = (
            [asyncio.create_task(asyncio.to_thread(self.embedder.load))] if self.embedder else []
        )
        if self.agency.warm is not None and not self.agency_warming:
            self.agency_warming.append(asyncio.create_task(asyncio.to_thread(self._warm_agency)))
        models = [
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
        return probe + models

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

    def _warm_agency(self) -> None:
        """`Agency.warm`, in a worker thread; an agency's failure there is its first
        caller's slower turn, never the gateway's."""
        assert self.agency.warm is not None
        try:
            self.agency.warm(self.db)
        except Exception as error:
            log.warning("agency_warm_failed agency=%s error=%r", self.agency.name, error)

    async def warm_up(self) -> None:
        """Warm every agent, and the agency's own reading, and return when all are done."""
        for task in self.begin_warm_up():
            await task
        await self._agency_warmed()

    async def _agency_warmed(self) -> None:
        # Shielded: a warm-up cancelled (Ctrl-C) must not let `aclose` dispose the
        # database under the thread, which runs on whatever happens to the task.
        await asyncio.gather(*(asyncio.shield(task) for task in self.agency_warming))

    async def aclose(self) -> None:
        await self._agency_warmed()
        await self.engine.aclose()
        self.db.dispose()


def safety_embedder(settings: Settings) -> LlamaCppEmbedder:
    """The bundled 0.5B cut to its first blocks (callswarm/reader_model.py), whatever model
    the agents run: the safety probe was trained on its vectors. A missing package is
    told now, not at the first caller."""
    from importlib.util import find_spec

    from callswarm.reader_model import SAFETY_READER, ensure_cut

    if find_spec("llama_cpp") is None:
        raise ModelUnavailable(
            "the safety probe needs llama-cpp-python (the `local` extra); "
            "CALLSWARM_SAFETY_PROBE=false runs the safety phrases alone"
        )
    reader, threads = SAFETY_READER, settings.local_threads
    given = settings.safety_model_path
    if given is not None:
        # Hashing a quarter of a gigabyte at each start is too slow; another file is
        # refused by its size.
        if not given.is_file() or given.stat().st_size != reader.size:
            raise ModelUnavailable(
                f"CALLSWARM_SAFETY_MODEL_PATH={given} is not {reader.filename} "
                "(`callswarm model install` writes it)"
            )
        return LlamaCppEmbedder(given, reader.sha256, n_threads=threads)
    # Written now if it is missing (8 s, once; `make run` and the image write it before):
    # a gateway that cannot read with the probe must not start, and no caller's first
    # line may wait for the writing past the probe's bound.
    return LlamaCppEmbedder(ensure_cut(reader, settings.data_dir), reader.sha256, n_threads=threads)


def business(settings: Settings, agency: Agency) -> Business:
    """The agency's business, with what the settings say instead."""
    own = agency.business
    return Business(
        name=settings.shop_name or own.name,
        address=settings.shop_address or own.address,
        hours=settings.shop_hours or own.hours,
        currency=settings.currency or own.currency,
        emergency_number=settings.emergency_number or own.emergency_number,
        crisis_line=settings.crisis_line or own.crisis_line,
    )


def agent_models(
    settings: Settings, agents: tuple[str, ...], provider: Provider | None = None
) -> dict[str, AgentModel]:
    """Each agent's model: its own (`agent_models`, then `agent_providers`), else the
    gateway's. An explicit `provider` (`--provider`) means every agent."""
    unknown = sorted((set(settings.agent_models) | set(settings.agent_providers)) - set(agents))
    if unknown:
        # A typo, or settings for another agency: said now, not silently ignored.
        raise ValueError(
            f"agent_models/agent_providers name {', '.join(unknown)}, not an agent of this "
            f"agency (its agents: {', '.join(agents)})"
        )
    if provider is not None:
        return {agent: AgentModel(provider=provider) for agent in agents}
    return {
        agent: settings.agent_models.get(agent)
        or AgentModel(provider=settings.agent_providers.get(agent, settings.provider))
        for agent in agents
    }


def completion_name(model: AgentModel) -> str:
    """Agents on the same model share one backend (one llama.cpp in memory), named by
    its provider unless it is an agent's own."""
    if model.model is None and model.base_url is None and model.api_key is None:
        return model.provider
    return f"{model.provider}:{model.model or 'default'}@{model.base_url or 'default'}"


def make_backend(
    settings: Settings, model: AgentModel, agency: Agency, business: Business
) -> CompletionBackend:
    provider = model.provider
    if provider == "scripted":
        return agency.scripted(business)
    if provider == "ollama":
        from swarm.backends.ollama import OllamaBackend

        return OllamaBackend(
            model=model.model or settings.ollama_model, host=model.base_url or settings.ollama_host
        )
    if provider == "openai":
        from swarm.backends.openai import OpenAIBackend

        secret = model.api_key or settings.openai_api_key
        return OpenAIBackend(
            model=model.model or settings.openai_model,
            base_url=model.base_url or settings.openai_base_url,
            api_key=secret.get_secret_value() if secret else None,
        )
    from swarm.backends.local import LlamaCppBackend, LocalModelOptions

    options = LocalModelOptions(n_ctx=settings.local_context, n_threads=settings.local_threads)
    states = settings.data_dir / "llama-state"
    # An agent's own local model is a bundled one's name or a GGUF file, and wins over
    # the gateway's.
    own_bundled = model.model in BUNDLED
    choice = model.model if model.model in BUNDLED else settings.local_model
    own = Path(model.model) if model.model and not own_bundled else None
    path_given = own or (None if own_bundled else settings.local_model_path)
    if path_given is not None:
        if not path_given.is_file():  # told now, not at the first caller
            where = "an agent_models model" if own else "CALLSWARM_LOCAL_MODEL_PATH"
            raise ModelUnavailable(f"{where}={path_given} is not a file")
        return LlamaCppBackend(path_given, options, state_dir=states)
    bundled = BUNDLED[choice]
    return LlamaCppBackend(
        bundled_file(bundled, settings.data_dir),
        options,
        state_dir=states,
        model_sha256=bundled.sha256,
    )


def bundled_file(bundled: SplitModel, data_dir: Path) -> Path | Callable[[], Path]:
    """The assembled file, or the assembling of it, left for the warm-up: the first start
    copies and checks half a gigabyte, which the socket need not wait for. A missing
    package is told now, not at the first caller."""
    path = assembled(bundled, data_dir)
    if path is not None:
        return path
    installed_parts(bundled)
    # No progress bar: it would interleave with the log.
    return lambda: ensure_model(bundled, data_dir, progress=lambda done, total: None)


def open_database(settings: Settings, agency: Agency | None = None) -> Database:
    """The database, with what the agency needs in it (its catalogue, on the first start)."""
    db = make_engine(settings.resolved_database_url)
    (agency or load_agency(settings.agency)).prepare(db)
    return db


def build_services(
    settings: Settings, *, provider: Provider | None = None, routers: bool = True
) -> Services:
    agency = load_agency(settings.agency)
    told = business(settings, agency)
    db = open_database(settings, agency)
    engine = Engine(
        store=SqlSessionStore(db, Redaction(settings.redact_transcripts)),
        completion_timeout=settings.completion_timeout,
        max_nested=settings.max_nested_calls,
        max_model_calls=settings.turn_model_calls,
        turn_deadline=settings.turn_deadline,
        idle_timeout=settings.idle_timeout,
    )
    models = agent_models(settings, agency.agents, provider)
    backends: dict[str, CompletionBackend] = {}
    for model in models.values():
        name = completion_name(model)
        if name not in backends:
            backends[name] = make_backend(settings, model, agency, told)
            engine.add_completion(name, backends[name])
    hosted = {"ollama", "openai"}
    embedder = safety_embedder(settings) if settings.safety_probe and agency.embeds else None
    swarm = agency.build(
        AgencyBuild(
            engine=engine,
            db=db,
            business=told,
            completions={agent: completion_name(model) for agent, model in models.items()},
            hosted=frozenset(a for a, model in models.items() if model.provider in hosted),
            routers=routers,
            options=agency.settings() if agency.settings is not None else None,
            embedder=embedder,
        )
    )
    return Services(
        settings=settings,
        db=db,
        engine=engine,
        swarm=swarm,
        greeting=agency.greeting(told),
        agency=agency,
        business=told,
        backends=backends,
        embedder=embedder,
    )
