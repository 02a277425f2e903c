"""The `openai` backend against a loopback server shaped like the Chat Completions API."""

from __future__ import annotations

import json

import pytest

from swarm import CompletionArgs, Engine, Role, TextDelta, ToolContext
from swarm.backends.openai import OpenAIBackend
from swarm.errors import CompletionError

from ..helpers import Query
from .fake_server import FakeLLMServer, unused_port

TOOLS = (
    {
        "type": "function",
        "function": {
            "name": "search_products",
            "description": "Search",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    },
)


def completion(message: dict, finish: str) -> dict:
    return {
        "id": "chatcmpl-abc123",
        "object": "chat.completion",
        "created": 1764400000,
        "model": "gpt-test",
        "system_fingerprint": "fp_test",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49},
    }


def chunk(delta: dict, finish: str | None = None, usage: dict | None = None) -> dict:
    return {
        "id": "chatcmpl-abc123",
        "object": "chat.completion.chunk",
        "created": 1764400000,
        "model": "gpt-test",
        "system_fingerprint": "fp_test",
        "choices": []
        if usage
        else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        **({"usage": usage} if usage else {}),
    }


async def collect(backend: OpenAIBackend, args: CompletionArgs):
    try:
        return [c async for c in backend.stream(args)]
    finally:
        await backend.aclose()


ARGS = CompletionArgs(
    client_id="c",
    agent_name="sales",
    messages=(
        {"role": "system", "content": "You sell."},
        {"role": "user", "content": "ibuprofen please"},
    ),
    tools=TOOLS,
)


async def test_plain_completion_with_tool_call() -> None:
    with FakeLLMServer() as server:
        server.json(
            completion(
                {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "tool_calls": [
                        {
                            "id": "call_Xy12",
                            "type": "function",
                            "function": {
                                "name": "search_products",
                                "arguments": '{"query": "ibuprofen"}',
                            },
                        }
                    ],
                },
                "tool_calls",
            )
        )
        backend = OpenAIBackend(model="gpt-test", base_url=f"{server.url}/v1", stream=False)
        chunks = await collect(backend, ARGS)
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "gpt-test"
    assert request.body["messages"] == list(ARGS.messages)
    assert request.body["tools"] == list(TOOLS)
    assert request.headers["authorization"].startswith("Bearer ")
    final = chunks[-1]
    assert final.content == ""
    assert [(c.id, c.name, c.arguments) for c in final.tool_calls] == [
        ("call_Xy12", "search_products", {"query": "ibuprofen"})
    ]
    assert (final.prompt_tokens, final.completion_tokens) == (42, 7)


async def test_streaming_text_and_tool_call_deltas_are_assembled() -> None:
    with FakeLLMServer() as server:
        server.sse(
            [
                chunk({"role": "assistant", "content": ""}),
                chunk({"content": "Let me "}),
                chunk({"content": "check."}),
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "search_products", "arguments": ""},
                            }
                        ]
                    }
                ),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"que'}}]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ry": "cough"}'}}]}),
                chunk({}, finish="tool_calls"),
                chunk({}, usage={"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42}),
            ]
        )
        backend = OpenAIBackend(model="gpt-test", base_url=f"{server.url}/v1")
        chunks = await collect(backend, ARGS)
    body = server.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["Let me ", "check."]
    final = chunks[-1]
    assert final.content == "Let me check."
    assert [(c.id, c.name, c.arguments) for c in final.tool_calls] == [
        ("call_1", "search_products", {"query": "cough"})
    ]
    assert final.completion_tokens == 12


async def test_a_whole_turn_over_the_wire_sends_tool_outputs_back_by_id() -> None:
    with FakeLLMServer() as server:
        server.sse(
            [
                chunk(
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_9",
                                "type": "function",
                                "function": {
                                    "name": "search_products",
                                    "arguments": '{"query": "ibuprofen"}',
                                },
                            }
                        ],
                    }
                ),
                chunk({}, finish="tool_calls"),
            ]
        )
        server.sse([chunk({"content": "We have Ibuprofen 200 mg."}), chunk({}, finish="stop")])
        engine = Engine()
        engine.add_completion(
            "openai", OpenAIBackend(model="gpt-test", base_url=f"{server.url}/v1")
        )

        async def search(ctx: ToolContext, params: Query) -> str:
            return f"Found: Ibuprofen 200 mg for {params.query}"

        engine.add_tool("search_products", "Search", Query, search)
        engine.add_agent("sales", "openai", "You sell.", tools=["search_products"])
        engine.add_swarm("w", ["sales"], "sales")
        reply = await engine.session("c", "w").complete("ibuprofen please")
        await engine.aclose()
    assert reply == "We have Ibuprofen 200 mg."
    second = server.requests[1].body["messages"]
    assert second[-2]["tool_calls"][0]["id"] == "call_9"
    assert json.loads(second[-2]["tool_calls"][0]["function"]["arguments"]) == {
        "query": "ibuprofen"
    }
    assert second[-1] == {
        "role": "tool",
        "content": "Found: Ibuprofen 200 mg for ibuprofen",
        "tool_call_id": "call_9",
    }


async def test_server_errors_and_unreachable_servers_are_completion_errors() -> None:
    with FakeLLMServer() as server:
        server.json(
            {
                "error": {
                    "message": "model overloaded",
                    "type": "server_error",
                    "param": None,
                    "code": None,
                }
            },
            status=503,
        )
        backend = OpenAIBackend(model="gpt-test", base_url=f"{server.url}/v1")
        with pytest.raises(CompletionError, match="503"):
            await collect(backend, ARGS)

    port = unused_port()
    backend = OpenAIBackend(model="gpt-test", base_url=f"http://127.0.0.1:{port}/v1", timeout=5)
    with pytest.raises(CompletionError, match="cannot reach"):
        await collect(backend, ARGS)


async def test_an_unreachable_provider_does_not_kill_the_session() -> None:
    port = unused_port()
    engine = Engine()
    engine.add_completion(
        "openai", OpenAIBackend(model="m", base_url=f"http://127.0.0.1:{port}/v1")
    )
    engine.add_agent("a", "openai", "A.", placeholder="Sorry, our assistant is unavailable.")
    engine.add_swarm("w", ["a"], "a")
    s = engine.session("c", "w")
    assert await s.complete("hello") == "Sorry, our assistant is unavailable."
    assert [m.role for m in await s.get_raw_history()] == [Role.USER, Role.RESCUE, Role.ASSISTANT]
    await engine.aclose()
