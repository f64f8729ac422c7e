"""TOML run configs: agents with their settings, world settings, tasks from a folder, errors that name the key."""

import pytest

from simlab.agents.resolve import SETTINGS_ATTRIBUTE
from simlab.core.errors import FormatError
from simlab.core.recording import load_run
from simlab.runner.batch import run
from simlab.runner.config_file import load_run_config
from simlab.worlds import get_family

GOOD = """
world = "blocks"
seed = 3
episodes = 2
[settings]
turns = 4
[agents.director]
agent = "oracle"
[agents.builder]
agent = "scripted:0.2"
note = "slips now and then"
"""


def test_a_toml_config_runs_and_is_recorded(tmp_path, monkeypatch):
    # built-in agents take no settings unless they declare some (simlab.agents.resolve): this one declares its note
    monkeypatch.setattr(get_family("blocks").agents["scripted"], SETTINGS_ATTRIBUTE, ("note",), raising=False)
    (tmp_path / "run.toml").write_text(GOOD, encoding="utf-8")
    config = load_run_config(tmp_path / "run.toml")
    assert config.agents == ["director=oracle", "builder=scripted:0.2"] and config.seed == 3
    run(config, tmp_path / "out")
    recorded = load_run(tmp_path / "out").config
    assert recorded["agents"]["builder"] == "scripted:0.2" and recorded["settings"]["turns"] == 4
    assert recorded["agent_settings"] == {"builder": {"note": "slips now and then"}}
    assert len(load_run(tmp_path / "out").summaries) == 2


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('world = "blocks"\nepisode = 3', "key 'episode'"),
        ("seed = 1", "key 'world'"),
        ('world = "blocks"\nseed = "zero"', "key 'seed'"),
        ('world = "blocks"\n[agents.builder]\nmodel = "x"', "agents.builder"),
        ('world = "blocks"\n[agents', "expected TOML"),
    ],
)
def test_bad_configs_name_the_file_and_the_key(tmp_path, text, where):
    (tmp_path / "bad.toml").write_text(text, encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad\.toml") as info:
        load_run_config(tmp_path / "bad.toml")
    assert where in str(info.value)


def test_the_command_line_overrides_the_config_file(tmp_path, capsys):
    from simlab.cli import main

    (tmp_path / "run.toml").write_text(GOOD, encoding="utf-8")
    args = ["run", "--config", str(tmp_path / "run.toml"), "--agent", "builder=oracle", "--episodes", "1"]
    assert main([*args, "--out", str(tmp_path / "out")]) == 0
    recorded = load_run(tmp_path / "out").config
    assert recorded["agents"]["builder"] == "oracle" and recorded["agents"]["D1"] == "oracle"
    assert recorded["seed"] == 3 and len(recorded["tasks"]) == 1
