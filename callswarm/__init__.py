"""callswarm: the wiring of settings, database, agency and transports, and the CLI."""

__version__ = "0.1.0"
