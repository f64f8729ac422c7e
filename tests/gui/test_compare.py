"""Several runs open in one window: the browser's run column and filter, episodes known by (run, id), the
Compare dock against the recorded events, mixing families refused, and the command line's several folders."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QTabBar

from simlab.cli import main
from simlab.core.episode import Episode
from simlab.core.recording import load_run
from simlab.gui.browser import ALL_RUNS, EpisodeKey
from simlab.gui.compare_view import FIRST_MARK, ONE_RUN
from simlab.gui.main_window import MainWindow
from simlab.runner.batch import RunConfig, run
from tests.gui.conftest import wait_shown
from tests.gui.test_main_window import make_window

SHOWN = ("message", "action", "result", "protocol_error")  # what a transcript words (reasoning is private)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two blocks runs of the same four tasks (seed 0) by different builders, and one of the first two tasks
    only."""
    root = tmp_path_factory.mktemp("compare")
    made = {}
    for name, builder, episodes in (("scripted", "scripted", 4), ("random", "random", 4), ("short", "oracle", 2)):
        made[name] = root / name
        config = RunConfig("blocks", seed=0, episodes=episodes, agents=[f"builder={builder}"], settings={"turns": 8})
        run(config, made[name])
    return made


@pytest.fixture
def window(qtbot, tmp_path, runs):
    win = make_window(qtbot, tmp_path)
    assert win.open_runs([runs["scripted"], runs["random"]])
    yield win
    win.close()


def _public(episode: Episode, turn: int) -> list[tuple]:
    """What happened in ``turn`` as recorded, to check the comparison against (not through its code)."""
    return [(e.kind, e.role, sorted(e.data.items())) for e in episode.events_of_turn(turn) if e.kind in SHOWN]


def _open_from_browser(window: MainWindow, qtbot, key: EpisodeKey) -> None:
    assert window.browser.select_episode(key.episode_id, key.run)
    window.browser.table.setFocus()
    with qtbot.waitSignal(window.playback.episodeChanged, timeout=3000):
        qtbot.keyClick(window.browser.table, Qt.Key.Key_Return)


def _show_compare(window: MainWindow, qtbot) -> None:
    window.docks["Compare"].raise_()
    qtbot.waitUntil(window.compare.isVisible, timeout=3000)


# ---- the browser ----------------------------------------------------------------------------------------------
def test_the_browser_has_a_run_column_and_a_run_filter(window, runs):
    browser = window.browser
    header = [browser.model.headerData(c, Qt.Orientation.Horizontal) for c in range(browser.model.columnCount())]
    assert header[:2] == ["Run", "Episode"]
    assert list(window.runs) == ["scripted", "random"] and window.windowTitle() == "SimLab - 2 runs"
    keys = browser.visible_keys()
    ids = [s["episode_id"] for s in load_run(runs["scripted"]).summaries]
    assert keys == [EpisodeKey("scripted", e) for e in ids] + [EpisodeKey("random", e) for e in ids]
    assert browser.model.index(4, 0).data() == "random" and browser.count_text() == "8 of 8 episodes in 2 runs"
    combo = browser.run_combo
    assert combo.isVisibleTo(browser)
    assert [combo.itemText(k) for k in range(combo.count())] == [ALL_RUNS, "scripted", "random"]
    combo.setCurrentIndex(2)
    assert browser.visible_keys() == [EpisodeKey("random", e) for e in ids]
    assert browser.count_text() == "4 of 8 episodes in 2 runs"
    browser.search_edit.setText(ids[1])  # the run filter and the others narrow together
    assert browser.visible_keys() == [EpisodeKey("random", ids[1])]
    browser.search_edit.clear()
    combo.setCurrentIndex(0)
    assert len(browser.visible_keys()) == 8
    assert window.close_run("random")  # one run again: no run column, no run menu
    assert browser.model.headerData(0, Qt.Orientation.Horizontal) == "Episode"
    assert not combo.isVisibleTo(browser) and window.windowTitle() == "SimLab - scripted"


def test_the_same_episode_id_from_run_b_opens_run_bs_episode(window, qtbot):
    episode_id = window.browser.visible_keys()[1].episode_id
    _open_from_browser(window, qtbot, EpisodeKey("random", episode_id))
    assert window.playback.episode.episode_id == episode_id
    assert window.playback.episode.agents["builder"] == "random"  # run B's, not run A's of the same id
    assert window.current == EpisodeKey("random", episode_id) and window.run is window.runs["random"]
    selected = window.browser.table.selectionModel().selectedRows()
    assert [window.browser.model.key(window.browser.proxy.mapToSource(i).row()) for i in selected] == [
        EpisodeKey("random", episode_id)
    ]
    assert "run random (2 runs open)" in window.status_text()
    _open_from_browser(window, qtbot, EpisodeKey("scripted", episode_id))
    assert window.playback.episode.agents["builder"] == "scripted"


