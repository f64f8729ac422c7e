"""Regenerate the README's screenshots of the app and of a headless turn sheet.

Run under a display or Xvfb: ``xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tools/make_screenshots.py``
It writes, in docs/images/: the demo run at turns 3, 9 and 20, the app's icons, a rooms episode (and its Agents
dock with the pictures as sent and annotated), a boards episode, a person playing the blocks builder and one
playing the boards robot (their role windows), a Color puzzle, a turn sheet, a model-played blocks episode's Raw
tab (its calls as chats, against the local test server), a thinking model's private reasoning in a COMMA
episode, two runs compared (the browser's run column and the Compare dock), the Search dock with a turn noted, a
judged run (the Judges tab, the Figures tab on a judge's figure), and the editor on the example room and on a
small structure.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import random
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QColor, QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QToolBar

from simlab.agents.openai_agent import AgentSettings
from simlab.analysis.episode_diff import episode_diff
from simlab.core.plugins import discover
from simlab.core.recording import load_run
from simlab.gui.agent_panels import ANNOTATED, AS_SENT
from simlab.gui.dialogue import JUDGES_TAB
from simlab.gui.icons import WINDOW_ICON, app_icon
from simlab.gui.live import make_session
from simlab.gui.main_window import MainWindow
from simlab.render.turn_sheet import turn_sheet
from simlab.runner.batch import RunConfig, run
from simlab.runner.demo import DEMO_RUN
from simlab.runner.judging import find_judges, judge_run
from simlab.testing.openai_server import FakeOpenAIServer, last_user_text, scripted_replies, system_text
from simlab.testing.scripts import BLOCKS_SCRIPT

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images"
EPISODE = "structure_002-r0"  # a complex structure with hidden blocks and engine errors
TURNS = (3, 9, 20)
ROOMS_EPISODE_INDEX = 1  # a counting question: the Helper's report names many objects
PANELS_SIZE = (960, 700)  # the Agents dock floated: both rooms panels side by side, pictures large
BOARDS_EPISODE_INDEX, BOARDS_TURN = 1, 5
COMPARE_AFTER, COMPARE_HEIGHT = 1, 420  # shown the turn after the runs first differ, in a taller dock
JUDGED_TURN = 3
SEARCH_QUERY, SEARCH_WIDTH = "wrong_colour", 560  # the engine's mistake code, a wider dock for the snippets
SEARCH_MARKS, SEARCH_BOOKMARK = ((7, "layer3"),), 10  # turn 7 asks for layer 3; turn 10 repeats turn 1's error


def settle(app: QApplication, rounds: int = 20) -> None:
    for _ in range(rounds):
        app.processEvents()


def new_window(tmp: Path) -> MainWindow:
    window = MainWindow(QSettings(str(tmp / "s.ini"), QSettings.Format.IniFormat))
    window.resize(1600, 1000)
    window.show()
    return window


def demo_turns(app: QApplication, tmp: Path) -> None:
    window = new_window(tmp)
    window.open_path(DEMO_RUN)
    window.open_episode_id(EPISODE if EPISODE in {s["episode_id"] for s in load_run(DEMO_RUN).summaries} else "")
    for turn in TURNS:
        window.playback.seek(turn)
        settle(app)
        save(window.export_png, f"app_turn_{turn:02d}.png")
    window.close()


def icons(app: QApplication, tmp: Path, width: int = 400, size: int = 64) -> None:
    """The window icon beside the main toolbar's actions, both at the size the app shows them."""
    window = new_window(tmp)
    settle(app)
    bar = window.findChild(QToolBar, "toolbar-main").grab()
    bar = bar.copy(0, 0, width, bar.height())
    picture = QPixmap(width + size + 24, size + 8)
    picture.fill(QColor("white"))
    painter = QPainter(picture)
    painter.drawPixmap(4, 4, app_icon(WINDOW_ICON).pixmap(size, size))
    painter.drawPixmap(size + 16, (picture.height() - bar.height()) // 2, bar)
    painter.end()
    save(lambda path: picture.save(str(path)), "app_icons.png")
    window.close()


def open_recorded(
    app: QApplication, tmp: Path, config: RunConfig, index: int, turn: int, folder: str | None = None
) -> MainWindow:
    """Run ``config`` into ``tmp/folder`` (its world's name by default) and open its episode ``index`` at
    ``turn`` in a new window."""
    out = tmp / (folder or config.world)
    run(config, out)
    window = new_window(tmp)
    window.open_path(out)
    window.open_episode_id(load_run(out).summaries[index]["episode_id"])
    window.playback.seek(turn)
    settle(app)
    return window


def recorded(app: QApplication, tmp: Path, config: RunConfig, index: int, turn: int, name: str) -> None:
    """Run ``config``, open its episode ``index`` at ``turn`` and save the window as ``name``."""
    window = open_recorded(app, tmp, config, index, turn)
    save(window.export_png, name)
    window.close()


def rooms(app: QApplication, tmp: Path) -> None:
    config = RunConfig("rooms", seed=0, episodes=5, agents=["answerer=oracle", "helper=oracle"])
    recorded(app, tmp, config, ROOMS_EPISODE_INDEX, 2, "app_rooms.png")


def agent_panel_modes(app: QApplication, tmp: Path) -> None:
    """The Agents dock, floated and enlarged, on the rooms episode at turn 2: the pictures as sent (each agent's
    own camera picture, nothing drawn on it) and annotated (the named objects outlined, the Answerer's question
    card with the answers), the annotations marked NOT SENT."""
    config = RunConfig("rooms", seed=0, episodes=5, agents=["answerer=oracle", "helper=oracle"])
    window = open_recorded(app, tmp, config, ROOMS_EPISODE_INDEX, 2, "rooms-modes")
    dock = window.docks["Agents"]
    dock.setFloating(True)
    dock.resize(*PANELS_SIZE)
    for mode, name in ((AS_SENT, "app_panels_as_sent.png"), (ANNOTATED, "app_panels_annotated.png")):
        window.agents.set_mode(mode)
        settle(app)
        save(lambda path: window.export_png(path, window.agents), name)
    window.close()


def boards(app: QApplication, tmp: Path) -> None:
    """A noisy robot on a 5-component target, at a turn whose code failed and went back to the robot."""
    settings = {"target_view": "layers", "state_view": "image"}
    config = RunConfig("boards", seed=0, episodes=6, agents=["robot=noisy:0.4"], settings=settings)
    recorded(app, tmp, config, BOARDS_EPISODE_INDEX, BOARDS_TURN, "app_boards.png")


def puzzles(app: QApplication, tmp: Path) -> None:
    """The manual-reading expert guiding the scripted solver through a Color puzzle, mid-way."""
    config = RunConfig("puzzles", seed=0, episodes=4, agents=["expert=manual"], groups=["color"])
    recorded(app, tmp, config, 0, 3, "app_puzzles.png")


def human(app: QApplication, tmp: Path, world: str, role: str, name: str, **settings: object) -> None:
    """A person playing ``role``: their role window at the first question."""
    window = new_window(tmp)
    session = make_session(world, 0, {role: "human"}, settings=settings)
    asks: list[str] = []
    session.needsHuman.connect(lambda asked, _observation: asks.append(asked))
    controller = window.start_live(session)
    while not asks:
        app.processEvents()
    role_window = controller.role_windows[role]
    role_window.resize(1100, 870)
    settle(app)
    role_window.grab().save(str(OUT / name))
    print(f"wrote {OUT / name}")
    controller.close()
    window.close()


def model_window(app: QApplication, tmp: Path, config: RunConfig, server: FakeOpenAIServer, **model: Any) -> MainWindow:
    """Play ``config`` with its model roles (``openai:...``) against ``server`` and open its first episode at
    turn 1; ``model`` are more agent settings."""
    os.environ["SIMLAB_SCREENSHOT_KEY"] = "sk-local"  # the local server takes any key
    roles = [spec.split("=")[0] for spec in config.agents if "=openai:" in spec]
    out = tmp / f"model-{config.world}"
    with server:
        settings = {"base_url": server.base_url, "api_key_env": "SIMLAB_SCREENSHOT_KEY", **model}
        run(dataclasses.replace(config, agent_settings=dict.fromkeys(roles, settings)), out, registry=discover())
    window = new_window(tmp)
    window.open_path(out)
    window.open_episode_id(load_run(out).summaries[0]["episode_id"])
    window.playback.seek(1)
    return window


def model_calls(app: QApplication, tmp: Path) -> None:
    """A blocks episode played by the model agent against the local test server: the Raw tab at turn 1."""
    agents = ["director=openai:local-model", "builder=openai:local-model"]
    config = RunConfig("blocks", seed=0, episodes=1, agents=agents, settings={"turns": 2})
    server = FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT, default=None))
    window = model_window(app, tmp, config, server, prices={"prompt": 0.15, "completion": 0.6})
    window.dialogue.tabs.setCurrentIndex(1)
    window.docks["Dialogue"].setFloating(True)
    window.docks["Dialogue"].resize(900, 760)
    settle(app)
    save(lambda path: window.export_png(path, window.dialogue), "app_raw_calls.png")
    window.close()


