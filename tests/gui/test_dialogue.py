"""DialoguePane: the episode's dialogue follows and drives the playback turn."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QTextCursor

from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.core.recording import load_run
from simlab.gui.dialogue import DialoguePane, pil_to_qimage
from simlab.gui.playback import PlaybackModel
from simlab.runner.batch import RunConfig, run
from tests.gui.conftest import wait_shown
from tests.gui.model_run import HOSTILE, record_model_run


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
    wait_shown(qtbot, widget)
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


def test_a_step_scrolls_only_to_a_turn_not_wholly_in_view(pane, episode):
    widget, playback = pane
    bar = widget.browser.verticalScrollBar()
    stayed = scrolled = 0
    for turn in [*range(1, episode.last_turn + 1), *range(episode.last_turn - 1, 0, -1)]:
        was_in_view, value = widget.turn_in_view(turn), bar.value()
        playback.seek(turn)
        heading_top = widget.browser.cursorRect(_cursor_at(widget, widget.turn_position(turn))).top()
        if was_in_view:  # only its highlight moved
            stayed += 1
            assert bar.value() == value
        else:  # its heading at the top, as far as the scroll bar goes
            scrolled += 1
            assert heading_top == 0 or bar.value() == bar.maximum()
        assert _anchor_visible(widget, turn)
        selections = widget.browser.extraSelections()  # kept: the cursors die with the list
        assert widget.turn_at(selections[0].cursor.selectionStart()) == turn == widget.selected_turn
    assert stayed and scrolled  # the episode has turns of both kinds at this size


def _cursor_at(widget: DialoguePane, position: int | None) -> QTextCursor:
    assert position is not None
    cursor = widget.browser.textCursor()
    cursor.setPosition(position)
    return cursor


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


def test_raw_tab_json(qtbot, episode):
    playback = PlaybackModel()
    widget = DialoguePane(playback)
    qtbot.addWidget(widget)
    widget.tabs.setCurrentIndex(1)
    playback.set_episode(episode)
    assert "No model calls recorded" in widget.raw_chat.toPlainText()
    widget.json_button.setChecked(True)
    assert "No model calls recorded" in widget.raw_view.toPlainText()
    raw = [{"turn": 2, "role": "builder", "request": {"prompt": "hi"}, "response": {"text": "PLACE"}}]
    playback.set_episode(dataclasses.replace(episode, raw=raw))
    playback.seek(2)
    assert '"prompt": "hi"' in widget.raw_view.toPlainText()
    playback.seek(3)
    assert '"prompt"' not in widget.raw_view.toPlainText()
    widget.all_turns_box.setChecked(True)
    assert '"prompt": "hi"' in widget.raw_view.toPlainText()
    widget.json_button.setChecked(False)  # a record of another shape still shows as a call
    assert widget.raw_stack.currentWidget() is widget.raw_chat
    assert "Turn 2 \u00b7 builder \u00b7 call ?" in widget.raw_chat.toPlainText()


# ---- the Raw tab's chats, of calls the model agent recorded against the local test server -------------------


@pytest.fixture(scope="module")
def model_episode(tmp_path_factory) -> Episode:
    with pytest.MonkeyPatch.context() as monkeypatch:
        return record_model_run(tmp_path_factory.mktemp("model") / "run", monkeypatch)


@pytest.fixture
def raw_pane(qtbot, model_episode):
    playback = PlaybackModel()
    widget = DialoguePane(playback)
    qtbot.addWidget(widget)
    widget.resize(800, 600)
    widget.show()
    widget.tabs.setCurrentIndex(1)
    playback.set_episode(model_episode)
    return widget, playback


def _request_text(record: dict, role: str) -> str:
    message = next(m for m in record["request"]["messages"] if m["role"] == role)
    content = message["content"]
    return content if isinstance(content, str) else next(p["text"] for p in content if p["type"] == "text")


def test_raw_tab_shows_each_call_as_a_chat(raw_pane, model_episode):
    widget, playback = raw_pane
    playback.seek(1)
    text = widget.raw_chat.toPlainText()
    records = [r for r in model_episode.raw if r["turn"] == 1]
    assert len(records) > 1
    for record in records:
        assert f"Turn 1 \u00b7 {record['role']} \u00b7 call {record['call']} \u00b7 fake-model" in text
        usage = record["usage"]
        assert f"{usage['prompt_tokens']:,} prompt + {usage['completion_tokens']:,} completion tokens" in text
        assert f"latency {record['latency_s']:.2f} s, first byte {record['ttfb_s']:.2f} s" in text
        assert f"cost ${record['cost']:.6f}" in text
        assert _request_text(record, "system").splitlines()[0] in text
        assert _request_text(record, "user") in text
        assert record["response"]["content"] in text
    retried = next(r for r in records if r["attempts"])
    assert "1 retry" in text and "attempt 1 failed: HTTP 429 RateLimitError" in text
    assert retried["attempts"][0]["status"] == 429


def test_raw_tab_totals_and_full_system_prompts(raw_pane, model_episode):
    widget, playback = raw_pane
    playback.seek(1)
    totals = widget.raw_totals.text()
    calls = len(model_episode.raw)
    assert f"Episode: model calls: {calls} calls" in totals and "Turn 1: model calls:" in totals
    assert f"cost {model_episode.summary['usage']['cost']:.4f}" in totals
    system = _request_text(model_episode.raw[0], "system")
    assert system not in widget.raw_chat.toPlainText()  # collapsed to its first lines
    widget.system_box.setChecked(True)
    assert system in widget.raw_chat.toPlainText()


def test_raw_tab_escapes_model_output_and_shows_the_reask(raw_pane, model_episode):
    widget, playback = raw_pane
    unread = next(r for r in model_episode.raw if r["parse_error"])
    playback.seek(unread["turn"])
    text = widget.raw_chat.toPlainText()
    assert HOSTILE in text  # shown as text, not run as markup
    assert "<script>" not in widget.raw_chat.toHtml()
    assert f"could not be read: {unread['parse_error']}" in text
    assert f"{unread['role']} \u00b7 call 2" in text  # the re-ask is a second call, its conversation longer


def test_raw_tab_pictures_are_the_ones_sent(raw_pane, model_episode):
    widget, playback = raw_pane
    playback.seek(1)
    refs = [
        p
        for r in model_episode.raw
        if r["turn"] == 1
        for m in r["request"]["messages"]
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image"
    ]
    assert refs and len(widget.raw_chat.pictures) == len(refs)
    text = widget.raw_chat.toPlainText()
    for ref in refs:
        assert f"{ref['name']}, {ref['bytes'] / 1000:.1f} kB PNG: the picture sent" in text


def test_raw_tab_json_button_shows_the_records(raw_pane, model_episode):
    widget, playback = raw_pane
    playback.seek(1)
    widget.json_button.setChecked(True)
    assert widget.raw_stack.currentWidget() is widget.raw_view
    records = [r for r in model_episode.raw if r["turn"] == 1]
    assert json.loads(widget.raw_view.toPlainText()) == records


def test_stepping_through_40_turns_selects_and_shows_each_turn(qtbot, tmp_path):
    # Its speed is the step row of make bench (benchmarks/gui.py): tests never assert times.
    out = tmp_path / "run40"
    run(RunConfig("blocks", seed=0, episodes=1, agents=["builder=random"], settings={"turns": 40}), out)
    long_episode = load_run(out).episodes()[0]
    playback = PlaybackModel()
    widget = DialoguePane(playback)
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    widget.show()
    playback.set_episode(long_episode)
    for turn in range(1, long_episode.last_turn + 1):
        playback.seek(turn)
        assert widget.selected_turn == turn and widget.turn_in_view(turn)


@pytest.mark.parametrize(
    ("mode", "opaque"), [("RGB", True), ("L", True), ("P", False), ("RGBA", False), ("LA", False), ("1", True)]
)
def test_a_pil_picture_becomes_a_qimage_of_the_same_pixels(mode, opaque):
    """Opaque pictures come out in the raster engine's own format (RGB32, no conversion to paint them), those
    with transparency (here the palette keeps the alpha) keep it; either way every pixel is the picture's."""
    rng = np.random.default_rng(7)
    rgba = Image.fromarray(rng.integers(0, 256, (13, 17, 4), dtype=np.uint8), "RGBA")
    picture = rgba.convert(mode)
    image = pil_to_qimage(picture)
    assert image.format() == (QImage.Format.Format_RGB32 if opaque else QImage.Format.Format_RGBA8888)
    shown = image.convertToFormat(QImage.Format.Format_RGBA8888)
    pixels = np.frombuffer(bytes(shown.constBits()), np.uint8).reshape(13, shown.bytesPerLine())[:, : 17 * 4]
    wanted = np.asarray(picture.convert("RGBA"))
    assert np.array_equal(pixels.reshape(13, 17, 4), wanted)
