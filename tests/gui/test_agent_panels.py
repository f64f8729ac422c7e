"""AgentPanels: one panel per role showing what it was given and what it did at the playback's turn."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFont, QImage, QTextDocumentFragment
from PySide6.QtWidgets import QApplication, QLabel

from simlab.core.episode import Episode
from simlab.core.recording import load_run
from simlab.gui import agent_panels, frame_thread
from simlab.gui.agent_panels import ANNOTATED, AS_SENT, MIN_PICTURE_WIDTH, AgentPanels, EpisodeIndex
from simlab.gui.playback import PlaybackModel
from simlab.render.episode_pictures import agent_pictures
from tests.gui.conftest import EventCounter
from tests.gui.model_run import HOSTILE, record_model_run


@pytest.fixture(scope="module")
def episode(record) -> Episode:
    return load_run(record("builder=random", turns=8)).episodes()[0]


@pytest.fixture
def panels(qtbot, episode):
    playback = PlaybackModel()
    widget = AgentPanels(playback)
    qtbot.addWidget(widget)
    widget.resize(480, 900)
    widget.show()
    playback.set_episode(episode)
    return widget, playback


def _last_observation_turn(episode: Episode, role: str, turn: int) -> int | None:
    turns = [e.turn for e in episode.events if e.kind == "observation" and e.role == role and e.turn <= turn]
    return max(turns, default=None)


def test_one_panel_per_role_directors_first(panels, episode):
    widget, _ = panels
    assert widget.roles() == ["D1", "D2", "D3", "builder"]
    assert set(widget.roles()) == set(episode.agents)
    assert "random" in widget.panel("builder").title.text()
    persona = next(e.data["data"]["persona"] for e in episode.events if e.kind == "observation" and e.role == "D1")
    assert f"({persona})" in widget.panel("D1").title.text() and "(" not in widget.panel("builder").title.text()
    assert "#804dcc" in widget.panel("D1").title.text()  # D1's colour in the family's palette


def test_shown_turn_follows_playback(panels, episode):
    widget, playback = panels
    for turn in range(episode.last_turn + 1):
        playback.seek(turn)
        for role in widget.roles():
            assert widget.panel(role).shown_turn == _last_observation_turn(episode, role, turn)


def test_a_role_turn_is_worded_once_and_as_a_fresh_index_words_it(episode):
    index, fresh = EpisodeIndex(episode), EpisodeIndex(episode)
    asked = [
        (role, turn, as_told)
        for role in index.roles()
        for turn in range(episode.last_turn + 1)
        for as_told in (False, True)
    ]
    worded = {key: index.role_turn(*key) for key in asked}
    for key in reversed(asked):  # stepping back: the same wording, not worded again
        assert index.role_turn(*key) is worded[key]
        assert worded[key] == fresh.role_turn(*key)
    assert any(info.said or info.did for info in worded.values())


def test_builder_shows_its_action_and_images(panels, episode):
    widget, playback = panels
    action = next(e for e in episode.events if e.kind == "action" and e.turn == 3)
    playback.seek(3)
    builder = widget.panel("builder")
    assert action.data["text"] in builder.message_text()
    assert builder.pixmaps() and all(not p.isNull() for p in builder.pixmaps())
    for role in ("D1", "D2", "D3"):
        panel = widget.panel(role)
        if panel.shown_turn is not None:
            assert panel.pixmaps() and all(not p.isNull() for p in panel.pixmaps())


def test_director_message_and_idle_note(panels, episode):
    widget, playback = panels
    message = next(e for e in episode.messages() if e.turn >= 2)
    playback.seek(message.turn)
    panel = widget.panel(message.role)
    assert message.data["text"] in panel.message_text()
    assert panel.shown_turn == message.turn
    assert panel.acted and panel.sheet.layout_at(panel.sheet.width()).items[0].font.italic() is False
    idle = {"D1", "D2", "D3"} - {e.role for e in episode.events_of_turn(message.turn) if e.kind == "message"}
    for role in idle:
        idle_panel = widget.panel(role)
        assert idle_panel.message_text() == ""
        if idle_panel.shown_turn is not None:
            assert f"Did not act in turn {message.turn}" in idle_panel.status_text()
            status = idle_panel.sheet.layout_at(idle_panel.sheet.width()).items[0]  # drawn first, in italics:
            assert not idle_panel.acted and status.font.italic()  # an earlier turn's, told apart
            assert all(item.dimmed for item in idle_panel.sheet.layout_at(idle_panel.sheet.width()).items[1:])


def test_sections_collapsed_by_default(panels):
    widget, playback = panels
    playback.seek(2)
    panel = widget.panel("builder")
    assert not panel.observation_text.expanded
    assert not panel.observation_text.body.isVisible()
    panel.observation_text.button.click()
    assert panel.observation_text.body.isVisible()
    assert panel.observation_text.button.arrowType() == Qt.ArrowType.DownArrow
    assert "board" in panel.observation_text.body.text().lower()
    playback.seek(3)  # a step sets every section again: an open one stays open
    assert panel.observation_text.body.isVisible() and panel.observation_text.expanded
    panel.observation_text.button.click()
    assert not panel.observation_text.body.isVisible()
    assert panel.observation_text.button.arrowType() == Qt.ArrowType.RightArrow
    panel.reasoning.set_expanded(True)  # opened, then disabled (nothing to show): closed again
    panel.reasoning.set_title("No reasoning", enabled=False)
    assert not panel.reasoning.expanded and not panel.reasoning.body.isVisible()
    assert panel.reasoning.button.arrowType() == Qt.ArrowType.RightArrow


def test_pictures_are_drawn_once_per_observation_and_mode(qtbot, episode, monkeypatch):
    """Stepping back and forth and switching modes, no observation's pictures are drawn twice in a mode (the
    next turn's, drawn ahead on the frame thread, included)."""
    calls = []

    def counting(*args, **kwargs):
        _views, observation, _episode, _turn, annotated = args[:5]
        calls.append((observation.role, observation.turn, annotated))
        return agent_pictures(*args, **kwargs)

    QApplication.processEvents()  # what earlier tests' panels asked for after their frames, and drew: not
    frame_thread.drain()  # counted here
    monkeypatch.setattr(agent_panels, "agent_pictures", counting)
    playback = PlaybackModel()
    widget = AgentPanels(playback)
    qtbot.addWidget(widget)
    playback.set_episode(episode)
    for turn in (1, 2, 3, 2, 1, 3):
        playback.seek(turn)
    frame_thread.drain()
    drawn = len(calls)
    widget.set_mode(ANNOTATED)
    frame_thread.drain()
    assert len(calls) > drawn  # the other mode is drawn anew ...
    widget.set_mode(AS_SENT)
    for turn in (2, 3):
        playback.seek(turn)
    frame_thread.drain()
    assert len(calls) == len(set(calls))  # ... and nothing is drawn again


