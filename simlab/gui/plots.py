"""Per-turn metric plots with a turn cursor, bound to the :class:`~simlab.gui.playback.PlaybackModel`.

The top plot shows the progress metrics (``overall_progress``, ``completion``, ``iou``, ``position_accuracy``;
missing ones are skipped) on 0..1. The bottom plot compares, cumulatively, the removes the builder attempted
(action events whose action is ``remove``) with the removes the oracle prescribed, counted as *the turns whose
oracle set (the ``oracle`` list of the turn's result) holds at least one remove*: a turn where removing was
verified progress. Both share the turn axis. A vertical cursor in each plot follows the playback; dragging it
seeks (snapped to the nearest turn). Dragging the line moves only the line; dragging elsewhere pans, the wheel
zooms.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate

import pyqtgraph as pg
from PySide6.QtWidgets import QVBoxLayout, QWidget

from simlab.core.episode import Episode
from simlab.gui.playback import PlaybackModel

PROGRESS_METRICS: tuple[tuple[str, str, str], ...] = (
    ("overall_progress", "overall progress", "#1f5fbf"),
    ("completion", "completion", "#2e7d32"),
    ("iou", "IoU", "#d2691e"),
    ("position_accuracy", "position accuracy", "#7b3fb5"),
)
"""(metric name, legend label, colour) of the top plot."""

ATTEMPTED_COLOUR = "#c62828"
ORACLE_COLOUR = "#455a64"
CURSOR_COLOUR = "#263238"
PROGRESS_TITLE = "Progress metrics per turn"
REMOVES_TITLE = "Removes: builder's attempts vs the oracle's"
TITLE_STYLE = {"color": "#20242a", "size": "10pt"}
CURSOR_HOVER_COLOUR = "#ffb300"


def attempted_removes(episode: Episode) -> list[int]:
    """Cumulative count of the builder's ``remove`` actions, per turn 0..last_turn."""
    per_turn = [0] * (episode.last_turn + 1)
    for event in episode.events:
        action = event.data.get("action") if event.kind == "action" else None
        if isinstance(action, dict) and action.get("action") == "remove":
            per_turn[event.turn] += 1
    return list(accumulate(per_turn))


def oracle_removes(episode: Episode) -> list[int]:
    """Cumulative count of turns whose oracle set (the result's ``oracle`` list) holds a remove."""
    per_turn = [0] * (episode.last_turn + 1)
    for event in episode.events:
        if event.kind != "result":
            continue
        moves = event.data.get("oracle") or []
        if any(isinstance(m, dict) and m.get("action") == "remove" for m in moves):
            per_turn[event.turn] = 1
    return list(accumulate(per_turn))


def _segments(values: Sequence[float | None]) -> tuple[list[float], list[float]]:
    """x and y with None dropped (pyqtgraph cannot draw None; NaN would break connect='all')."""
    xs = [float(t) for t, v in enumerate(values) if v is not None]
    ys = [float(v) for v in values if v is not None]
    return xs, ys


LEGEND_HEADROOM = 0.3  # share of the y range kept free above the data for the legend row


