"""The timeline follows the PlaybackModel: scrubber clicks seek, buttons call the model, the label listens."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QImage, QPaintEvent, QWheelEvent
from PySide6.QtWidgets import QApplication, QWidget

from simlab.core.episode import Episode
from simlab.core.playback import error_turns, turn_marks
from simlab.core.recording import load_run
from simlab.gui.playback import PlaybackModel
from simlab.gui.timeline import SCORE_COLOURS, SCORE_WORDS, TimelineScrubber, TimelineWidget
from simlab.render.formatting import headline_metrics
from simlab.runner.batch import RunConfig, run
from tests.gui.conftest import EventCounter, wait_shown

LEFT = Qt.MouseButton.LeftButton


def _first_episode(out, agents: list[str], turns: int) -> Episode:
    run(RunConfig("blocks", seed=0, episodes=6, agents=agents, settings={"turns": turns}), out)
    loaded = load_run(out)
    return loaded.load_episode(loaded.summaries[0]["episode_id"])


@pytest.fixture(scope="module")
def random_episode(tmp_path_factory: pytest.TempPathFactory) -> Episode:
    return _first_episode(tmp_path_factory.mktemp("runs") / "random", ["builder=random"], 6)


@pytest.fixture(scope="module")
def perfect_episode(tmp_path_factory: pytest.TempPathFactory) -> Episode:
    """The oracle builder plays verified moves only: no error and no mistake."""
    return _first_episode(tmp_path_factory.mktemp("runs") / "oracle", ["builder=oracle"], 6)


@pytest.fixture(scope="module")
def slipping_episode(tmp_path_factory: pytest.TempPathFactory) -> Episode:
    """The random builder only plays legal moves, so engine errors come from a builder that mishears."""
    return _first_episode(tmp_path_factory.mktemp("runs") / "slip", ["builder=scripted:0.3"], 20)


@pytest.fixture
def model(qtbot) -> Iterator[PlaybackModel]:
    playback = PlaybackModel()
    yield playback
    playback.pause()


@pytest.fixture
def timeline(qtbot, model: PlaybackModel, random_episode: Episode) -> TimelineWidget:
    widget = TimelineWidget(model)
    qtbot.addWidget(widget)
    widget.resize(1000, 60)
    model.set_episode(random_episode)
    widget.show()
    wait_shown(qtbot, widget)
    return widget


def _click_turn(qtbot, scrubber: TimelineScrubber, turn: int) -> None:
    pos = QPoint(round(scrubber.x_for_turn(turn)), scrubber.height() // 2)
    qtbot.mouseClick(scrubber, LEFT, pos=pos)


# ---- the scrubber --------------------------------------------------------------------------------------------
def test_scrubber_click_seeks_to_the_turn_under_the_mouse(qtbot, timeline: TimelineWidget, model) -> None:
    scrubber = timeline.scrubber
    assert scrubber.turn_count() == model.last_turn + 1
    for turn in (3, model.last_turn, 0, 1):
        _click_turn(qtbot, scrubber, turn)
        assert model.turn == turn
    assert scrubber.turn_at(-50) == 0
    assert scrubber.turn_at(scrubber.width() + 50) == model.last_turn


def test_scrubber_drag_seeks_as_it_moves(qtbot, timeline: TimelineWidget, model) -> None:
    scrubber = timeline.scrubber
    y = scrubber.height() // 2
    qtbot.mousePress(scrubber, LEFT, pos=QPoint(round(scrubber.x_for_turn(1)), y))
    assert model.turn == 1
    qtbot.mouseMove(scrubber, QPoint(round(scrubber.x_for_turn(4)), y))
    qtbot.mouseRelease(scrubber, LEFT, pos=QPoint(round(scrubber.x_for_turn(4)), y))
    assert model.turn == 4


def test_scrubber_wheel_steps(timeline: TimelineWidget, model) -> None:
    scrubber = timeline.scrubber
    model.seek(2)
    centre = QPointF(scrubber.x_for_turn(2), scrubber.height() / 2)

    def wheel(dy: int) -> None:
        event = QWheelEvent(
            centre, scrubber.mapToGlobal(centre), QPoint(), QPoint(0, dy), Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False,
        )  # fmt: skip
        QApplication.sendEvent(scrubber, event)

    wheel(-120)
    assert model.turn == 3
    wheel(120)
    wheel(120)
    assert model.turn == 1


def test_scrubber_tooltip_describes_the_turn(timeline: TimelineWidget, random_episode: Episode) -> None:
    messages = sum(1 for e in random_episode.events_of_turn(1) if e.kind == "message")
    text = timeline.scrubber.tooltip_for_turn(1)
    assert text.startswith(f"turn 1: {messages} message")
    assert "action" in text
    assert timeline.scrubber.tooltip_for_turn(99) == ""


# ---- buttons and label ---------------------------------------------------------------------------------------
def test_buttons_call_the_model(qtbot, timeline: TimelineWidget, model) -> None:
    last = model.last_turn
    qtbot.mouseClick(timeline.forward_button, LEFT)
    assert model.turn == 1
    qtbot.mouseClick(timeline.forward_button, LEFT)
    qtbot.mouseClick(timeline.back_button, LEFT)
    assert model.turn == 1
    qtbot.mouseClick(timeline.last_button, LEFT)
    assert model.turn == last
    qtbot.mouseClick(timeline.first_button, LEFT)
    assert model.turn == 0
    qtbot.mouseClick(timeline.play_button, LEFT)
    assert model.playing
    assert timeline.play_button.text() == "Pause"
    qtbot.mouseClick(timeline.play_button, LEFT)
    assert not model.playing
    assert timeline.play_button.text() == "Play"


def test_label_follows_turn_changed(timeline: TimelineWidget, model, random_episode: Episode) -> None:
    assert timeline.label_text() == f"turn 0 of {random_episode.last_turn}"
    model.seek(3)
    assert timeline.label_text() == f"turn 3 of {random_episode.last_turn}"
    model.set_episode(None)
    assert timeline.label_text() == "no episode"
    assert not timeline.play_button.isEnabled()


def test_a_step_repaints_the_turn_label_without_laying_the_timeline_out(
    qtbot, timeline: TimelineWidget, model, random_episode: Episode
) -> None:
    requests = EventCounter([QEvent.Type.LayoutRequest], timeline)
    for turn in (1, 5, 2, random_episode.last_turn):
        model.seek(turn)
        QApplication.processEvents()
        label = timeline.turn_label
        assert label.fontMetrics().horizontalAdvance(label.text()) <= label.width()  # the whole text shows
    assert requests.count == 0  # a label of fixed size: its new text asks no layout of the dock or the window


def test_speed_and_loop_controls_set_the_model(timeline: TimelineWidget, model) -> None:
    assert timeline.speed_spin.value() == 2.0
    assert (timeline.speed_spin.minimum(), timeline.speed_spin.maximum()) == (0.25, 20.0)
    timeline.speed_spin.setValue(8.0)
    assert model.speed == 8.0
    timeline.loop_check.setChecked(True)
    assert model.loop is True


def test_buttons_name_their_shortcuts(timeline: TimelineWidget) -> None:
    tips = {
        timeline.play_button: "Space",
        timeline.back_button: "Left",
        timeline.forward_button: "Right",
        timeline.first_button: "Home",
        timeline.last_button: "End",
        timeline.error_button: "Ctrl+E",
        timeline.previous_error_button: "Ctrl+Shift+E",
    }
    for button, key in tips.items():
        assert f"({key})" in button.toolTip()


def test_error_buttons_go_to_errors_and_mistakes_and_wrap_with_a_notice(
    qtbot, timeline: TimelineWidget, model, perfect_episode: Episode, slipping_episode: Episode
) -> None:
    model.set_episode(perfect_episode)
    assert error_turns(perfect_episode) == []
    assert not timeline.error_button.isEnabled() and not timeline.previous_error_button.isEnabled()
    errors = error_turns(slipping_episode)
    assert len(errors) >= 2 and errors[0] > 0
    model.set_episode(slipping_episode)
    assert timeline.scrubber.error_turns() == errors and timeline.error_button.isEnabled()
    qtbot.mouseClick(timeline.error_button, LEFT)
    assert model.turn == errors[0]
    qtbot.mouseClick(timeline.previous_error_button, LEFT)  # before the first: wraps to the last, and says so
    assert model.turn == errors[-1]
    with qtbot.waitSignal(model.notice) as notice:
        qtbot.mouseClick(timeline.error_button, LEFT)
    assert model.turn == errors[0] and notice.args == [f"Wrapped to the first error (turn {errors[0]})"]
    model.set_episode(perfect_episode)
    with qtbot.waitSignal(model.notice) as notice:
        assert not model.next_error()
    assert notice.args == ["No errors or mistakes in this episode"]


def test_a_move_against_the_target_is_a_mistake_on_the_timeline(random_episode: Episode) -> None:
    mistakes = [e for e in random_episode.events if e.kind == "result" and e.data.get("mistake")]
    assert mistakes and all(e.data["ok"] for e in mistakes)  # the engine took them: the target did not
    assert {e.turn for e in mistakes} <= set(error_turns(random_episode))


def test_play_advances_and_pause_stops(qtbot, timeline: TimelineWidget, model) -> None:
    model.set_speed(50)
    with qtbot.waitSignal(model.playingChanged, timeout=1000):
        qtbot.mouseClick(timeline.play_button, LEFT)
    qtbot.waitUntil(lambda: model.turn >= 3, timeout=3000)
    qtbot.mouseClick(timeline.play_button, LEFT)
    assert not model.playing
    stopped = model.turn
    qtbot.wait(150)
    assert model.turn == stopped


def test_a_score_that_rises_and_one_that_falls_are_marked_apart(random_episode: Episode) -> None:
    """The random builder places and removes blocks: progress rises and falls, each turn told by its colour."""
    marks = turn_marks(random_episode, ("overall_progress",))
    progress = {}
    for e in random_episode.events:
        if e.kind == "score":
            progress[e.turn] = e.data["metrics"]["overall_progress"]
    turns = sorted(progress)
    expected = {
        t: "gain" if progress[t] > progress[p] else "drop"
        for p, t in itertools.pairwise(turns)
        if progress[t] != progress[p]
    }
    assert {m.turn: m.score_change for m in marks if m.score_change in ("gain", "drop")} == expected
    assert {m.score_change for m in turn_marks(random_episode)} <= {None, "change"}  # no headline: no direction


def test_rising_and_falling_scores_draw_in_their_own_colours(qtbot, timeline: TimelineWidget, model) -> None:
    scrubber = timeline.scrubber
    changes = {m.turn: m.score_change for m in turn_marks(model.episode, headline_metrics(model.episode))}
    for turn, change in changes.items():
        if change:
            assert SCORE_WORDS[change] in scrubber.tooltip_for_turn(turn)
    assert SCORE_COLOURS["gain"] != SCORE_COLOURS["drop"]


class _PaintRegions(QObject):
    """The bounding rectangles of the paint events ``widget`` gets, and how many its parents get beneath it."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.widget, self.regions, self.beneath = widget, [], 0
        QApplication.instance().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and isinstance(event, QPaintEvent):
            if watched is self.widget:
                self.regions.append(event.region().boundingRect())
            elif isinstance(watched, QWidget) and watched.isAncestorOf(self.widget):
                under = QRect(self.widget.mapTo(watched, QPoint(0, 0)), self.widget.size())
                self.beneath += event.region().intersects(under)
        return False

    def remove(self) -> None:
        QApplication.instance().removeEventFilter(self)