def thinking_reply(body: dict) -> str:
    """A reasoning model playing a COMMA role: it thinks (of its PIN, as the solver), then speaks."""
    found = re.search(r"Your PIN is (\d+)", last_user_text(body))
    if "You are the expert" in system_text(body):
        return "<think>The ATM manual: the solver must enter the PIN alone.</think>What does the screen show?"
    pin = found.group(1) if found else "?"
    return f"<think>My PIN is {pin}; I must type it, never say it.</think>I see a keypad and a screen. What now?"


def private_reasoning(app: QApplication, tmp: Path) -> None:
    """A thinking model in both COMMA roles, its reasoning split out by the server: turn 2 with both roles'
    private reasoning open in their panels and shown in the dialogue (grey italics), never in a message."""
    agents = ["solver=openai:thinking-model", "expert=openai:thinking-model"]
    config = RunConfig("puzzles", seed=0, episodes=1, agents=agents, settings={"turns": 3}, groups=["atm"])
    server = FakeOpenAIServer(thinking_reply, reasoning_field="reasoning_content")
    window = model_window(app, tmp, config, server, text_only=True)
    window.playback.seek(2)
    window.dialogue.set_show_reasoning(True)
    for role in ("solver", "expert"):
        window.agents.panel(role).reasoning.button.setChecked(True)
    settle(app)
    save(window.export_png, "app_private_reasoning.png")
    window.close()