class MetricPlots(QWidget):
    """Progress metrics (top) and cumulative removes (bottom) per turn, each with a draggable turn cursor."""

    def __init__(self, playback: PlaybackModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._playback = playback
        self._episode: Episode | None = None
        self._removes: tuple[list[int], list[int]] = ([], [])
        self.progress_plot = pg.PlotWidget(self, background="w")
        self.removes_plot = pg.PlotWidget(self, background="w")
        # Legends sit in one row across the top, in headroom above the data, so they never hide a curve.
        self._style(self.progress_plot, "progress", PROGRESS_TITLE, columns=4)
        self._style(self.removes_plot, "removes (cumulative)", REMOVES_TITLE, columns=2)
        self.progress_plot.setYRange(0, 1 + LEGEND_HEADROOM, padding=0.02)
        self.progress_plot.getPlotItem().getViewBox().setLimits(yMin=-0.1, yMax=1.1 + LEGEND_HEADROOM)
        self.progress_plot.getPlotItem().getAxis("left").setTicks([[(v, f"{v:g}") for v in (0, 0.25, 0.5, 0.75, 1)]])
        self.removes_plot.setXLink(self.progress_plot)
        self.cursors = [self._cursor(self.progress_plot, labelled=True), self._cursor(self.removes_plot)]
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.progress_plot, 3)
        layout.addWidget(self.removes_plot, 2)
        playback.episodeChanged.connect(self._on_episode)
        playback.turnChanged.connect(self._on_turn)
        self._on_episode(playback.episode)

    # ---- public API ---------------------------------------------------------------------------------------
    def cursor_turn(self) -> int:
        """The turn the cursor lines stand on."""
        return round(self.cursors[0].value())

    def remove_series(self) -> tuple[list[int], list[int]]:
        """(cumulative attempted removes, cumulative oracle-remove turns), one value per turn."""
        return self._removes

    def series_names(self) -> list[str]:
        """Names of the curves drawn in the top plot."""
        return [item.name() for item in self.progress_plot.getPlotItem().listDataItems()]

    # ---- construction -------------------------------------------------------------------------------------
    @staticmethod
    def _style(plot: pg.PlotWidget, y_label: str, title: str, columns: int) -> None:
        item = plot.getPlotItem()
        item.setTitle(title, **TITLE_STYLE)
        item.setLabel("left", y_label)
        item.setLabel("bottom", "turn")
        item.showGrid(x=True, y=True, alpha=0.25)
        legend = item.addLegend(offset=(8, 4), labelTextColor="#20242a", brush=pg.mkBrush(255, 255, 255, 200))
        legend.setColumnCount(columns)
        plot.setMinimumHeight(140)

    def _cursor(self, plot: pg.PlotWidget, labelled: bool = False) -> pg.InfiniteLine:
        label_opts = {"position": 0.12, "color": "#ffffff", "fill": pg.mkBrush(CURSOR_COLOUR), "movable": False}
        line = pg.InfiniteLine(
            label="turn {value:.0f}" if labelled else None,
            labelOpts=label_opts if labelled else None,
            pos=0,
            angle=90,
            movable=True,
            pen=pg.mkPen(CURSOR_COLOUR, width=2),
            hoverPen=pg.mkPen(CURSOR_HOVER_COLOUR, width=5),
        )
        line.setToolTip("Drag to change the turn")
        line.setZValue(10)
        line.sigDragged.connect(self._on_cursor_dragged)
        line.sigPositionChangeFinished.connect(self._on_cursor_dragged)
        plot.addItem(line, ignoreBounds=True)
        return line

    # ---- model -> view ------------------------------------------------------------------------------------
    def _on_episode(self, episode: Episode | None) -> None:
        self._episode = episode
        for plot in (self.progress_plot, self.removes_plot):
            for item in plot.getPlotItem().listDataItems():
                plot.removeItem(item)
        self._removes = ([], [])
        if episode is not None:
            self._draw_progress(episode)
            if episode.world == "blocks":
                self._draw_removes(episode)
            else:
                self._draw_mentions(episode)
        last = episode.last_turn if episode is not None else 1
        self.progress_plot.setXRange(0, max(1, last), padding=0.02)
        for line in self.cursors:
            line.setBounds((0, max(0, last)))
        self._on_turn(self._playback.turn)

    def _draw_progress(self, episode: Episode) -> None:
        for name, label, colour in PROGRESS_METRICS:
            xs, ys = _segments(episode.metric_series(name))
            if xs:
                self.progress_plot.plot(
                    xs,
                    ys,
                    name=label,
                    pen=pg.mkPen(colour, width=2),
                    symbol="o",
                    symbolSize=4,
                    symbolBrush=colour,
                    symbolPen=None,
                )

    def _draw_removes(self, episode: Episode) -> None:
        self.removes_plot.setTitle(REMOVES_TITLE, **TITLE_STYLE)
        self.removes_plot.setLabel("left", "removes (cumulative)")
        attempted, oracle = attempted_removes(episode), oracle_removes(episode)
        self._removes = (attempted, oracle)
        xs = [t - 0.5 for t in range(len(attempted) + 1)]
        for values, label, colour in (
            (oracle, "turns the oracle offered a remove", ORACLE_COLOUR),
            (attempted, "removes the builder attempted", ATTEMPTED_COLOUR),
        ):
            if values:
                self.removes_plot.plot(xs, values, stepMode="center", name=label, pen=pg.mkPen(colour, width=2))
        top = max([*attempted, *oracle, 1])
        self.removes_plot.setYRange(0, top * (1 + 2 * LEGEND_HEADROOM), padding=0.05)

    def _draw_mentions(self, episode: Episode) -> None:
        """Worlds without removes (rooms): the objects each message named (the paper's Fig. 8 measure)."""
        values = [0.0 if v is None else v for v in _per_turn(episode, "mentions")]
        self.removes_plot.setTitle("Objects mentioned per message", **TITLE_STYLE)
        self.removes_plot.setLabel("left", "objects")
        if any(values):
            xs = [t - 0.5 for t in range(len(values) + 1)]
            pen = pg.mkPen(ORACLE_COLOUR, width=2)
            self.removes_plot.plot(xs, values, stepMode="center", name="objects named", pen=pen)
        self.removes_plot.setYRange(0, max([*values, 1]) * (1 + 2 * LEGEND_HEADROOM), padding=0.05)

    def _on_turn(self, turn: int) -> None:
        for line in self.cursors:
            if line.value() != turn:
                line.setValue(turn)  # sigPositionChanged only (it moves the label); seeking listens to drags

    # ---- view -> model ------------------------------------------------------------------------------------
    def _on_cursor_dragged(self, line: pg.InfiniteLine) -> None:
        """Snap the dragged line to the nearest turn and seek there."""
        turn = round(line.value())
        self._playback.seek(turn)
        self._on_turn(self._playback.turn)


def _per_turn(episode: Episode, name: str) -> list[float | None]:
    """The value a score event gave ``name`` at each turn 0..last_turn (None where no event gave one)."""
    out: list[float | None] = [None] * (episode.last_turn + 1)
    for event in episode.events:
        if event.kind == "score" and name in event.data.get("metrics", {}):
            out[event.turn] = event.data["metrics"][name]
    return out
