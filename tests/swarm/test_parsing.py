import pytest

from swarm import extract_tool_calls, find_leak
from swarm._amounts import amounts, ungrounded_amounts
from swarm._guard import SpeechGuard


@pytest.mark.parametrize(
    ("text", "name", "arguments", "rest"),
    [
        (
            '{"name": "search_products", "arguments": {"query": "ibuprofen"}}',
            "search_products",
            {"query": "ibuprofen"},
            "",
        ),
        (
            'Sure.\n<tool_call>\n{"name": "navigate_to_sales", "arguments": {}}\n</tool_call>',
            "navigate_to_sales",
            {},
            "Sure.",
        ),
        (
            '{{"name": "add_to_order", "arguments": {"sku": "A1", "quantity": 2}}}',
            "add_to_order",
            {"sku": "A1", "quantity": 2},
            "",
        ),
        (
            '<tools>[{"name": "get_product", "arguments": "{\\"sku\\": \\"B2\\"}"}]</tools>',
            "get_product",
            {"sku": "B2"},
            "",
        ),
        (
            '```json\n{"function": {"name": "order_status", "arguments": {}}}\n```',
            "order_status",
            {},
            "",
        ),
        (
            '{"name": "search_products", "parameters": {"query": "cough"}}',
            "search_products",
            {"query": "cough"},
            "",
        ),
        ('<tool_call>{"name": "confirm_order", "arguments": {}}', "confirm_order", {}, ""),
    ],
)
def test_embedded_calls_are_parsed(text: str, name: str, arguments: dict, rest: str) -> None:
    clean, calls = extract_tool_calls(text)
    assert [(c.name, c.arguments) for c in calls] == [(name, arguments)]
    assert clean == rest


def test_plain_text_is_left_alone() -> None:
    text = "Paracetamol 500 mg costs 3 euros 20 for a box of 16."
    assert extract_tool_calls(text) == (text, [])
    assert find_leak(text, ["search_products"]) is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Here you go <b>now</b>", "xml"),
        ('The result is {"sku": "A1"}', "json"),
        ('[{"a": 1}]', "json"),
        ("I will call navigate_to_sales for you", "tool_name"),
        ("Navigate to sales.", "tool_name"),
    ],
)
def test_leaks_are_named(text: str, kind: str) -> None:
    assert find_leak(text, ["navigate_to_sales", "search"]) == kind


def test_one_word_tool_names_are_not_leaks() -> None:
    assert find_leak("I will search for it", ["search"]) is None


def test_tool_words_inside_a_real_sentence_are_not_leaks() -> None:
    assert find_leak("Let me navigate to sales for you.", ["navigate_to_sales"]) is None


def test_guard_streams_words_and_holds_from_a_suspicious_character() -> None:
    guard = SpeechGuard(["navigate_to_sales"])
    out = [guard.feed(t) for t in ["Hello ", "there, ", "let me ", '{"name"', ": 1}"]]
    assert "".join(out) == "Hello there, let me "
    assert guard.remainder("Hello there, let me check.") == "check."


def test_guard_holds_tool_names() -> None:
    guard = SpeechGuard(["navigate_to_sales"])
    assert guard.feed("Calling navigate_to_sales now ") == "Calling "
    assert guard.feed("more words ") == ""


def test_guard_holds_from_an_amount_of_money() -> None:
    guard = SpeechGuard([], hold_money=True)
    out = [guard.feed(t) for t in ["That ", "comes ", "to ", "$5", ".98 ", "in all. "]]
    assert "".join(out) == "That comes to "
    guard = SpeechGuard([], hold_money=True)
    assert guard.feed("It is five dollars ") == "It is five "
    assert SpeechGuard([]).feed("It is $5 ") == "It is $5 "


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        ("That's $5.98 altogether.", {598}),
        ("It costs £4, or €12,50 abroad.", {400, 1250}),
        ("at 3 dollars 99 each", {399}),
        ("five pounds and twenty pence", {520}),
        ("twenty-five dollars", {2500}),
        ("just 99 cents", {99}),
        ("fifty pence", {50}),
        ("It's 4.99.", {499}),
        ("a dollar fifty", {150}),
        ("We open at 9 and the pack holds 16 tablets of 500 mg.", set()),
        ("2 dollars a pack", {200}),
        ("We close at 6 p.m. and open at 8.30, take 0.25 mg", set()),
        ("the total is 8.98", {898}),
    ],
)
def test_amounts_of_money_in_what_is_said(text: str, cents: set[int]) -> None:
    assert amounts(text) == cents


def test_an_amount_is_grounded_only_by_what_was_said_before() -> None:
    told = ["We have Ibuprofen, pack of 24, at 3 dollars 99. Would you like to order it?"]
    assert ungrounded_amounts("Yes, it's 3 dollars 99.", told) == set()
    assert ungrounded_amounts("Two of them would be 7 dollars 98.", told) == {798}
    assert ungrounded_amounts("Two of them would be $7.98.", []) == {798}
