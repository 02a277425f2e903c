"""Completion backends. Each implements `swarm.CompletionBackend`.

`scripted` has no dependencies; the others import their client library lazily,
so a deployment installs only what it uses.
"""
