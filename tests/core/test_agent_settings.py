"""Per-agent settings from a run config: groups expand, single roles override, secrets are refused."""

import pytest

from simlab.agents.resolve import SETTINGS_ATTRIBUTE, make_agents, role_agent_settings, role_specs
from simlab.cli import main
from simlab.core.errors import ConfigError
from simlab.core.plugins import AgentSpec
from simlab.core.recording import load_run
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

    factory.agent_settings = ("temperature",)  # it declares the settings it takes
    monkeypatch.setitem(BLOCKS.agents, "probe", factory)
    specs = role_specs(BLOCKS, [AgentSpec.parse("builder=probe")])
    make_agents(BLOCKS, specs, dict(BLOCKS.default_settings), agent_settings={"builder": {"temperature": 0.3}})
    assert seen == {"builder": {"temperature": 0.3}}


def test_a_role_overridden_to_a_built_in_agent_keeps_no_model_settings(tmp_path):
    """run.json kept the openai settings of a role the command line had given to the oracle."""
    config = tmp_path / "run.toml"
    config.write_text(
        'world = "blocks"\nepisodes = 1\n[settings]\nturns = 1\n'
        '[agents.builder]\nagent = "openai:m"\nbase_url = "http://127.0.0.1:9/v1"\ntemperature = 0.3\n'
        '[agents.director]\nagent = "oracle"\n',
        encoding="utf-8",
    )
    assert main(["run", "--config", str(config), "--agent", "builder=oracle", "--out", str(tmp_path / "r")]) == 0
    recorded = load_run(tmp_path / "r").config
    assert recorded["agents"]["builder"] == "oracle" and recorded["agent_settings"] == {}


def test_a_group_member_given_another_agent_drops_the_groups_settings_and_the_others_keep_them(tmp_path, monkeypatch):
    for name in ("oracle", "silent"):  # built-in agents take no settings unless they declare some
        monkeypatch.setattr(BLOCKS.agents[name], SETTINGS_ATTRIBUTE, ("note",), raising=False)
    config = tmp_path / "run.toml"
    config.write_text(
        'world = "blocks"\nepisodes = 1\n[settings]\nturns = 1\n[agents.director]\nagent = "oracle"\nnote = "x"\n',
        encoding="utf-8",
    )
    args = ["run", "--config", str(config), "--agent", "D2=silent", "--agent-setting", "D2.note=mine"]
    assert main([*args, "--out", str(tmp_path / "r")]) == 0
    recorded = load_run(tmp_path / "r").config["agent_settings"]
    assert recorded == {"D1": {"note": "x"}, "D3": {"note": "x"}, "D2": {"note": "mine"}}
