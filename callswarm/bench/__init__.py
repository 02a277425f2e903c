"""`callswarm bench`: scripted conversations that measure how often a provider breaks.

Scenario files: each agency's (`Agency.scenarios`; format in `scenario.py`). The
matching and scoring are pure (`match.py`, `report.py`); `run.py` drives sessions.
See docs/bench.md.
"""