def compare(app: QApplication, tmp: Path) -> None:
    """Two blocks runs of the same tasks open together, the builder mishearing now and then in one of them: the
    browser's run column and the Compare dock, made taller, on the episode whose runs part latest, a few turns
    after they do."""
    runs = []
    for name, builder in (("scripted", "scripted"), ("slips-0.1", "scripted:0.1")):
        runs.append(tmp / "compare" / name)
        run(RunConfig("blocks", seed=0, episodes=6, agents=[f"builder={builder}"]), runs[-1])
    mine, theirs = load_run(runs[0]), load_run(runs[1])
    parts = {
        s["episode_id"]: episode_diff(mine.load_episode(s["episode_id"]), theirs.load_episode(s["episode_id"]))
        for s in mine.summaries
    }
    latest = max(parts, key=lambda episode_id: parts[episode_id].first_difference or 0)
    window = new_window(tmp)
    window.open_runs(runs)
    window.docks["Compare"].raise_()
    window.resizeDocks([window.docks["Compare"]], [COMPARE_HEIGHT], Qt.Orientation.Vertical)
    window.open_episode_id(latest, "scripted")
    window.playback.seek((parts[latest].first_difference or 0) + COMPARE_AFTER)
    settle(app)
    save(window.export_png, "app_compare.png")
    window.close()


def search_and_notes(app: QApplication, tmp: Path) -> None:
    """The demo run searched for the builder's wrong-colour mistakes (the Search dock in front of the browser,
    made wider), the first result opened, and that turn tagged, noted and bookmarked: the mark on the timeline
    and in the dialogue."""
    sidecars = shutil.ignore_patterns("search.sqlite", "notes.json")  # the demo's own, if the app made them
    folder = Path(shutil.copytree(DEMO_RUN, tmp / "search" / "demo_run", ignore=sidecars))
    window = new_window(tmp)
    window.open_path(folder)
    window.actions_by_name["search_run"].trigger()
    window.resizeDocks([window.docks["Search"]], [SEARCH_WIDTH], Qt.Orientation.Horizontal)
    window.search.search(SEARCH_QUERY)
    while window.search.busy:
        settle(app, 1)
    window.search.activate(0)
    turn = window.playback.turn
    for other, tag in SEARCH_MARKS:  # marks on other turns, to show on the timeline beside the handle
        window.playback.seek(other)
        window.notes.set_tags([tag])
    window.playback.seek(SEARCH_BOOKMARK)
    window.notes.toggle_bookmark()
    window.playback.seek(turn)
    window.notes.set_tags(["misheard", "cell"])
    window.notes.set_note("D1 said row 1 column 0; the builder put the red block at (1,1)")
    window.notes.toggle_bookmark()
    window.search.results.setCurrentRow(0)
    settle(app)
    save(window.export_png, "app_search.png")
    window.close()


