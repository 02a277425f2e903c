"""One turn's model steps: complete, validate, rescue, run tools, repeat.

A `Runner` drives one conversation (the caller's log, or a thread between two
agents) inside one `Turn`. Nested `execute` calls and `talk_to_agent` threads
share the turn, so the recursion cap counts every model call of the turn.

Over ~400 lines on purpose: the screen, the router, the budget, the checks and the
rescues each decide part of one model step, and they must see the same turn state.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import re
import time
from dataclasses import dataclass, replace
from enum import StrEnum

from swarm._amounts import ungrounded_amounts
from swarm._completion import CompletionArgs, CompletionTiming, TextDelta, WarmingBackend
from swarm._guard import SpeechGuard
from swarm._handle import SessionHandle
from swarm._messages import AssistantMessage, Message, Mode, Role, ToolCall
from swarm._parsing import encodable, extract_tool_calls, find_leak
from swarm._registry import AgentSpec, RoutedReply, ToolSpec
from swarm._tools import INTERNAL_FAILURE, run_tool, validate_arguments
from swarm._turn import Conversation, Turn, TurnHost
from swarm.errors import CompletionError, CompletionTimeout, RecursionLimitExceeded, ToolError

log = logging.getLogger("swarm.runner")
# A price in a tool's structured output: "price_cents": 320, "total": 5.98, cost=4.
_PRICED = re.compile(
    r"\b(\w*(?:price|cost|total|amount|cents|fee)\w*)['\"]?\s*[:=]\s*(\d+(?:\.\d{2})?)\b",
    re.IGNORECASE,
)
_call_ids = itertools.count(1)


class Problem(StrEnum):
    UNKNOWN_TOOL = "unknown_tool"
    INVALID_ARGUMENTS = "invalid_arguments"
    EMPTY = "empty_output"
    JSON_LEAK = "json_leak"
    XML_LEAK = "xml_leak"
    TOOL_NAME_LEAK = "tool_name_leak"
    COMPLETION_ERROR = "completion_error"
    INTERNAL_LEAK = "internal_leak"
    UNGROUNDED_AMOUNT = "ungrounded_amount"  # money no tool said
    RECURSION = "recursion_limit"
    BUDGET = "turn_budget"
    TURN_ERROR = "turn_error"  # code around the models raised (a database away)


_CORRECTIONS = {
    Problem.UNKNOWN_TOOL: "You called a tool that does not exist. Use only the tools you were given.",
    Problem.INVALID_ARGUMENTS: "Your tool arguments were invalid again. Follow the tool's schema.",
    Problem.EMPTY: "Your reply was empty. Answer the caller in one or two short sentences.",
    Problem.JSON_LEAK: "Your reply contained JSON. Speak to the caller in plain words only.",
    Problem.XML_LEAK: "Your reply contained markup tags. Speak to the caller in plain words only.",
    Problem.TOOL_NAME_LEAK: "Never name tools to the caller. Call the tool, or answer in plain words.",
    Problem.COMPLETION_ERROR: "Answer the caller briefly.",
    Problem.INTERNAL_LEAK: "Answer the caller's last words in plain words.",
    Problem.UNGROUNDED_AMOUNT: "Never state a price or an amount of money yourself. Call a tool.",
}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def echoes(reply: str, internal: list[str], span: int = 6) -> bool:
    """Whether a reply repeats `span` words in a row of text meant for the model only.

    Measured: a small model, told "You called a tool that does not exist", said that
    sentence to the caller. Six words in a row rarely agree by chance."""
    said = " ".join(_words(reply))
    for text in internal:
        words = _words(text)
        for i in range(max(0, len(words) - span + 1)):
            if " ".join(words[i : i + span]) in said:
                return True
    return False


@dataclass(frozen=True, slots=True)
class Verdict:
    problem: Problem
    detail: str = ""


@dataclass(frozen=True, slots=True)
class RescueContext:
    """What a custom rescue callable receives."""

    session: SessionHandle
    agent: AgentSpec
    problem: Problem
    detail: str


class Runner:
    def __init__(self, session: TurnHost, conversation: Conversation, turn: Turn) -> None:
        self.session = session
        self.conversation = conversation
        self.turn = turn
        # The tools offered in this step, by step and agent: see `_available_tools`.
        self._offered: tuple[int, str, list[ToolSpec]] | None = None

    # --- the loop -------------------------------------------------------------------------

    async def run(self) -> None:
        """Let the active agent answer until it has spoken or the turn is over."""
        while not self.turn.cancelled:
            agent = self.conversation.agent()
            message = await self._step(agent)
            if message is None or not message.tool_calls:
                return
            spoken_before = len(self.turn.spoken)
            self.turn.stop_tools = False
            for call in message.tool_calls:
                if self.turn.stop_tools or self.turn.cancelled:
                    break
                await run_tool(self, self.session.registry.tools[call.name], agent.name, call)
                # The next step reads afresh by its number; but a tool that talked to
                # another agent hands back its thread's step count (`talk`), which may be
                # one this runner has already read at.
                self._offered = None
            # A tool that executed or emitted has answered the caller; otherwise the
            # (possibly new) active agent turns the tool outputs into words.
            if len(self.turn.spoken) > spoken_before:
                return

    async def execute(self, instruction: str) -> None:
        agent = self.conversation.agent()
        await self.conversation.commit(
            Message(role=Role.USER, content=instruction, agent=agent.name, mode=Mode.TOOL)
        )
        await self.run()

    async def emit(self, text: str, *, author: str | None = None) -> Message:
        agent = self.conversation.agent()
        if author is None:
            return await self._speak(agent, AssistantMessage(content=text), None)
        # A person speaking for the agents (an operator who took over): their name, not
        # an agent's, so the history says who really spoke; every agent sees the words.
        message = await self.conversation.commit(
            Message(role=Role.ASSISTANT, content=text, agent=author)
        )
        self.turn.spoken.append(text)
        if self.turn.on_text:
            await self.turn.on_text(text)
        return message

    # --- one model call -------------------------------------------------------------------

    async def _step(self, agent: AgentSpec) -> Message | None:
        self.turn.steps += 1
        if self.turn.steps > self.turn.max_steps:
            raise RecursionLimitExceeded(self.turn.max_steps)
        guard: SpeechGuard | None = SpeechGuard(
            self.session.registry.tools, hold_money=agent.money_from_tools
        )
        routed = await self._screen(agent) or self._route(agent)
        if routed is None and self.turn.budget.spent:
            await self._fall_back(agent)
            return None
        try:
            reply = routed or await self._complete(agent, guard, correction=None)
        except CompletionTimeout as exc:
            if self.turn.budget.spent:  # the turn's deadline, not a dead provider
                log.warning(
                    "turn_deadline client_id=%s agent=%s", self.session.client_id, agent.name
                )
                await self._fall_back(agent)
                return None
            verdict: Verdict | None = Verdict(Problem.COMPLETION_ERROR, str(exc))
            reply = AssistantMessage()
        except CompletionError as exc:
            verdict = Verdict(Problem.COMPLETION_ERROR, str(exc))
            reply = AssistantMessage()
        else:
            reply, verdict = await self._check(agent, reply, by_code=routed is not None)
        if verdict is not None:
            rescued = await self._rescue(agent, verdict)
            if rescued is None:
                return None
            reply, guard = rescued, None
        return await self._speak(agent, reply, guard)

    def _callers_words(self, agent: AgentSpec) -> str | None:
        """The caller's words of this turn: the latest caller message of the view."""
        for message in reversed(self.conversation.view(agent)):
            if message.role is Role.USER and message.mode is Mode.USER:
                return message.content
        return None

    async def _screen(self, agent: AgentSpec) -> AssistantMessage | None:
        """The swarm's screen, once per caller turn, before any router or model. A tool it
        names that the active agent cannot call is ignored: a screen decides for the
        business, an agent's own tools decide what it may do."""
        screen = self.session.swarm.screen
        if screen is None or self.turn.screened or self.conversation.in_thread:
            return None
        self.turn.screened = True
        if self.turn.screen_handed_on:
            # The first agent could not make the screen's call; the one it handed the
            # caller to may ("two of X and one of Y" said to reception is for sales).
            said = self._callers_words(agent)
        else:
            view = self.conversation.view(agent)
            last = view[-1] if view else None
            usable = last is not None and last.role is Role.USER and last.mode is Mode.USER
            said = last.content if last is not None and usable else None
        if said is None:
            return None
        call = await screen(self.session, said)
        if call is None:
            return None
        if isinstance(call, RoutedReply):
            log.info("screened client_id=%s agent=%s reply", self.session.client_id, agent.name)
            return AssistantMessage(content=call.text)
        if call.name not in {spec.name for spec in await self._available_tools(agent)}:
            self.turn.screened = self.turn.screen_handed_on  # one retry, at the next agent
            self.turn.screen_handed_on = True
            log.info(
                "screen_skipped client_id=%s agent=%s tool=%s",
                self.session.client_id,
                agent.name,
                call.name,
            )
            return None
        log.info(
            "screened client_id=%s agent=%s tool=%s", self.session.client_id, agent.name, call.name
        )
        return AssistantMessage(
            tool_calls=(
                ToolCall(id=f"call_{next(_call_ids)}", name=call.name, arguments=call.arguments),
            )
        )

    async def _fall_back(self, agent: AgentSpec, *, count: bool = True) -> None:
        """The turn has spent its model calls or its time, or no rescue worked: code
        answers (the swarm's fallback), and only without one the agent's placeholder."""
        budget = self.turn.budget
        if count:
            self.session.count_rescue(
                agent.name, Problem.BUDGET.value, "fallback", f"calls={budget.model_calls}"
            )
        fallback = self.session.swarm.fallback
        said = self._callers_words(agent) or ""
        text = await fallback(self.session, said) if fallback is not None else ""
        await self._speak(agent, AssistantMessage(content=text or agent.placeholder), None)

    def _route(self, agent: AgentSpec) -> AssistantMessage | None:
        """The agent's router on the caller's words, before the agent's first model call of
        the turn: also for an agent the caller was just handed to ("one box of ibuprofen"
        is for sales' router once triage has routed it there)."""
        if agent.router is None or agent.name in self.turn.routed:
            return None
        self.turn.routed.add(agent.name)
        view = self.conversation.view(agent)
        last = view[-1] if view else None
        if last is None or last.role is not Role.USER or last.mode is not Mode.USER:
            return None
        call = agent.router(last.content)
        if call is None:
            return None
        if isinstance(call, RoutedReply):
            log.info("routed client_id=%s agent=%s reply", self.session.client_id, agent.name)
            return AssistantMessage(content=call.text)
        log.info(
            "routed client_id=%s agent=%s tool=%s", self.session.client_id, agent.name, call.name
        )
        return AssistantMessage(
            tool_calls=(
                ToolCall(id=f"call_{next(_call_ids)}", name=call.name, arguments=call.arguments),
            )
        )

    async def _complete(
        self, agent: AgentSpec, guard: SpeechGuard | None, correction: str | None
    ) -> AssistantMessage:
        available = await self._available_tools(agent)
        messages = [{"role": "system", "content": self.conversation.system_prompt(agent)}]
        messages += [m.to_openai() for m in self.conversation.view(agent)]
        # The reminder is about calling tools: with none on offer it only invites the
        # model to say a tool's name ("Navigate to sales").
        if agent.reminder and available:
            messages.append({"role": "system", "content": agent.reminder})
        if correction:
            messages.append({"role": "system", "content": correction})
        registry = self.session.registry
        args = CompletionArgs(
            client_id=self.session.client_id,
            agent_name=agent.name,
            messages=tuple(messages),
            tools=tuple(spec.schema() for spec in available),
            prompt_tools=tuple(
                registry.tools[name].schema() for name in self.session.tool_names_for(agent)
            ),
        )
        backend = self.session.registry.completions[agent.completion]
        if isinstance(backend, WarmingBackend):
            waiting = time.monotonic()
            await backend.ready(agent.name)
            self.turn.budget.postpone(time.monotonic() - waiting)
        final: AssistantMessage | None = None
        started = time.perf_counter()
        self.turn.budget.model_calls += 1
        left = self.turn.budget.remaining()
        limit = (
            self.session.completion_timeout
            if left is None
            else min(left, self.session.completion_timeout)
        )
        try:
            async with asyncio.timeout(max(limit, 0.0)):
                async for chunk in backend.stream(args):
                    if isinstance(chunk, TextDelta):
                        safe = guard.feed(encodable(chunk.text)) if guard else ""
                        if safe and self.turn.on_text:
                            await self.turn.on_text(safe)
                    else:
                        final = replace(chunk, content=encodable(chunk.content))
        except TimeoutError as exc:
            raise CompletionTimeout(
                f"{agent.completion} gave no answer in {limit:g} s",
                completion=agent.completion,
            ) from exc
        except CompletionError:
            raise
        except Exception as exc:
            # A backend that forgot to translate its client's error must not end the call.
            raise CompletionError(repr(exc), completion=agent.completion) from exc
        finally:
            self.session.completion_took(
                CompletionTiming(
                    agent.completion, agent.name, time.perf_counter() - started, final is not None
                )
            )
        if final is None:
            raise CompletionError(
                "the backend ended without a message", completion=agent.completion
            )
        return final

    async def _check(
        self, agent: AgentSpec, reply: AssistantMessage, *, by_code: bool = False
    ) -> tuple[AssistantMessage, Verdict | None]:
        """Normalise a raw output (embedded calls parsed) and say what, if anything, is wrong."""
        text, embedded = extract_tool_calls(reply.content)
        # Small models recite lists of calls in their text; only the first is meant.
        calls = list(reply.tool_calls) + [
            ToolCall(id=f"call_{next(_call_ids)}", name=c.name, arguments=c.arguments)
            for c in embedded[:1]
        ]
        available = {spec.name: spec for spec in await self._available_tools(agent)}
        for call in calls:
            spec = available.get(call.name)
            if spec is None:
                return reply, Verdict(Problem.UNKNOWN_TOOL, call.name)
            try:
                validate_arguments(spec, call.arguments)
            except ToolError as exc:
                # The first bad call goes back to the model as the tool's output; a repeat is rescued.
                self.turn.argument_failures[call.name] += 1
                if self.turn.argument_failures[call.name] > self.session.argument_retries:
                    return reply, Verdict(Problem.INVALID_ARGUMENTS, str(exc))
        if text and echoes(text, self._internal_texts(agent)):
            if calls:
                text = ""
            else:
                return reply, Verdict(Problem.INTERNAL_LEAK, text[:200])
        leak = find_leak(text, self.session.registry.tools)
        if leak and calls:
            text = ""  # words around a valid call are dropped, never spoken
        elif leak:
            return reply, Verdict(Problem(f"{leak}_leak"), text[:200])
        stray = set()
        if text and agent.money_from_tools and not by_code:  # code reads the database
            stray = ungrounded_amounts(text, self._told(agent))
        if stray and calls:
            text = ""
        elif stray:
            return reply, Verdict(Problem.UNGROUNDED_AMOUNT, text[:200])
        if not calls and not text.strip():
            return reply, Verdict(Problem.EMPTY)
        normalised = AssistantMessage(
            content=text.strip(),
            tool_calls=tuple(calls),
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
        )
        return normalised, None

    def _told(self, agent: AgentSpec) -> list[str]:
        """What tools and code have said in this conversation: the only source of money.
        A tool's raw output grounds the numbers it gives as prices ("price_cents": 320,
        "total": 5.98); its other numbers (a pack of 24, the stock) are no price."""
        told = []
        for m in self.conversation.view(agent):
            if m.role is Role.ASSISTANT and m.content:
                told.append(m.content)
            elif m.role is Role.TOOL and m.content:
                told.append(m.content)
                for key, number in _PRICED.findall(m.content):
                    cents = "cent" in key.lower()
                    told.append(f"{number} cents" if cents else f"${number}")
        return told

    def _internal_texts(self, agent: AgentSpec) -> list[str]:
        """Everything the model reads that the caller must never hear."""
        return [
            *_CORRECTIONS.values(),
            INTERNAL_FAILURE,
            *self.session.notes,
            agent.reminder,
            *agent.system,
        ]

    # --- rescue ---------------------------------------------------------------------------

    async def _rescue(self, agent: AgentSpec, verdict: Verdict) -> AssistantMessage | None:
        """Return a valid output to use instead, or None when a placeholder was spoken."""
        for strategy in agent.rescue:
            name = (
                strategy if isinstance(strategy, str) else getattr(strategy, "__name__", "custom")
            )
            self.session.count_rescue(agent.name, verdict.problem.value, name, verdict.detail)
            if strategy == "recomplete":
                if self.turn.budget.spent:
                    await self._fall_back(agent)
                    return None
                try:
                    retry = await self._complete(agent, None, _CORRECTIONS[verdict.problem])
                except CompletionError as exc:
                    if self.turn.budget.spent:
                        await self._fall_back(agent)
                        return None
                    verdict = Verdict(Problem.COMPLETION_ERROR, str(exc))
                    continue
                retry, again = await self._check(agent, retry)
                if again is None:
                    return retry
                verdict = again
            elif strategy == "flush":
                await self.conversation.commit(
                    Message(role=Role.RESCUE, content="", agent=agent.name)
                )
                await self._fall_back(agent, count=False)
                return None
            elif callable(strategy):
                result = strategy(
                    RescueContext(self.session, agent, verdict.problem, verdict.detail)
                )
                text = await result if inspect.isawaitable(result) else result
                # A step of the agency's own may have changed what a check reads (it has
                # the session, and may even run a turn of its own through `execute`).
                self._offered = None
                if text:
                    await self._speak(agent, AssistantMessage(content=text), None)
                    return None
        await self._fall_back(agent, count=False)
        return None

    async def rescue_recursion(self) -> None:
        agent = self.conversation.agent()
        self.session.count_rescue(agent.name, Problem.RECURSION.value, "flush", "")
        await self.conversation.commit(Message(role=Role.RESCUE, content="", agent=agent.name))
        await self._fall_back(agent, count=False)

    async def rescue_failure(self) -> None:
        """Code around the models failed mid-turn (a database away under a screen, a
        router or a tool's availability): the caller hears the fallback, never the error."""
        agent = self.conversation.agent()
        self.session.count_rescue(agent.name, Problem.TURN_ERROR.value, "fallback", "")
        try:
            await self._fall_back(agent, count=False)
        except Exception as exc:  # the fallback needed what failed, too
            log.error("fallback_failed client_id=%s error=%r", self.session.client_id, exc)
            await self._speak(agent, AssistantMessage(content=agent.placeholder), None)

    # --- helpers --------------------------------------------------------------------------

    async def _speak(
        self, agent: AgentSpec, reply: AssistantMessage, guard: SpeechGuard | None
    ) -> Message:
        message = await self.conversation.commit(
            Message(
                role=Role.ASSISTANT,
                content=reply.content,
                agent=agent.name,
                tool_calls=reply.tool_calls,
            )
        )
        if reply.content:
            self.turn.spoken.append(reply.content)
            rest = guard.remainder(reply.content) if guard else reply.content
            if rest and self.turn.on_text:
                await self.turn.on_text(rest)
        self.session.tokens += reply.prompt_tokens + reply.completion_tokens
        return message

    async def _available_tools(self, agent: AgentSpec) -> list[ToolSpec]:
        """The tools `agent` may call in this step. Read once a step: the screen, the
        model's offer and the check of its reply ask the same question, and no tool runs
        between them. A check may read a database, and tools share checks (the
        pharmacy's five order tools ask whether an order is in progress): each check is
        asked once. Tools run and replies are emitted between steps, and each step reads
        afresh; inside a step only a rescue step of the agency's own may change what a
        check reads, and the retry after it reads afresh too (`_rescue`, `run`)."""
        key = (self.turn.steps, agent.name)
        if self._offered is not None and self._offered[:2] == key:
            return list(self._offered[2])
        out = []
        # By identity: any callable may be a check, hashable or not, and two that only
        # compare equal are still two checks.
        answers: dict[int, bool] = {}
        for name in self.session.tool_names_for(agent):
            spec = self.session.registry.tools[name]
            check = spec.is_available
            if check is not None:
                if id(check) not in answers:
                    ok = check(self.session, agent.name)
                    answers[id(check)] = bool(await ok if inspect.isawaitable(ok) else ok)
                if not answers[id(check)]:
                    continue
            out.append(spec)
        self._offered = (*key, out)
        return list(out)