def _on_screen(widget: QWidget) -> QImage:
    """What the screen shows of ``widget`` now (not a fresh paint, as ``grab`` would be)."""
    corner = widget.mapTo(widget.window(), QPoint(0, 0))
    shot = widget.screen().grabWindow(widget.window().winId(), corner.x(), corner.y(), widget.width(), widget.height())
    return shot.toImage().convertToFormat(QImage.Format.Format_RGB32)


def test_a_step_repaints_only_the_scrubbers_strip_between_the_two_turns(
    qtbot, timeline: TimelineWidget, model, random_episode: Episode
) -> None:
    scrubber = timeline.scrubber
    QApplication.processEvents()
    paints = _PaintRegions(scrubber)
    try:
        for before, after in ((0, 1), (1, 2), (2, 5), (5, 4)):
            assert model.turn == before
            paints.regions.clear()
            model.seek(after)
            QApplication.processEvents()
            strip = paints.regions[-1]
            assert paints.regions and all(region == strip for region in paints.regions)
            for turn in (before, after):  # both handles' places, whole, and little else
                handle = round(scrubber.x_for_turn(turn))
                assert strip.left() <= handle - scrubber.HANDLE and handle + scrubber.HANDLE <= strip.right()
            slot = scrubber.x_for_turn(1) - scrubber.x_for_turn(0)
            assert strip.width() <= abs(after - before) * slot + 4 * scrubber.HANDLE
            assert strip.height() == scrubber.height()
        assert paints.beneath == 0  # opaque: the dock and the window are not painted beneath it
    finally:
        paints.remove()


def test_a_partly_repainted_scrubber_shows_what_a_whole_repaint_shows(
    qtbot, timeline: TimelineWidget, model, random_episode: Episode
) -> None:
    scrubber = timeline.scrubber
    for turn in (1, 2, 5, 3, random_episode.last_turn, 0, 4):
        model.seek(turn)
        QApplication.processEvents()
        stepped = _on_screen(scrubber)
        scrubber.repaint()
        QApplication.processEvents()
        assert stepped == _on_screen(scrubber), f"turn {turn}: an old handle or track left behind"
        model.seek(turn)  # back to the state stepped to (repaint changed nothing to step from)


def test_a_step_paints_nothing_of_the_timeline_beneath_its_scrubber_and_label(
    qtbot, timeline: TimelineWidget, model
) -> None:
    QApplication.processEvents()
    beneath = [_PaintRegions(widget) for widget in (timeline.scrubber, timeline.turn_label)]
    try:
        for turn in (1, 2, 5, 4):
            model.seek(turn)
            QApplication.processEvents()
        assert [paints.beneath for paints in beneath] == [0, 0]
        assert all(paints.regions for paints in beneath)  # both were repainted
    finally:
        for paints in beneath:
            paints.remove()
