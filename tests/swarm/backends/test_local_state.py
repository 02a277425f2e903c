"""Saved prompt states on the embedded model: reused when valid, never when the prompt changed.

Each test reads a short prompt (about 150 tokens) so the real llama.cpp runs in seconds.
"""

from __future__ import annotations

import logging

import pytest

from swarm import AssistantMessage, CompletionArgs
from swarm.backends.llama_state import SUFFIX, StateCache, file_sha256
from swarm.backends.local import LlamaCppBackend, LocalModelOptions

PROMPT = (
    "You are the assistant of Riverside Pharmacy, on the telephone. Answer in one short "
    "sentence. The shop opens from nine to six, Monday to Saturday, and closes on Sunday. "
    "Its address is 12 River Street. Never give medical advice; offer the pharmacist instead."
)
OTHER_PROMPT = PROMPT.replace("nine to six", "eight to eight")
OPTIONS = LocalModelOptions(n_ctx=1024, max_tokens=24)


def prefix(prompt: str) -> CompletionArgs:
    return CompletionArgs(
        client_id="warm-up",
        agent_name="triage",
        messages=({"role": "system", "content": prompt},),
        tools=(),
    )


def asking(prompt: str, question: str) -> CompletionArgs:
    return CompletionArgs(
        client_id="caller",
        agent_name="triage",
        messages=(
            {"role": "system", "content": prompt},
            {"role": "user", "content": question},
        ),
        tools=(),
    )


async def answer(backend: LlamaCppBackend, args: CompletionArgs) -> str:
    text = ""
    async for chunk in backend.stream(args):
        if isinstance(chunk, AssistantMessage):
            text = chunk.content
    return text


def warmed(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage().split()[0]
        for r in caplog.records
        if r.getMessage().startswith(("local_warmed", "local_state_loaded"))
    ]


async def test_a_second_start_loads_the_state_and_answers_as_the_first(
    bundled_model, tmp_path, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="swarm.local")
    first = LlamaCppBackend(bundled_model, OPTIONS, state_dir=tmp_path)
    await first.warm_up([prefix(PROMPT)])
    prompt_tokens = first._instances["triage"].n_tokens
    [saved] = tmp_path.glob(f"*{SUFFIX}")
    expected = await answer(first, asking(PROMPT, "When do you open on Saturday?"))

    second = LlamaCppBackend(bundled_model, OPTIONS, state_dir=tmp_path)
    await second.warm_up([prefix(PROMPT)])
    assert warmed(caplog) == ["local_warmed", "local_state_loaded"]
    assert list(tmp_path.glob(f"*{SUFFIX}")) == [saved]
    # The restored context is the prompt's: the same tokens, and the same greedy answer.
    assert second._instances["triage"].n_tokens == prompt_tokens > 50
    again = await answer(second, asking(PROMPT, "When do you open on Saturday?"))
    assert expected and again == expected


async def test_a_changed_prompt_reads_itself_and_replaces_the_old_state(
    bundled_model, tmp_path, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="swarm.local")
    await LlamaCppBackend(bundled_model, OPTIONS, state_dir=tmp_path).warm_up([prefix(PROMPT)])
    [old] = tmp_path.glob(f"*{SUFFIX}")

    changed = LlamaCppBackend(bundled_model, OPTIONS, state_dir=tmp_path)
    await changed.warm_up([prefix(OTHER_PROMPT)])
    assert warmed(caplog) == ["local_warmed", "local_warmed"]
    [new] = tmp_path.glob(f"*{SUFFIX}")
    assert new != old and not old.exists()
    # It answers from its own prompt.
    assert await answer(changed, asking(OTHER_PROMPT, "What time do you open on Saturday?"))


async def test_a_changed_model_or_setting_is_another_key(bundled_model, tmp_path) -> None:
    cache = StateCache(tmp_path, file_sha256(bundled_model, memo_dir=tmp_path))
    messages = prefix(PROMPT).messages
    key = cache.key(messages, None, {"n_ctx": 1024})
    assert cache.key(messages, None, {"n_ctx": 1024}) == key
    assert cache.key(messages, None, {"n_ctx": 2048}) != key
    assert StateCache(tmp_path, "0" * 64).key(messages, None, {"n_ctx": 1024}) != key
    assert cache.key(prefix(OTHER_PROMPT).messages, None, {"n_ctx": 1024}) != key
    tools = [{"type": "function", "function": {"name": "search", "parameters": {}}}]
    assert cache.key(messages, tools, {"n_ctx": 1024}) != key


async def test_a_damaged_state_file_is_read_afresh_and_replaced(
    bundled_model, tmp_path, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="swarm.local")
    await LlamaCppBackend(bundled_model, OPTIONS, state_dir=tmp_path).warm_up([prefix(PROMPT)])
    [saved] = tmp_path.glob(f"*{SUFFIX}")
    saved.write_bytes(b"not a llama.cpp state" * 100)

    backend = LlamaCppBackend(bundled_model, OPTIONS, state_dir=tmp_path)
    await backend.warm_up([prefix(PROMPT)])
    assert warmed(caplog) == ["local_warmed", "local_warmed"]
    assert any("local_state_unusable" in r.getMessage() for r in caplog.records)
    assert saved.stat().st_size > 100_000  # written again, whole
    assert await answer(backend, asking(PROMPT, "Where are you?"))
