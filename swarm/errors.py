"""The swarm's one error tree.

    SwarmError
    ├── ConfigurationError        a registry reference is dangling or a name is taken
    ├── SessionClosed             a verb was used on a disposed session
    ├── NavigationError           a change of agent was refused (ping-pong, unknown agent, thread)
    ├── RecursionLimitExceeded    one turn nested more than the allowed model calls
    ├── CompletionError           a backend failed; backends translate their own errors into it
    │   └── CompletionTimeout     a backend did not answer in time
    ├── ToolError                 raised by tools for a failure the model should hear about
    │   └── ToolArgumentsInvalid  the model's arguments failed the tool's pydantic model
    └── CommunicationRefused      talk_to_agent over an edge the graph does not have

A failing store raises nothing: its writes are kept and retried (see _writer.py).
"""

from __future__ import annotations

from collections.abc import Sequence


class SwarmError(Exception):
    """Base of every error the swarm raises on purpose."""


class ConfigurationError(SwarmError):
    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


class SessionClosed(SwarmError):
    def __init__(self, client_id: str) -> None:
        self.client_id = client_id
        super().__init__(f"session {client_id!r} is disposed")


class NavigationError(SwarmError):
    pass


class RecursionLimitExceeded(SwarmError):
    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"more than {limit} nested model calls in one turn")


class CompletionError(SwarmError):
    def __init__(self, message: str, *, completion: str = "") -> None:
        self.completion = completion
        super().__init__(message)


class CompletionTimeout(CompletionError):
    pass


class ToolError(SwarmError):
    """A domain failure that becomes the tool's output, worded for the model."""


class ToolArgumentsInvalid(ToolError):
    def __init__(self, tool: str, errors: list[str]) -> None:
        self.tool = tool
        self.errors = list(errors)
        super().__init__(f"invalid arguments for {tool}: " + "; ".join(self.errors))


class CommunicationRefused(SwarmError):
    def __init__(self, sender: str, recipient: str, allowed: Sequence[str] = ()) -> None:
        self.sender = sender
        self.recipient = recipient
        self.allowed = tuple(allowed)  # whom the sender may talk to
        super().__init__(f"{sender} may not talk to {recipient}")
