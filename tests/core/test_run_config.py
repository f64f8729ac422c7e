"""A run's configuration from its sources (simlab.runner.run_config): the precedence table, each source alone, in
pairs and all three; agents and their settings role by role; how the run is played; and ``--resume`` comparing
what the options say with the recorded run, by value."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simlab.core.errors import ConfigError
from simlab.core.recording import RUN_FILE, load_run
from simlab.runner.batch import RunConfig
from simlab.runner.run_config import RunOptions, Runtime, compose, refuse_changes, resolve, runtime
from simlab.worlds import get_family
from simlab.worlds.blocks.family import FAMILY as BLOCKS

FILE = """
world = "blocks"
seed = 3
repeats = 2
[settings]
turns = 4
interior = "reference"
[agents.builder]
agent = "random"
"""

CLI = {"seed": 4, "turns": 7, "agents": ("director=silent",)}


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    """A run.json config as a run records it: every role's agent, every setting, the tasks."""
    config = RunConfig("blocks", 9, 1, 3, agents=["builder=scripted:0.5"], settings={"history_keep": 7})
    return config.to_json(get_family("blocks"))


def options(tmp_path: Path, sources: str, **given: Any) -> RunOptions:
    """The command line naming the sources: ``cli`` adds :data:`CLI`, ``file`` a run.toml of :data:`FILE`."""
    if "file" in sources:
        (tmp_path / "run.toml").write_text(FILE, encoding="utf-8")
        given["config_file"] = tmp_path / "run.toml"
    if "cli" in sources:
        given.update(CLI)
    return RunOptions(tmp_path / "out", **given)


# sources -> (seed, repeats, turns, interior, history_keep, D1's agent, builder's agent); a setting no source
# names is None (the family's default fills it in when the run is recorded)
TABLE = {
    "defaults": (0, 1, None, None, None, "oracle", "scripted"),
    "cli": (4, 1, 7, None, None, "silent", "scripted"),
    "file": (3, 2, 4, "reference", None, "oracle", "random"),
    "recorded": (9, 3, 20, "paper", 7, "oracle", "scripted:0.5"),
    "cli+file": (4, 2, 7, "reference", None, "silent", "random"),
    "cli+recorded": (4, 3, 7, "paper", 7, "silent", "scripted:0.5"),
    "file+recorded": (3, 2, 4, "reference", None, "oracle", "random"),  # the file is the whole run: none of run.json
    "cli+file+recorded": (4, 2, 7, "reference", None, "silent", "random"),
}


@pytest.mark.parametrize("sources", TABLE)
def test_the_precedence_table(tmp_path, recorded, sources):
    config = compose(options(tmp_path, sources), recorded if "recorded" in sources else None)
    agents = dict(spec.split("=", 1) for spec in config.agents)
    settings = config.settings
    got = (config.seed, config.repeats, settings.get("turns"), settings.get("interior"), settings.get("history_keep"))
    assert (*got, agents["D1"], agents["builder"]) == TABLE[sources]
    assert config.world == "blocks" and sorted(agents) == ["D1", "D2", "D3", "builder"]


def test_a_group_on_the_command_line_replaces_a_files_single_role(tmp_path):
    (tmp_path / "run.toml").write_text('world = "blocks"\n[agents.D2]\nagent = "random"\n', encoding="utf-8")
    over_file = compose(RunOptions(tmp_path / "o", config_file=tmp_path / "run.toml", agents=("director=silent",)))
    assert [spec for spec in over_file.agents if spec.startswith("D")] == ["D1=silent", "D2=silent", "D3=silent"]
    # within one source, a single role's spec is more specific than its group's, in either order
    alone = compose(RunOptions(tmp_path / "o", agents=("D2=random", "director=silent")))
    assert [spec for spec in alone.agents if spec.startswith("D")] == ["D1=silent", "D2=random", "D3=silent"]


