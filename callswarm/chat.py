"""The terminal chat: one caller, the whole swarm, agent changes and tool calls shown."""

from __future__ import annotations

import sys

from callswarm.app import build_services
from callswarm.bundled import ModelUnavailable
from callswarm.settings import Settings
from swarm import (
    AgentChanged,
    AssistantMessageEvent,
    ErrorOccurred,
    Rescued,
    SwarmEvent,
    ToolCalled,
    ToolOutput,
)
from swarm.errors import CompletionError


def _human(event: SwarmEvent) -> str | None:
    match event:
        case AssistantMessageEvent(agent=agent, content=content):
            return f"[{agent}] {content}"
        case AgentChanged(previous=previous, current=current):
            return f"  -> {previous} hands over to {current}"
        case ToolCalled(tool=tool, arguments=arguments):
            args = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
            return f"  .. {tool}({args})"
        case ToolOutput(tool=tool, output=output, failed=failed):
            return f"  .. {tool} {'failed' if failed else 'said'}: {output}"
        case Rescued(reason=reason, strategy=strategy):
            return f"  !! rescued {reason} by {strategy}"
        case ErrorOccurred(error=error, where=where):
            return f"  !! error in {where}: {error}"
    return None


async def run_chat(settings: Settings, client_id: str, *, json_output: bool) -> None:
    from callswarm.cli import event_json

    try:
        services = build_services(settings)
    except ModelUnavailable as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(2) from exc
    engine = services.engine
    session = engine.session(client_id, services.swarm)
    interactive = sys.stdin.isatty() and not json_output

    def show(events: list[SwarmEvent]) -> None:
        for event in events:
            line = event_json(event) if json_output else _human(event)
            if line:
                print(line, flush=True)

    # The greeting is code: it needs no model. The first turn waits for its agent's.
    services.begin_warm_up()
    with engine.bus.subscribe(maxsize=10_000) as events:
        try:
            if not await session.get_raw_history():
                await session.emit(services.greeting)
            show(events.drain())
            while True:
                if interactive:
                    print("you> ", end="", flush=True)
                line = sys.stdin.readline()
                if not line:
                    break
                text = line.strip()
                if not text:
                    continue
                if not interactive and not json_output:
                    print(f"you> {text}", flush=True)
                try:
                    await session.complete(text)
                except CompletionError as exc:  # only when rescue itself cannot answer
                    sys.stderr.write(f"error: {exc}\n")
                show(events.drain())
        except KeyboardInterrupt:
            pass
        finally:
            await services.aclose()
