"""What `callswarm bench` does once its options are parsed."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from callswarm.agency import Agency, load_agency
from callswarm.app import build_services
from callswarm.bench import report
from callswarm.bench.run import BenchResult, RunResult, run_bench
from callswarm.bench.scenario import Scenario, ScenarioError, load
from callswarm.settings import Settings


def model_label(settings: Settings) -> str:
    if settings.provider == "local":
        from callswarm.bundled import BUNDLED

        bundled = BUNDLED[settings.local_model]
        return (
            settings.local_model_path.name
            if settings.local_model_path
            else f"bundled {bundled.name}"
        )
    if settings.provider == "ollama":
        return settings.ollama_model
    if settings.provider == "openai":
        return settings.openai_model
    return "rules"


class Bar:
    """A progress bar on a terminal; one line per run otherwise (CI logs)."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.broken = 0

    def __call__(self, done: int, total: int, run: RunResult) -> None:
        self.broken += not run.passed
        if self.tty:
            filled = round(30 * done / total)
            self.stream.write(
                f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} "
                f"broken {self.broken}  {run.scenario[:40]:<40}"
            )
            if done == total:
                self.stream.write("\n")
        else:
            verdict = "ok" if run.passed else f"BROKEN at {run.first_broken}"
            self.stream.write(f"[{done}/{total}] {run.scenario}: {verdict}\n")
        self.stream.flush()


def chosen_scenarios(pattern: str, which: str, agency: Agency) -> list[Scenario]:
    """The agency's `daily` set, its `heldout` one (kept out of the daily loop), or `all`."""
    if "/" in pattern or pattern.endswith(".yaml"):
        return load(pattern)
    daily = load(pattern, agency.scenarios) if which in ("daily", "all") else []
    if which == "daily":
        return daily
    if agency.heldout is None:
        raise ScenarioError(f"the {agency.name} agency keeps no held-out scenarios")
    return daily + load(pattern, agency.heldout)


async def bench(
    settings: Settings,
    pattern: str,
    repeat: int,
    out: Path,
    *,
    which: str = "daily",
    routers: bool = True,
) -> BenchResult:
    scenarios = chosen_scenarios(pattern, which, load_agency(settings.agency))
    with tempfile.TemporaryDirectory(prefix="callswarm-bench-") as tmp:
        # A throwaway database with the catalogue: the bench never touches real orders.
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        services = build_services(
            settings.model_copy(update={"database_url": url}), routers=routers
        )
        try:
            await services.warm_up()
            result = await run_bench(
                services,
                scenarios,
                provider=settings.provider,
                model=model_label(settings) + ("" if routers else ", no routers"),
                repeat=repeat,
                progress=Bar(),
            )
        finally:
            await services.aclose()
    save(result, out / f"bench-{settings.provider}-{time.strftime('%Y%m%d-%H%M%S')}")
    return result


def save(result: BenchResult, stem: Path) -> None:
    """`stem`.json for `compare` and for CI, `stem`.html for people."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    stem.with_suffix(".json").write_text(json.dumps(report.to_json(result), indent=1))
    stem.with_suffix(".html").write_text(report.to_html(result))
