import pytest
from pydantic import BaseModel

from swarm import Engine
from swarm.errors import ConfigurationError

from .helpers import NoArgs


def test_validate_names_every_dangling_reference() -> None:
    engine = Engine()
    engine.add_agent("a", "missing_completion", "p", tools=["missing_tool"])
    engine.add_swarm("w", ["a", "ghost"], "nobody", communication=[("a", "phantom")])
    with pytest.raises(ConfigurationError) as info:
        engine.validate()
    problems = info.value.problems
    assert "agent 'a': unknown completion 'missing_completion'" in problems
    assert "agent 'a': unknown tool 'missing_tool'" in problems
    assert "swarm 'w': unknown agent 'ghost'" in problems
    assert "swarm 'w': default agent 'nobody' is not in it" in problems
    assert "swarm 'w': edge names unknown agent 'phantom'" in problems


def test_names_are_unique_and_parameters_must_be_a_model() -> None:
    engine = Engine()

    async def call(ctx, params):
        return None

    engine.add_tool("t", "d", NoArgs, call)
    with pytest.raises(ConfigurationError, match="already registered"):
        engine.add_tool("t", "d", NoArgs, call)
    with pytest.raises(ConfigurationError, match="pydantic model"):
        engine.add_tool("u", "d", dict, call)  # type: ignore[arg-type]


def test_tool_schema_is_compact_json_schema() -> None:
    class Args(BaseModel):
        query: str
        limit: int = 3

    engine = Engine()

    async def call(ctx, params):
        return None

    engine.add_tool("search", "Search it", Args, call)
    schema = engine.registry.tools["search"].schema()
    assert schema == {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search it",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer", "default": 3},
                },
                "required": ["query"],
            },
        },
    }