MODEL_FILE = """
world = "blocks"
[agents.builder]
agent = "openai:m"
base_url = "http://127.0.0.1:9/v1"
temperature = 0.5
[agents.D1]
agent = "openai:m"
temperature = 0.5
"""


@pytest.mark.parametrize(
    ("agents", "agent_settings", "builder", "d1"),
    [
        ((), {}, {"base_url": "http://127.0.0.1:9/v1", "temperature": 0.5}, {"temperature": 0.5}),
        (("builder=openai:m",), {}, {"base_url": "http://127.0.0.1:9/v1", "temperature": 0.5}, {"temperature": 0.5}),
        (("builder=scripted",), {}, None, {"temperature": 0.5}),  # the file's endpoint was meant for its model
        (
            (),
            {"builder": {"temperature": 0.2}},
            {"base_url": "http://127.0.0.1:9/v1", "temperature": 0.2},
            {"temperature": 0.5},
        ),
        (
            (),
            {"director": {"temperature": 0.9}},
            {"base_url": "http://127.0.0.1:9/v1", "temperature": 0.5},
            {"temperature": 0.9},
        ),
    ],
)
def test_agent_settings_go_role_by_role_and_with_their_agent(tmp_path, agents, agent_settings, builder, d1):
    (tmp_path / "run.toml").write_text(MODEL_FILE, encoding="utf-8")
    given = RunOptions(tmp_path / "o", config_file=tmp_path / "run.toml", agents=agents, agent_settings=agent_settings)
    config = compose(given)
    assert config.agent_settings.get("builder") == builder and config.agent_settings.get("D1") == d1


def test_tasks_and_groups_on_the_command_line_replace_the_files(tmp_path, capsys):
    from simlab.cli import main

    assert main(["generate", "blocks", "--n", "3", "--seed", "5", "--out", str(tmp_path / "mine")]) == 0
    capsys.readouterr()
    toml = 'world = "blocks"\nepisodes = 2\ngroups = ["simple"]\n'
    (tmp_path / "run.toml").write_text(toml, encoding="utf-8")
    file_only = compose(RunOptions(tmp_path / "o", config_file=tmp_path / "run.toml"))
    assert file_only.tasks is None and tuple(file_only.groups) == ("simple",) and file_only.episodes == 2
    given = RunOptions(
        tmp_path / "o", config_file=tmp_path / "run.toml", tasks_path=tmp_path / "mine", groups=("complex",)
    )
    config = compose(given)
    assert config.tasks is not None and len(config.tasks) == 3 and tuple(config.groups) == ("complex",)


def _stored(tmp_path: Path, **runtime_: Any) -> Path:
    """A run folder whose run.json says how the run was last played (all ``runtime`` reads of it)."""
    out = tmp_path / "out"
    out.mkdir()
    (out / RUN_FILE).write_text(json.dumps({"runtime": runtime_}), encoding="utf-8")
    return out


@pytest.mark.parametrize(
    ("resume", "given", "expected"),
    [
        (False, {}, Runtime(1, None, "local")),  # defaults
        (False, {"concurrency": 5, "episode_timeout": 9.5}, Runtime(5, 9.5, "local")),  # the command line
        (True, {}, Runtime(3, 60, "local")),  # as the run was last played
        (True, {"concurrency": 5}, Runtime(5, 60, "local")),  # the command line over the record, option by option
        (True, {"episode_timeout": 0, "executor": "ray"}, Runtime(3, None, "ray")),  # 0: no time limit
    ],
)
def test_how_a_run_is_played_given_else_as_last_played_else_defaults(tmp_path, resume, given, expected):
    out = _stored(tmp_path, concurrency=3, episode_timeout=60)
    assert runtime(RunOptions(out, resume=resume, **given)) == expected


# ---- --resume compares values ------------------------------------------------------------------------------------

COMMAND = {"world": "blocks", "agents": ("director=oracle",), "episodes": 2, "turns": 5, "seed": 3}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("resume") / "run"
    resolve(RunOptions(out, **COMMAND)).play()
    return out


