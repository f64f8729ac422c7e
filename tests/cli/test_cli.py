import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from simlab.cli import main
from simlab.core.recording import INDEX_FILE, RUN_FILE, load_run

REPO = Path(__file__).resolve().parents[2]
CRAFT_LOG = REPO / "tests" / "blocks" / "fixtures" / "craft_log_small.json"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "run"
    args = ["run", "--episodes", "3", "--turns", "3", "--seed", "2", "--out", str(out)]
    assert main([*args, "--agent", "director=oracle", "--agent", "builder=scripted"]) == 0
    return out


def test_main_py_help_runs_in_a_real_subprocess():
    out = subprocess.run(
        [sys.executable, "main.py", "--help"], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    for command in ("demo", "generate", "run", "report", "import", "plugins"):
        assert command in out.stdout


def test_generate_writes_the_structures_and_prints_the_tier_counts(tmp_path, capsys):
    code, out, _ = _run(capsys, "generate", "blocks", "--n", "6", "--seed", "1", "--out", str(tmp_path / "s"))
    assert code == 0
    files = [f"structure_{k:03d}.json" for k in range(6)]
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == sorted([*files, "structures.json"])
    tiers = [json.loads((tmp_path / "s" / f).read_text())["tier"] for f in files]
    printed = dict((t, int(n)) for n, t in re.findall(r"(\d+) (simple|medium|complex)", out))
    assert printed == {t: tiers.count(t) for t in ("simple", "medium", "complex")}
    assert f"wrote 6 structures to {tmp_path / 's'}" in out


def test_generated_structures_can_be_run(tmp_path, capsys):
    _run(capsys, "generate", "blocks", "--n", "2", "--out", str(tmp_path / "s"))
    code, _, _ = _run(capsys, "run", "--structures", str(tmp_path / "s"), "--turns", "2", "--out", str(tmp_path / "r"))
    assert code == 0
    ids = [s["task_id"] for s in load_run(tmp_path / "r").summaries]
    assert ids == ["structure_000", "structure_001"]


def test_run_writes_one_index_line_per_episode(run_dir):
    lines = (run_dir / INDEX_FILE).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    run = load_run(run_dir)
    assert len(run.episodes()) == 3
    assert run.config["seed"] == 2
    assert run.config["settings"]["turns"] == 3
    assert all(s["turns"] == 3 for s in run.summaries)


def test_run_prints_progress_and_completion(tmp_path, capsys):
    code, out, err = _run(capsys, "run", "--episodes", "1", "--turns", "1", "--out", str(tmp_path / "r"))
    assert code == 0
    assert "run complete: 1 episodes" in out
    assert "1/1 100%" in err and "ok 0 fail 1 abort 0" in err


def test_report_table_lists_every_episode(run_dir, capsys):
    code, out, _ = _run(capsys, "report", str(run_dir))
    assert code == 0
    ids = [s["episode_id"] for s in load_run(run_dir).summaries]
    assert all(i in out for i in ids)
    assert "overall_progress" in out


def test_report_csv_has_one_row_per_episode(run_dir, capsys):
    code, out, _ = _run(capsys, "report", str(run_dir), "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["episode_id"] for r in rows] == [s["episode_id"] for s in load_run(run_dir).summaries]
    assert all(float(r["overall_progress"]) >= 0 for r in rows)


def test_report_json_has_the_aggregate_mean(run_dir, capsys):
    code, out, _ = _run(capsys, "report", str(run_dir), "--format", "json")
    assert code == 0
    report = json.loads(out)
    scores = [s["metrics"]["overall_progress"] for s in load_run(run_dir).summaries]
    assert report["aggregate"]["metrics"]["overall_progress"]["mean"] == pytest.approx(sum(scores) / len(scores))
    assert len(report["episodes"]) == 3


def test_bad_agent_spec_exits_2_naming_the_spec(tmp_path, capsys):
    code, _, err = _run(capsys, "run", "--episodes", "1", "--agent", "builderscripted", "--out", str(tmp_path / "r"))
    assert code == 2
    assert err.startswith("error:")
    assert "builderscripted" in err
    assert "Traceback" not in err


def test_unknown_agent_exits_2_listing_the_available_ones(tmp_path, capsys):
    code, _, err = _run(capsys, "run", "--episodes", "1", "--agent", "builder=nosuch", "--out", str(tmp_path / "r"))
    assert code == 2
    assert "error: unknown agent 'nosuch'" in err
    assert "scripted" in err


def test_report_on_a_folder_that_is_not_a_run_exits_2_naming_it(tmp_path, capsys):
    folder = tmp_path / "not_a_run"
    folder.mkdir()
    code, _, err = _run(capsys, "report", str(folder))
    assert code == 2
    assert err.startswith("error:")
    assert str(folder) in err


def test_report_warns_about_a_truncated_index_line(run_dir, tmp_path, capsys):
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / RUN_FILE).write_bytes((run_dir / RUN_FILE).read_bytes())
    (copy / "episodes").mkdir()
    for p in (run_dir / "episodes").iterdir():
        (copy / "episodes" / p.name).write_bytes(p.read_bytes())
    (copy / INDEX_FILE).write_text((run_dir / INDEX_FILE).read_text() + '{"format": "simlab.in', encoding="utf-8")
    code, out, err = _run(capsys, "report", str(copy), "--format", "csv")
    assert code == 0
    assert "warning:" in err
    assert "line 4" in err
    assert len(out.splitlines()) == 1 + 3


def test_import_craft_creates_a_run_that_loads_and_reports(tmp_path, capsys):
    out_dir = tmp_path / "imported"
    code, out, _ = _run(capsys, "import", "craft", str(CRAFT_LOG), "--out", str(out_dir))
    assert code == 0
    assert "imported" in out
    run = load_run(out_dir)
    episodes = run.episodes()
    assert episodes
    assert len(episodes) == len(run.summaries)
    assert all(e.source.get("importer") == "craft" for e in episodes)
    code, report, _ = _run(capsys, "report", str(out_dir), "--format", "json")
    assert code == 0
    assert json.loads(report)["aggregate"]["n"] == len(episodes)


def test_import_into_an_existing_run_exits_2(run_dir, capsys):
    code, _, err = _run(capsys, "import", "craft", str(CRAFT_LOG), "--out", str(run_dir))
    assert code == 2
    assert "already holds a run" in err


def test_default_command_without_display_prints_the_demo(monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    code, out, _ = _run(capsys)
    assert code == 0
    assert out.startswith("SimLab demo")
    assert "desktop app is not built yet" not in out
    table = [line for line in out.splitlines() if line.startswith("episode ")]
    assert table, out
    assert re.search(r"^\S+-r0 +\S+ +(success|failure|abort) +\d+", out, re.MULTILINE)


def test_demo_keeps_its_run_with_out(tmp_path, capsys):
    code, out, _ = _run(capsys, "demo", "--out", str(tmp_path / "demo"))
    assert code == 0
    assert "SimLab demo" in out
    run = load_run(tmp_path / "demo")
    assert len(run.summaries) == len(run.episodes()) > 0
    assert f"{len(run.summaries)} episodes" in out


def test_run_with_a_missing_structures_folder_exits_2(tmp_path, capsys):
    missing = tmp_path / "nowhere"
    code, _, err = _run(capsys, "run", "--structures", str(missing), "--out", str(tmp_path / "r"))
    assert code == 2
    assert str(missing) in err


@pytest.mark.parametrize("setting", ["speakers=5", "turns=abc", "interior=sideways"])
def test_run_with_a_bad_world_setting_exits_2(tmp_path, capsys, setting):
    code, _, err = _run(capsys, "run", "--episodes", "1", "--set", setting, "--out", str(tmp_path / "r"))
    assert code == 2
    assert setting.split("=")[0] in err


def test_run_resume_via_cli_finishes_the_run(tmp_path, capsys):
    out_dir = tmp_path / "r"
    _run(capsys, "run", "--episodes", "2", "--turns", "1", "--out", str(out_dir))
    lines = (out_dir / INDEX_FILE).read_text(encoding="utf-8").splitlines()
    (out_dir / INDEX_FILE).write_text(lines[0] + "\n", encoding="utf-8")
    code, out, err = _run(capsys, "run", "--resume", "--out", str(out_dir))
    assert code == 0
    assert "run complete: 2 episodes" in out
    assert "1/1 100%" in err
    assert len((out_dir / INDEX_FILE).read_text(encoding="utf-8").splitlines()) == 2


def test_plugins_command_lists_plugins_and_broken_ones(tmp_path, monkeypatch, capsys, request):
    dist = tmp_path / "cli_fake-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cli-fake\nVersion: 0.1\n")
    entry_points = "[simlab.plugins]\nclifake = cli_fake_manifest:PLUGIN\nclibroken = cli_no_such_module:PLUGIN\n"
    (dist / "entry_points.txt").write_text(entry_points)
    (tmp_path / "cli_fake_manifest.py").write_text(
        "from simlab.core.plugins import Plugin\n"
        "PLUGIN = Plugin(name='clifake', description='hello', agents={'b': 'x:y', 'a': 'x:z'})\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    request.addfinalizer(lambda: sys.modules.pop("cli_fake_manifest", None))
    code, out, _ = _run(capsys, "plugins")
    assert code == 0
    # clifake's manifest reads fine but its code does not import: it was listed as healthy
    assert "clifake: BROKEN, agents a, b  (entry point clifake) hello" in out
    assert "broken: clifake: ModuleNotFoundError: No module named 'x'" in out
    assert "broken: entry point clibroken (cli_no_such_module:PLUGIN): ModuleNotFoundError" in out
    assert "openai: ok, agents openai  (built in)" in out


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "file not found"),
        ('{"games": [{"turns": [', "line 1 column 23"),
        ('{"experiment_info": {}}', "field 'games'"),
    ],
)
def test_import_of_a_bad_craft_log_exits_2_and_writes_nothing(tmp_path, capsys, content, expected):
    log = tmp_path / "log.json"
    if content is not None:
        log.write_text(content)
    code, _, err = _run(capsys, "import", "craft", str(log), "--out", str(tmp_path / "run"))
    assert code == 2 and err.startswith("error:") and str(log) in err and expected in err
    assert not (tmp_path / "run").exists()