# ---- the Compare dock -----------------------------------------------------------------------------------------
def test_compare_pairs_the_same_task_and_tints_the_turns_that_differ(window, qtbot):
    _show_compare(window, qtbot)
    key = window.browser.visible_keys()[0]
    _open_from_browser(window, qtbot, key)
    compare, mine = window.compare, window.playback.episode
    assert compare.partner_runs() == ["random"] and compare.other is not None
    run_name, theirs = compare.other
    assert run_name == "random" and theirs.episode_id == key.episode_id and theirs.agents["builder"] == "random"
    assert theirs.summary["task_id"] == mine.summary["task_id"]
    table = compare.turns
    assert table.rowCount() == max(mine.last_turn, theirs.last_turn)  # every turn from 1
    differs = [_public(mine, t) != _public(theirs, t) for t in range(1, table.rowCount() + 1)]
    assert any(differs), "a random builder and the scripted one should part somewhere"
    tinted = [table.item(r, 1).background().style() != Qt.BrushStyle.NoBrush for r in range(table.rowCount())]
    assert tinted == differs
    first = differs.index(True)
    assert table.item(first, 0).text() == f"{first + 1} ≠ {FIRST_MARK}"
    assert f"first differ at turn {first + 1}" in compare.headline_text()
    said = [e.data["text"] for e in mine.events_of_turn(1) if e.kind == "message"]
    assert said and all(text in table.item(0, 1).text() for text in said)
    summary = {compare.summary.item(r, 0).text(): r for r in range(compare.summary.rowCount())}
    row = summary["score"]
    assert compare.summary.item(row, 1).text() == f"{mine.summary['score']:.3f}"
    assert compare.summary.item(row, 2).text() == f"{theirs.summary['score']:.3f}"
    assert {"completion", "iou"} <= set(summary)  # every metric, side by side
    assert [compare.summary.horizontalHeaderItem(c).text() for c in (1, 2)] == ["scripted", "random"]


def test_the_compare_rows_follow_the_playback_and_a_click_moves_it(window, qtbot):
    _show_compare(window, qtbot)
    window.open_episode_id(window.browser.visible_keys()[0].episode_id, "scripted")
    table = window.compare.turns
    window.playback.seek(4)
    assert [i.row() for i in table.selectionModel().selectedRows()] == [window.compare.row_of_turn(4)] == [3]
    rect = table.visualRect(table.model().index(1, 1))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.playback.turn == 2
    window.playback.seek(0)  # before the first move: no row
    assert table.selectionModel().selectedRows() == []


def test_only_runs_that_played_the_task_are_offered_and_the_choice_is_kept(qtbot, tmp_path, runs):
    window = make_window(qtbot, tmp_path)
    assert window.open_runs([runs["scripted"], runs["short"]])
    compare = window.compare
    ids = [key.episode_id for key in window.browser.visible_keys() if key.run == "scripted"]
    window.open_episode_id(ids[3], "scripted")  # "short" played the first two tasks only
    task = window.playback.episode.summary["task_id"]
    assert compare.headline_text() == f"No other open run played task {task}."
    assert compare.turns.rowCount() == 0 and not compare.open_here.isEnabled()
    assert window.add_run(runs["random"])
    assert compare.partner_runs() == ["random"] and compare.other[0] == "random"  # the comparison follows
    window.open_episode_id(ids[0], "scripted")
    assert compare.partner_runs() == ["short", "random"] and compare.other[0] == "short"
    assert compare.choose("random") and compare.other[1].agents["builder"] == "random"
    assert not compare.choose("scripted")  # the open episode's own run is not offered
    window.open_episode_id(ids[1], "scripted")
    assert compare.other[0] == "random" and compare.other[1].episode_id == ids[1]  # the run chosen stays
    window.close_run("random")
    assert compare.other[0] == "short" and compare.other[1].agents["builder"] == "oracle"
    window.close_run("short")
    assert compare.headline_text() == ONE_RUN and compare.other is None
    window.close()


