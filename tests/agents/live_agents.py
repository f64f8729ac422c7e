"""Shared by the live-agent tests: openai-plugin agents pointed at the fake server, whole episodes of them,
and the test key's variable (set for every test of this folder by ``conftest.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simlab.agents.openai_agent import OpenAIAgent
from simlab.agents.resolve import make_agents, role_specs
from simlab.core.episode import Episode
from simlab.core.plugins import AgentSpec, discover
from simlab.core.world import Agent, Observation
from simlab.runner.episode import run_episode
from simlab.testing.openai_server import FakeOpenAIServer
from simlab.worlds import get_family

KEY_ENV, KEY = "SIMLAB_TEST_KEY", "sk-test-SECRET-123"
MODEL = "fake-model"


def agent_settings(server: FakeOpenAIServer, **more: Any) -> dict[str, Any]:
    """Agent settings pointing at the fake server, with tiny timeouts and backoff."""
    return {"base_url": server.base_url, "api_key_env": KEY_ENV, "timeout": 5, "backoff_s": 0.001, **more}


def episode_with(
    family: str, task: Mapping[str, Any], settings: Mapping[str, Any], per_role: Mapping[str, Any]
) -> tuple[Episode, dict[str, Agent]]:
    """One episode with every role played by ``openai:fake-model`` (found through the plugin registry)."""
    fam = get_family(family)
    world_settings = {**fam.default_settings, **settings}
    specs = role_specs(fam, [AgentSpec.parse(f"{role}=openai:{MODEL}") for role in fam.roles])
    agents = make_agents(fam, specs, world_settings, registry=discover(), agent_settings=per_role)
    recorded = {role: spec.spec() for role, spec in specs.items()}
    return run_episode(fam.world(task, world_settings), agents, "live-r0", 0, recorded), agents


def blocks_agent(server: FakeOpenAIServer, role: str = "builder", **more: Any) -> OpenAIAgent:
    """A blocks agent for ``role`` made by the plugin's factory, reset for an episode."""
    factory = discover().load_agent_factory("openai")
    agent = factory(role, MODEL, {"world": "blocks", "agent": agent_settings(server, **more)})
    agent.reset(7, role, {})
    return agent


BUILDER_OBS = Observation(
    "builder", 1, "Verified candidate moves (copy one whole line to play it):\nPLACE:gs:(0,1):0\n", {}, {}
)
DIRECTOR_OBS = Observation("D1", 1, "Your wall: a red block on the left.", {}, {"persona": "cautious"})
