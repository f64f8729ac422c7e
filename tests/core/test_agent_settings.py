"""Per-agent settings from a run config: groups expand, single roles override, secrets are refused."""

import pytest

from simlab.agents.resolve import make_agents, role_agent_settings, role_specs
from simlab.core.errors import ConfigError
from simlab.core.plugins import AgentSpec
from simlab.worlds import get_family

BLOCKS = get_family("blocks")


def test_group_settings_expand_and_a_single_role_overrides():
    out = role_agent_settings(BLOCKS, {"D2": {"temperature": 0.0}, "director": {"temperature": 0.7, "model": "m"}})
    assert out["D1"] == {"temperature": 0.7, "model": "m"}
    assert out["D2"] == {"temperature": 0.0, "model": "m"}
    assert "builder" not in out


@pytest.mark.parametrize("name", ["api_key", "OPENAI_API_KEY", "secret", "auth_token"])
def test_secrets_in_a_run_config_are_refused(name):
    with pytest.raises(ConfigError, match="api_key_env"):
        role_agent_settings(BLOCKS, {"builder": {name: "sk-123"}})
    allowed = {"api_key_env": "MY_KEY", "max_tokens": 512}
    assert role_agent_settings(BLOCKS, {"builder": allowed})["builder"] == allowed


def test_factories_receive_their_agent_settings(monkeypatch):
    seen = {}

    def factory(role, arg, settings):
        seen[role] = settings["agent"]
        return BLOCKS.agents["scripted"](role, None, settings)

    monkeypatch.setitem(BLOCKS.agents, "probe", factory)
    specs = role_specs(BLOCKS, [AgentSpec.parse("builder=probe")])
    make_agents(BLOCKS, specs, dict(BLOCKS.default_settings), agent_settings={"builder": {"temperature": 0.3}})
    assert seen == {"builder": {"temperature": 0.3}}
