"""The example family installed from outside SimLab (examples/hidden_tictactoe): found by its entry point alone,
conformant, playable from the CLI with scripted agents and with the openai agent against the local server,
and drawn by every export. No line of SimLab names it."""

from __future__ import annotations

import ast
import html
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from typing import Any

import numpy as np
import pytest
from PIL import Image

from simlab.cli import main
from simlab.core.errors import ConfigError, FormatError
from simlab.core.family import ReplyError
from simlab.core.recording import load_run
from simlab.core.world import Observation, Reply
from simlab.render.animation import write_animation
from simlab.render.transcript import episode_html
from simlab.render.turn_sheet import turn_sheet
from simlab.runner.episode import run_episode
from simlab.runner.fork import fork_episode
from simlab.testing import check_world
from simlab.testing.openai_server import FakeOpenAIServer, message_text, scripted_replies
from simlab.worlds import BUILTIN, get_family, registered
from tests.examples.conftest import BOARD, EXAMPLE, REPO, Replay

pytestmark = pytest.mark.usefixtures("installed")
KEY_ENV, KEY = "SIMLAB_TTT_KEY", "sk-ttt-SECRET-42"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run ``python main.py ARGV`` in-process; its stdout (the exit status must be 0)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def distinct_colours(image: Image.Image) -> int:
    return len(np.unique(np.asarray(image.convert("RGB")).reshape(-1, 3), axis=0))


# ---- registration ---------------------------------------------------------------------------------------
def test_the_family_comes_from_the_entry_point_and_simlab_never_names_it():
    points = metadata.distribution("simlab-hidden-tictactoe").entry_points
    assert [(e.group, e.name, e.value) for e in points] == [
        ("simlab.worlds", "tictactoe", "hidden_tictactoe.family:FAMILY")
    ]
    assert "tictactoe" not in BUILTIN and registered()["tictactoe"] == "hidden_tictactoe.family:FAMILY"
    family = get_family("tictactoe")
    assert family.roles == ("seer", "player") and family.world.__module__ == "hidden_tictactoe.world"
    shipped = [*(REPO / "simlab").rglob("*.py"), REPO / "main.py"]
    assert not [p for p in shipped if "hidden_tictactoe" in p.read_text(encoding="utf-8")]


