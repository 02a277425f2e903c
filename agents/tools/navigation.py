"""Moving the caller between agents, or to a person."""

from __future__ import annotations

from pydantic import BaseModel, Field

from swarm import ToolContext

TRIAGE, SALES = "triage", "sales"


class NoArguments(BaseModel):
    pass


class TransferReason(BaseModel):
    reason: str = Field(default="", description="Why the caller wants a person, in a few words.")


async def navigate_to_sales(ctx: ToolContext, _: NoArguments) -> str:
    await ctx.change_to_agent(SALES)
    return "The caller is now with the sales agent."


async def navigate_to_triage(ctx: ToolContext, _: NoArguments) -> str:
    await ctx.change_to_default_agent()
    return "The caller is now back with the reception agent."


TRANSFER_TOOL = "transfer_to_operator"

# What the caller hears when they ask for a person, by voice or on the keypad.
TRANSFER_WORDS = "Of course. I'm putting you through to a member of our staff now. Please hold."


async def transfer_to_operator(ctx: ToolContext, params: TransferReason) -> None:
    await ctx.commit_tool_output(
        f"Transfer to a person requested. Reason: {params.reason or 'none'}"
    )
    await ctx.emit(TRANSFER_WORDS)
