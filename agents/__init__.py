"""The pharmacy agency: a triage agent and a sales agent over the shop's catalogue.

The gateway serves it as `CALLSWARM_AGENCY=pharmacy` (`agents.plugin`).
"""
