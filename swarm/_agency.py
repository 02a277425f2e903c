"""The agency layer: mission, communication graph, threads and `talk_to_agent`.

From the seed "AI agency" article: every agent knows the mission; agents talk
only over the edges of the graph; each sender → recipient pair has one thread,
a first-class record with its own messages. `talk_to_agent` sends over it and
returns the recipient's reply synchronously, as a tool output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, Field

from swarm import _history as history
from swarm._events import (
    AssistantMessageEvent,
    SwarmEvent,
    ThreadMessageEvent,
    UserMessageEvent,
)
from swarm._handle import ToolContext
from swarm._log import ConversationLog, Persist, ThreadView
from swarm._messages import Message, Mode, Role
from swarm._registry import USER, AgentSpec, SwarmSpec, ToolSpec
from swarm._runner import Runner
from swarm._store import ThreadInfo
from swarm._turn import Turn, TurnHost
from swarm.errors import CommunicationRefused, ToolError

TALK_TO_AGENT = "talk_to_agent"


class AgencyHost(TurnHost, Protocol):
    """The session, as its conversations and threads use it."""

    messages: ConversationLog  # the caller's conversation

    async def open_thread(self, sender: str, recipient: str) -> ThreadState: ...


def system_prompt(swarm: SwarmSpec, agent: AgentSpec, extra: str = "") -> str:
    parts = [swarm.mission, agent.prompt, *agent.system, extra]
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


def tool_names_for(swarm: SwarmSpec, agent: AgentSpec) -> tuple[str, ...]:
    """The agent's own tools, plus talk_to_agent where the graph gives it an outgoing edge."""
    return agent.tools + ((TALK_TO_AGENT,) if swarm.recipients_of(agent.name) else ())


def caller_log(
    messages: Iterable[Message], *, persist: Persist, publish: Callable[..., None]
) -> ConversationLog:
    """The caller's conversation, whose words each way are told as events."""

    def announce(message: Message) -> None:
        if message.role is Role.USER and message.mode is Mode.USER:
            kind: type[SwarmEvent] = UserMessageEvent
        elif message.role is Role.ASSISTANT and message.content:
            kind = AssistantMessageEvent
        else:
            return
        publish(kind, agent=message.agent, content=message.content, message_seq=message.seq)

    return ConversationLog(messages, persist=persist, announce=announce)


class MainConversation:
    """The caller's conversation: the session's shared log, scoped per agent."""

    in_thread = False

    def __init__(self, session: AgencyHost) -> None:
        self._session = session

    def agent(self) -> AgentSpec:
        return self._session.agent_spec()

    def view(self, agent: AgentSpec) -> list[Message]:
        return history.agent_view(self._session.messages, agent.name, agent.keep_messages)

    def system_prompt(self, agent: AgentSpec) -> str:
        return system_prompt(self._session.swarm, agent)

    async def commit(self, message: Message) -> Message:
        return await self._session.messages.append(message)


@dataclass
class ThreadState:
    info: ThreadInfo
    log: ConversationLog

    @classmethod
    def of(
        cls,
        info: ThreadInfo,
        messages: Iterable[Message],
        *,
        persist: Persist,
        publish: Callable[..., None],
    ) -> ThreadState:
        """A thread whose spoken messages are told as `ThreadMessageEvent`s."""

        def announce(message: Message) -> None:
            if message.role in (Role.USER, Role.ASSISTANT) and message.content:
                publish(
                    ThreadMessageEvent,
                    agent=message.agent,
                    thread_id=info.id,
                    sender=info.sender,
                    recipient=info.recipient,
                    content=message.content,
                )

        return cls(info, ConversationLog(messages, persist=persist, announce=announce))

    def view(self) -> ThreadView:
        return ThreadView(self.info.id, self.info.sender, self.info.recipient, tuple(self.log))


class ThreadConversation:
    """A thread seen by its recipient: the sender's words are its user messages."""

    in_thread = True

    def __init__(self, session: AgencyHost, thread: ThreadState) -> None:
        self._session = session
        self._thread = thread

    def agent(self) -> AgentSpec:
        return self._session.agent_spec(self._thread.info.recipient)

    def view(self, agent: AgentSpec) -> list[Message]:
        window = self._thread.log[-agent.keep_messages :]
        return history.drop_orphan_tool_messages(window)

    def system_prompt(self, agent: AgentSpec) -> str:
        sender = self._thread.info.sender
        note = (
            f"You are in an internal thread: {sender} is asking you, not the caller. "
            f"Answer {sender} directly and briefly."
        )
        return system_prompt(self._session.swarm, agent, note)

    async def commit(self, message: Message) -> Message:
        return await self._thread.log.append(message)


async def talk(session: AgencyHost, parent: Turn, sender: str, recipient: str, text: str) -> str:
    if not session.swarm.may_talk(sender, recipient):
        raise CommunicationRefused(sender, recipient, session.swarm.recipients_of(sender))
    conversation = ThreadConversation(session, await session.open_thread(sender, recipient))
    await conversation.commit(Message(role=Role.USER, content=text, agent=sender))
    # The recipient's words go back to the sender, never to the caller: a child turn
    # that shares only the step budget.
    child = Turn(
        entered=set(), max_steps=parent.max_steps, steps=parent.steps, budget=parent.budget
    )
    try:
        await Runner(session, conversation, child).run()
    finally:
        parent.steps = child.steps
    return " ".join(child.spoken)


class TalkToAgentParams(BaseModel):
    recipient: str = Field(description="Name of the agent to ask.")
    message: str = Field(min_length=1, description="What to ask or tell that agent.")


async def _talk_to_agent(ctx: ToolContext, params: TalkToAgentParams) -> str:
    try:
        reply = await ctx.session.talk(ctx.agent_name, params.recipient, params.message)
    except CommunicationRefused as exc:
        allowed = ", ".join(exc.allowed) or "nobody"
        raise ToolError(f"{exc}. You may talk to: {allowed}.") from exc
    return reply or f"{params.recipient} gave no answer."


TALK_TO_AGENT_TOOL = ToolSpec(
    name=TALK_TO_AGENT,
    description=(
        "Send a message to another agent of the agency over your thread with it, "
        "and get its reply. Only agents you are connected to can be reached."
    ),
    parameters=TalkToAgentParams,
    call=_talk_to_agent,
)

__all__ = ["TALK_TO_AGENT", "TALK_TO_AGENT_TOOL", "USER", "ThreadView"]
