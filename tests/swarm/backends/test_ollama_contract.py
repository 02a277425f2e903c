"""The `ollama` backend against a loopback server shaped like Ollama's /api/chat."""

from __future__ import annotations

import pytest

from swarm import CompletionArgs, Engine, TextDelta, ToolContext
from swarm.backends.ollama import OllamaBackend
from swarm.errors import CompletionError

from ..helpers import Query
from .fake_server import FakeLLMServer, unused_port
from .test_openai_contract import TOOLS

ARGS = CompletionArgs(
    client_id="c",
    agent_name="sales",
    messages=(
        {"role": "system", "content": "You sell."},
        {"role": "user", "content": "ibuprofen please"},
    ),
    tools=TOOLS,
)


def response(message: dict, done: bool = True, **extra) -> dict:
    out = {
        "model": "qwen2.5:0.5b",
        "created_at": "2026-11-29T10:00:00.000000Z",
        "message": message,
        "done": done,
    }
    if done:
        out.update(
            done_reason="stop",
            total_duration=885095291,
            load_duration=3753500,
            prompt_eval_count=122,
            prompt_eval_duration=328493000,
            eval_count=33,
            eval_duration=552222000,
        )
    out.update(extra)
    return out


async def collect(backend: OllamaBackend, args: CompletionArgs):
    try:
        return [c async for c in backend.stream(args)]
    finally:
        await backend.aclose()


async def test_non_streaming_tool_call() -> None:
    with FakeLLMServer() as server:
        server.json(
            response(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "function": {
                                "name": "search_products",
                                "arguments": {"query": "ibuprofen"},
                            }
                        }
                    ],
                }
            )
        )
        backend = OllamaBackend(
            model="qwen2.5:0.5b", host=server.url, stream=False, options={"temperature": 0}
        )
        chunks = await collect(backend, ARGS)
    request = server.requests[0]
    assert request.path == "/api/chat"
    assert request.body["model"] == "qwen2.5:0.5b"
    assert request.body["stream"] is False
    assert request.body["options"] == {"temperature": 0}
    assert request.body["keep_alive"] == "1h"
    assert request.body["messages"] == list(ARGS.messages)
    assert request.body["tools"][0]["function"]["name"] == "search_products"
    final = chunks[-1]
    assert [(c.name, c.arguments) for c in final.tool_calls] == [
        ("search_products", {"query": "ibuprofen"})
    ]
    assert (final.prompt_tokens, final.completion_tokens) == (122, 33)


async def test_streaming_ndjson() -> None:
    with FakeLLMServer() as server:
        server.ndjson(
            [
                response({"role": "assistant", "content": "We "}, done=False),
                response({"role": "assistant", "content": "have it."}, done=False),
                response({"role": "assistant", "content": ""}),
            ]
        )
        chunks = await collect(OllamaBackend(model="m", host=server.url), ARGS)
    assert server.requests[0].body["stream"] is True
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["We ", "have it."]
    assert chunks[-1].content == "We have it."


async def test_tool_outputs_go_back_with_objects_and_tool_name() -> None:
    with FakeLLMServer() as server:
        server.ndjson(
            [
                response(
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "function": {
                                    "name": "search_products",
                                    "arguments": {"query": "cough"},
                                }
                            }
                        ],
                    }
                )
            ]
        )
        server.ndjson([response({"role": "assistant", "content": "Try the cough syrup."})])
        engine = Engine()
        engine.add_completion("ollama", OllamaBackend(model="m", host=server.url))

        async def search(ctx: ToolContext, params: Query) -> str:
            return "Found: cough syrup"

        engine.add_tool("search_products", "Search", Query, search)
        engine.add_agent("sales", "ollama", "You sell.", tools=["search_products"])
        engine.add_swarm("w", ["sales"], "sales")
        assert await engine.session("c", "w").complete("cough") == "Try the cough syrup."
        await engine.aclose()
    messages = server.requests[1].body["messages"]
    assert messages[-2]["tool_calls"] == [
        {"function": {"name": "search_products", "arguments": {"query": "cough"}}}
    ]
    assert messages[-1] == {
        "role": "tool",
        "content": "Found: cough syrup",
        "tool_name": "search_products",
    }


async def test_errors_are_completion_errors() -> None:
    with FakeLLMServer() as server:
        server.json({"error": "model 'm' not found"}, status=404)
        with pytest.raises(CompletionError, match="404"):
            await collect(OllamaBackend(model="m", host=server.url, stream=False), ARGS)
    port = unused_port()
    with pytest.raises(CompletionError, match="cannot reach ollama"):
        await collect(OllamaBackend(model="m", host=f"http://127.0.0.1:{port}"), ARGS)