@pytest.mark.parametrize(
    "given",
    [
        {"turns": 5},
        {"settings": {"turns": 5}},  # the same budget said with --set: the value counts, not the flag
        {"agents": ("D1=oracle", "D2=oracle", "D3=oracle", "builder=scripted")},  # the group's roles one by one
        {"settings": {"interior": "paper"}, "seed": 3, "episodes": 2},  # a default the run recorded, named
        {"world": "blocks", "repeats": 1},
        COMMAND,
    ],
)
def test_resume_accepts_options_whose_values_are_the_recorded_ones(played, given):
    resolved = resolve(RunOptions(played, resume=True, **given))
    assert resolved.resume and resolved.config is None


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"turns": 6}, "--turns: recorded 5, given 6"),
        ({"settings": {"turns": 6}}, "--set turns: recorded 5, given 6"),
        ({"agents": ("D2=silent",)}, '--agent D2: recorded "oracle", given "silent"'),
        ({"settings": {"interior": "reference"}}, '--set interior: recorded "paper", given "reference"'),
        ({"episodes": 3}, "--episodes: recorded 2 tasks, given 3 tasks"),
    ],
)
def test_resume_refuses_a_different_value_naming_the_option_and_both_values(played, given, said):
    before = (played / RUN_FILE).read_bytes()
    with pytest.raises(ConfigError, match="would change it") as info:
        refuse_changes(RunOptions(played, resume=True, **given))
    assert said in str(info.value)
    assert (played / RUN_FILE).read_bytes() == before


def test_resume_with_a_run_config_compares_the_files_values(played, tmp_path):
    toml = 'world = "blocks"\nseed = 3\nepisodes = 2\n[settings]\nturns = 5\n[agents.director]\nagent = "oracle"\n'
    (tmp_path / "same.toml").write_text(toml, encoding="utf-8")
    refuse_changes(RunOptions(played, resume=True, config_file=tmp_path / "same.toml"))
    (tmp_path / "other.toml").write_text(toml.replace("turns = 5", "turns = 8"), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        refuse_changes(RunOptions(played, resume=True, config_file=tmp_path / "other.toml"))
    assert "--set turns: recorded 5, given 8" in str(info.value) and "--config" in str(info.value)
    # the command line over the file: a file's other value, overridden by the recorded one, is no change
    refuse_changes(RunOptions(played, resume=True, config_file=tmp_path / "other.toml", turns=5))


def test_a_new_run_records_what_the_sources_composed(played):
    config = load_run(played).config
    assert config["seed"] == 3 and config["settings"]["turns"] == 5 and len(config["tasks"]) == 2
    assert config["agents"] == {"D1": "oracle", "D2": "oracle", "D3": "oracle", "builder": "scripted"}


NO_DEFAULT_BUILDER = dataclasses.replace(BLOCKS, name="nobuilder", default_agents={"director": "oracle"})
"""A family that names no default agent for a role: the command line must give one."""


@pytest.fixture
def no_default_builder(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    import simlab.worlds

    monkeypatch.setitem(simlab.worlds.BUILTIN, "nobuilder", f"{__name__}:NO_DEFAULT_BUILDER")
    simlab.worlds.registered.cache_clear()
    simlab.worlds.get_family.cache_clear()
    yield "nobuilder"
    monkeypatch.undo()
    simlab.worlds.registered.cache_clear()
    simlab.worlds.get_family.cache_clear()


def test_a_role_with_no_default_agent_takes_the_command_lines(tmp_path, no_default_builder):
    config = compose(RunOptions(tmp_path / "o", world=no_default_builder, agents=("builder=random",)))
    assert config.agents == ["D1=oracle", "D2=oracle", "D3=oracle", "builder=random"]
    with pytest.raises(ConfigError, match="no agent for role"):
        compose(RunOptions(tmp_path / "o", world=no_default_builder))
