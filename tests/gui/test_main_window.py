"""The whole window on the bundled demo run: every panel follows the playback, keys, exports, bad files."""

from __future__ import annotations

import gc
import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QEvent, QMimeData, QPointF, QRect, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication

from simlab.cli import main
from simlab.core.recording import load_run
from simlab.gui.app import open_window
from simlab.gui.fork_view import share, tile
from simlab.gui.main_window import MainWindow
from simlab.runner.batch import RunConfig, run
from simlab.runner.demo import DEMO_RUN
from simlab.worlds.blocks.model import Board
from tests.gui.conftest import wait_shown


def make_window(qtbot, tmp_path: Path) -> MainWindow:
    settings = QSettings(str(tmp_path / "simlab.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings)
    qtbot.addWidget(window)
    window.show()
    wait_shown(qtbot, window)
    return window


@pytest.fixture
def window(qtbot, tmp_path):
    win = make_window(qtbot, tmp_path)
    assert win.open_path(DEMO_RUN)
    yield win
    win.close()


def pieces_at(window: MainWindow, turn: int) -> int:
    state = window.playback.episode.state_at(turn)
    return len(list(Board.from_json(state["board"]).pieces()))


def test_every_panel_shows_the_turn_the_playback_is_at(window, qtbot):
    episode_id = load_run(DEMO_RUN).summaries[0]["episode_id"]
    assert window.open_episode_id(episode_id)
    for turn in (0, 5, 12, window.playback.last_turn):
        window.playback.seek(turn)
        assert window.world.count("block") == pieces_at(window, turn)
        assert window.dialogue.selected_turn == turn or turn == 0
        assert window.plots.cursor_turn() == turn
        assert window.timeline.label_text().startswith(f"turn {turn} of")
        assert f"turn {turn} of" in window.status_text()
        builder = window.agents.panel("builder")
        assert builder.shown_turn is None or builder.shown_turn <= turn


def test_window_shortcuts_step_play_and_jump(window, qtbot):
    window.open_episode_id(load_run(DEMO_RUN).summaries[0]["episode_id"])
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)  # no window manager: activation takes a moment
    focused = window.world.plotter.interactor  # keys must work even with the 3D view focused
    focused.setFocus()

    def press(key: Qt.Key) -> None:
        qtbot.keyClick(focused, key)

    press(Qt.Key.Key_Right)
    press(Qt.Key.Key_Right)
    assert window.playback.turn == 2
    press(Qt.Key.Key_Left)
    assert window.playback.turn == 1
    press(Qt.Key.Key_End)
    assert window.playback.turn == window.playback.last_turn
    press(Qt.Key.Key_Home)
    assert window.playback.turn == 0
    window.playback.set_speed(50)
    press(Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: window.playback.turn >= 3, timeout=5000)
    press(Qt.Key.Key_Space)
    assert not window.playback.playing


def test_next_error_and_failed_move_ghost(window):
    failed = next(s for s in load_run(DEMO_RUN).summaries if s["errors"] > 0)
    window.open_episode_id(failed["episode_id"])
    assert window.playback.next_error()
    turn = window.playback.turn
    result = next(e for e in window.playback.episode.events_of_turn(turn) if e.kind == "result")
    assert not result.data["ok"]
    ghosts = [i for i in window.world.items if i.kind == "failed"]
    assert ghosts and result.data["error"] in ghosts[0].tooltip


def test_browser_opens_the_episode_on_enter(window, qtbot):
    key = window.browser.visible_keys()[2]
    assert key.run == "demo_run"  # the window names its runs by their folders
    assert window.browser.select_episode(key.episode_id, key.run)
    window.browser.table.setFocus()
    with qtbot.waitSignal(window.playback.episodeChanged, timeout=3000):
        qtbot.keyClick(window.browser.table, Qt.Key.Key_Return)
    assert window.playback.episode.episode_id == key.episode_id
    assert window.agents.roles() == ["D1", "D2", "D3", "builder"]


def test_exports_write_a_picture_an_html_transcript_and_a_gif(window, tmp_path):
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    window.playback.seek(6)
    assert window.export_png(tmp_path / "window.png")
    pixels = np.asarray(Image.open(tmp_path / "window.png").convert("RGB"))
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 200
    assert window.export_png(tmp_path / "world.png", window.world)
    assert window.export_html(tmp_path / "t.html")
    html = (tmp_path / "t.html").read_text(encoding="utf-8")
    import html as html_lib

    for message in window.playback.episode.messages():
        assert html_lib.escape(message.data["text"], quote=False) in html
    assert window.export_animation(tmp_path / "a.gif", 0, 3)
    assert Image.open(tmp_path / "a.gif").n_frames == 4


def test_bad_episode_files_give_a_message_not_an_exception(window, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "simlab.episode", "version": 1, "episode_id": ', encoding="utf-8")
    assert not window.open_path(bad)
    assert "bad.json" in window.last_error and "line 1" in window.last_error
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({"format": "simlab.episode", "version": 99}), encoding="utf-8")
    assert not window.open_path(newer)
    assert "newer" in window.last_error and "version" in window.last_error
    assert window.run is not None  # the demo run that was open stays open


def test_a_damaged_run_still_opens_the_rest(qtbot, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(DEMO_RUN, run)
    with (run / "index.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"format": "simlab.index", "version": 1, "episode_id": "cut')
    victim = load_run(run).summaries[1]
    (run / victim["file"]).write_text("garbage", encoding="utf-8")
    window = make_window(qtbot, tmp_path)
    assert window.open_path(run)
    assert len(window.browser.visible_episode_ids()) == len(load_run(DEMO_RUN).summaries)
    assert not window.open_episode_id(victim["episode_id"])
    assert victim["file"].split("/")[-1] in window.last_error
    assert window.open_episode_id(load_run(run).summaries[0]["episode_id"])


def test_a_run_with_thousands_of_episodes_fills_the_browser(qtbot, tmp_path):
    run = tmp_path / "big"
    shutil.copytree(DEMO_RUN, run)
    line = json.loads((run / "index.jsonl").read_text(encoding="utf-8").splitlines()[0])
    with (run / "index.jsonl").open("w", encoding="utf-8") as f:
        for k in range(3000):
            f.write(json.dumps({**line, "episode_id": f"ep-{k:05d}", "score": k / 3000}) + "\n")
    window = make_window(qtbot, tmp_path)
    assert window.open_path(run)
    assert len(window.browser.visible_episode_ids()) == 3000


def test_drag_and_drop_of_a_run_folder_opens_it(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(DEMO_RUN))])
    event = QDropEvent(
        QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    window.dropEvent(event)
    assert window.run is not None and window.run.path == DEMO_RUN


def test_recent_files_and_layout_are_remembered(qtbot, tmp_path):
    first = make_window(qtbot, tmp_path)
    first.open_path(DEMO_RUN)
    first.docks["Plots"].hide()
    first.close()
    second = make_window(qtbot, tmp_path)
    assert second.recent()[0] == str(DEMO_RUN.resolve())
    assert not second.docks["Plots"].isVisible()
    second.reset_layout()
    assert second.docks["Plots"].isVisible()
    second.close()


def test_help_lists_the_shortcuts(window):
    text = window.shortcuts_text()
    for keys in ("Space", "Left / Right", "Home / End", "Ctrl+E", "Ctrl+F"):
        assert keys in text


def test_monkey_300_random_actions(window, qtbot, tmp_path):
    """Random keys, clicks, filters, searches, camera presets and exports: nothing may raise."""
    r = random.Random(7)
    ids = window.browser.visible_episode_ids()
    window.open_episode_id(ids[0])
    keys = [Qt.Key.Key_Left, Qt.Key.Key_Right, Qt.Key.Key_Home, Qt.Key.Key_End, Qt.Key.Key_Space]
    actions = [
        lambda: qtbot.keyClick(window, r.choice(keys)),
        lambda: window.playback.next_error(),
        lambda: window.open_episode_id(r.choice(ids)),
        lambda: window.playback.seek(r.randint(-3, 30)),
        lambda: window.world.set_camera(r.choice([*window.world.cameras, "nope"])),
        lambda: window.world.target_mode.setCurrentIndex(r.randrange(window.world.target_mode.count())),
        lambda: window.dialogue.set_show_reasoning(r.random() < 0.5),
        lambda: window.dialogue.search(r.choice(["block", "layer", "zzz", ""])),
        lambda: window.dialogue.next_hit(),
        lambda: window.browser.select_episode(r.choice(ids), "demo_run"),
        lambda: window.docks[r.choice(list(window.docks))].setVisible(r.random() < 0.8),
        lambda: window.world.set_layer_visible(r.choice(window.world.layer_names()), r.random() < 0.6),
        lambda: window.world.select(r.choice([item.key for item in window.world.items] + ["", "block:9,9:0"])),
    ]
    exports = [  # rarer: an HTML transcript renders every turn
        lambda: window.export_png(tmp_path / "m.png", r.choice([None, window.world, window.plots])),
        lambda: window.export_html(tmp_path / "m.html"),
    ]
    for _ in range(300):
        r.choice(exports if r.random() < 0.02 else actions)()
        qtbot.wait(1)
    window.playback.pause()
    assert 0 <= window.playback.turn <= window.playback.last_turn


def test_fork_continues_from_the_turn_in_a_window_beside_the_original(window, qtbot):
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    original = window.playback.episode
    window.playback.seek(5)
    twin = window.fork("builder=oracle")
    assert twin is not None and twin.isVisible()
    qtbot.addWidget(twin)
    session = twin.live.session
    qtbot.waitUntil(lambda: session.state in ("finished", "failed"), timeout=20000)
    fork = session.episode
    assert session.state == "finished" and fork.source == {"forked_from": original.episode_id, "turn": 5}
    prefix = [e.to_json() for e in original.events if e.turn <= 5 and e.kind != "observation"]
    assert [e.to_json() for e in fork.events if e.kind != "observation"][: len(prefix)] == prefix
    assert fork.agents["builder"] == "oracle" and twin.geometry().x() > window.geometry().x()
    assert not window.fork("nonsense=nobody") and "Could not fork" in window.last_error
    twin.close()


def test_a_fork_window_opens_on_the_turn_forked_at_with_each_replayed_event_once(window, qtbot):
    """The fork's window shows the replayed turns as soon as it is made (before the worker playing on has
    handed over anything), at the turn forked at, as the original shows it; the worker adds only what follows."""
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    window.playback.seek(4)
    twin = window.fork("builder=oracle")
    assert twin is not None
    qtbot.addWidget(twin)
    assert twin.playback.turn == 4 and twin.playback.last_turn == 4  # no event loop turn yet: the replay alone
    assert [item.key for item in twin.world.items] == [item.key for item in window.world.items]
    session = twin.live.session
    qtbot.waitUntil(lambda: session.state in ("finished", "failed"), timeout=20000)
    shown, played = ([e.to_json() for e in ep.events] for ep in (session.episode, session.playing.episode))
    assert session.state == "finished" and shown == played
    twin.close()


def _no_overlap(window, twins, area):
    frames = [w.frameGeometry() for w in (window, *twins)]
    for k, a in enumerate(frames):
        assert area.contains(a.topLeft()) and a.right() <= area.right(), (a, area)
        assert not any(a.intersects(b) for b in frames[k + 1 :]), f"two windows overlap: {frames}"
    assert [a.x() for a in frames] == sorted(a.x() for a in frames)  # the original first, forks to its right


def test_window_widths_share_the_screen_above_each_minimum():
    assert share(1600, [856, 617]) == [856, 744]
    assert share(1600, [300, 300]) == [800, 800]
    assert share(1600, [856, 617, 617]) == [856, 617, 617]  # does not fit: each at its minimum
    assert share(2600, [856, 617, 617]) == [866, 866, 866]
    assert share(1600, [1000, 200, 200]) == [1000, 300, 300]  # the rest split among the others


def test_forks_tile_beside_the_original_step_with_it_and_show_where_they_differ(window, qtbot):
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    original = window.playback.episode
    window.playback.seek(3)
    twins = [window.fork("builder=oracle")]
    qtbot.wait(50)  # the second tiling, once the fork window's docks are laid out
    _no_overlap(window, twins, window.screen().availableGeometry())
    twins.append(window.fork("builder=random"))  # three windows need more than this 1600-pixel screen
    qtbot.wait(50)
    assert not window.forks_fit  # said in the status bar too, until the fork's own end overwrites it
    for twin in twins:
        qtbot.addWidget(twin)
        qtbot.waitUntil(lambda t=twin: t.live.session.state in ("finished", "failed"), timeout=20000)
    wide = QRect(0, 0, 2600, 1000)  # a wider desktop: all three side by side
    assert tile([window, *twins], wide)
    _no_overlap(window, twins, wide)
    first = twins[0]
    first.playback.seek(1)  # linked: the original and the other fork follow
    assert window.playback.turn == 1 and twins[1].playback.turn == 1
    window.playback.seek(original.last_turn)
    assert first.playback.turn == min(original.last_turn, first.playback.last_turn)
    view = first.docks["Fork diff"].widget()
    diff = view.diff
    assert diff.from_turn == 3 and diff.turns[0].same  # the fork turn itself is replayed
    assert first.docks["Fork diff"].isVisible() and not first.docks["Episodes"].isVisible()
    if diff.first_difference is not None:
        assert f"first differ at turn {diff.first_difference}" in view.headline()
        assert f"turn:{diff.first_difference}" in view.view.toHtml()
    rows = {row[0]: row for row in diff.outcome}
    assert rows["outcome"] == ("outcome", original.summary["outcome"], first.live.session.episode.summary["outcome"])
    view.linked.setChecked(False)
    first.playback.seek(2)
    assert window.playback.turn == original.last_turn  # unlinked: the original stays
    view.view.anchorClicked.emit(QUrl(f"turn:{diff.turns[1].turn}"))
    assert first.playback.turn == diff.turns[1].turn
    for twin in twins:
        twin.close()


def test_a_forks_tiling_is_not_the_layout_the_next_start_opens_with(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path)
    assert window.open_path(DEMO_RUN)
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    own = window.size()
    agents = window.docks["Agents"].width()
    twin = window._twin()  # the window a fork opens, tiled beside this one as a fork's is
    qtbot.addWidget(twin)
    window._beside(twin)
    qtbot.wait(50)
    tiled = window.width()
    assert tiled < own.width()  # tiled beside the fork for the time being
    twin.close()
    window.close()
    again = make_window(qtbot, tmp_path)  # the same settings file: the next start
    assert again.width() > tiled + 200 and abs(again.docks["Agents"].width() - agents) <= 10
    again.close()


def test_vtks_own_keys_do_not_reach_the_3d_view(window, qtbot):
    window.open_episode_id(load_run(DEMO_RUN).summaries[0]["episode_id"])
    window.playback.seek(window.playback.last_turn)
    view = window.world.plotter
    view.interactor.setFocus()

    def representations() -> list[int]:
        return [actor.GetProperty().GetRepresentation() for actor in view.renderer.GetActors()]

    before = representations()
    assert 2 in before  # the blocks are surfaces
    for key in ("w", "3", "s", "W", "e", "j", "p", "f"):
        qtbot.keyClicks(view.interactor, key)
    assert representations() == before  # "w" would turn the blocks to wireframes, like the target's
    assert not view.render_window.GetStereoRender()  # "3" would have switched on red/blue stereo
    assert window.isVisible() and window.world.count("block") == pieces_at(window, window.playback.turn)


def test_blocks_layers_switch_parts_of_the_scene_and_a_selected_block_follows_the_turns(window):
    window.open_episode_id(load_run(DEMO_RUN).summaries[0]["episode_id"])
    world = window.world
    window.playback.seek(window.playback.last_turn)
    blocks = world.count("block")
    assert blocks and world.layer_names() == ["Target", "Placed blocks", "This turn's move", "Directors"]
    world.set_layer_visible("Directors", False)
    assert world.count("wall") == 0 and world.count("frustum") == 0 and world.count("block") == blocks
    world.set_layer_visible("Placed blocks", False)
    assert world.count("block") == 0
    world.set_layer_visible("Placed blocks", True)
    key = next(item.key for item in world.items if item.kind == "block")
    found = world.select(key)
    assert found is not None and found.title in world.selection.text() and world.count("selection") >= 1
    window.playback.seek(0)  # the board is empty at turn 0: the same place now holds nothing
    assert "Nothing on the board" in world.selection.text() or "Target:" in world.selection.text()
    assert world.select("floor") is None and "Click an object" in world.selection.text()
    assert world.count("selection") == 0


def test_the_app_opens_at_an_episode_and_a_turn(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # the window's settings stay out of the user's
    episode_id = load_run(DEMO_RUN).summaries[2]["episode_id"]
    window = open_window(DEMO_RUN, episode=episode_id, turn=7)
    qtbot.addWidget(window)
    assert window.playback.episode.episode_id == episode_id and window.playback.turn == 7
    assert window.timeline.label_text().startswith("turn 7 of")
    missing = open_window(DEMO_RUN, episode="no_such_episode")
    qtbot.addWidget(missing)
    assert "no episode 'no_such_episode'" in missing.statusBar().currentMessage()
    window.close()
    missing.close()


def test_a_folder_that_is_not_a_run_says_what_it_is_and_how_to_play_it(window, tmp_path):
    tasks = tmp_path / "boards495"
    assert main(["generate", "boards", "--n", "3", "--out", str(tasks)]) == 0
    assert not window.open_path(tasks)
    assert "not a SimLab run: no run.json" in window.last_error and "--tasks" in window.last_error
    shown = window.statusBar().currentMessage()
    assert "not a SimLab run" in shown and "--tasks" in shown  # the reason, in the status bar too
    assert window.run is not None  # the run that was open stays open


def test_the_timeline_shows_turn_numbers_at_its_default_height(window, qtbot):
    window.open_episode_id(load_run(DEMO_RUN).summaries[0]["episode_id"])
    scrubber = window.timeline.scrubber
    qtbot.waitUntil(lambda: scrubber.height() > 0)
    assert scrubber.height() >= scrubber.NUMBERS_FROM
    band = scrubber.grab().toImage().copy(0, scrubber.height() - 16, scrubber.width(), 14)
    colours = {band.pixelColor(x, y).name() for x in range(0, band.width(), 2) for y in range(band.height())}
    assert len(colours) > 2  # the numbers' glyphs, not an empty band


def test_the_fork_dialog_offers_the_agents_each_role_can_have_and_bad_specs_say_what_is_expected(window, qtbot):
    from simlab.gui.live import ForkDialog

    window.open_episode_id(window.browser.visible_episode_ids()[0])
    dialog = ForkDialog(window.playback.episode, 3, window)
    qtbot.addWidget(dialog)
    builder = dialog.role_edits["builder"]
    assert builder.currentText() == window.playback.episode.agents["builder"]
    assert {"oracle", "scripted", "random", "human"} <= {builder.itemText(k) for k in range(builder.count())}
    dialog.role_edits["builder"].setCurrentText("oracle")
    assert "builder=oracle" in dialog.specs_text()
    assert not window.fork("builder oracle")
    assert "'builder oracle': expected ROLE=SPEC" in window.last_error


def rss_mib() -> float:
    """This process's resident memory (Linux)."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS"))


@pytest.mark.parametrize("world", ["blocks", "rooms"])
def test_reopening_episodes_does_not_grow_memory(qtbot, tmp_path, world):
    out = tmp_path / world
    run(RunConfig(world, seed=0, episodes=4, agents=[]), out)
    window = make_window(qtbot, tmp_path)
    window.resize(1600, 1000)
    assert window.open_path(out)
    ids = window.browser.visible_episode_ids()

    def reopen(times: int) -> None:
        for k in range(times):
            window.open_episode_id(ids[k % len(ids)])
            window.playback.seek(window.playback.last_turn)
            QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)  # what the event loop does

    reopen(2 * len(ids))  # warm-up: every episode's pictures made once, caches filled
    gc.collect()
    before = rss_mib()
    reopen(50)
    gc.collect()
    assert rss_mib() - before < 25  # measured here: +2.1 MiB (blocks), +0.0 MiB (rooms)
    window.close()


def test_the_window_fits_a_small_screen_with_every_dock_on_it(window, qtbot):
    small = QRect(0, 0, 1366, 768)
    window.fit_to_screen(small)
    qtbot.wait(50)
    assert window.frameGeometry().width() <= small.width() and window.frameGeometry().height() <= small.height()
    for dock in window.docks.values():
        corner = dock.mapTo(window, dock.rect().bottomRight())
        assert corner.x() <= window.width() and corner.y() <= window.height()  # no dock past the window's edge
    assert window.statusBar().geometry().bottom() <= window.height()
