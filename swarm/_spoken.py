"""Tools whose result is said to the caller by code, ending the model's part of the turn.

For tools whose results are sentences written for the caller (the pharmacy's and the
bakery's order tools). Speaking them directly means the model only picks the tool and its arguments: one model
call per turn instead of two, no model paraphrasing a price, and no model
calling the same tool again on its own output (measured on the 0.5B model:
search twenty times in a row, or add 2 → 4 → 6 → 8 → 10 packs).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import BaseModel

from swarm._handle import ToolContext
from swarm.errors import ToolError

P = TypeVar("P", bound=BaseModel)
Tool = Callable[[ToolContext, P], Awaitable[str | None]]


# The words reach the history as the agent's reply; repeating them in the tool
# output would make the model read every result twice (measured: +1 to 2 s a turn).
TOLD = "Done; the result was said to the caller."


def spoken(tool: Tool[P]) -> Callable[[ToolContext, P], Awaitable[None]]:
    @functools.wraps(tool)
    async def call(ctx: ToolContext, params: P) -> None:
        try:
            text = await tool(ctx, params)
        except ToolError as exc:
            await ctx.commit_tool_output("Failed; the reason was said to the caller.", failed=True)
            await ctx.emit(str(exc))
            return
        if text is not None:
            await ctx.commit_tool_output(TOLD)
            await ctx.emit(text)

    return call
