"""The browser at sweep scale, in the app: filter expressions, sorting by a metric, tags from the context menu
that outlive the window, and a run followed while another writer appends to its index."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from simlab.core.notes import RunNotes
from simlab.core.recording import INDEX_FILE, load_run
from simlab.gui.main_window import MainWindow
from tests.gui.conftest import shown_window


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 blocks episodes with successes and failures (the scripted builder mishears sometimes)."""
    from simlab.runner.batch import RunConfig, run

    out = tmp_path_factory.mktemp("sweep") / "run"
    run(RunConfig("blocks", seed=0, episodes=6, repeats=2, agents=["builder=scripted:0.3"], settings={"turns": 8}), out)
    return out


def _copy(run_dir: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run_dir, tmp_path / "run"))


def test_a_filter_expression_narrows_the_browser_and_a_bad_one_leaves_it(qtbot, tmp_path, run_dir) -> None:
    window = shown_window(qtbot, tmp_path)
    assert window.open_path(run_dir)
    browser, summaries = window.browser, load_run(run_dir).summaries
    expected = [s["episode_id"] for s in summaries if s["score"] < 0.9 and s["metrics"]["iou"] > 0.3]
    assert 0 < len(expected) < len(summaries)
    browser.where_edit.setFocus()
    qtbot.keyClicks(browser.where_edit, "score < 0.9 and iou > 0.3")
    qtbot.keyClick(browser.where_edit, Qt.Key.Key_Return)
    assert browser.visible_episode_ids() == expected
    assert browser.count_text() == f"{len(expected)} of {len(summaries)} episodes"
    assert "iou" in browser.where_edit.toolTip() and "tag." in browser.where_edit.toolTip()
    browser.outcome_buttons["failure"].click()  # combined with the outcome toggles
    assert browser.visible_episode_ids() == [e for e in expected if _outcome(summaries, e) != "failure"]
    browser.outcome_buttons["failure"].click()
    shown = browser.visible_episode_ids()
    browser.where_edit.setText("score < 0.9 and nonsense > 2")  # a name no summary has
    assert not browser.apply_where()
    assert browser.where_error.isVisibleTo(browser)
    assert browser.where_error.text().startswith("column 17: unknown field 'nonsense'")
    assert "metrics.iou" in browser.where_error.toolTip()  # the fields it could be
    assert browser.visible_episode_ids() == shown  # the rows stay as they were
    browser.where_edit.setText("score <")
    assert not browser.apply_where() and "column" in browser.where_error.text()
    browser.where_edit.clear()  # an empty box: every episode again
    assert not browser.where_error.isVisibleTo(browser) and len(browser.visible_episode_ids()) == len(summaries)
    window.close()


def _outcome(summaries, episode_id: str) -> str:
    return next(s["outcome"] for s in summaries if s["episode_id"] == episode_id)


def test_sorting_by_a_metric_column_orders_the_rows(qtbot, tmp_path, run_dir) -> None:
    window = shown_window(qtbot, tmp_path)
    assert window.open_path(run_dir)
    browser = window.browser
    column = next(k for k, c in enumerate(browser.model.columns) if c.key == "iou")
    iou = {s["episode_id"]: s["metrics"]["iou"] for s in load_run(run_dir).summaries}
    assert browser.select_episode("structure_003-r1", "run")  # the window names a run by its folder
    browser.table.sortByColumn(column, Qt.SortOrder.DescendingOrder)
    shown = [iou[e] for e in browser.visible_episode_ids()]
    assert shown == sorted(iou.values(), reverse=True) and len(set(shown)) > 1
    selected = browser.table.selectionModel().selectedRows()
    assert [browser.model.key(browser.proxy.mapToSource(i).row()).episode_id for i in selected] == ["structure_003-r1"]
    browser.table.sortByColumn(column, Qt.SortOrder.AscendingOrder)
    assert [iou[e] for e in browser.visible_episode_ids()] == sorted(iou.values())
    window.close()


