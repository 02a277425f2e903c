"""What a tool receives, and how a tool call is run."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from swarm._events import ErrorOccurred, ToolCalled, ToolOutput
from swarm._messages import Message, Role, ToolCall
from swarm._registry import ToolSpec
from swarm._turn import ToolDriver, TurnHost
from swarm.errors import (
    CommunicationRefused,
    NavigationError,
    RecursionLimitExceeded,
    ToolArgumentsInvalid,
    ToolError,
)

log = logging.getLogger("swarm.tools")

INTERNAL_FAILURE = (
    "The tool failed because of an internal error. Apologise to the caller and offer "
    "to try again or to help with something else."
)


def validate_arguments(spec: ToolSpec, arguments: dict[str, Any]) -> BaseModel:
    """Drop arguments the schema does not know, then validate the rest."""
    fields = spec.parameters.model_fields
    known = set(fields) | {f.alias for f in fields.values() if f.alias}
    kept = {k: v for k, v in arguments.items() if k in known}
    try:
        return spec.parameters.model_validate(kept)
    except ValidationError as exc:
        errors = [
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
        ]
        raise ToolArgumentsInvalid(spec.name, errors) from exc


def render_output(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(value, default=str)


@dataclass
class ToolRun:
    """One tool call's context: the tool sees it as a `swarm.ToolContext`."""

    runner: ToolDriver
    agent_name: str
    call: ToolCall
    deps: Any = None
    output_committed: bool = field(default=False, init=False)

    @property
    def session(self) -> TurnHost:
        return self.runner.session

    @property
    def client_id(self) -> str:
        return self.runner.session.client_id

    @property
    def in_thread(self) -> bool:
        return self.runner.conversation.in_thread

    async def commit_tool_output(self, content: str, *, failed: bool = False) -> None:
        if self.output_committed:
            return
        self.output_committed = True
        await self.runner.conversation.commit(
            Message(
                role=Role.TOOL,
                content=content,
                agent=self.agent_name,
                tool_call_id=self.call.id,
                tool_name=self.call.name,
            )
        )
        self.session.publish(
            ToolOutput,
            agent=self.agent_name,
            tool=self.call.name,
            call_id=self.call.id,
            output=content,
            failed=failed,
        )

    async def commit_system_message(self, content: str) -> None:
        await self.runner.conversation.commit(
            Message(role=Role.SYSTEM, content=content, agent=self.agent_name)
        )

    async def execute(self, instruction: str) -> None:
        """Make the (possibly new) active agent speak first, following `instruction`."""
        await self._answer_call()
        await self.runner.execute(instruction)

    async def emit(self, text: str) -> Message:
        """Say prepared text to the caller without the model; returns the committed message."""
        await self._answer_call()
        return await self.runner.emit(text)

    async def _answer_call(self) -> None:
        # A tool output must directly follow its call in every API's message order,
        # so a tool that speaks first gets a plain output before the words.
        if not self.output_committed:
            await self.commit_tool_output("Done.")

    async def change_to_agent(self, name: str) -> None:
        self._refuse_in_thread()
        await self.session.change_to_agent(name)

    async def change_to_prev_agent(self) -> None:
        self._refuse_in_thread()
        await self.session.change_to_prev_agent()

    async def change_to_default_agent(self) -> None:
        self._refuse_in_thread()
        await self.session.change_to_default_agent()

    def stop_tools(self) -> None:
        """Skip the remaining tool calls of this model output."""
        self.runner.turn.stop_tools = True

    def _refuse_in_thread(self) -> None:
        if self.in_thread:
            raise NavigationError("agents cannot be changed from inside a thread between agents")


async def run_tool(runner: ToolDriver, spec: ToolSpec, agent_name: str, call: ToolCall) -> None:
    """Run one call; whatever happens, the model hears about it and the session lives on."""
    session = runner.session
    ctx = ToolRun(runner=runner, agent_name=agent_name, call=call, deps=session.deps)
    session.publish(
        ToolCalled, agent=agent_name, tool=call.name, call_id=call.id, arguments=call.arguments
    )
    log.info("tool_call client_id=%s agent=%s tool=%s", session.client_id, agent_name, call.name)
    failed = False
    output: str | None
    try:
        params = validate_arguments(spec, call.arguments)
        result = await spec.call(ctx, params)
        output = None if result is None else render_output(result)
    except ToolArgumentsInvalid as exc:
        failed, output = True, f"{exc}. Call {spec.name} again with corrected arguments."
        runner.session.notes.append(output)
    except ToolError as exc:
        failed, output = True, str(exc)
    except (NavigationError, CommunicationRefused) as exc:
        failed, output = True, str(exc)
        runner.session.notes.append(output)
    except RecursionLimitExceeded:
        raise
    except Exception as exc:
        log.exception(
            "tool_failed client_id=%s agent=%s tool=%s", session.client_id, agent_name, call.name
        )
        session.publish(ErrorOccurred, agent=agent_name, error=repr(exc), where=f"tool:{call.name}")
        failed, output = True, INTERNAL_FAILURE
    if output is not None:
        await ctx.commit_tool_output(output, failed=failed)
