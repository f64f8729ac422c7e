"""Issue 26, items 5, 9 and 10: every count and size a flag takes is bounded (said in --help, refused past it with
exit 2 naming the flag); an unknown --agent-setting is refused like an unknown --set; --resume accepts the
interrupted run's own options and refuses, naming each, only those that change it."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from simlab.agents.resolve import make_agents, role_specs
from simlab.core.errors import ConfigError
from simlab.core.limits import MAX_SEED
from simlab.core.plugins import AgentSpec, discover
from simlab.core.recording import INDEX_FILE, load_run
from simlab.options import field_bound
from simlab.runner.batch import RunConfig, run
from simlab.worlds import family_names, get_family
from tests.fuzz.hostile import run_cli, snapshot


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    """``main(argv)``: (exit status, stdout, stderr); argparse's SystemExit counts as the status."""
    return run_cli(capsys, argv)


# ---- item 5: bounded counts and sizes -------------------------------------------------------------------------

TOO_BIG = [
    (["generate", "blocks", "--out", "OUT"], "--n", "100001", "at most 100,000"),
    (["generate", "rooms", "--out", "OUT"], "--n", "10001", "at most 10,000"),
    (["generate", "boards", "--out", "OUT"], "--seed", str(MAX_SEED + 1), "at most 2^63 - 1"),
    (["generate", "puzzles", "--out", "OUT"], "--seed", "-1", "at least 0"),
    (["generate", "rooms", "--out", "OUT"], "--questions-per-task", "2001", "at most 2,000"),
    (["generate", "rooms", "--out", "OUT"], "--filter-tries", "21", "at most 20"),
    (["generate", "rooms", "--out", "OUT"], "--filter-concurrency", "257", "at most 256"),
    (["run", "--out", "OUT"], "--episodes", "100001", "at most 100,000"),
    (["run", "--out", "OUT"], "--repeats", "1001", "at most 1,000"),
    (["run", "--out", "OUT"], "--turns", "10001", "at most 10,000"),
    (["run", "--out", "OUT"], "--seed", str(MAX_SEED + 1), "at most 2^63 - 1"),
    (["run", "--out", "OUT"], "--seed", "9" * 5000, "expected a whole number"),
    (["run", "--out", "OUT"], "--concurrency", "257", "at most 256"),
    (["run", "--out", "OUT"], "--processes", "65", "at most 64"),
    (["run", "--out", "OUT"], "--episode-timeout", "604801", "at most 604,800"),
    (["run", "--out", "OUT"], "--episode-timeout", "inf", "at most 604,800"),
    (["run", "--out", "OUT"], "--episode-timeout", "nan", "at most 604,800"),
    (["replay", "RUN", "--export", "png", "--out", "OUT"], "--turn", "100001", "at most 100,000"),
    (["replay", "RUN", "--export", "gif", "--out", "OUT"], "--first", "-1", "at least 0"),
    (["replay", "RUN", "--export", "gif", "--out", "OUT"], "--last", "100001", "at most 100,000"),
    (["gui"], "--turn", "100001", "at most 100,000"),
    (["judge", "RUN", "--judge", "all", "--model", "m"], "--runs", "21", "at most 20"),
    (["judge", "RUN", "--judge", "all", "--model", "m"], "--concurrency", "257", "at most 256"),
    (["judge", "RUN", "--judge", "all", "--model", "m"], "--temperature", "2.5", "at most 2"),
    (["validity", "BENCH"], "--seed", str(MAX_SEED + 1), "at most 2^63 - 1"),
]


def _argv(tmp_path: Path, argv: Sequence[str]) -> list[str]:
    return [str(tmp_path / a.lower()) if a in ("OUT", "RUN", "BENCH") else a for a in argv]


