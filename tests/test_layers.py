"""Imports point one way: transports → voice → swarm session; nothing imports the wiring."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# package → top-level packages it must not import
FORBIDDEN = {
    "voice": {"swarm", "agents", "models", "web", "telephony", "callswarm"},
    "web": {"agents", "telephony", "callswarm"},
    # A phone call sees a Responder, as the browser does: never agents or the database.
    "telephony": {"swarm", "agents", "models", "web", "callswarm"},
    # models may import swarm: SqlSessionStore implements the swarm's persistence port.
    "models": {"agents", "voice", "web", "telephony", "callswarm"},
    "agents": {"voice", "web", "telephony", "callswarm"},
}


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_package_imports_only_downstream(package: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported(path) & FORBIDDEN[package])
        for path in (ROOT / package).rglob("*.py")
        if imported(path) & FORBIDDEN[package]
    }
    assert not offenders