def test_declaring_the_family_and_playing_loads_no_renderer_gui_or_model_client(tmp_path):
    code = (
        "import sys\nfrom pathlib import Path\nfrom simlab.runner.batch import RunConfig, run\n"
        f"run(RunConfig('tictactoe', episodes=2), Path({str(tmp_path)!r}) / 'r')\n"
        "heavy = {'vtk', 'vtkmodules', 'pyvista', 'PySide6', 'pyqtgraph', 'openai', 'PIL'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert ast.literal_eval(out.stdout.strip().splitlines()[-1]) == []


# ---- conformance ----------------------------------------------------------------------------------------
def test_the_conformance_suite_passes():
    check_world("tictactoe")


@pytest.mark.parametrize("agents", [["player=random"], ["seer=silent"], ["player=scripted:0.5"]])
def test_the_conformance_suite_passes_with_every_agent(agents):
    check_world("tictactoe", agents=agents, n_tasks=1)


# ---- the rules, on a hand-made board ----------------------------------------------------------------------
def test_an_ask_a_mine_a_taken_cell_then_the_safe_line(episode):
    results = [(e.turn, e.data["ok"], e.data.get("error")) for e in episode.events if e.kind == "result"]
    assert results == [(2, False, "mine"), (3, False, "blocked"), (4, True, None), (5, True, None), (6, True, None)]
    asked = [(e.turn, e.role, e.data["text"]) for e in episode.events if e.kind == "message" and e.role == "player"]
    assert asked == [(1, "player", "Which cell is safe?")]
    assert episode.state_at(2) == {"marks": [], "revealed": [[1, 1]], "lives_left": 1}
    assert episode.state_at(6) == {"marks": [[0, 0], [0, 1], [0, 2]], "revealed": [[1, 1]], "lives_left": 1}
    assert episode.metric_series("progress") == [0.0, 0.0, 0.0, 0.0, 1 / 3, 2 / 3, 1.0]
    summary = episode.summary
    assert (summary["outcome"], summary["turns"], summary["errors"], summary["score"]) == ("success", 6, 2, 1.0)
    assert summary["metrics"]["mines_hit"] == 1.0 and summary["metrics"]["wasted_moves"] == 1.0


def test_only_the_seer_is_told_where_the_mines_are(episode):
    seen = {e.role: e.data for e in episode.events if e.kind == "observation" and e.turn == 2}
    seer, player = seen["seer"], seen["player"]
    assert "Hidden mines: (1,1) (2,0)" in seer["text"] and seer["data"]["mines"] == [[1, 1], [2, 0]]
    assert "mines" not in player["data"] and "target" not in player["data"] and "(2,0)" not in player["text"]
    said = "Mark (0,0) next. The safe line is row 0: (0,0) (0,1) (0,2)."
    assert player["data"]["this_turn"] == [{"role": "seer", "text": said}]


def test_a_mine_too_many_loses_and_a_finished_game_refuses_more_steps():
    family = get_family("tictactoe")
    world = family.world(BOARD, {"lives": 1})
    world.reset(0)
    world.step(Reply(message="Go"))
    world.step(Reply(action={"cell": [2, 0]}))
    assert world.done and world.agent_selection is None and world.summary()["outcome"] == "failure"
    with pytest.raises(RuntimeError):
        world.step(Reply(message="more"))


def test_unreadable_moves_are_protocol_errors_and_a_fork_replays_them():
    from hidden_tictactoe.agents import OracleSeer

    family = get_family("tictactoe")
    replies = [Reply(action={"cell": "top left"}), Reply(), *[Reply(action={"cell": [0, k]}) for k in range(3)]]
    world = family.world(BOARD, family.check_settings({}))
    episode = run_episode(world, {"seer": OracleSeer("seer"), "player": Replay(replies)}, "bad-r0", 0)
    codes = [(e.turn, e.data["code"]) for e in episode.events if e.kind == "protocol_error"]
    assert codes == [(1, "bad_move"), (2, "no_reply")] and episode.summary["outcome"] == "success"
    forked = fork_episode(episode, 2, {"seer": OracleSeer("seer"), "player": Replay(replies[2:])}, {})
    assert forked.summary == {**episode.summary, "agents": {}}


# ---- tasks ----------------------------------------------------------------------------------------------
def test_every_generated_board_leaves_exactly_one_safe_line():
    from hidden_tictactoe.board import Layout, free_lines

    family = get_family("tictactoe")
    tasks = family.tasks.generate(40, 3)
    assert tasks == family.tasks.generate(40, 3) and tasks != family.tasks.generate(40, 4)
    for task in tasks:
        family.tasks.validate(task)
        assert free_lines(Layout.from_task(task)) == [task["line"]]
        assert (len(task["mines"]), len(task["blocked"])) == (2, 1)
    assert {t["group"] for t in tasks} == {"row", "column", "diagonal"}
    diagonal = family.tasks.generate(6, 3, groups=["diagonal"])
    assert {t["line"] for t in diagonal} <= {"diagonal", "anti-diagonal"}
    more = family.tasks.generate(5, 0, family.generate_options({"mines": 4, "blocked": 0}))
    assert all(len(t["mines"]) == 4 and not t["blocked"] for t in more)
    with pytest.raises(ConfigError, match="cannot leave"):
        family.tasks.generate(1, 0, family.generate_options({"mines": 1, "blocked": 1}))


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"mines": [[0, 1]]}, "line"),  # a mine on the safe line
        ({"mines": [[3, 0]]}, "mines"),  # off the board
        ({"blocked": [[1, 1]]}, "listed twice"),
        ({"line": "row 7"}, "line"),
        ({"id": 3}, "id"),
    ],
)
def test_validate_names_the_bad_field(change, field):
    with pytest.raises(ValueError, match=field):
        get_family("tictactoe").tasks.validate({**BOARD, **change})


