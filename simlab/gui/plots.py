"""Per-turn plots with a turn cursor, bound to the :class:`~simlab.gui.playback.PlaybackModel`.

The plots are whatever the episode's family declares (:attr:`~simlab.core.family.WorldFamily.plots`): each
:class:`~simlab.core.family.PlotSpec` is one plot on the shared turn axis, its series drawn as lines with
markers or as steps (a value per turn). A vertical cursor in each plot follows the playback; dragging it
seeks (snapped to the nearest turn); dragging elsewhere pans, the wheel zooms (the plots' view is a
:class:`~simlab.gui.cursor_view.CursorView`, which draws the cursor itself). A family with no plots, or an unknown
world, gets a note instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from simlab.core.episode import Episode
from simlab.core.errors import ConfigError
from simlab.core.family import PlotSpec, hex_colour
from simlab.gui.cursor_view import CursorView
from simlab.gui.playback import PlaybackModel

TITLE_STYLE = {"color": "#20242a", "size": "10pt"}
PLOT_MIN_HEIGHT = 100
LEGEND_HEADROOM = 0.3  # share of the y range kept free above the data for the legend row


def _segments(values: Sequence[float | None]) -> tuple[list[float], list[float]]:
    """x and y with None dropped (pyqtgraph cannot draw None; NaN would break connect='all')."""
    xs = [float(t) for t, v in enumerate(values) if v is not None]
    ys = [float(v) for v in values if v is not None]
    return xs, ys


def whole_turn_step(last_turn: int, most_ticks: int = 12) -> int:
    """The spacing of turn ticks: 1, 2, 5, 10, 20, 50... so at most about ``most_ticks`` labels show."""
    for step in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000):
        if last_turn / step <= most_ticks:
            return step
    return 20000


def family_plots(episode: Episode | None) -> Sequence[PlotSpec]:
    """The plots the episode's family declares (none for no episode or an unknown world)."""
    from simlab.worlds import get_family

    if episode is None:
        return ()
    try:
        return get_family(episode.world).plots
    except ConfigError:
        return ()


class TurnPlot(pg.PlotItem):
    """One of the family's plots: a pyqtgraph PlotItem in the panel's one scene. It answers ``getPlotItem`` as
    a PlotWidget does, so callers reach its axes and items the same way."""

    def getPlotItem(self) -> TurnPlot:
        return self