def test_imported_replay_has_the_logged_boards_and_scores(tmp_path, capsys):
    assert _run(capsys, "import", "craft", str(CRAFT_LOG), "--out", str(tmp_path / "run"))[0] == 0
    run = load_run(tmp_path / "run")
    episode = run.episodes()[0]
    scores = [e for e in episode.events if e.kind == "score" and e.data.get("logged")]
    assert scores, "the fixture logs metrics on some turns"
    for event in scores:
        for name in ("iou", "completion", "position_accuracy", "overall_progress"):
            assert abs(event.data["metrics"][name] - event.data["logged"][name]) < 1e-6
    assert episode.state_at(episode.last_turn) is not None


# ---- what a family declares, on the command line -----------------------------------------------------------


def test_worlds_lists_every_family_with_roles_agents_settings_groups_and_importers(capsys):
    code, out, _ = _run(capsys, "worlds")
    assert code == 0
    blocks, rooms = out.split("\nrooms: ")
    assert "roles: D1, D2, D3, builder" in blocks and "director = D1 + D2 + D3" in blocks
    assert "oracle, scripted, random, silent" in blocks and "plugin agents: openai" in blocks
    assert "tiers (--group): simple, medium, complex" in blocks and "turns = 20" in blocks
    assert "import craft FILE" in blocks
    assert "roles: answerer, helper" in rooms and "tasks (--group): anchor, counting" in rooms
    assert "max_rounds = 10" in rooms and "import " not in rooms