def test_a_written_folder_loads_back_and_a_bad_file_is_named(tmp_path):
    family = get_family("tictactoe")
    family.tasks.write(tmp_path / "boards", 4, 9)
    assert family.tasks.load(tmp_path / "boards") == family.tasks.generate(4, 9)
    assert family.tasks.load(tmp_path / "boards" / "board_002.json") == [family.tasks.generate(4, 9)[2]]
    (tmp_path / "bad.json").write_text(json.dumps({**BOARD, "mines": [[0, 0]]}), encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad\.json"):
        family.tasks.load(tmp_path / "bad.json")


# ---- how models and people reply --------------------------------------------------------------------------
PLAYER_OBS = Observation("player", 1, "board", {}, {})


@pytest.mark.parametrize(
    ("text", "action", "message"),
    [
        ("MOVE 0,2", {"cell": [0, 2]}, None),
        ("I will go for the corner.\n**MOVE (1, 0)**", {"cell": [1, 0]}, None),
        ("move: 2,2", {"cell": [2, 2]}, None),
        ("ASK which row is safe?", None, "which row is safe?"),
        ("MOVE 5,9", {"cell": [5, 9]}, None),  # read as given; the engine says it is off the board
    ],
)
def test_the_player_protocol_reads_moves_and_questions(text, action, message):
    protocol = get_family("tictactoe").protocol("player", PLAYER_OBS, {"turns": 8, "lives": 2})
    reply = protocol.parse(text, PLAYER_OBS)
    assert (reply.action, reply.message) == (action, message)
    assert "MOVE i,j" in protocol.system and "2 mine(s)" in protocol.system


@pytest.mark.parametrize("text", ["", "I'd rather not", "REMOVE 1,1", "MOVE somewhere"])
def test_the_player_protocol_refuses_anything_else(text):
    protocol = get_family("tictactoe").protocol("player", PLAYER_OBS, {})
    with pytest.raises(ReplyError):
        protocol.parse(text, PLAYER_OBS)
    assert protocol.give_up(text) == Reply()


def test_the_seer_protocol_and_both_reply_forms():
    family = get_family("tictactoe")
    seer = family.protocol("seer", Observation("seer", 1, "x"), {"turns": 5, "lives": 1})
    assert "5 turns" in seer.system and seer.parse(" Mark (0,1). ", PLAYER_OBS).message == "Mark (0,1)."
    with pytest.raises(ReplyError):
        seer.parse("  ", PLAYER_OBS)
    form = family.reply_form("player", PLAYER_OBS)
    assert form.reply("", values={"cell": [2, 1]}).action == {"cell": [2, 1]}
    assert form.reply("Is (0,0) safe?", values={}) == Reply(message="Is (0,0) safe?")
    seer_form = family.reply_form("seer", PLAYER_OBS)
    assert seer_form.message and seer_form.reasoning and not seer_form.fields
    with pytest.raises(ValueError):
        family.protocol("builder", PLAYER_OBS, {})


# ---- exports ------------------------------------------------------------------------------------------------
def test_every_export_draws_the_episode(episode, tmp_path):
    first, last = turn_sheet(episode, 0, (1200, 750)), turn_sheet(episode, episode.last_turn, (1200, 750))
    assert first.size == (1200, 750) and distinct_colours(last) > 200
    assert np.abs(np.asarray(first, dtype=int) - np.asarray(last, dtype=int)).sum() > 0  # the X's appeared

    page = episode_html(episode)
    for message in episode.messages():
        assert html.escape(message.data["text"], quote=False) in page
    assert len(re.findall(r'<section id="turn-', page)) == episode.last_turn + 1
    assert page.count("<figcaption>3D scene after turn") == episode.last_turn + 1
    assert page.count("<figcaption>seer&#x27;s board</figcaption>") == episode.last_turn + 1

    gif = write_animation(episode, 0, episode.last_turn, tmp_path / "a.gif", camera="player", size=(320, 240))
    with Image.open(gif) as animation:
        assert animation.n_frames == episode.last_turn + 1
        frames = []
        for k in (0, animation.n_frames - 1):
            animation.seek(k)
            frames.append(np.asarray(animation.convert("RGB"), dtype=int))
    assert distinct_colours(Image.fromarray(frames[-1].astype(np.uint8))) > 20 and np.abs(frames[0] - frames[1]).sum()


def test_the_pictures_show_each_role_only_what_it_may_see(episode):
    views = get_family("tictactoe").load_views()
    seen = {e.role: e.data for e in episode.events if e.kind == "observation" and e.turn == 1}
    seer = views.observation_images(seen["seer"], episode, 1)["board"]
    player = views.observation_images(seen["player"], episode, 1)["board"]
    assert seer.size == player.size and np.abs(np.asarray(seer, int) - np.asarray(player, int)).sum() > 0
    red = lambda image: int(((np.asarray(image)[..., 0] > 180) & (np.asarray(image)[..., 1] < 80)).sum())  # noqa: E731
    assert red(seer) > 100 and red(player) == 0  # the hidden mines are drawn for the seer only
    assert list(views.turn_pictures(episode, 2)) == ["seer's board", "player's board"]
    assert red(views.turn_pictures(episode, 2)["player's board"]) > 100  # the mine stepped on, for both
    scene = views.scene(episode, 2)
    assert sum(i.kind == "mine" for i in scene) == 1 and sum(i.kind == "hidden" for i in scene) == 1
    assert sum(i.kind == "hidden" for i in views.scene(episode, 2, overlay=False)) == 0


# ---- the command line ---------------------------------------------------------------------------------------
def test_worlds_generate_run_report_and_replay_from_the_command_line(tmp_path, capsys):
    listed = cli(capsys, "worlds")
    assert "tictactoe: Hidden tic-tac-toe" in listed and "roles: seer, player" in listed
    assert "turns = 8" in listed and "lines (--group): row, column, diagonal" in listed
    out = cli(capsys, "generate", "tictactoe", "--n", "3", "--mines", "3", "--out", str(tmp_path / "boards"))
    assert f"wrote 3 boards to {tmp_path / 'boards'}" in out
    assert sorted(p.name for p in (tmp_path / "boards").iterdir()) == [f"board_00{k}.json" for k in range(3)] + [
        "tasks.json"
    ]
    run = tmp_path / "run"
    agents = ["--agent", "seer=oracle", "--agent", "player=scripted"]
    cli(capsys, "run", "--world", "tictactoe", "--tasks", str(tmp_path / "boards"), *agents, "--out", str(run))
    summaries = load_run(run).summaries
    assert [s["task_id"] for s in summaries] == ["board_000", "board_001", "board_002"]
    assert all(s["outcome"] == "success" and s["turns"] == 3 for s in summaries)

    table = cli(capsys, "report", str(run))
    assert re.search(r"episode\s+task\s+outcome\s+turns\s+errors\s+score\s+progress\s+win\s+mines_hit", table)
    report = json.loads(cli(capsys, "report", str(run), "--format", "json", "--group-by", "group"))
    assert report["aggregate"]["success_rate"] == 1.0 and report["aggregate"]["metrics"]["win"]["mean"] == 1.0

    for kind in ("png", "html", "gif"):
        target = tmp_path / f"replay.{kind}"
        cli(capsys, "replay", str(run), "--episode", "board_001-r0", "--export", kind, "--out", str(target))
        assert target.stat().st_size > 1000
    with Image.open(tmp_path / "replay.png") as sheet:
        assert sheet.size == (1600, 1000) and distinct_colours(sheet) > 200
    with Image.open(tmp_path / "replay.gif") as gif:
        assert gif.n_frames == 4
    assert "board_001-r0" in (tmp_path / "replay.html").read_text(encoding="utf-8")


def test_the_command_line_refuses_bad_options_in_one_line(tmp_path, capsys):
    base = ["run", "--world", "tictactoe", "--episodes", "1", "--out", str(tmp_path / "r")]
    assert main([*base, "--set", "lives=0"]) == 2
    assert "lives" in capsys.readouterr().err
    assert main([*base, "--agent", "seer=random"]) == 2
    assert "plays the player only" in capsys.readouterr().err


def test_the_readme_commands_are_the_ones_tested():
    readme = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    for command in ("pip install -e examples/hidden_tictactoe", "generate tictactoe", "run --world tictactoe"):
        assert command in readme


# ---- the openai agent against the local server ---------------------------------------------------------------
def first_user_text(body: dict[str, Any]) -> str:
    """The observation's text: the first user message (a re-ask appends more after it)."""
    return next(message_text(m) for m in body["messages"] if m.get("role") == "user")


def seer_says(body: dict[str, Any]) -> str:
    """A model seer: names the first cell of the safe line not marked yet (a ``+`` on its board)."""
    rows = re.findall(r"^ (\d)  (.) (.) (.)$", first_user_text(body), re.MULTILINE)
    cell = next((int(i), j) for i, *cells in rows for j, mark in enumerate(cells) if mark == "+")
    return f"Mark ({cell[0]},{cell[1]}) next, it is safe."


def player_says(body: dict[str, Any]) -> str:
    """A model player: chats first (unreadable), then after the re-ask moves where the seer said."""
    if len(body["messages"]) == 2:
        return "Sounds good, I'll follow the seer."
    said = re.findall(r"seer: Mark \((\d),(\d)\)", first_user_text(body))[-1]
    return f"MOVE {said[0]},{said[1]}"


@pytest.fixture
def model_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    monkeypatch.setenv(KEY_ENV, KEY)
    script = {"You are the seer in a game": seer_says, "You are the player in a game": player_says}
    with FakeOpenAIServer(scripted_replies(script, default=None)) as server:
        yield server


def test_both_roles_played_by_the_openai_agent_against_the_local_server(model_server, tmp_path, capsys):
    run = tmp_path / "live"
    agents = ["--agent", "seer=openai:fake-model", "--agent", "player=openai:fake-model"]
    settings = [
        f"{role}.{k}={v}"
        for role in ("seer", "player")
        for k, v in (("base_url", model_server.base_url), ("api_key_env", KEY_ENV), ("backoff_s", 0.001))
    ]
    options = [x for s in settings for x in ("--agent-setting", s)]
    cli(capsys, "run", "--world", "tictactoe", "--episodes", "2", *agents, *options, "--out", str(run))

    summaries = load_run(run).summaries
    assert [s["outcome"] for s in summaries] == ["success", "success"] and all(s["turns"] == 3 for s in summaries)
    episode = load_run(run).load_episode(summaries[0]["episode_id"])
    player_calls = [r for r in episode.raw if r["role"] == "player"]
    assert [r["call"] for r in player_calls] == [1, 2] * 3 and all(r["parse_error"] for r in player_calls[::2])
    from hidden_tictactoe.board import LINES

    target = [list(c) for c in LINES[episode.task["line"]]]
    assert [e.data["action"]["cell"] for e in episode.events if e.kind == "action"] == target
    images = [
        p
        for r in episode.raw
        for m in r["request"]["messages"]
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image"
    ]
    assert images and {p["name"] for p in images} == {"board"}  # each role's picture went to the model
    systems = {r["role"]: r["request"]["messages"][0]["content"] for r in episode.raw}
    assert "You are the seer" in systems["seer"] and "MOVE i,j" in systems["player"]
    assert KEY not in "".join(p.read_text(encoding="utf-8") for p in run.rglob("*.json*"))
    assert "usage" in summaries[0] and summaries[0]["usage"]["requests"] == len(episode.raw)
