"""Runs of different seeds share task ids but not tasks: the app pairs episodes across runs only when their
tasks are equal (the test ``report`` uses) and says plainly when they are not; one metric reads the same in
the browser, the Compare dock and a fork's diff."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from simlab.analysis.episode_diff import episode_diff, value_text
from simlab.analysis.pairing import TASKS_DIFFER
from simlab.core.episode import Episode
from simlab.core.recording import load_run
from simlab.gui.browser import ALL_TASKS, EpisodeBrowser, task_label
from simlab.gui.fork_view import diff_html
from simlab.runner.batch import RunConfig, run
from tests.gui.test_main_window import make_window

EPISODE = "structure_001-r0"
TASK = "structure_001"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """As ``run --world blocks --episodes 3 --seed 3 --out A`` and ``--seed 0 --out B`` make them (fewer turns),
    and C: B's tasks (seed 0) with a random builder."""
    root = tmp_path_factory.mktemp("tasks")
    made = {}
    for name, seed, agents in (("A", 3, []), ("B", 0, []), ("C", 0, ["builder=random"])):
        made[name] = root / name
        run(RunConfig("blocks", seed=seed, episodes=3, agents=agents, settings={"turns": 6}), made[name])
    return made


@pytest.fixture
def window(qtbot, tmp_path, runs):
    win = make_window(qtbot, tmp_path)
    assert win.open_runs([runs["A"], runs["B"]])
    win.docks["Compare"].raise_()
    qtbot.waitUntil(win.compare.isVisible, timeout=3000)
    yield win
    win.close()


def _task_cells(browser: EpisodeBrowser) -> dict[tuple[str, str], tuple[str, str | None]]:
    """(run, episode id) -> the Task cell's text and tooltip, for every row."""
    model = browser.model
    column = next(k for k, c in enumerate(model.columns) if c.key == "task_id")
    cells = {}
    for row in range(model.rowCount()):
        index = model.index(row, column)
        cells[tuple(model.key(row))] = (index.data(), index.data(Qt.ItemDataRole.ToolTipRole))
    return cells


def test_the_compare_dock_does_not_compare_episodes_of_different_tasks(window):
    assert window.open_episode_id(EPISODE, "A")
    compare = window.compare
    assert compare.partner_runs() == [] and compare.other is None and compare.diff is None
    assert compare.differing["B"]["episode_id"] == EPISODE
    headline = compare.headline_text()
    assert f"{EPISODE} of B has task id {TASK} too" in headline and TASKS_DIFFER in headline
    assert "turns differ" not in headline  # no turn-by-turn comparison of two different structures
    assert compare.turns.rowCount() == compare.summary.rowCount() == 0
    assert compare.partner_combo.count() == 0
    assert not compare.open_here.isEnabled() and not compare.open_beside.isEnabled()


def test_a_run_of_the_same_tasks_is_compared_and_one_of_others_is_named(window, runs):
    assert window.add_run(runs["C"])
    assert window.open_episode_id(EPISODE, "B")
    compare = window.compare
    assert compare.partner_runs() == ["C"] and compare.other is not None and compare.other[0] == "C"
    assert compare.other[1].summary["task_id"] == TASK and compare.turns.rowCount() > 0
    first, second = compare.headline_text().split("\n")
    assert first.startswith(f"{EPISODE} of B against {EPISODE} of C")
    assert (
        second
        == f"{EPISODE} of A has task id {TASK} too, but run A recorded another task under that id: {TASKS_DIFFER}."
    )
    assert window.open_episode_id(EPISODE, "A")  # both others hold another structure_001
    assert compare.partner_runs() == [] and sorted(compare.differing) == ["B", "C"]
    assert compare.headline_text().count(TASKS_DIFFER) == 2


def test_the_browser_marks_a_task_id_that_names_different_tasks(window, runs):
    browser = window.browser
    cells = _task_cells(browser)
    assert cells["A", EPISODE][0] == task_label(TASK, ["B"]) == f"{TASK} (≠ B)"
    assert cells["B", EPISODE][0] == f"{TASK} (≠ A)"
    assert TASKS_DIFFER in cells["A", EPISODE][1] and f"{TASK} of run A is another task" in cells["A", EPISODE][1]
    menu = [browser.task_combo.itemText(k) for k in range(browser.task_combo.count())]
    assert TASK not in menu and {f"{TASK} (≠ B)", f"{TASK} (≠ A)"} <= set(menu)  # never one entry for two tasks
    browser.task_combo.setCurrentIndex(menu.index(f"{TASK} (≠ B)"))
    assert [tuple(key) for key in browser.visible_keys()] == [("A", EPISODE)]
    browser.task_combo.setCurrentIndex(menu.index(ALL_TASKS))
    assert window.close_run("A") and window.add_run(runs["C"])  # B and C hold the same tasks: ids as they are
    cells = _task_cells(browser)
    assert cells["B", EPISODE] == (TASK, None) and cells["C", EPISODE] == (TASK, None)
    browser.task_combo.setCurrentIndex(browser.task_combo.findData(TASK))
    assert sorted(tuple(key) for key in browser.visible_keys()) == [("B", EPISODE), ("C", EPISODE)]


def test_a_metric_reads_the_same_in_the_browser_the_compare_dock_and_a_fork_diff(window, runs, qtbot):
    value = 0.08347  # a fork's diff printed 0.0835 where the browser printed 0.083
    summary = {**load_run(runs["B"]).summaries[0], "metrics": {"completion": value}}
    browser = EpisodeBrowser()
    qtbot.addWidget(browser)
    browser.set_run([summary])
    column = next(k for k, c in enumerate(browser.model.columns) if c.key == "completion")
    shown = browser.model.index(0, column).data()
    episode = Episode("e", "blocks", 0, {}, summary={"metrics": {"completion": value}})
    fork = Episode("f", "blocks", 0, {}, summary={"metrics": {"completion": 0.5}})
    html = diff_html(episode_diff(episode, fork), "e")
    assert shown == value_text(value) == "0.083" and f"<td>{shown}</td>" in html and "0.0835" not in html
    assert window.add_run(runs["C"]) and window.open_episode_id(EPISODE, "B")
    compare = window.compare
    names = [compare.summary.item(r, 0).text() for r in range(compare.summary.rowCount())]
    row = names.index("completion")
    mine = window.playback.episode.summary["metrics"]["completion"]
    assert compare.summary.item(row, 1).text() == value_text(mine)
    browser_row = window.browser.model.row_of(EPISODE, "B")
    column = next(k for k, c in enumerate(window.browser.model.columns) if c.key == "completion")
    assert window.browser.model.index(browser_row, column).data() == value_text(mine)
