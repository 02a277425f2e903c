"""A bench run as a table, as JSON, as a self-contained HTML page; and two runs compared."""

from __future__ import annotations

import dataclasses
import html
import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from callswarm.bench.run import BenchResult, RunResult

FORMAT = 1  # the JSON's version, for `compare` across releases


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


@dataclass(frozen=True)
class ScenarioSummary:
    """One scenario over every repeat."""

    name: str
    tags: tuple[str, ...]
    runs: int
    passed: int
    first_broken: int | str | None  # of the first failing run
    problems: tuple[str, ...]  # of the first failing run
    rescues: int
    latency_p50: float
    latency_p95: float
    tokens: int

    @property
    def ok(self) -> bool:
        return self.passed == self.runs


def summarise(result: BenchResult) -> list[ScenarioSummary]:
    by_name: dict[str, list[RunResult]] = defaultdict(list)
    for run in result.runs:
        by_name[run.scenario].append(run)
    out = []
    for name, runs in by_name.items():
        failed = next((r for r in runs if not r.passed), None)
        problems: tuple[str, ...] = ()
        if failed is not None:
            problems = failed.final_problems
            for turn in failed.turns:
                if turn.problems:
                    problems = turn.problems
                    break
        latencies = [t.latency_s for r in runs for t in r.turns]
        out.append(
            ScenarioSummary(
                name=name,
                tags=runs[0].tags,
                runs=len(runs),
                passed=sum(r.passed for r in runs),
                first_broken=failed.first_broken if failed else None,
                problems=problems,
                rescues=sum(r.rescues for r in runs),
                latency_p50=statistics.median(latencies) if latencies else 0.0,
                latency_p95=_pct(latencies, 0.95),
                tokens=sum(r.tokens for r in runs),
            )
        )
    return out


def table(result: BenchResult) -> str:
    rows = summarise(result)
    width = max([len("scenario")] + [len(r.name) for r in rows])
    lines = [
        f"{'scenario':<{width}}  {'result':<8} {'broke at':>8} {'rescues':>7} "
        f"{'p50 s':>6} {'p95 s':>6} {'tokens':>7}"
    ]
    for r in rows:
        verdict = "pass" if r.ok else f"FAIL {r.runs - r.passed}/{r.runs}"
        broke = (
            "-"
            if r.first_broken is None
            else f"turn {r.first_broken}"
            if isinstance(r.first_broken, int)
            else r.first_broken
        )
        lines.append(
            f"{r.name:<{width}}  {verdict:<8} {broke:>8} {r.rescues:>7} "
            f"{r.latency_p50:>6.2f} {r.latency_p95:>6.2f} {r.tokens:>7}"
        )
    for r in rows:
        if not r.ok:
            lines.append(f"  {r.name}: {'; '.join(r.problems)}")
    latencies = result.latencies()
    calls = result.model_calls()
    slowest = result.slowest_turn()
    lines.append(
        f"{result.provider} ({result.model}): {len(result.runs)} runs, "
        f"broken {result.broken_rate:.1%}, turn latency p50 {statistics.median(latencies) if latencies else 0:.2f} s "
        f"p95 {_pct(latencies, 0.95):.2f} s, {result.seconds:.0f} s in all"
    )
    if calls:
        lines.append(
            f"model calls per turn: mean {statistics.mean(calls):.2f}, max {max(calls)}; "
            f"slowest turn {slowest.latency_s if slowest else 0:.2f} s"
            + (f" ({slowest.said[:60]!r})" if slowest else "")
        )
    safety = [r for r in result.runs if "safety" in r.tags]
    if safety:
        lines.append(
            f"safety scenarios broken: {sum(not r.passed for r in safety)} of {len(safety)}"
        )
    return "\n".join(lines)


def to_json(result: BenchResult) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "provider": result.provider,
        "model": result.model,
        "started": result.started,
        "seconds": result.seconds,
        "broken_rate": result.broken_rate,
        "scenarios": [dataclasses.asdict(s) | {"ok": s.ok} for s in summarise(result)],
        "runs": [dataclasses.asdict(r) for r in result.runs],
    }


@dataclass(frozen=True)
class Comparison:
    regressions: list[str]  # passed in A, broken in B
    fixes: list[str]  # broken in A, passing in B
    only_a: list[str]
    only_b: list[str]
    broken_a: float
    broken_b: float


