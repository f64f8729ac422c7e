"""DialoguePane: the episode's dialogue follows and drives the playback turn."""

from __future__ import annotations

import dataclasses
import time

import pytest
from PySide6.QtCore import QUrl

from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.core.recording import load_run
from simlab.gui.dialogue import DialoguePane
from simlab.gui.playback import PlaybackModel
from simlab.runner.batch import RunConfig, run


@pytest.fixture(scope="module")
def episode(record) -> Episode:
    return load_run(record("builder=random", turns=8)).episodes()[0]


@pytest.fixture
def pane(qtbot, episode):
    playback = PlaybackModel()
    widget = DialoguePane(playback)
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    widget.show()
    qtbot.waitExposed(widget)
    playback.set_episode(episode)
    return widget, playback


def _plain(widget: DialoguePane) -> str:
    return widget.browser.document().toPlainText()


def _anchor_visible(widget: DialoguePane, turn: int) -> bool:
    position = widget.turn_position(turn)
    assert position is not None
    cursor = widget.browser.textCursor()
    cursor.setPosition(position)
    rect = widget.browser.cursorRect(cursor)
    return widget.browser.viewport().rect().intersects(rect)


def test_every_message_appears(pane, episode):
    widget, _ = pane
    text = _plain(widget)
    assert episode.messages()
    for message in episode.messages():
        assert message.data["text"] in text
    for turn in range(1, episode.last_turn + 1):
        assert f"Turn {turn}" in text


def test_seek_highlights_and_scrolls(pane, episode):
    widget, playback = pane
    for turn in (episode.last_turn, 2, 5, 1):
        playback.seek(turn)
        assert widget.selected_turn == turn
        assert _anchor_visible(widget, turn)
        assert widget.browser.extraSelections()


def test_clicking_a_message_seeks(pane, episode):
    widget, playback = pane
    index = next(k for k, e in enumerate(episode.events) if e.kind == "message" and e.turn == 4)
    widget.browser.anchorClicked.emit(QUrl(f"ev:{index}"))
    assert playback.turn == 4
    assert widget.selected_turn == 4


def test_reasoning_hidden_until_toggled(pane, episode):
    widget, _ = pane
    reasoning = next(e for e in episode.events if e.kind == "reasoning")
    assert reasoning.data["text"] not in _plain(widget)
    widget.reasoning_box.setChecked(True)
    assert reasoning.data["text"] in _plain(widget)
    widget.reasoning_box.setChecked(False)
    assert reasoning.data["text"] not in _plain(widget)


def test_search_counts_and_next_hit_seeks(pane, episode):
    widget, playback = pane
    word = "block"
    expected = sum(m.data["text"].lower().count(word) for m in episode.messages())
    shown_fields = ("text", "message", "error", "taxonomy", "code")  # what actions/results/errors display
    others = [e for e in episode.events if e.kind in ("action", "result", "protocol_error")]
    assert all(word not in str(e.data.get(f, "")).lower() for e in others for f in shown_fields)
    assert expected > 0
    assert widget.search(word) == expected
    assert widget.search("BLOCK") == expected  # case-insensitive
    playback.seek(0)
    widget.next_hit()
    widget.next_hit()
    start, _ = widget._hits[1]
    assert playback.turn == widget.turn_at(start)
    assert playback.turn >= 1
    widget.previous_hit()
    assert playback.turn == widget.turn_at(widget._hits[0][0])
    assert widget.search_bar.label.text() == f"1 of {expected}"


def test_search_bar_shortcuts(pane, qtbot):
    widget, _ = pane
    assert not widget.search_bar.isVisible()
    widget.open_search()
    assert widget.search_bar.isVisible()
    widget.search_bar.edit.setText("turn")
    assert widget.hit_count > 0
    qtbot.keyClick(widget.search_bar.edit, "\r")
    assert widget.current_hit == 1
    qtbot.keyClick(widget.search_bar.edit, "\x1b")
    assert not widget.search_bar.isVisible()


def test_model_output_is_escaped(qtbot, episode):
    events = [*episode.events, Event("message", episode.last_turn, "D1", {"text": "look <b>x</b> & <script>"})]
    hostile = dataclasses.replace(episode, events=events)
    playback = PlaybackModel()
    widget = DialoguePane(playback)
    qtbot.addWidget(widget)
    playback.set_episode(hostile)
    assert "look <b>x</b> & <script>" in _plain(widget)


def test_raw_tab(qtbot, episode):
    playback = PlaybackModel()
    widget = DialoguePane(playback)
    qtbot.addWidget(widget)
    playback.set_episode(episode)
    assert "No model calls recorded" in widget.raw_view.toPlainText()
    raw = [{"turn": 2, "role": "builder", "request": {"prompt": "hi"}, "response": {"text": "PLACE"}}]
    playback.set_episode(dataclasses.replace(episode, raw=raw))
    playback.seek(2)
    assert '"prompt": "hi"' in widget.raw_view.toPlainText()
    playback.seek(3)
    assert '"prompt"' not in widget.raw_view.toPlainText()
    widget.all_turns_box.setChecked(True)
    assert '"prompt": "hi"' in widget.raw_view.toPlainText()


def test_turn_change_is_fast_on_40_turns(qtbot, tmp_path):
    out = tmp_path / "run40"
    run(RunConfig("blocks", seed=0, episodes=1, agents=["builder=random"], settings={"turns": 40}), out)
    long_episode = load_run(out).episodes()[0]
    playback = PlaybackModel()
    widget = DialoguePane(playback)
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    widget.show()
    playback.set_episode(long_episode)
    start = time.perf_counter()
    for turn in range(1, long_episode.last_turn + 1):
        playback.seek(turn)
    per_turn = (time.perf_counter() - start) / long_episode.last_turn
    assert widget.selected_turn == long_episode.last_turn
    assert per_turn < 0.02, f"{per_turn * 1000:.1f} ms per turn change"