def test_no_episode(qtbot):
    playback = PlaybackModel()
    widget = AgentPanels(playback)
    qtbot.addWidget(widget)
    assert widget.roles() == []
    playback.set_episode(None)
    assert widget.roles() == []


def test_a_scripted_role_says_it_called_no_model(panels):
    widget, playback = panels
    playback.seek(2)
    section = widget.panel("builder").conversation
    assert section.button.text() == "No model calls" and not section.button.isEnabled()
    assert widget.panel("builder").calls() == []


# ---- the conversation a model was sent ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def model_episode(tmp_path_factory) -> Episode:
    with pytest.MonkeyPatch.context() as monkeypatch:
        return record_model_run(tmp_path_factory.mktemp("model") / "run", monkeypatch)


def _texts(record: dict) -> list[str]:
    """Every text of the request's messages, as sent."""
    out = []
    for message in record["request"]["messages"]:
        content = message["content"]
        out += [content] if isinstance(content, str) else [p["text"] for p in content if p["type"] == "text"]
    return out


def test_the_conversation_holds_the_exact_messages_sent(qtbot, model_episode):
    playback = PlaybackModel()
    widget = AgentPanels(playback)
    qtbot.addWidget(widget)
    playback.set_episode(model_episode)
    for record in model_episode.raw[:4]:
        playback.seek(record["turn"])
        panel = widget.panel(record["role"])
        records = [r for r in model_episode.raw if (r["role"], r["turn"]) == (record["role"], record["turn"])]
        assert [c.index for c in panel.calls()] == [model_episode.raw.index(r) for r in records]
        shown = QTextDocumentFragment.fromHtml(panel.conversation.body.text()).toPlainText()
        for text in _texts(record):
            assert text in shown
        assert record["response"]["content"] in shown
        assert panel.conversation.button.isEnabled()


