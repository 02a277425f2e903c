from pathlib import Path

import pytest
from pydantic import ValidationError

from callswarm.settings import load_settings


def test_defaults_use_a_sqlite_file_in_the_data_dir(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = load_settings()
    assert settings.provider == "local"
    assert settings.resolved_database_url == f"sqlite:///{tmp_path / 'data' / 'callswarm.db'}"


def test_environment_overrides_toml_and_toml_overrides_defaults(
    tmp_path: Path, monkeypatch
) -> None:
    config = tmp_path / "custom.toml"
    config.write_text('provider = "ollama"\nollama_model = "qwen2.5:0.5b"\nlog_level = "DEBUG"\n')
    monkeypatch.setenv("CALLSWARM_LOG_LEVEL", "WARNING")
    monkeypatch.setenv("CALLSWARM_DATABASE_URL", "postgresql+psycopg://u@localhost/callswarm")
    settings = load_settings(config)
    assert settings.provider == "ollama"
    assert settings.ollama_model == "qwen2.5:0.5b"
    assert settings.log_level == "WARNING"
    assert settings.resolved_database_url == "postgresql+psycopg://u@localhost/callswarm"


def test_explicit_overrides_win_and_bad_values_are_rejected(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CALLSWARM_PROVIDER", "openai")
    assert load_settings(provider="scripted").provider == "scripted"
    with pytest.raises(ValidationError):
        load_settings(provider="gpt-17")
    with pytest.raises(FileNotFoundError):
        load_settings(tmp_path / "missing.toml")


def test_callswarm_toml_in_the_working_directory_is_read(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "callswarm.toml").write_text("idle_timeout = 60.0\n")
    assert load_settings().idle_timeout == 60.0
