"""Pins the public surface: a name added to or dropped from `swarm` is a deliberate change."""

import swarm

PUBLIC_VERBS = {
    "session",
    "complete",
    "execute",
    "emit",
    "commit_tool_output",
    "commit_system_message",
    "commit_user_message",
    "commit_flush",
    "commit_stop_tools",
    "cancel_output",
    "change_to_agent",
    "change_to_prev_agent",
    "change_to_default_agent",
    "get_agent_name",
    "get_raw_history",
    "get_agent_history",
    "get_user_history",
    "get_assistant_history",
    "get_last_user_message",
    "get_last_assistant_message",
    "get_last_system_message",
}
REGISTRATION = {
    "add_completion",
    "add_tool",
    "add_agent",
    "add_swarm",
    "validate",
    "make_connection",
}


def test_every_exported_name_exists() -> None:
    for name in swarm.__all__:
        assert hasattr(swarm, name), name


def test_the_seed_verbs_and_registration_functions_are_public() -> None:
    assert PUBLIC_VERBS | REGISTRATION <= set(swarm.__all__)


def test_private_modules_are_not_exported() -> None:
    assert not [name for name in swarm.__all__ if name.startswith("_")]


def test_swarm_imports_nothing_of_voice_sip_http_or_pharmacy() -> None:
    import pathlib
    import re

    root = pathlib.Path(swarm.__file__).parent
    forbidden = re.compile(
        r"^\s*(from|import)\s+(agents|voice|telephony|web|models|callswarm|fastapi|starlette)\b",
        re.M,
    )
    offenders = [p.name for p in root.rglob("*.py") if forbidden.search(p.read_text())]
    assert offenders == []
