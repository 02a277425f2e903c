"""Each agent on its own model: the gateway-wide provider for one, an OpenAI-compatible
endpoint with its own model name and address for another."""

from __future__ import annotations

import pytest

from callswarm.app import build_services
from callswarm.settings import Settings
from tests.swarm.backends.fake_server import FakeLLMServer
from tests.swarm.backends.test_openai_contract import chunk


async def test_sales_on_its_own_endpoint_and_model_triage_on_the_gateways(tmp_path) -> None:
    with FakeLLMServer() as server:
        server.sse([chunk({"content": "Hello from the sales endpoint."}), chunk({}, "stop")])
        settings = Settings(
            data_dir=tmp_path,
            provider="scripted",
            idle_timeout=None,
            agent_models={
                "sales": {
                    "provider": "openai",
                    "model": "qwen-sales",
                    "base_url": f"{server.url}/v1",
                    "api_key": "sk-sales",
                }
            },
        )
        # No routers: the turn must reach each agent's model, not code before it.
        services = build_services(settings, routers=False)
        try:
            agents = services.engine.registry.agents
            assert agents["triage"].completion == "scripted"
            assert agents["sales"].completion.startswith("openai:qwen-sales@")
            session = services.engine.session("c1", services.swarm)
            reply = "".join([p async for p in session.stream("I'd like some paracetamol")])
            agent = await session.get_agent_name()
        finally:
            await services.aclose()
    assert "Hello from the sales endpoint." in reply
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "qwen-sales"
    assert request.headers["authorization"] == "Bearer sk-sales"
    assert agent == "sales"


def test_an_agent_the_agency_lacks_is_refused(tmp_path) -> None:
    settings = Settings(
        data_dir=tmp_path, provider="scripted", agent_models={"salse": {"provider": "openai"}}
    )
    with pytest.raises(ValueError, match="salse, not an agent of this agency"):
        build_services(settings)


def test_one_backend_for_agents_on_the_same_model(tmp_path) -> None:
    settings = Settings(
        data_dir=tmp_path, provider="scripted", agent_providers={"sales": "scripted"}
    )
    services = build_services(settings)
    try:
        assert list(services.backends) == ["scripted"]
    finally:
        services.db.dispose()