class MetricPlots(QWidget):
    """The family's per-turn plots stacked on one turn axis, each with a draggable turn cursor.

    They share one pyqtgraph scene: Qt paints a scene's changes at once (its views flush the window), so the
    cursors of plots in scenes of their own painted the window once per plot on every step."""

    def __init__(self, playback: PlaybackModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._playback = playback
        self.plots: list[TurnPlot] = []
        self._specs: tuple[PlotSpec, ...] = ()  # what self.plots draw
        self._series: dict[str, list[float | None]] = {}
        self.hidden_for_players = False
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(2)
        self.note = QLabel("No episode loaded")
        self.note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._layout.addWidget(self.note)
        self.view = CursorView(self)
        self.view.setBackground("w")
        self.view.ci.setContentsMargins(0, 0, 0, 0)
        self.view.ci.setSpacing(2)
        self.view.hide()
        self.view.turnDragged.connect(self._playback.seek)
        self._layout.addWidget(self.view)
        playback.episodeChanged.connect(self._on_episode)
        playback.turnChanged.connect(self._on_turn)
        self._on_episode(playback.episode)

    # ---- public API ---------------------------------------------------------------------------------------
    def cursor_turn(self) -> int:
        """The turn the cursor lines stand on (0 without plots)."""
        return round(self.view.turn) if self.view.turn is not None else 0

    def titles(self) -> list[str]:
        """The titles of the plots shown, top to bottom."""
        return [plot.getPlotItem().titleLabel.text for plot in self.plots]

    def series_names(self, plot: int = 0) -> list[str]:
        """Names of the curves drawn in plot number ``plot``."""
        return [item.name() for item in self.plots[plot].getPlotItem().listDataItems()] if self.plots else []

    def series(self, label: str) -> list[float | None]:
        """The values drawn for the series ``label``, one per turn (KeyError when not drawn)."""
        return self._series[label]

    def hide_for_players(self, hidden: bool) -> None:
        """While a person plays, no curve (progress against the target would tell them about it), a note."""
        self.hidden_for_players = hidden
        for plot in self.plots:
            plot.setVisible(not hidden)
        self.view.setVisible(bool(self.plots) and not hidden)
        self.note.setVisible(hidden or not self.plots)
        if hidden:
            self.note.setText("The plots are hidden while a person plays; they come back when the episode ends.")
        else:
            self._on_episode(self._playback.episode)

    # ---- model -> view ------------------------------------------------------------------------------------
    def _on_episode(self, episode: Episode | None) -> None:
        specs = tuple(family_plots(episode))
        if specs != self._specs:  # another family: other plots (one family's keep their widgets, see _fill)
            self._make_plots(specs)
        self._series = {}
        self.note.setVisible(not specs)
        self.note.setText("No episode loaded" if episode is None else f"{episode.world} declares no per-turn plots")
        if episode is None:
            self.view.set_turn(None)
            return
        last = max(1, episode.last_turn)
        for spec, plot in zip(specs, self.plots, strict=True):
            self._fill(plot, spec, episode)
        if self.plots:
            self.plots[0].setXRange(0, last, padding=0.02)
        step = whole_turn_step(last)
        for plot in self.plots:  # turns are whole numbers: no 0.5 tick on a two-turn episode
            plot.getPlotItem().getAxis("bottom").setTickSpacing(major=step, minor=step)
        self.view.set_cursor_plots(self.plots, 0, max(0, episode.last_turn))
        if self.hidden_for_players:
            self.hide_for_players(True)
        self._on_turn(self._playback.turn)

    def _make_plots(self, specs: tuple[PlotSpec, ...]) -> None:
        """One empty plot per spec, replacing the plots of the family shown before. Plots are kept while the
        episodes shown are of one family: building a pyqtgraph plot costs ~10 ms, and every plot built walks
        Qt's children, where a stale PySide wrapper once surfaced (see ``SceneCanvas.close``)."""
        self.view.clear()
        self._specs, self.plots = specs, []
        for k, spec in enumerate(specs):
            plot = self._plot(spec)
            if k:
                plot.setXLink(self.plots[0])
            self.plots.append(plot)
            self.view.addItem(plot, row=k, col=0)
            self.view.ci.layout.setRowStretchFactor(k, 3 if k == 0 else 2)
        self.view.setMinimumHeight(PLOT_MIN_HEIGHT * len(specs))  # two fit beside the dialogue on a 768 px screen
        self.view.setVisible(bool(specs) and not self.hidden_for_players)

    def _plot(self, spec: PlotSpec) -> TurnPlot:
        plot = TurnPlot()
        plot.setTitle(spec.title, **TITLE_STYLE)
        plot.setLabel("left", spec.y_label)
        plot.setLabel("bottom", "turn")
        plot.showGrid(x=True, y=True, alpha=0.25)
        # Legends sit in one row across the top, in headroom above the data, so they never hide a curve.
        legend = plot.addLegend(offset=(8, 4), labelTextColor="#20242a", brush=pg.mkBrush(255, 255, 255, 200))
        legend.setColumnCount(min(4, len(spec.series)))
        plot.setMinimumHeight(PLOT_MIN_HEIGHT)
        return plot

    def _fill(self, plot: TurnPlot, spec: PlotSpec, episode: Episode) -> None:
        """Draw ``episode``'s series of ``spec`` in ``plot``, in place of whatever it showed."""
        plot.getPlotItem().clear()  # curves and their legend entries
        top = 1.0
        for series in spec.series:
            values = series.values(episode)
            self._series[series.label] = values
            top = max([top, *(v for v in values if v is not None)])
            self._draw(plot, series.label, hex_colour(series.colour), values, spec.steps)
        low, high = spec.y_range if spec.y_range is not None else (0.0, top)
        span = high - low
        plot.setYRange(low, high + span * (LEGEND_HEADROOM if spec.y_range else 2 * LEGEND_HEADROOM), padding=0.02)

    @staticmethod
    def _draw(plot: TurnPlot, label: str, colour: str, values: list[float | None], steps: bool) -> None:
        if steps:
            ys = [0.0 if v is None else float(v) for v in values]
            xs = [t - 0.5 for t in range(len(ys) + 1)]
            plot.plot(xs, ys, stepMode="center", name=label, pen=pg.mkPen(colour, width=2))
            return
        xs, ys = _segments(values)
        if xs:
            pen = pg.mkPen(colour, width=2)
            plot.plot(xs, ys, name=label, pen=pen, symbol="o", symbolSize=4, symbolBrush=colour, symbolPen=None)

    def _on_turn(self, turn: int) -> None:
        self.view.set_turn(turn if self.plots else None)
