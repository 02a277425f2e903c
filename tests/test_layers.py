"""Imports point one way: transports → voice → swarm session; nothing imports the wiring."""

from __future__ import annotations

import ast
import re
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
    "models": {"agents", "voice", "web", "telephony", "callswarm", "agencies"},
    # An agency sees the engine, the shop's tables and the plug-in contract
    # (callswarm.agency, checked below), never a transport or another agency.
    "agents": {"voice", "web", "telephony", "agencies"},
    "agencies": {"voice", "web", "telephony", "agents"},
    # The gateway finds agencies by name (CALLSWARM_AGENCY), never by import.
    "callswarm": {"agents", "agencies"},
    "swarm": {"agents", "agencies", "voice", "web", "telephony", "callswarm", "models"},
}
FORBIDDEN["voice"] |= {"agencies"}
FORBIDDEN["web"] |= {"agencies"}
FORBIDDEN["telephony"] |= {"agencies"}
AGENCY_FOLDERS = {"agents": ("triage", "sales"), "agencies/bakery": ("counter",)}
PRODUCT = ("swarm", "voice", "models", "web", "telephony", "callswarm", "agents", "agencies")


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


def test_an_agency_reaches_the_gateway_only_through_its_contract() -> None:
    reaches = set()
    for package in ("agents", "agencies"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("callswarm"):
                    reaches.add(node.module)
                elif isinstance(node, ast.Import):
                    reaches |= {a.name for a in node.names if a.name.startswith("callswarm")}
    assert reaches == {"callswarm.agency"}


def test_no_module_outside_an_agencys_folder_names_its_agents() -> None:
    """Agent names as string literals ("triage") only in their own agency's folder."""
    found = []
    for folder, agents in AGENCY_FOLDERS.items():
        for package in PRODUCT:
            for path in (ROOT / package).rglob("*.py"):
                if path.is_relative_to(ROOT / folder):
                    continue
                for node in ast.walk(ast.parse(path.read_text())):
                    if isinstance(node, ast.Constant) and node.value in agents:
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    assert not found
    # The check sees the names where they are: it can fail.
    assert any(
        isinstance(node, ast.Constant) and node.value == "triage"
        for node in ast.walk(ast.parse((ROOT / "agents/tools/navigation.py").read_text()))
    )


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
    modules = sorted((ROOT / "swarm").glob("_*.py"))
    assert len(modules) > 10
    offenders = [reach for path in modules for reach in private_reaches(path)]
    assert offenders == []


def swarm_edges() -> dict[str, set[str]]:
    """Each swarm module's imports of its siblings: at the top, in functions and under
    `if TYPE_CHECKING:` alike (ast.walk sees them all). A name taken from the package
    itself (`from swarm import Session`) goes through `__init__`, which imports them all."""
    siblings = {p.stem for p in (ROOT / "swarm").glob("*.py")}
    assert {"__init__", "_session", "_runner"} <= siblings
    edges: dict[str, set[str]] = {}
    for path in (ROOT / "swarm").glob("*.py"):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level == 0 and node.module:
                    module = node.module
                elif node.level == 1:  # from . import x, from ._x import y
                    module = f"swarm.{node.module}" if node.module else "swarm"
                else:
                    continue
                parts = module.split(".")
                if parts[0] != "swarm":
                    continue
                if len(parts) > 1:
                    found.add(parts[1])
                else:
                    found |= {a.name if a.name in siblings else "__init__" for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("swarm.")}
        edges[path.stem] = (found & siblings) - {path.stem}
    return edges


def cycle_in(edges: dict[str, set[str]]) -> list[str]:
    """One import cycle, as the modules in order; [] if there is none."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = "open"
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = "done"
        path.pop()
        return []

    for start in sorted(edges):
        if start not in state and (found := visit(start)):
            return found
    return []


def test_the_cycle_finder_finds_one() -> None:
    assert cycle_in({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle_in({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_swarm_modules_import_one_way_even_for_type_checking() -> None:
    """Issue 22: seven of them were one cycle through `TYPE_CHECKING` imports. The
    session and the runner are typed against protocols below them instead."""
    edges = swarm_edges()
    assert "_log" in edges["_session"] and "_handle" in edges["_registry"]  # it reads them
    assert cycle_in(edges) == []


LONG = 400
WHY_LONG = re.compile(
    r"(over|past|beyond)\s+(our\s+)?~?\s*400|longer than (most|our|~?\s*400)", re.IGNORECASE
)


def test_a_module_over_400_lines_says_why_in_its_docstring() -> None:
    """The house rule: a module over ~400 lines needs a reason, written where a reader
    of the module meets it first."""
    unexplained = []
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            source = path.read_text()
            if source.count("\n") <= LONG:
                continue
            doc = ast.get_docstring(ast.parse(source)) or ""
            if not WHY_LONG.search(" ".join(doc.split())):
                unexplained.append(f"{path.relative_to(ROOT)} ({source.count(chr(10))} lines)")
    assert not unexplained
    # The rule sees a long module without its reason: it can fail.
    assert not WHY_LONG.search("A module of many lines, for no stated reason.")
