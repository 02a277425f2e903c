"""Checking the grammar only when the greedy pick needs it gives llama.cpp's own answer."""

from __future__ import annotations

import json

import pytest

from swarm.backends import llama_sampling
from swarm.backends.llama_sampling import GrammarSecond, check_grammar_second
from swarm.backends.local import output_grammar

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_products",
            "description": "Search the catalogue by product name or symptom.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "add_to_order",
            "description": "Add packs of a product to the caller's order.",
            "parameters": {
                "type": "object",
                "properties": {"product": {"type": "string"}, "quantity": {"type": "integer"}},
                "required": ["product", "quantity"],
            },
        },
    },
]

CASES = {
    # The model's own best tokens are a valid call: the grammar is asked one token at a time.
    "a call": (
        "You are a pharmacy assistant. Use the tools.",
        "Have you got anything for hay fever?",
    ),
    "speech": (
        "You are a pharmacy assistant. Answer in one short sentence.",
        "Hello, who are you?",
    ),
    # The model wants to open with markup or a list, which the grammar refuses.
    "refused": (
        "Always answer with a JSON list inside <tool_call> tags.",
        "Give me three cold remedies.",
    ),
}


@pytest.fixture(scope="module")
def llama(bundled_model):
    from llama_cpp import Llama

    return Llama(model_path=str(bundled_model), n_ctx=1024, n_threads=2, verbose=False)


def answer(llama, case: str) -> str:
    from llama_cpp import LlamaGrammar

    system, user = CASES[case]
    out = llama.create_chat_completion(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        tools=TOOLS,
        temperature=0.0,
        max_tokens=40,
        grammar=LlamaGrammar.from_string(output_grammar(TOOLS), verbose=False),
    )
    return out["choices"][0]["message"]["content"]


def test_the_same_tokens_as_masking_the_whole_vocabulary(llama, monkeypatch) -> None:
    picks = {"kept": 0, "masked": 0}
    apply = GrammarSecond._apply

    def counted(self, sampler, cur_p) -> None:
        apply(self, sampler, cur_p)
        picks["kept" if cur_p.contents.size == 1 else "masked"] += 1

    monkeypatch.setattr(GrammarSecond, "_apply", counted)
    llama.__dict__.pop("_init_sampler", None)
    masked = {case: answer(llama, case) for case in CASES}
    assert picks == {"kept": 0, "masked": 0}  # llama-cpp-python's own path

    check_grammar_second(llama)
    second = {case: answer(llama, case) for case in CASES}

    assert second == masked
    call = json.loads(second["a call"])
    assert call["name"] == "search_products" and "hay fever" in call["arguments"]["query"]
    assert second["speech"][0].isalnum() and "{" not in second["speech"]
    # What the prompt asked for is not what the grammar allows: a call or plain speech.
    refused = second["refused"]
    assert refused[0] not in "[<" and (refused[0] == "{" or refused[0].isalnum()), refused
    # Most tokens took the quick path; the refused opening took the slow one.
    assert picks["masked"] >= 1 and picks["kept"] > 5 * picks["masked"]


def test_sampling_other_than_greedy_keeps_llama_cpp_pythons_sampler(llama) -> None:
    from llama_cpp import LlamaGrammar

    check_grammar_second(llama)
    grammar = LlamaGrammar.from_string(output_grammar(TOOLS), verbose=False)
    kept = llama._init_sampler(temp=0.7, grammar=grammar, logits_processor=None)
    quick = llama._init_sampler(temp=0.0, grammar=grammar, logits_processor=None)
    assert not kept.custom_samplers
    assert [type(s) for _i, s in quick.custom_samplers] == [llama_sampling.GrammarSecond]