def test_generate_options_come_from_each_family(capsys):
    with pytest.raises(SystemExit):
        main(["generate", "rooms", "--help"])
    rooms_help = capsys.readouterr().out
    assert "--questions-per-task" in rooms_help and "--no-images" in rooms_help and "--paraphrase-model" in rooms_help
    with pytest.raises(SystemExit):
        main(["generate", "blocks", "--help"])
    blocks_help = capsys.readouterr().out
    assert "--group {simple,medium,complex}" in blocks_help and "--questions-per-task" not in blocks_help


def test_run_plays_only_the_groups_asked_for(tmp_path, capsys):
    rooms = tmp_path / "rooms"
    assert (
        _run(capsys, "run", "--world", "rooms", "--episodes", "2", "--group", "counting", "--out", str(rooms))[0] == 0
    )
    assert {t["task"] for t in load_run(rooms).config["tasks"]} == {"counting"}
    blocks = tmp_path / "blocks"
    args = ["run", "--episodes", "3", "--turns", "1", "--group", "complex", "--out", str(blocks)]
    assert _run(capsys, *args)[0] == 0
    assert {t["tier"] for t in load_run(blocks).config["tasks"]} == {"complex"}
    code, _, err = _run(capsys, "run", "--group", "hardest", "--episodes", "1", "--out", str(tmp_path / "x"))
    assert code == 2 and "no tier 'hardest'; known: simple, medium, complex" in err


