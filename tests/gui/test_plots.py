"""MetricPlots: the family's per-turn plots (blocks: progress and cumulative removes; rooms: objects named) with
a turn cursor that follows and drives playback."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QImage, QMouseEvent
from PySide6.QtWidgets import QApplication

from simlab.core.episode import Episode
from simlab.core.recording import load_run
from simlab.gui.cursor_view import CURSOR_COLOUR, CURSOR_HOVER_COLOUR
from simlab.gui.playback import PlaybackModel
from simlab.gui.plots import MetricPlots, whole_turn_step


@pytest.fixture(scope="module")
def episode(record) -> Episode:
    return load_run(record("builder=random", turns=8)).episodes()[0]


@pytest.fixture
def plots(qtbot, episode):
    playback = PlaybackModel()
    widget = MetricPlots(playback)
    qtbot.addWidget(widget)
    widget.resize(600, 500)
    widget.show()
    playback.set_episode(episode)
    return widget, playback


def test_cursor_follows_seek(plots, episode):
    widget, playback = plots
    for turn in (5, 0, episode.last_turn):
        playback.seek(turn)
        assert widget.cursor_turn() == turn
        xs = [widget.view.cursor_x(k) for k in range(len(widget.plots))]
        box = widget.plots[0].getViewBox()
        expected = widget.view.mapFromScene(box.mapViewToScene(QPointF(turn, 0))).x()
        assert xs == [pytest.approx(expected, abs=0.5)] * len(widget.plots)  # the plots share the turn axis


def _drag(widget: MetricPlots, plot: int, turns: list[float], release: bool = True) -> None:
    """Press the left button on plot number ``plot``'s cursor, move through ``turns`` (the axis's values), and
    release there."""
    view = widget.view
    box = widget.plots[plot].getViewBox()
    area = view.mapFromScene(box.sceneBoundingRect()).boundingRect()
    y = area.center().y()
    x = view.cursor_x(plot)
    assert x is not None
    _mouse(view, QEvent.Type.MouseButtonPress, QPointF(x + 2, y), Qt.MouseButton.LeftButton)
    for turn in turns:
        at = QPointF(view.mapFromScene(box.mapViewToScene(QPointF(turn, 0))).x(), y)
        _mouse(view, QEvent.Type.MouseMove, at, Qt.MouseButton.LeftButton)
    if release:
        _mouse(view, QEvent.Type.MouseButtonRelease, at, Qt.MouseButton.LeftButton)


def _mouse(view, kind: QEvent.Type, at: QPointF, buttons: Qt.MouseButton) -> None:
    button = Qt.MouseButton.NoButton if kind == QEvent.Type.MouseMove else Qt.MouseButton.LeftButton
    held = Qt.MouseButton.NoButton if kind == QEvent.Type.MouseButtonRelease else buttons
    event = QMouseEvent(kind, at, view.viewport().mapToGlobal(at), button, held, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(view.viewport(), event)


@pytest.mark.parametrize("release", [True, False])
def test_dragging_the_cursor_seeks_and_snaps(plots, episode, release):
    """Dragged (in the lower plot), the cursor seeks at each move, to the nearest turn within the episode; the
    view does not pan meanwhile."""
    widget, playback = plots
    playback.seek(5)
    box = widget.plots[0].getViewBox()
    shown = box.viewRange()
    _drag(widget, 1, [4.4, 3.4], release)
    assert playback.turn == 3 and widget.cursor_turn() == 3
    assert box.viewRange() == shown
    if release:
        _drag(widget, 0, [episode.last_turn + 5])
        assert playback.turn == episode.last_turn  # no further than the last turn


def test_dragging_beside_the_cursor_pans_the_plots(plots):
    widget, playback = plots
    playback.seek(5)
    view, box = widget.view, widget.plots[0].getViewBox()
    shown = box.viewRange()[0]
    area = view.mapFromScene(box.sceneBoundingRect()).boundingRect()
    start = QPointF(area.left() + 30, area.center().y())
    _mouse(view, QEvent.Type.MouseButtonPress, start, Qt.MouseButton.LeftButton)
    for dx in (10, 40, 80):
        _mouse(view, QEvent.Type.MouseMove, start + QPointF(dx, 0), Qt.MouseButton.LeftButton)
    _mouse(view, QEvent.Type.MouseButtonRelease, start + QPointF(80, 0), Qt.MouseButton.LeftButton)
    assert playback.turn == 5
    assert box.viewRange()[0][0] < shown[0]  # dragged right: the plots show earlier turns


def test_hovering_the_cursor_highlights_it(plots):
    widget, playback = plots
    playback.seek(4)
    plain = _painted(widget)
    view = widget.view
    x = view.cursor_x(1)
    assert x is not None
    area = view.mapFromScene(widget.plots[1].getViewBox().sceneBoundingRect()).boundingRect()
    at = QPointF(x + 2, area.center().y())
    assert plain.pixelColor(round(x), round(at.y())).name() == CURSOR_COLOUR
    _mouse(view, QEvent.Type.MouseMove, at, Qt.MouseButton.NoButton)
    assert _painted(widget).pixelColor(round(x), round(at.y())).name() == CURSOR_HOVER_COLOUR
    _mouse(view, QEvent.Type.MouseMove, at + QPointF(40, 0), Qt.MouseButton.NoButton)
    assert _painted(widget).pixelColor(round(x), round(at.y())).name() == CURSOR_COLOUR


def test_series(plots, episode):
    widget, _ = plots
    assert widget.titles() == ["Progress metrics per turn", "Removes: builder's attempts vs the oracle's"]
    assert widget.series_names() == ["overall progress", "completion", "IoU", "position accuracy"]
    assert widget.series_names(1) == ["turns the oracle offered a remove", "removes the builder attempted"]
    attempted = widget.series("removes the builder attempted")
    oracle = widget.series("turns the oracle offered a remove")
    removes = [e for e in episode.events if e.kind == "action" and e.data["action"].get("action") == "remove"]
    assert len(attempted) == len(oracle) == episode.last_turn + 1
    assert attempted[-1] == len(removes)
    assert attempted == sorted(attempted) and oracle == sorted(oracle)


def test_missing_metrics_and_empty_episode(qtbot, episode):
    playback = PlaybackModel()
    widget = MetricPlots(playback)
    qtbot.addWidget(widget)
    events = [e for e in episode.events if e.kind != "score"]
    bare = Episode(episode.episode_id, "blocks", 0, {}, events=events)
    playback.set_episode(bare)
    assert widget.series_names() == []
    playback.set_episode(Episode("empty", "blocks", 0, {}))
    assert widget.cursor_turn() == 0
    assert widget.series("removes the builder attempted") == [0]
    assert widget.series("turns the oracle offered a remove") == [None]  # no result: no oracle set is known
    playback.set_episode(Episode("elsewhere", "no-such-world", 0, {}))
    assert widget.plots == [] and "declares no per-turn plots" in widget.note.text()
    playback.set_episode(None)
    assert widget.cursor_turn() == 0 and widget.note.text() == "No episode loaded"


def test_rooms_plots_its_own_series_not_the_blocks_progress(qtbot, record_rooms):
    """Before the family contract the rooms Plots dock showed an empty plot keyed to blocks metric names."""
    episode = load_run(record_rooms).episodes()[0]
    playback = PlaybackModel()
    widget = MetricPlots(playback)
    qtbot.addWidget(widget)
    playback.set_episode(episode)
    assert widget.titles() == ["Objects mentioned per message"]
    named = widget.series("objects named")
    assert len(named) == episode.last_turn + 1 and sum(v or 0 for v in named) > 0
    assert "Progress metrics per turn" not in widget.titles()


@pytest.mark.parametrize(("last", "step"), [(2, 1), (12, 1), (20, 2), (60, 5), (1000, 100)])
def test_turn_ticks_are_whole_numbers(qtbot, last, step):
    assert whole_turn_step(last) == step


def test_a_short_episode_has_no_half_turn_ticks(qtbot, record_rooms):
    episode = load_run(record_rooms).episodes()[0]
    playback = PlaybackModel()
    widget = MetricPlots(playback)
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    widget.show()
    playback.set_episode(episode)
    axis = widget.plots[0].getPlotItem().getAxis("bottom")
    ticks = [value for level in axis.tickValues(0, episode.last_turn, 600) for value in level[1]]
    assert ticks and all(float(t).is_integer() for t in ticks)


def _painted(widget: MetricPlots) -> QImage:
    """What the plots show on the screen now, after the paints a change asked for."""
    QApplication.processEvents()
    return widget.view.viewport().grab().toImage()


def test_a_step_paints_the_kept_picture_and_the_cursor_as_a_fresh_paint_shows(plots, episode, qtbot):
    """A step changes nothing in the plots' scene (the cursor is the view's own drawing): the view paints the
    strips it uncovers from its picture of the scene, and each turn shows exactly what painting the whole scene
    afresh shows."""
    widget, playback = plots
    changes: list[object] = []
    widget.view.scene().changed.connect(changes.append)
    _painted(widget)
    _painted(widget)  # the views' ranges settle at the first paint: the scene changes once more
    changes.clear()
    for turn in (3, 1, episode.last_turn, 0):
        playback.seek(turn)
        kept = _painted(widget)
        assert changes == [], f"turn {turn}: the scene changed"
        widget.view._kept = None  # the next paint paints the whole scene afresh
        widget.view.viewport().update()
        assert _painted(widget) == kept, f"turn {turn}"
