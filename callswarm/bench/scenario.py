"""Bench scenarios: one YAML file per conversation, validated on load.

```yaml
name: order-two-paracetamol          # defaults to the file name
tags: [ordering]
turns:
  - say: two boxes of paracetamol please
    variants: [two box of para set a mol please]   # what a noisy STT might hear instead
    expect:
      agent: sales                   # who holds the caller after the turn
      tools:                         # called during the turn (any order), arguments matched
        - name: add_to_order
          args: {product: {fuzzy: paracetamol}, quantity: 2}
      no_tools: [confirm_order]
      says: [paracetamol, [$5.98, 5 dollars 98]]   # all of these; a list inside: any of it
      not_says: [free]
final:                               # the database once the conversation is over
  orders:
    - {status: confirmed, total_cents: 598, lines: [{sku: PAR500-16, quantity: 2}]}
```

An argument is matched exactly (a string ignoring case) unless it is `{regex: …}`,
`{fuzzy: …, min: 80}` or `{any: [...]}`; `args_exact: true` also forbids other
arguments. Every reply is also checked for leaks (JSON, markup, tool names, SKUs).
"""

from __future__ import annotations

import fnmatch
import glob
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

Phrase = str | list[str]  # one phrase, or any one of several


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolExpectation(_Strict):
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    args_exact: bool = False


class TurnExpectation(_Strict):
    agent: str | None = None
    tools: list[ToolExpectation] = Field(default_factory=list)
    no_tools: list[str] = Field(default_factory=list)
    only_tools: bool = False  # no tool beyond those listed may be called
    says: list[Phrase] = Field(default_factory=list)
    not_says: list[str] = Field(default_factory=list)


class Turn(_Strict):
    say: str
    variants: list[str] = Field(default_factory=list)
    expect: TurnExpectation = Field(default_factory=TurnExpectation)

    def text(self, repeat: int) -> str:
        """What the caller says on the n-th repeat (0-based): the clean words first,
        then each STT variant in turn."""
        options = [self.say, *self.variants]
        return options[repeat % len(options)]


class LineExpectation(_Strict):
    sku: str
    quantity: int


class OrderExpectation(_Strict):
    status: str
    total_cents: int | None = None
    lines: list[LineExpectation] | None = None


class FinalExpectation(_Strict):
    # None: not checked. []: the caller must have no order at all.
    orders: list[OrderExpectation] | None = None


class Scenario(_Strict):
    name: str
    tags: list[str] = Field(default_factory=list)
    turns: list[Turn] = Field(min_length=1)
    final: FinalExpectation = Field(default_factory=FinalExpectation)


class ScenarioError(ValueError):
    """A scenario file that is not valid YAML or not a valid scenario."""


def parse(text: str, name: str) -> Scenario:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{name}: not YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ScenarioError(f"{name}: a scenario is a mapping with `turns`")
    data.setdefault("name", name)
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(f"{name}: {exc}") from exc


def load(pattern: str = "*", folder: Path | None = None) -> list[Scenario]:
    """The scenarios in `folder` (an agency's) whose name matches `pattern` (a shell
    pattern), or, when it is a path (`my/scenarios/*.yaml`), the files it names."""
    if folder is None and ("/" in pattern or pattern.endswith(".yaml")):
        chosen = sorted(Path(p) for p in glob.glob(pattern))
        where = "those files"
    else:
        if folder is None:
            raise ScenarioError(f"{pattern!r} is not a path, and no scenario folder was given")
        root = folder
        chosen = [p for p in sorted(root.glob("*.yaml")) if fnmatch.fnmatch(p.stem, pattern)]
        where = str(root)
    if not chosen:
        raise ScenarioError(f"no scenario matches {pattern!r} in {where}")
    scenarios = [parse(p.read_text(), p.stem) for p in chosen]
    names = [s.name for s in scenarios]
    duplicated = {n for n in names if names.count(n) > 1}
    if duplicated:
        raise ScenarioError(f"scenario names used twice: {sorted(duplicated)}")
    return scenarios
