"""The Search dock on a real run (the demo plus an episode whose every text is a known word at a known turn):
a result opens its episode at its turn, error kinds and tags are found, and bad queries are said."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from simlab.analysis.search import SEARCH_FILE
from simlab.gui.search_view import ERROR, SearchPanel
from tests.gui.conftest import shown_window
from tests.said_run import SAID, add_said_episode


@pytest.fixture
def window(qtbot, tmp_path, said_run):
    win = shown_window(qtbot, tmp_path, said_run)
    win.actions_by_name["search_run"].trigger()  # the dock comes to the front, and indexes the run
    yield win
    win.close()


def searched(qtbot, panel: SearchPanel, query: str) -> SearchPanel:
    panel.search(query)
    qtbot.waitUntil(lambda: not panel.busy, timeout=20000)
    return panel


def click_result(qtbot, panel: SearchPanel, row: int) -> None:
    rect = panel.results.visualItemRect(panel.results.item(row))
    qtbot.mouseClick(panel.results.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_showing_the_dock_indexes_the_run_off_the_gui_thread(window, qtbot, said_run):
    panel = window.search
    qtbot.waitUntil(lambda: not panel.busy and (said_run / SEARCH_FILE).exists(), timeout=20000)
    assert panel.status.text() == "run: 7 episodes indexed now, 0 already were"


def test_a_clicked_result_opens_its_episode_at_its_turn(window, qtbot):
    panel = searched(qtbot, window.search, "quokkaplan")
    assert [(h.hit.episode_id, h.hit.turn, h.hit.kind) for h in panel.hits] == [(SAID, 2, "reasoning")]
    assert "1 hits in 1 episodes" in panel.status.text()
    click_result(qtbot, panel, 0)
    assert window.current.episode_id == SAID and window.playback.turn == 2


def test_error_kinds_are_found_by_name_and_enter_opens_the_result(window, qtbot):
    panel = searched(qtbot, window.search, "same_colour")
    assert (panel.hits[0].hit.episode_id, panel.hits[0].hit.turn, panel.hits[0].hit.kind) == (SAID, 5, "error")
    panel.results.setCurrentRow(0)
    panel.results.setFocus()
    qtbot.keyClick(panel.results, Qt.Key.Key_Return)
    assert window.current.episode_id == SAID and window.playback.turn == 5
    assert "same" in panel.results.item(0).text() and "background" in panel.results.item(0).text()  # highlighted


def test_a_tag_put_on_a_turn_in_the_app_is_found(window, qtbot):
    assert window.open_episode_id(SAID)
    window.playback.seek(3)
    assert window.notes.set_tags(["odd"])
    panel = searched(qtbot, window.search, "odd")
    assert [(h.hit.episode_id, h.hit.turn, h.hit.kind) for h in panel.hits] == [(SAID, 3, "note")]


def test_a_query_past_the_bound_is_refused_in_red_and_one_not_of_fts5_syntax_said(window, qtbot):
    panel = searched(qtbot, window.search, "z" * 2000)
    assert "at most 1,000 characters" in panel.status.text() and ERROR in panel.status.styleSheet()
    assert panel.hits == [] and panel.results.count() == 0
    panel = searched(qtbot, panel, 'the "zebracorn')
    assert "searched as a phrase" in panel.status.text() and ERROR not in panel.status.styleSheet()


def test_episodes_that_land_in_a_run_being_played_are_found(window, qtbot, said_run):
    panel = searched(qtbot, window.search, "narwhalish")
    assert panel.hits == []
    before = len(window.run.summaries)
    add_said_episode(said_run, "later-r0", word="narwhalish")  # as a run being played appends an episode
    qtbot.waitUntil(lambda: len(window.run.summaries) == before + 1, timeout=10000)  # the window follows it
    panel = searched(qtbot, panel, "narwhalish")
    assert [(h.hit.episode_id, h.hit.turn) for h in panel.hits] == [("later-r0", 3)]


def test_a_run_opened_with_the_dock_behind_another_tab_is_not_indexed(qtbot, tmp_path, said_run):
    win = shown_window(qtbot, tmp_path, said_run)  # no fixture window here: the Search dock stays behind Episodes
    qtbot.wait(300)  # time for a job to have started, were one started
    assert not win.search.busy and not (said_run / SEARCH_FILE).exists()  # no episode file read for it
    win.docks["Search"].raise_()  # brought forward: now it indexes
    qtbot.waitUntil(lambda: (said_run / SEARCH_FILE).exists() and not win.search.busy, timeout=20000)
    win.close()