def test_turns_is_refused_for_a_world_without_a_turn_budget(tmp_path, capsys):
    code, _, err = _run(
        capsys, "run", "--world", "rooms", "--turns", "3", "--episodes", "1", "--out", str(tmp_path / "r")
    )
    assert code == 2 and "unknown rooms setting 'turns'" in err and "max_rounds" in err
    assert not (tmp_path / "r").exists()


def test_an_unknown_importer_lists_the_ones_families_offer(tmp_path, capsys):
    code, _, err = _run(capsys, "import", "mystery", str(CRAFT_LOG), "--out", str(tmp_path / "r"))
    assert code == 2 and "no importer called 'mystery'; importers: clembench, craft" in err


@pytest.fixture
def model_server():
    from simlab.testing.openai_server import FakeOpenAIServer, scripted_replies
    from simlab.testing.scripts import BLOCKS_SCRIPT

    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT, default=None)) as server:
        yield server


def test_openai_agent_follows_the_sdk_variables_when_no_setting_names_an_endpoint(
    tmp_path, capsys, monkeypatch, model_server
):
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-env")
    args = [
        "run",
        "--agent",
        "builder=openai:fake-model",
        "--episodes",
        "1",
        "--turns",
        "2",
        "--out",
        str(tmp_path / "r"),
    ]
    assert _run(capsys, *args)[0] == 0
    assert len(model_server.requests) == load_run(tmp_path / "r").summaries[0]["usage"]["requests"] > 0


def test_agent_settings_on_the_command_line(tmp_path, capsys, monkeypatch, model_server):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("MY_KEY", "sk-test-flag")
    out = tmp_path / "r"
    args = ["run", "--agent", "builder=openai:fake-model", "--episodes", "1", "--turns", "2", "--out", str(out)]
    flags = [
        "--agent-setting",
        f"builder.base_url={model_server.base_url}",
        "--agent-setting",
        "builder.api_key_env=MY_KEY",
    ]
    assert _run(capsys, *args, *flags, "--agent-setting", "builder.temperature=0.25")[0] == 0
    recorded = load_run(out).config["agent_settings"]["builder"]
    assert recorded == {"base_url": model_server.base_url, "api_key_env": "MY_KEY", "temperature": 0.25}
    assert model_server.requests and all(r.get("temperature") == 0.25 for r in model_server.requests)
    code, _, err = _run(capsys, *args[:-1], str(tmp_path / "bad"), "--agent-setting", "builder=oops")
    assert code == 2 and "ROLE.KEY=VALUE" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["generate", "blocks", "--n", "-3", "--out", "OUT"],
        ["generate", "rooms", "--n", "0", "--out", "OUT"],
        ["run", "--episodes", "0", "--out", "OUT"],
        ["run", "--repeats", "0", "--episodes", "1", "--out", "OUT"],
    ],
)
def test_zero_or_negative_counts_are_refused_before_anything_is_written(argv, tmp_path, capsys):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_info:
        main([str(out) if a == "OUT" else a for a in argv])
    assert exit_info.value.code == 2 and "expected at least 1" in capsys.readouterr().err
    assert not out.exists()