@pytest.mark.parametrize(
    ("argv", "flag", "value", "said"), TOO_BIG, ids=[f"{a[0]}{f}={v[:12]}" for a, f, v, _ in TOO_BIG]
)
def test_a_flag_past_its_bound_is_refused_naming_the_flag_and_the_bound(tmp_path, capsys, argv, flag, value, said):
    code, _, err = cli(capsys, *_argv(tmp_path, argv), flag, value)
    assert code == 2 and f"argument {flag}: " in err and said in err, err
    assert not (tmp_path / "out").exists()


BOUNDS = [(argv, flag, said) for argv, flag, _, said in TOO_BIG if said.startswith(("at most", "at least"))]


@pytest.mark.parametrize(("argv", "flag", "said"), BOUNDS, ids=[f"{a[0]}{f}-{s}" for a, f, s in BOUNDS])
def test_every_bound_is_said_in_help(capsys, argv, flag, said):
    command = argv[:2] if argv[0] == "generate" else argv[:1]
    code, out, _ = cli(capsys, *command, "--help")
    helped = " ".join(out.split())
    entry = helped[helped.index(f" {flag} ") :][:300]  # the flag's own line (its help follows the usage)
    bound = said.removeprefix("at most ").removeprefix("at least ")
    assert code == 0 and (f" to {bound}" in entry or f"{bound} to " in entry), entry


@pytest.mark.parametrize(
    ("argv", "flag", "value", "taken"),
    [
        (["generate", "blocks", "--out", "OUT"], "--n", "100000", 100_000),
        (["run", "--out", "OUT"], "--episodes", "100000", 100_000),
        (["run", "--out", "OUT"], "--seed", str(MAX_SEED), MAX_SEED),
        (["run", "--out", "OUT"], "--concurrency", "256", 256),
        (["run", "--out", "OUT"], "--processes", "64", 64),
        (["run", "--out", "OUT"], "--episode-timeout", "0", 0.0),
        (["judge", "RUN", "--judge", "all", "--model", "m"], "--temperature", "2", 2.0),
    ],
)
def test_a_flag_at_its_bound_is_taken(tmp_path, argv, flag, value, taken):
    from simlab.cli import _parser

    args, _ = _parser().parse_known_args([*_argv(tmp_path, argv), flag, value])
    assert getattr(args, flag.strip("-").replace("-", "_")) == taken


def test_generate_boards_with_a_hundred_billion_tasks_is_refused_at_once(tmp_path, capsys):
    code, _, err = cli(capsys, "generate", "boards", "--n", "100000000000", "--out", tmp_path / "boards")
    assert code == 2 and "argument --n" in err and "at most 100,000" in err and "generate boards" in err
    assert not (tmp_path / "boards").exists()


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ('world = "blocks"\nepisodes = 100000000000', "--episodes 100000000000: expected 1 to 100,000"),
        ('world = "rooms"\nepisodes = 20000', "--episodes 20000: expected 1 to 10,000"),  # hours of work
        ('world = "blocks"\nepisodes = 1\nseed = -5', "--seed -5: expected 0 to"),
        ('world = "blocks"\nepisodes = 1000\nrepeats = 101', "101,000 episodes, and a run holds at most 100,000"),
        ('world = "blocks"\nepisodes = 1\nrepeats = 5000', "--repeats 5000: expected 1 to 1,000"),
    ],
)
def test_a_run_config_past_a_bound_is_refused_before_any_task_is_made(tmp_path, capsys, toml, said):
    (tmp_path / "run.toml").write_text(toml, encoding="utf-8")
    code, _, err = cli(capsys, "run", "--config", tmp_path / "run.toml", "--out", tmp_path / "run")
    assert code == 2 and said in err, err
    assert not (tmp_path / "run").exists()


def test_episodes_times_repeats_past_a_run_is_refused_on_the_command_line(tmp_path, capsys):
    code, _, err = cli(capsys, "run", "--episodes", "50000", "--repeats", "3", "--out", tmp_path / "run")
    assert code == 2 and "150,000 episodes" in err and "--repeats" in err and not (tmp_path / "run").exists()


def test_an_animation_of_more_frames_than_its_bound_is_refused_naming_the_flags(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert cli(capsys, "run", "--episodes", "1", "--turns", "2", "--out", run_dir)[0] == 0
    argv = ["replay", run_dir, "--export", "gif", "--first", "0", "--last", "600", "--out", tmp_path / "a.gif"]
    code, _, err = cli(capsys, *argv)
    assert code == 2 and "--first 0 --last 600: 601 frames" in err and "at most 500" in err
    assert not (tmp_path / "a.gif").exists()


@pytest.mark.parametrize("name", family_names())
def test_every_numeric_setting_and_generate_option_of_every_family_is_bounded_above(name):
    family = get_family(name)
    for model in (family.settings, family.tasks.options):
        for key, field in model.model_fields.items():
            if field.annotation in (int, float, int | None, float | None):
                bound = field_bound(field)
                assert bound is not None and bound.high < 10**9, f"{name} {model.__name__}.{key} has no upper bound"


@pytest.mark.parametrize(
    ("world", "setting", "name"),
    [
        ("blocks", "oracle_n=101", "oracle_n"),
        ("blocks", "history_limit=100001", "history_limit"),
        ("blocks", "history_keep=1000000000000", "history_keep"),
        ("blocks", "repeat=1000", "repeat"),
        ("boards", "rounds=1001", "rounds"),
        ("puzzles", "turns=1001", "turns"),
        ("rooms", "image_width=100000", "image_width"),
        ("tictactoe", "lives=10", "lives"),
    ],
)
def test_a_world_setting_past_its_bound_is_refused(tmp_path, capsys, world, setting, name):
    code, _, err = cli(capsys, "run", "--world", world, "--episodes", "1", "--set", setting, "--out", tmp_path / "r")
    assert code == 2 and f"setting '{name}'" in err and "less than or equal" in err, err
    assert not (tmp_path / "r").exists()


# ---- item 9: unknown agent settings ---------------------------------------------------------------------------


def test_an_unknown_agent_setting_of_a_scripted_agent_is_refused(tmp_path, capsys):
    code, _, err = cli(capsys, "run", "--episodes", "1", "--agent-setting", "builder.bogus=1", "--out", tmp_path / "r")
    assert code == 2 and "unknown agent setting builder.bogus" in err
    assert "builder plays scripted, which takes no settings" in err and "--set" in err
    assert not (tmp_path / "r").exists()


def test_an_agent_setting_for_a_group_is_refused_for_a_built_in_agent(tmp_path, capsys):
    argv = ["run", "--episodes", "1", "--agent-setting", "director.temperature=0.2", "--out", tmp_path / "r"]
    code, _, err = cli(capsys, *argv)
    assert code == 2 and "unknown agent setting D1.temperature: D1 plays oracle" in err


def test_an_unknown_agent_setting_of_a_model_agent_is_refused_with_the_known_ones(tmp_path, capsys):
    argv = ["run", "--episodes", "1", "--agent", "builder=openai:some-model", "--agent-setting", "builder.bogus=1"]
    code, _, err = cli(capsys, *argv, "--out", tmp_path / "r")
    assert code == 2 and "builder" in err and "'bogus'" in err
    assert "known: " in err and "base_url" in err and "temperature" in err
    assert not (tmp_path / "r").exists()


def test_a_known_agent_setting_of_a_model_agent_is_taken(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    family = get_family("blocks")
    specs = role_specs(family, [AgentSpec.parse("builder=openai:some-model")])
    settings = {"builder": {"temperature": 0.2}}
    agents = make_agents(family, specs, family.default_settings, discover(plugins_dir=None), settings)
    assert agents["builder"].settings.temperature == 0.2


@pytest.fixture
def plugin_registry(tmp_path):
    """Two plugin agents: ``styled`` declares the settings it takes, ``loose`` declares none."""
    folder = tmp_path / "plugins" / "mine"
    folder.mkdir(parents=True)
    (folder / "plugin.toml").write_text(
        'name = "mine"\n[agents]\nstyled = "agents:styled"\nloose = "agents:loose"\n', encoding="utf-8"
    )
    (folder / "agents.py").write_text(
        textwrap.dedent(
            """
            from simlab.worlds import get_family

            SEEN = []


            def styled(role, arg, settings):
                SEEN.append(dict(settings["agent"]))
                return get_family("blocks").agents["scripted"](role, None, settings)


            styled.agent_settings = ("style", "max_words")


            def loose(role, arg, settings):
                SEEN.append(dict(settings["agent"]))
                return get_family("blocks").agents["scripted"](role, None, settings)
            """
        ),
        encoding="utf-8",
    )
    return discover(plugins_dir=tmp_path / "plugins", entry_points=False)


def test_a_plugin_agent_takes_the_settings_it_declares_and_refuses_others(plugin_registry, tmp_path):
    family = get_family("blocks")
    specs = role_specs(family, [AgentSpec.parse("builder=styled")])
    make_agents(family, specs, family.default_settings, plugin_registry, {"builder": {"style": "terse"}})
    refused = r"unknown agent setting builder\.bogus: builder plays styled, which takes max_words, style"
    with pytest.raises(ConfigError, match=refused):
        make_agents(family, specs, family.default_settings, plugin_registry, {"builder": {"bogus": 1}})
    declared = {"builder": {"max_words": 9}}
    config = RunConfig("blocks", episodes=1, agents=["builder=styled"], settings={"turns": 1}, agent_settings=declared)
    writer = run(config, tmp_path / "run", registry=plugin_registry)
    assert load_run(writer.path).config["agent_settings"] == {"builder": {"max_words": 9}}


def test_a_plugin_agent_that_declares_nothing_gets_every_setting(plugin_registry):
    family = get_family("blocks")
    specs = role_specs(family, [AgentSpec.parse("builder=loose")])
    make_agents(family, specs, family.default_settings, plugin_registry, {"builder": {"anything": [1, 2]}})
    seen = plugin_registry.load_agent_factory("loose").__globals__["SEEN"]
    assert seen[-1] == {"anything": [1, 2]}


# ---- item 10: --resume with the run's own options -------------------------------------------------------------

COMMAND = ["run", "--world", "blocks", "--agent", "director=oracle", "--episodes", "2", "--turns", "2", "--seed", "3"]


def interrupt(run_dir: Path) -> dict[str, object]:
    """As a run stopped before its last episode: the last index line and that episode's file gone; returns it."""
    lines = (run_dir / INDEX_FILE).read_text(encoding="utf-8").splitlines()
    dropped = json.loads(lines[-1])
    (run_dir / dropped["file"]).unlink()
    (run_dir / INDEX_FILE).write_text("".join(line + "\n" for line in lines[:-1]), encoding="utf-8")
    return dict(dropped)


@pytest.fixture
def interrupted(tmp_path, capsys) -> Path:
    run_dir = tmp_path / "run"
    assert cli(capsys, *COMMAND, "--out", run_dir)[0] == 0
    (run_dir.parent / "dropped.json").write_text(json.dumps(interrupt(run_dir)), encoding="utf-8")
    assert len(load_run(run_dir).summaries) == 1
    return run_dir


def test_the_exact_command_with_resume_appended_finishes_the_run_as_recorded(interrupted, capsys):
    code, out, err = cli(capsys, *COMMAND, "--out", interrupted, "--resume")
    assert code == 0, err
    assert "run complete: 2 episodes" in out and len(load_run(interrupted).summaries) == 2
    dropped = json.loads((interrupted.parent / "dropped.json").read_text(encoding="utf-8"))
    replayed = load_run(interrupted).summaries[-1]
    assert replayed["episode_id"] == dropped["episode_id"]
    assert {k: replayed[k] for k in ("outcome", "turns", "metrics")} == {
        k: dropped[k] for k in ("outcome", "turns", "metrics")
    }


def test_resume_alone_still_finishes_the_run(interrupted, capsys):
    assert cli(capsys, "run", "--resume", "--out", interrupted)[0] == 0
    assert len(load_run(interrupted).summaries) == 2


def test_some_of_the_runs_own_options_with_resume_are_accepted(interrupted, capsys):
    """What the options leave unsaid is the recorded run's; --group naming the recorded tasks' tiers is no change."""
    tiers = sorted({t["tier"] for t in load_run(interrupted).config["tasks"]})
    groups = [word for tier in tiers for word in ("--group", tier)]
    argv = ["run", "--resume", "--seed", "3", "--turns", "2", "--agent", "builder=scripted", *groups]
    code, _, err = cli(capsys, *argv, "--set", "interior=paper", "--out", interrupted)
    assert code == 0, err
    assert len(load_run(interrupted).summaries) == 2


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (["--seed", "4"], "--seed: recorded 3, given 4"),
        (["--turns", "5"], "--turns: recorded 2, given 5"),
        (["--set", "history_keep=7"], "--set history_keep: recorded 40, given 7"),
        (["--agent", "builder=random"], '--agent builder: recorded "scripted", given "random"'),
        (["--agent", "director=silent"], '--agent D1: recorded "oracle", given "silent"'),
        (["--episodes", "3"], "--episodes: recorded 2 tasks, given 3 tasks"),
        (["--episodes", "1"], "--episodes: recorded 2 tasks, given 1 task"),
        (["--repeats", "2"], "--repeats: recorded 1, given 2"),
        (["--set", "interior=reference"], '--set interior: recorded "paper", given "reference"'),
        (["--world", "rooms"], '--world: recorded "blocks", given "rooms"'),
    ],
)
def test_a_changed_option_is_refused_naming_the_recorded_and_the_given_value(interrupted, capsys, change, said):
    before = snapshot(interrupted)
    code, _, err = cli(capsys, *COMMAND, *change, "--out", interrupted, "--resume")
    assert code == 2 and "would change it: " in err and said in err, err
    assert snapshot(interrupted) == before


def test_every_change_is_named_at_once(interrupted, capsys):
    code, _, err = cli(capsys, *COMMAND, "--seed", "5", "--set", "oracle_n=2", "--out", interrupted, "--resume")
    assert code == 2 and "--seed: recorded 3, given 5" in err and "--set oracle_n: recorded 5, given 2" in err


def test_tasks_from_a_folder_resume_with_the_same_folder_and_not_another(tmp_path, capsys):
    for seed in ("1", "2"):
        assert cli(capsys, "generate", "blocks", "--n", "2", "--seed", seed, "--out", tmp_path / f"s{seed}")[0] == 0
    command = ["run", "--tasks", tmp_path / "s1", "--turns", "1", "--out", tmp_path / "run"]
    assert cli(capsys, *command)[0] == 0
    interrupt(tmp_path / "run")
    code, _, err = cli(capsys, *command[:2], tmp_path / "s2", *command[3:], "--resume")
    assert code == 2 and "--tasks: task 1: recorded {" in err, err
    assert cli(capsys, *command, "--resume")[0] == 0 and len(load_run(tmp_path / "run").summaries) == 2


def test_a_run_config_file_resumes_with_itself_and_names_a_changed_value(tmp_path, capsys):
    toml = 'world = "puzzles"\nseed = 2\nepisodes = 3\n[settings]\nturns = 4\n[agents.solver]\nagent = "scripted"\n'
    (tmp_path / "run.toml").write_text(toml, encoding="utf-8")
    command = ["run", "--config", tmp_path / "run.toml", "--out", tmp_path / "run"]
    assert cli(capsys, *command)[0] == 0
    interrupt(tmp_path / "run")
    (tmp_path / "run.toml").write_text(toml.replace("turns = 4", "turns = 6"), encoding="utf-8")
    code, _, err = cli(capsys, *command, "--resume")
    assert code == 2 and "--set turns: recorded 4, given 6" in err and "--config" in err
    (tmp_path / "run.toml").write_text(toml, encoding="utf-8")
    assert cli(capsys, *command, "--resume")[0] == 0 and len(load_run(tmp_path / "run").summaries) == 3
