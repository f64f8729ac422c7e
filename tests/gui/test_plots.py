"""MetricPlots: the family's per-turn plots (blocks: progress and cumulative removes; rooms: objects named) with
a turn cursor that follows and drives playback."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from simlab.core.episode import Episode
from simlab.core.recording import load_run
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
        assert all(line.value() == turn for line in widget.cursors)


@pytest.mark.parametrize("signal", ["sigPositionChangeFinished", "sigDragged"])
def test_moving_cursor_seeks_and_snaps(plots, signal):
    widget, playback = plots
    line = widget.cursors[1]
    line.setValue(3.4)
    getattr(line, signal).emit(line)
    assert playback.turn == 3
    assert widget.cursor_turn() == 3
    assert all(other.value() == 3 for other in widget.cursors)


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
    return widget.view.grab().toImage()


def test_a_cursor_moved_over_cached_items_paints_what_a_fresh_paint_shows(plots, episode, qtbot):
    """The still items (axes and grid, curves, markers, legend) are painted from Qt's pictures of them as the
    cursor moves: each turn shows exactly what painting every item afresh shows."""
    widget, playback = plots
    still = _still_items(widget)
    assert still, "nothing is cached: the test would compare a paint with itself"
    for turn in (3, 1, episode.last_turn, 0):
        playback.seek(turn)
        cached = _painted(widget)
        for item in still:
            item.setCacheMode(item.CacheMode.NoCache)
        fresh = _painted(widget)
        for item in still:  # cached again for the next turn
            item.setCacheMode(item.CacheMode.DeviceCoordinateCache)
        assert cached == fresh, f"turn {turn}"


def _still_items(widget: MetricPlots) -> list:
    """Every item of the plots' scene that Qt caches."""
    return [i for i in widget.view.scene().items() if i.cacheMode() != i.CacheMode.NoCache]
