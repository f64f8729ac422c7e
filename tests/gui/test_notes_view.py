"""Notes, tags and bookmarks on turns in the app, and links to a turn, on a real run folder (a copy of the demo
plus an episode of known words): marks shown at once on the timeline and in the dialogue and kept in
RUN/notes.json across reopening, the link copied and opened again, and the HTML export holding the note."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QGuiApplication

from simlab.core.links import turn_command, turn_url
from simlab.core.notes import RunNotes
from tests.gui.conftest import shown_window
from tests.said_run import SAID


@pytest.fixture
def window(qtbot, tmp_path, said_run):
    win = shown_window(qtbot, tmp_path, said_run)
    assert win.open_episode_id(SAID)
    win.playback.seek(4)
    yield win
    win.close()


def test_a_bookmark_made_with_its_key_is_marked_at_once_and_survives_reopening(window, qtbot, tmp_path, said_run):
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)  # no window manager: activation takes a moment
    qtbot.keyClick(window, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert window.timeline.scrubber.noted_turns() == [4]
    assert "bookmarked" in window.timeline.scrubber.tooltip_for_turn(4)
    assert "\u2605 Note" in window.dialogue.browser.toPlainText()
    assert RunNotes.load(said_run).get(SAID, 4).bookmark
    window.close()
    again = shown_window(qtbot, tmp_path / "again", said_run)
    assert again.open_episode_id(SAID)
    assert again.timeline.scrubber.noted_turns() == [4] and again.notes.marks[4].bookmark
    again.playback.seek(4)
    again.activateWindow()
    qtbot.waitUntil(again.isActiveWindow, timeout=5000)
    qtbot.keyClick(again, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)  # again: the bookmark goes
    assert again.timeline.scrubber.noted_turns() == [] and RunNotes.load(said_run).get(SAID, 4) is None
    again.close()


def test_tags_and_a_note_show_in_the_tooltip_and_the_dialogue_and_only_on_their_episode(window, said_run):
    assert window.notes.set_tags(["odd", "colour"]) and window.notes.set_note("heard <b>red</b>")
    assert window.timeline.scrubber.tooltip_for_turn(4).endswith("noted: tags colour odd: heard <b>red</b>")
    assert "tags colour odd: heard <b>red</b>" in window.dialogue.browser.toPlainText()  # as text, not markup
    assert window.notes.set_tags(["odd"]) and RunNotes.load(said_run).get(SAID, 4).tags == ["odd"]
    assert not window.notes.set_tags(["two words"])  # refused with its rule, nothing changed
    assert "tag 'two words'" in window.last_error and RunNotes.load(said_run).get(SAID, 4).tags == ["odd"]
    assert window.open_episode_id("structure_002-r0")
    assert window.timeline.scrubber.noted_turns() == [] and "Note" not in window.dialogue.browser.toPlainText()


def test_copy_link_puts_the_command_and_the_url_on_the_clipboard_and_the_url_opens_the_turn(window, qtbot, tmp_path):
    assert window.notes.copy_link()
    said_run = window.run.path
    url = turn_url(said_run, SAID, 4)
    assert QGuiApplication.clipboard().text() == f"{turn_command(said_run.absolute(), SAID, 4)}\n{url}"
    other = shown_window(qtbot, tmp_path / "other", None)
    assert other.notes.open_link(url)
    assert other.current.episode_id == SAID and other.playback.turn == 4
    assert other.run.path == said_run
    other.close()


def test_a_link_dropped_on_the_window_opens_its_turn_and_a_bad_one_is_said(window, qtbot, tmp_path, said_run):
    other = shown_window(qtbot, tmp_path / "other", None)
    for text, as_url in ((turn_url(said_run, SAID, 5), True), (turn_url(said_run, SAID, 3), False)):
        mime = QMimeData()
        mime.setUrls([QUrl.fromEncoded(text.encode())]) if as_url else mime.setText(text)
        event = QDropEvent(
            QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
        )
        other.dropEvent(event)
        assert other.current.episode_id == SAID and other.playback.turn == int(text[-1])
    assert not other.notes.open_link("simlab://open?run=relative/path")
    assert "absolute path" in other.last_error
    other.close()


def test_the_html_export_holds_the_runs_notes_on_the_episode(window, tmp_path):
    assert window.notes.set_note("the builder heard red")
    out = tmp_path / "out" / "t.html"
    out.parent.mkdir()
    assert window.export_html(out)
    turn4 = out.read_text(encoding="utf-8").split('<section id="turn-4">')[1].split("</section>")[0]
    assert "the builder heard red" in turn4


def test_an_episode_file_opened_alone_cannot_be_noted_and_says_why(qtbot, tmp_path, said_run):
    window = shown_window(qtbot, tmp_path, None)
    assert window.open_path(said_run / "episodes" / f"{SAID}.json")
    assert not window.notes.toggle_bookmark() and not window.notes.copy_link()
    assert "open the episode from its run folder" in window.last_error
    assert not (said_run / "notes.json").exists()
    window.close()


def test_a_turn_tagged_in_the_app_shows_in_the_browsers_tags_column_and_filter(window):
    browser = window.browser
    tags = next(k for k, c in enumerate(browser.model.columns) if c.key == "tags")
    row = browser.model.row_of(SAID, window.current.run)
    assert row is not None and browser.model.index(row, tags).data() == ""
    assert window.notes.set_tags(["misheard"])
    assert browser.model.index(row, tags).data() == "misheard"  # a turn's tag is the episode's too
    browser.where_edit.setText("`tag.misheard`")
    browser.where_edit.returnPressed.emit()
    assert [key.episode_id for key in browser.visible_keys()] == [SAID]
