"""The docs' runnable examples run, and print what the docs say they print."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_the_swarm_example_runs_and_prints_what_the_doc_says(tmp_path) -> None:
    text = (DOCS / "swarm.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    expected = re.search(r"It prints:\n\n```\n(.*?)```", text, re.S).group(1)
    script = tmp_path / "example_swarm.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": str(DOCS.parent)}
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected
