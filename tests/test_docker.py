"""docker/: no Docker engine here, so the images are linted and the files checked
against the code they deploy (settings names, packages, model path, gateway list)."""

from __future__ import annotations

import glob
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

from callswarm.bundled import QWEN_05B
from callswarm.reader_model import SAFETY_READER
from callswarm.settings import Settings

from .conftest import REPO

DOCKER = REPO / "docker"
HADOLINT = Path(sys.executable).parent / "hadolint"


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments), continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n\s*", " ", dockerfile.read_text())
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "")
        for line in lines
        if line and not line.startswith("#")
    ]


def test_both_dockerfiles_pass_hadolint() -> None:
    files = [DOCKER / "Dockerfile", DOCKER / "kamailio" / "Dockerfile"]
    result = subprocess.run(
        [str(HADOLINT), "--config", str(REPO / ".hadolint.yaml"), *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_image_carries_every_package_runs_as_non_root_and_checks_its_health() -> None:
    steps = instructions(DOCKER / "Dockerfile")
    runtime = steps[max(i for i, (op, _) in enumerate(steps) if op == "FROM") :]
    copied = {
        args.split()[0].rstrip("/") for op, args in steps if op == "COPY" and "--from" not in args
    }
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    packages = {
        p.rstrip("*") for p in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    }
    assert packages <= copied, packages - copied
    # What the build copies is in the build context: .dockerignore lets in only what it names.
    let_in = {
        line[1:].rstrip("/")
        for line in (REPO / ".dockerignore").read_text().splitlines()
        if line.startswith("!")
    }
    sources = {
        source.rstrip("/")
        for op, args in steps
        if op == "COPY" and "--from" not in args
        for source in args.split()[:-1]
    }
    assert sources <= let_in, sources - let_in
    assert all((REPO / source).exists() for source in sources)
    [user] = [args for op, args in runtime if op == "USER"]
    assert user.split(":")[0].isdigit() and not user.startswith("0")
    assert any(op == "HEALTHCHECK" and "/api/ping" in args for op, args in runtime)
    env = " ".join(args for op, args in runtime if op == "ENV")
    assert f"CALLSWARM_LOCAL_MODEL_PATH=/opt/callswarm-model/{QWEN_05B.filename}" in env
    # `callswarm model install` in the build writes the probe's cut beside the model.
    assert f"CALLSWARM_SAFETY_MODEL_PATH=/opt/callswarm-model/{SAFETY_READER.filename}" in env
    # Every setting the image sets is one callswarm reads.
    for name in re.findall(r"CALLSWARM_(\w+)=", env):
        assert name.lower() in Settings.model_fields, name


def test_compose_runs_two_gateways_on_postgresql_behind_kamailio() -> None:
    compose = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "gateway-a", "gateway-b", "kamailio", "ollama"}
    listed = (DOCKER / "kamailio" / "gateways.list").read_text()
    for name in ("gateway-a", "gateway-b"):
        gateway = services[name]
        # Paths in compose.yaml are relative to docker/.
        context = (DOCKER / gateway["build"]["context"]).resolve()
        assert context == REPO and (context / gateway["build"]["dockerfile"]).is_file()
        env = gateway["environment"]
        for key in env:
            assert key.removeprefix("CALLSWARM_").lower() in Settings.model_fields, key
        assert env["CALLSWARM_DATABASE_URL"].startswith("postgresql://")
        assert env["CALLSWARM_INSTANCE"] == name
        address = gateway["networks"]["voice"]["ipv4_address"]
        assert env["CALLSWARM_SIP_HOST"] == address
        # kamailio sends this gateway calls, and knows its requests by this address.
        assert f"sip:{address}:{env['CALLSWARM_SIP_PORT']}" in listed
        assert gateway["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert (DOCKER / services["kamailio"]["build"]["context"] / "Dockerfile").is_file()


def test_the_kamailio_configuration_compose_runs_is_valid() -> None:
    [modules] = glob.glob("/usr/lib/*/kamailio/modules")
    compose = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    defines = compose["services"]["kamailio"]["command"]
    result = subprocess.run(
        ["kamailio", "-c", "-f", str(DOCKER / "kamailio" / "kamailio.cfg"), *defines]
        + ["-A", f'MODULES="{modules}"']
        + ["-A", f'GATEWAYS="{DOCKER / "kamailio" / "gateways.list"}"'],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
