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


def private_reaches(path: Path) -> list[str]:
    """`x._name` where `x` is not `self` or `cls`: one module using another's insides."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or name.startswith("__"):
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
            continue
        found.append(f"{path.name}:{node.lineno} .{name}")
    return found


def test_no_swarm_module_reaches_into_another() -> None:
    """The engine's modules talk through what they publish: a private member is its
    module's to change (issue 22 found session._log, _append, _persist, engine._spawn)."""
    offenders = [
        reach for path in sorted((ROOT / "swarm").glob("_*.py")) for reach in private_reaches(path)
    ]
    assert offenders == []
