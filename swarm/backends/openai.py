"""Completions from OpenAI or any OpenAI-compatible server (vLLM, llama.cpp server, LM Studio…)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from swarm._completion import CompletionArgs, CompletionChunk, TextDelta
from swarm._messages import AssistantMessage, ToolCall
from swarm.errors import CompletionError, CompletionTimeout


def to_openai_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """The Chat Completions API has no `name` on tool messages; it pairs them by id."""
    if message["role"] == "tool":
        return {k: v for k, v in message.items() if k != "name"}
    return dict(message)


def _arguments(raw: str | None) -> dict[str, Any]:
    if not raw or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        # Left for validation to reject, so the model is told what was wrong.
        return {"__unparsed__": raw}
    return value if isinstance(value, dict) else {"__unparsed__": raw}


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class OpenAIBackend:
    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        stream: bool = True,
        temperature: float | None = None,
        timeout: float | None = None,
        max_retries: int = 0,
    ) -> None:
        import openai  # deferred: only deployments that use it pay for the import

        self.model = model
        self.base_url = base_url
        self._stream = stream
        self._temperature = temperature
        # Servers without keys (vLLM, llama.cpp) still need a non-empty value for the client.
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "unused", timeout=timeout, max_retries=max_retries
        )
        self._openai = openai

    async def aclose(self) -> None:
        """Close the HTTP connection pool; the engine calls this at shutdown."""
        await self._client.close()

    async def stream(self, args: CompletionArgs) -> AsyncIterator[CompletionChunk]:
        openai = self._openai
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [to_openai_message(m) for m in args.messages],
        }
        if args.tools:
            request["tools"] = list(args.tools)
        if self._temperature is not None:
            request["temperature"] = self._temperature
        try:
            if self._stream:
                async for chunk in self._streamed(request):
                    yield chunk
                return
            response = await self._client.chat.completions.create(**request)
        except openai.APITimeoutError as exc:
            raise CompletionTimeout(
                f"{self.base_url or 'openai'} timed out", completion="openai"
            ) from exc
        except openai.APIConnectionError as exc:
            raise CompletionError(
                f"cannot reach {self.base_url or 'openai'}: {exc}", completion="openai"
            ) from exc
        except openai.APIStatusError as exc:
            raise CompletionError(
                f"{self.base_url or 'openai'} answered {exc.status_code}: {exc.message}",
                completion="openai",
            ) from exc
        except openai.OpenAIError as exc:
            raise CompletionError(str(exc), completion="openai") from exc
        choice = response.choices[0].message
        if choice.content:
            yield TextDelta(choice.content)
        usage = response.usage
        yield AssistantMessage(
            content=choice.content or "",
            tool_calls=tuple(
                ToolCall(id=c.id, name=c.function.name, arguments=_arguments(c.function.arguments))
                for c in choice.tool_calls or ()
            ),
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
        )

    async def _streamed(self, request: dict[str, Any]) -> AsyncIterator[CompletionChunk]:
        stream = await self._client.chat.completions.create(
            **request, stream=True, stream_options={"include_usage": True}
        )
        text: list[str] = []
        partial: dict[int, _PartialCall] = {}
        usage = (0, 0)
        async for chunk in stream:
            if chunk.usage:
                usage = (chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            if delta.content:
                text.append(delta.content)
                yield TextDelta(delta.content)
            for piece in delta.tool_calls or ():
                call = partial.setdefault(piece.index, _PartialCall())
                call.id = piece.id or call.id
                if piece.function is not None:
                    call.name = piece.function.name or call.name
                    call.arguments.append(piece.function.arguments or "")
        yield AssistantMessage(
            content="".join(text),
            tool_calls=tuple(
                ToolCall(
                    id=c.id or f"call_{i}", name=c.name, arguments=_arguments("".join(c.arguments))
                )
                for i, c in sorted(partial.items())
            ),
            prompt_tokens=usage[0],
            completion_tokens=usage[1],
        )