def test_the_other_runs_episode_opens_here_or_beside_linked(window, qtbot):
    episode_id = window.browser.visible_keys()[0].episode_id
    window.open_episode_id(episode_id, "scripted")
    window.playback.seek(3)
    window.compare.open_beside.click()
    twin = window.forks[-1]
    qtbot.addWidget(twin)
    assert twin.current == EpisodeKey("random", episode_id) and twin.playback.turn == 3
    assert twin.playback.episode.agents["builder"] == "random"
    window.playback.seek(5)  # the two playbacks are linked
    assert twin.playback.turn == min(5, twin.playback.last_turn)
    twin.close()
    window.compare.open_here.click()
    assert window.current == EpisodeKey("random", episode_id) and window.playback.turn == 5
    assert window.compare.other is not None and window.compare.other[0] == "scripted"  # compared back


# ---- refusals and the command line --------------------------------------------------------------------------
def test_runs_of_another_family_or_open_twice_are_refused_and_the_rest_stays(window, qtbot, record_rooms, runs):
    assert not window.add_run(record_rooms)
    assert "rooms run" in window.last_error and "blocks runs" in window.last_error
    boxes = [w for w in window.findChildren(QMessageBox) if w.isVisible()]
    assert boxes and "different world families" in boxes[-1].text()
    assert "different world families" in window.statusBar().currentMessage()
    assert list(window.runs) == ["scripted", "random"] and len(window.browser.visible_keys()) == 8
    assert not window.add_run(runs["random"]) and "open already" in window.last_error
    assert window.add_run(runs["short"]) and list(window.runs) == ["scripted", "random", "short"]
    assert window.windowTitle() == "SimLab - 3 runs"


def test_the_command_line_opens_several_runs_side_by_side(qtbot, runs, monkeypatch):
    seen: dict[str, object] = {}

    def look(_app: QApplication) -> int:
        """The event loop's stand-in: an application's loop, once left, cannot run again in this process."""
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, MainWindow) and widget.isVisible():
                qtbot.addWidget(widget)
                seen.update(runs=list(widget.runs), current=widget.current, turn=widget.playback.turn)
                seen.update(rows=len(widget.browser.visible_keys()), title=widget.windowTitle())
        return 0

    monkeypatch.setattr(QApplication, "exec", look)
    assert main(["gui", str(runs["scripted"]), str(runs["random"]), "--turn", "2"]) == 0
    first = load_run(runs["scripted"]).summaries[0]["episode_id"]
    assert seen == {
        "runs": ["scripted", "random"],
        "current": EpisodeKey("scripted", first),
        "turn": 2,
        "rows": 8,
        "title": "SimLab - 2 runs",
    }


# ---- the docks ------------------------------------------------------------------------------------------------
def _tab_groups(window: MainWindow) -> list[tuple[str, ...]]:
    bars = window.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly)
    return sorted(tuple(bar.tabText(k) for k in range(bar.count())) for bar in bars if bar.isVisible())


def test_each_dock_tab_group_shows_one_tab_bar_at_start_after_a_restart_and_a_reset(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    expected = [("Dialogue", "Compare"), ("Episodes", "Search"), ("Plots", "Figures", "Sweep")]
    for restart in (False, True):  # the second window restores the layout the first saved
        window = MainWindow(settings)
        qtbot.addWidget(window)
        window.show()
        wait_shown(qtbot, window)
        assert _tab_groups(window) == expected  # no stale tab bar drawn over the timeline
        if restart:
            window.reset_layout()
            assert _tab_groups(window) == expected
        window.close()


def _marked_series(window: MainWindow) -> set[str]:
    """The runs whose series the Figures dock marks as the open episode's, over all its figures."""
    marked = set()
    for name in window.figures.figure_names():
        window.figures.select(name)
        marked |= {label.split(" · ")[0] for label, _x, _y in window.figures.highlighted}
    return marked


def test_the_figures_dock_reads_the_runs_once_shown_and_marks_the_open_episodes_run(window, qtbot):
    assert window.figures.figure_names() == [] and not window.figures.busy()  # hidden: no episode read
    episode_id = window.browser.visible_keys()[0].episode_id
    window.open_episode_id(episode_id, "random")
    window.docks["Figures"].raise_()
    qtbot.waitUntil(lambda: bool(window.figures.figure_names()), timeout=20000)
    assert {"scripted", "random"} <= set(window.figures.current().series_runs)
    assert _marked_series(window) == {"random"}
    window.open_episode_id(episode_id, "scripted")  # the same id in the other run: that run's series
    assert _marked_series(window) == {"scripted"}