def test_a_reask_shows_as_a_second_call(qtbot, model_episode):
    unread = next(r for r in model_episode.raw if r["parse_error"])
    playback = PlaybackModel()
    widget = AgentPanels(playback)
    qtbot.addWidget(widget)
    playback.set_episode(model_episode)
    playback.seek(unread["turn"])
    panel = widget.panel(unread["role"])
    assert [c.call for c in panel.calls()] == [1, 2]
    assert panel.conversation.button.text() == "Conversation sent (2 calls)"
    assert HOSTILE in QTextDocumentFragment.fromHtml(panel.conversation.body.text()).toPlainText()


# ---- the grid -------------------------------------------------------------------------------------------------


def _inside_viewport(widget: AgentPanels, role: str) -> bool:
    panel, viewport = widget.panel(role), widget.scroll_area.viewport()
    top_left = panel.mapTo(viewport, panel.rect().topLeft())
    bottom_right = panel.mapTo(viewport, panel.rect().bottomRight())
    return viewport.rect().contains(top_left) and viewport.rect().contains(bottom_right)


@pytest.mark.parametrize(("size", "columns"), [((1200, 520), 4), ((600, 900), 2), ((250, 400), 1)])
def test_columns_follow_the_size(panels, qtbot, size, columns):
    """The fewest columns at which the four panels fit, or the most that leave each MIN_PANEL_WIDTH."""
    widget, playback = panels
    playback.seek(3)
    widget.resize(*size)
    qtbot.waitUntil(lambda: widget.columns == columns)
    rows = -(-4 // columns)
    qtbot.waitUntil(lambda: len({widget.panel(role).y() for role in widget.roles()}) == rows)
    if columns > 1:  # at these sizes every panel fits: none is scrolled out of view
        qtbot.waitUntil(lambda: all(_inside_viewport(widget, role) for role in widget.roles()))


def _picture_widths(widget: AgentPanels) -> list[int]:
    return [width for role in widget.roles() for width in widget.panel(role).picture_widths()]


def test_two_columns_and_shrunk_pictures_fit_a_narrow_dock(panels, qtbot):
    widget, playback = panels
    playback.seek(3)
    widget.resize(700, 900)  # two columns at their natural height would be about 960 pixels tall
    qtbot.waitUntil(lambda: widget.columns == 2)
    qtbot.waitUntil(lambda: all(_inside_viewport(widget, role) for role in widget.roles()))
    assert all(widget.panel(r).pixmaps() for r in widget.roles() if widget.panel(r).shown_turn is not None)
    assert min(_picture_widths(widget)) >= MIN_PICTURE_WIDTH


@pytest.mark.parametrize("size", [(450, 450), (300, 400)])
def test_pictures_stay_readable_in_a_small_dock_which_scrolls_instead(panels, qtbot, size):
    """In a dock the size of the app's default Agents dock, the pictures are never the stamps they were (about
    100 pixels wide): at least MIN_PICTURE_WIDTH wide, each panel no taller than the dock, which scrolls."""
    widget, playback = panels
    playback.seek(3)
    widget.resize(*size)
    qtbot.waitUntil(lambda: widget.columns == 1)
    qtbot.waitUntil(lambda: min(_picture_widths(widget)) >= MIN_PICTURE_WIDTH)
    if size[1] >= 450:  # room for a whole panel: each fits the dock, its pictures as large as that allows
        viewport = widget.scroll_area.viewport()
        qtbot.waitUntil(lambda: all(widget.panel(role).height() <= viewport.height() for role in widget.roles()))


def test_show_only_lays_out_the_shown_panels(panels, qtbot):
    widget, playback = panels
    playback.seek(3)
    widget.resize(1200, 520)
    widget.show_only({"builder"})
    qtbot.waitUntil(lambda: widget.columns == 1)
    assert widget.panel("builder").isVisible() and not widget.panel("D1").isVisible()
    widget.show_only(None)
    qtbot.waitUntil(lambda: widget.columns == 4)


def test_the_export_holds_every_panel(panels, qtbot):
    widget, playback = panels
    playback.seek(3)
    widget.resize(300, 400)  # one column, far taller than the dock
    qtbot.waitUntil(lambda: widget.columns == 1)
    last = widget.panel(widget.roles()[-1])
    assert not _inside_viewport(widget, last.role)
    picture = widget.grab_whole()
    assert picture.height() >= last.geometry().bottom() > widget.scroll_area.viewport().height()
    assert picture.width() >= last.geometry().right()


def test_the_panels_of_the_episode_before_are_gone_at_once_when_another_opens(panels, record):
    """Panels wait for the event loop to be deleted: until then they must neither show nor sit in the grid
    (they were drawn under the new panels' headers when episodes were opened in a row)."""
    widget, playback = panels
    old = [widget.panel(role) for role in widget.roles()]
    playback.set_episode(load_run(record("builder=random", turns=8, episodes=2)).episodes()[1])
    assert not any(panel.isVisible() for panel in old)
    grid = widget._grid
    assert all(grid.indexOf(panel) == -1 for panel in old)
    assert all(grid.indexOf(widget.panel(role)) != -1 for role in widget.roles())


@pytest.mark.parametrize("settled", [True, False])
def test_measuring_a_rich_label_asks_no_repaint_but_new_text_does(qtbot, settled):
    """A layout measuring a word-wrapped rich-text QLabel at other widths makes it ask for a repaint of the same
    pixels (a second frame after every step); a SettledLabel does not, and still repaints for new text."""
    label = (agent_panels.SettledLabel if settled else QLabel)("<b>a message</b> long enough to wrap " * 4)
    label.setWordWrap(True)
    qtbot.addWidget(label)
    label.resize(300, 120)
    label.show()
    qtbot.waitExposed(label)
    qtbot.wait(20)
    paints = EventCounter((QEvent.Type.Paint,), watched=label)
    for width in (180, 420, 300):
        label.heightForWidth(width)
    QApplication.processEvents()
    measured = paints.count
    label.setText("<i>another</i> text")
    QApplication.processEvents()
    paints.remove()
    assert (measured == 0) == settled  # a plain QLabel repaints: the test sees what it is about
    assert paints.count > measured


def test_a_settled_label_measures_as_qt_does_whatever_changed(qtbot):
    """A SettledLabel keeps its measures per text and width: each is what Qt measures for a QLabel set up the
    same, for texts shown again, after its font, style sheet and margins changed, and with word wrap off."""
    texts = ["<b>a message</b> long enough to wrap " * 3, "short", "<i>another</i> text that wraps, " * 5]
    settled, plain = agent_panels.SettledLabel(), QLabel()
    for label in (settled, plain):
        qtbot.addWidget(label)
        label.setWordWrap(True)

    def measures(label: QLabel) -> list[object]:
        heights = [label.heightForWidth(width) for width in (90, 180, 333)]
        return [*heights, label.sizeHint(), label.minimumSizeHint()]

    changes = [
        lambda label: None,
        lambda label: label.setFont(QFont(label.font().family(), 17)),
        lambda label: label.setStyleSheet("padding-top: 9px"),
        lambda label: label.setContentsMargins(12, 3, 5, 7),
        lambda label: label.setWordWrap(False),
    ]
    for change in changes:
        for label in (settled, plain):
            change(label)
        for text in (*texts, *texts):  # the second time through, as kept
            settled.setText(text)
            plain.setText(text)
            assert measures(settled) == measures(plain)


def _images(widget: AgentPanels) -> dict[str, list[bytes]]:
    """Every shown panel's pictures, as their pixels."""
    out = {}
    for role in widget.roles():
        images = [
            pixmap.toImage().convertToFormat(QImage.Format.Format_RGB32) for pixmap in widget.panel(role).pixmaps()
        ]
        out[role] = [bytes(image.constBits()) for image in images]
    return out


def test_the_next_turns_pictures_are_drawn_ahead_and_shown_as_drawn_afresh(panels, episode, qtbot):
    """A family drawing its pictures without VTK (blocks) has the next turn's drawn on the frame thread after a
    step; the step to that turn takes them, and the panels show what they show drawn at that turn afresh."""
    widget, playback = panels
    playback.seek(2)
    assert all(key[2] != 3 for key in widget._ahead.asked())  # asked once the step's frame is painted
    QApplication.processEvents()
    coming = widget._ahead.asked()
    assert coming and {key[2] for key in coming} <= {3} and {key[1] for key in coming} <= set(widget.roles())
    frame_thread.drain()
    assert all(future.done() for future in coming.values())
    playback.seek(3)
    assert all(widget._cache.get(key) is not None for key in coming)  # taken from the frame thread
    stepped = _images(widget)
    again = PlaybackModel()
    fresh = AgentPanels(again)
    qtbot.addWidget(fresh)
    again.set_episode(episode)
    again.seek(3)
    assert stepped == _images(fresh) and any(stepped.values())


def test_a_family_drawing_with_vtk_asks_nothing_of_the_frame_thread(panels):
    widget, playback = panels
    assert widget._views is not None
    widget._views = dataclasses.replace(widget._views, images_without_vtk=False)
    playback.seek(2)
    QApplication.processEvents()
    assert widget._ahead.asked() == {}