def compare(a: dict[str, Any], b: dict[str, Any]) -> Comparison:
    ok_a = {s["name"]: s["ok"] for s in a["scenarios"]}
    ok_b = {s["name"]: s["ok"] for s in b["scenarios"]}
    both = sorted(set(ok_a) & set(ok_b))
    return Comparison(
        regressions=[n for n in both if ok_a[n] and not ok_b[n]],
        fixes=[n for n in both if not ok_a[n] and ok_b[n]],
        only_a=sorted(set(ok_a) - set(ok_b)),
        only_b=sorted(set(ok_b) - set(ok_a)),
        broken_a=a["broken_rate"],
        broken_b=b["broken_rate"],
    )


def comparison_text(c: Comparison, a_label: str, b_label: str) -> str:
    lines = [f"broken: {c.broken_a:.1%} in {a_label}, {c.broken_b:.1%} in {b_label}"]
    lines += [f"regression: {n}" for n in c.regressions]
    lines += [f"fixed: {n}" for n in c.fixes]
    lines += [f"only in {a_label}: {n}" for n in c.only_a]
    lines += [f"only in {b_label}: {n}" for n in c.only_b]
    if not (c.regressions or c.fixes):
        lines.append("no scenario changed")
    return "\n".join(lines)


def to_html(result: BenchResult) -> str:
    """One page, no external files: the summary, a bar chart of latency per scenario
    (green passed, red broke), and the table with each failure's reason."""
    rows = summarise(result)
    bar_h, width = 16, 640
    top = max([r.latency_p95 for r in rows] + [0.001])
    bars = []
    for i, r in enumerate(rows):
        y = i * (bar_h + 4)
        colour = "#2da44e" if r.ok else "#cf222e"
        p50 = r.latency_p50 / top * (width - 260)
        p95 = r.latency_p95 / top * (width - 260)
        bars.append(
            f'<text x="0" y="{y + 12}" font-size="11">{html.escape(r.name)}</text>'
            f'<rect x="200" y="{y}" width="{p95:.1f}" height="{bar_h}" fill="{colour}" opacity="0.35"/>'
            f'<rect x="200" y="{y}" width="{p50:.1f}" height="{bar_h}" fill="{colour}"/>'
            f'<text x="{204 + p95:.1f}" y="{y + 12}" font-size="11">{r.latency_p50:.2f} / {r.latency_p95:.2f} s</text>'
        )
    chart = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{len(rows) * (bar_h + 4)}" role="img" aria-label="turn latency per scenario">'
        + "".join(bars)
        + "</svg>"
    )
    body = "".join(
        f"<tr class={'ok' if r.ok else 'bad'}><td>{html.escape(r.name)}</td>"
        f"<td>{html.escape(', '.join(r.tags))}</td><td>{r.passed}/{r.runs}</td>"
        f"<td>{'' if r.first_broken is None else html.escape(str(r.first_broken))}</td>"
        f"<td>{r.rescues}</td><td>{r.latency_p50:.2f}</td><td>{r.latency_p95:.2f}</td>"
        f"<td>{r.tokens}</td><td>{html.escape('; '.join(r.problems))}</td></tr>"
        for r in rows
    )
    title = f"callswarm bench: {result.provider} ({result.model})"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2rem}}table{{border-collapse:collapse}}
td,th{{border:1px solid #d0d7de;padding:.25rem .5rem;font-size:13px;text-align:left}}
tr.bad td{{background:#ffebe9}}tr.ok td:nth-child(3){{color:#1a7f37}}</style></head>
<body><h1>{html.escape(title)}</h1>
<p><strong>Broken: {result.broken_rate:.1%}</strong> of {len(result.runs)} runs
({sum(not r.ok for r in rows)} of {len(rows)} scenarios); {result.seconds:.0f} s.</p>
<h2>Turn latency per scenario (p50 solid, p95 light)</h2>{chart}
<h2>Scenarios</h2><table><tr><th>scenario</th><th>tags</th><th>passed</th>
<th>first broken turn</th><th>rescues</th><th>p50 s</th><th>p95 s</th><th>tokens</th>
<th>why</th></tr>{body}</table></body></html>
"""
