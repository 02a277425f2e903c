"""Completions from an Ollama server, through the official `ollama` client."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from swarm._completion import CompletionArgs, CompletionChunk, TextDelta
from swarm._messages import AssistantMessage, ToolCall
from swarm.errors import CompletionError, CompletionTimeout

_ids = itertools.count(1)


def to_ollama_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """Ollama wants tool-call arguments as objects and names tool outputs by `tool_name`."""
    out: dict[str, Any] = {"role": message["role"], "content": message.get("content") or ""}
    if message.get("tool_calls"):
        out["tool_calls"] = [
            {
                "function": {
                    "name": call["function"]["name"],
                    "arguments": json.loads(call["function"]["arguments"] or "{}"),
                }
            }
            for call in message["tool_calls"]
        ]
    if message["role"] == "tool" and message.get("name"):
        out["tool_name"] = message["name"]
    return out


class OllamaBackend:
    def __init__(
        self,
        *,
        model: str,
        host: str | None = None,
        options: Mapping[str, Any] | None = None,
        keep_alive: str | float = "1h",
        stream: bool = True,
        timeout: float | None = None,
    ) -> None:
        import ollama  # deferred: only deployments that use Ollama pay for the import

        self.model = model
        self.host = host
        self._options = dict(options or {})
        self._keep_alive = keep_alive
        self._stream = stream
        self._client = ollama.AsyncClient(host=host, timeout=timeout)
        self._errors = ollama

    async def aclose(self) -> None:
        """Close the HTTP connection pool; the engine calls this at shutdown."""
        await self._client.close()

    async def stream(self, args: CompletionArgs) -> AsyncIterator[CompletionChunk]:
        import httpx

        request: dict[str, Any] = {
            "model": self.model,
            "messages": [to_ollama_message(m) for m in args.messages],
            "tools": list(args.tools) or None,
            "options": self._options or None,
            "keep_alive": self._keep_alive,
        }
        text: list[str] = []
        calls: list[ToolCall] = []
        usage = (0, 0)
        try:
            if self._stream:
                parts = await self._client.chat(**request, stream=True)
                async for part in parts:
                    if part.message.content:
                        text.append(part.message.content)
                        yield TextDelta(part.message.content)
                    calls.extend(self._calls(part.message.tool_calls))
                    if part.done:
                        usage = (part.prompt_eval_count or 0, part.eval_count or 0)
            else:
                response = await self._client.chat(**request, stream=False)
                if response.message.content:
                    text.append(response.message.content)
                    yield TextDelta(response.message.content)
                calls.extend(self._calls(response.message.tool_calls))
                usage = (response.prompt_eval_count or 0, response.eval_count or 0)
        except self._errors.ResponseError as exc:
            raise CompletionError(
                f"ollama answered {exc.status_code}: {exc.error}", completion="ollama"
            ) from exc
        except httpx.TimeoutException as exc:
            raise CompletionTimeout(
                f"ollama at {self.host} timed out", completion="ollama"
            ) from exc
        except (ConnectionError, httpx.HTTPError) as exc:
            raise CompletionError(
                f"cannot reach ollama at {self.host}: {exc}", completion="ollama"
            ) from exc
        yield AssistantMessage(
            content="".join(text),
            tool_calls=tuple(calls),
            prompt_tokens=usage[0],
            completion_tokens=usage[1],
        )

    @staticmethod
    def _calls(raw: Any) -> list[ToolCall]:
        return [
            ToolCall(
                id=f"ollama_{next(_ids)}",
                name=call.function.name,
                arguments=dict(call.function.arguments or {}),
            )
            for call in raw or ()
        ]