def judge_reply(body: dict) -> str:
    """A stand-in judge for the screenshot (no model here): answers every question of the prompt, varied but
    the same for the same prompt and run seed, each with a reason, in the asked form."""
    text = last_user_text(body)
    pick = random.Random(hashlib.sha256(f"{text}{body.get('seed')}".encode()).hexdigest())
    reasons = {
        "Yes": "the message names the cell, the layer and the block",
        "No": "it repeats what another director said",
        "Unclear": "the layer is implied, never said",
        "N/A": "the previous move succeeded",
    }
    out = []
    for line in text.splitlines():
        code = line.split(":", 1)[0]
        if code[:2] in ("SG", "MM", "PS") and code[2:].isdigit():
            answer = "N/A" if code == "PS6" else pick.choices(["Yes", "No", "Unclear"], weights=(6, 2, 1))[0]
            out.append(f"{code}: {answer} | {reasons[answer]}")
    return "\n".join(out)


def judges(app: QApplication, tmp: Path) -> None:
    """A blocks run judged by craft-ps and craft-mm against the local test server (a stand-in judge): the
    Judges tab at a turn, and the Figures tab on the judge's figure."""
    folder = tmp / "judged"
    run(RunConfig("blocks", seed=0, episodes=3, agents=["builder=scripted:0.3"], settings={"turns": 8}), folder)
    with FakeOpenAIServer(judge_reply) as server:
        os.environ["SIMLAB_SCREENSHOT_KEY"] = "sk-local"
        settings = AgentSettings(model="local-judge", base_url=server.base_url, api_key_env="SIMLAB_SCREENSHOT_KEY")
        judge_run(load_run(folder), find_judges("blocks", ["craft-ps", "craft-mm"]), settings)
    window = new_window(tmp)
    window.open_path(folder)
    window.open_episode_id(load_run(folder).summaries[0]["episode_id"])
    window.playback.seek(JUDGED_TURN)
    window.dialogue.tabs.setCurrentIndex(JUDGES_TAB)
    window.docks["Dialogue"].setFloating(True)
    window.docks["Dialogue"].resize(900, 760)
    settle(app)
    save(lambda path: window.export_png(path, window.dialogue), "app_judges.png")
    window.docks["Dialogue"].setFloating(False)
    window.docks["Figures"].raise_()
    settle(app)
    window.figures.select("judge_craft-ps")
    window.docks["Figures"].setFloating(True)
    window.docks["Figures"].resize(760, 560)
    for _ in range(200):  # the panel reads the run in a thread
        settle(app)
        if not window.figures.busy():
            break
    window.figures.select("judge_craft-ps")
    settle(app)
    save(lambda path: window.export_png(path, window.figures), "app_figures.png")
    window.close()


def editors(app: QApplication) -> None:
    """The editor on the bundled example room (an object selected, its rays drawn) and on a small structure."""
    from simlab.gui.editor import EditorWindow
    from simlab.worlds import open_document

    room = EditorWindow(open_document(ROOT / "scenes" / "rooms" / "example_room_000.json"))
    room.resize(1600, 1000)
    room.show()
    room.select("armchair_1")
    settle(app)
    save(lambda path: room.grab().save(str(path)), "editor_rooms.png")
    room.close()
    blocks = EditorWindow(open_document("blocks"))
    blocks.resize(1600, 1000)
    blocks.show()
    for name in ("large blue (domino)", "small red", "small green", "small yellow", "large orange (domino)"):
        blocks.add(name)
    settle(app)
    save(lambda path: blocks.grab().save(str(path)), "editor_blocks.png")
    blocks.undo_stack.setClean()
    blocks.close()


def sheet() -> None:
    episode = load_run(DEMO_RUN).load_episode(EPISODE)
    turn_sheet(episode, 9).save(OUT / "replay_turn_sheet.png")
    print(f"wrote {OUT / 'replay_turn_sheet.png'}")


def save(export: Callable[[Path], object], name: str) -> None:
    export(OUT / name)
    print(f"wrote {OUT / name}")


def main() -> int:
    app = QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        demo_turns(app, tmp)
        icons(app, tmp)
        rooms(app, tmp)
        agent_panel_modes(app, tmp)
        boards(app, tmp)
        puzzles(app, tmp)
        human(app, tmp, "blocks", "builder", "app_human_builder.png", turns=6)
        human(app, tmp, "boards", "robot", "app_human_robot.png")
        sheet()
        model_calls(app, tmp)
        private_reasoning(app, tmp)
        compare(app, tmp)
        search_and_notes(app, tmp)
        judges(app, tmp)
        editors(app)
    return 0


if __name__ == "__main__":
    sys.exit(main())