def test_a_tag_from_the_context_menu_shows_and_survives_reopening(qtbot, tmp_path, run_dir) -> None:
    run = _copy(run_dir, tmp_path)
    window = shown_window(qtbot, tmp_path)
    assert window.open_path(run)
    browser = window.browser
    key = browser.visible_keys()[2]
    menu = browser.row_menu(key)
    add = next(a for a in menu.actions() if a.text() == "Add Tag...")
    add.trigger()
    dialog = browser.tag_dialog
    assert dialog is not None and dialog.isVisible()
    dialog.setTextValue("odd")
    dialog.accept()
    star = next(a for a in browser.row_menu(key).actions() if a.text() == "Bookmark")
    star.trigger()
    tags = next(k for k, c in enumerate(browser.model.columns) if c.key == "tags")
    row = browser.model.row_of(*reversed(key))
    assert browser.model.index(row, tags).data() == "★ odd"
    assert RunNotes.load(run).tags_of(key.episode_id) == ["odd"]  # written beside the run, not in a recording
    browser.where_edit.setText("tag.odd and bookmarked")
    assert browser.apply_where() and browser.visible_keys() == [key]
    window.close()

    again = shown_window(qtbot, tmp_path)
    assert again.open_path(run)
    row = again.browser.model.row_of(*reversed(key))
    assert again.browser.model.index(row, tags).data() == "★ odd"
    remove = next(a for a in again.browser.row_menu(key).actions() if a.text() == "Remove Tag")
    remove.menu().actions()[0].trigger()
    assert again.browser.model.index(row, tags).data() == "★"
    again.close()


def test_a_run_being_written_shows_its_new_episodes(qtbot, tmp_path, run_dir) -> None:
    run = _copy(run_dir, tmp_path)
    lines = (run_dir / INDEX_FILE).read_bytes().splitlines(keepends=True)
    (run / INDEX_FILE).write_bytes(b"".join(lines[:3]))
    window = shown_window(qtbot, tmp_path)
    assert window.open_path(run)
    assert len(window.browser.visible_keys()) == 3
    assert window.progress_label.text().startswith("3 / 12 episodes")
    window.browser.select_episode(window.browser.visible_episode_ids()[1], "run")

    def write() -> None:  # another writer: each line appended in two parts, as a slow disk may show it
        with (run / INDEX_FILE).open("ab") as f:
            for line in lines[3:]:
                f.write(line[:40])
                f.flush()
                time.sleep(0.05)
                f.write(line[40:])
                f.flush()
                time.sleep(0.05)

    writer = threading.Thread(target=write)
    writer.start()
    qtbot.waitUntil(lambda: len(window.browser.visible_keys()) == 12, timeout=5000)
    writer.join()
    ids = [s["episode_id"] for s in load_run(run_dir).summaries]
    assert window.browser.visible_episode_ids() == ids
    assert window.browser.visible_episode_ids()[1] == _selected(window)  # the selection stayed on its episode
    assert not window.browser.problems_label.isVisibleTo(window.browser)  # a half-written line is no problem
    assert window.progress_label.text() == ""  # all 12 there: nothing more to wait for
    assert window.open_episode_id(ids[-1], "run")  # the episode that landed last opens
    assert window.playback.episode is not None and window.playback.episode.episode_id == ids[-1]
    window.close()


def _selected(window: MainWindow) -> str:
    rows = window.browser.table.selectionModel().selectedRows()
    return window.browser.model.key(window.browser.proxy.mapToSource(rows[0]).row()).episode_id


def test_two_open_runs_one_deleted_while_followed_say_so_and_keep_their_rows(qtbot, tmp_path, run_dir) -> None:
    first = _copy(run_dir, tmp_path)
    second = Path(shutil.copytree(run_dir, tmp_path / "second"))
    window = shown_window(qtbot, tmp_path)
    assert window.open_runs([first, second])
    shown = window.browser.visible_keys()
    said: list[str] = []
    window.follower.failed.connect(lambda name, why: said.append(why))
    shutil.rmtree(second)  # the folder moved or deleted while the app follows it
    with (first / INDEX_FILE).open("ab") as f:  # and the other run grows, so the Compare dock reads again
        f.write((run_dir / INDEX_FILE).read_bytes().splitlines(keepends=True)[0])
    qtbot.waitUntil(lambda: bool(said), timeout=5000)
    assert "index.jsonl is gone; the episodes read so far stay shown" in said[0]
    assert window.browser.visible_keys() == shown  # nothing lost, no exception out of the poll
    window.close()
