"""Plots of a sweep (issue 27): the *Sweep* dock, histograms and scatter plots of any per-episode metric of the
open runs, grouped by any field, each point a click away from its episode.

:class:`SweepPanel` draws what :mod:`simlab.analysis.sweep` computes from the runs' summary columns (never an
episode file, so 100,000 episodes draw at once): a metric chooser (every number of the summaries), a second
metric for a scatter, a grouping (outcome, group, agents, the lineup, the run...) and the kind.

* **Histogram**: an outline per group over shared bins, the legend naming each group with its count. A click
  inside a bin lists that bin's episodes beside the plot (every shown group's, with their values) and opens the
  first; a click in the list opens another. The filter expression that keeps exactly that bin's episodes can be
  copied for the browser or ``report --where``.
* **Scatter**: one :class:`pyqtgraph.ScatterPlotItem` per group holding arrays (not an item per point); a whole
  number metric is jittered (seeded, so the same runs draw the same picture) and its axis says so. A click on a
  point opens its episode; hovering names it.

Episodes without a value of a plotted metric are left out and counted in a note under the plot. Clicking a
legend entry hides its group (and leaves it out of a bin's list). Opening an episode is the main window's
business: the panel emits :attr:`SweepPanel.episodeRequested` with the run's name and the episode id.

The columns are built when the panel is first shown (:meth:`SweepPanel.set_shown`) after the runs changed, and
kept per run until its index grows, so a hidden panel costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from pyqtgraph.GraphicsScene.mouseEvents import MouseClickEvent
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from simlab.analysis import sweep
from simlab.analysis.sweep import JITTER, LINEUP, RUN, Selection, Series, SweepTable
from simlab.core.recording import Run
from simlab.core.run_table import RunTable
from simlab.gui.figures_view import TEXT_COLOUR, series_colour

HISTOGRAM, SCATTER = "Histogram", "Scatter"
NO_GROUPING = "(no grouping)"
PREFERRED_GROUPINGS = (RUN, LINEUP, "group", "outcome")
"""The grouping chosen first: the first of these the runs have (several runs: the run)."""
MAX_LISTED = 1_000
"""A bin's list shows this many episodes at most; its filter expression keeps them all in the browser."""
LEGEND_COLUMNS = 3
DENSE_POINTS = 2_000
"""Above this many points they are drawn translucent, so their density shows."""
HISTOGRAM_TIP = (
    "Click inside a bin: its episodes are listed on the right (every shown group's) and the first is opened; "
    "click another in the list to open it. Click a legend entry to hide its group."
)
SCATTER_TIP = "Click a point to open its episode (hover to name it). Click a legend entry to hide its group."


class SweepPanel(QWidget):
    """Histograms and scatter plots of the open runs' per-episode metrics, grouped by any field."""

    episodeRequested = Signal(str, str)
    """Open this episode: the run's name (as the window names it) and the episode id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runs: list[tuple[str, Run]] = []
        self.table = SweepTable(())
        self._tables: dict[int, tuple[Run, int, RunTable]] = {}  # per Run object: its size when built
        self._stale = False
        self.shown = False  # see set_shown
        self.selection = Selection((), {})
        self.items: list[pg.GraphicsObject] = []  # a series each, in legend order
        self.edges = np.zeros(0)  # the histogram's bins
        self.listed_where = ""  # the filter expression of the listed bin
        self._build()

    # ---- widgets -------------------------------------------------------------------------------------------
    def _build(self) -> None:
        self.kind_combo = self._combo([HISTOGRAM, SCATTER], "Histogram of one metric, or one metric against another")
        self.x_combo = self._combo([], "The metric (the x axis)")
        self.y_label = QLabel("against")
        self.y_combo = self._combo([], "The scatter's second metric (the y axis)")
        self.group_combo = self._combo([], "A series per value of this field, each in its own colour")
        # two rows, so the dock is no wider than the panels it is tabbed with (the window's minimum width)
        controls = QVBoxLayout()
        rows = (
            (self.kind_combo, QLabel("of"), self.x_combo),
            (self.y_label, self.y_combo, QLabel("by"), self.group_combo),
        )
        for widgets in rows:
            line = QHBoxLayout()
            for widget in widgets:
                line.addWidget(widget, 1 if isinstance(widget, QComboBox) and widget is not self.kind_combo else 0)
            controls.addLayout(line)
        self.view = pg.GraphicsLayoutWidget()
        self.view.setBackground("w")
        self.view.setMinimumSize(200, 150)
        self.plot = self.view.addPlot(row=0, col=0)
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self.view.scene().sigMouseClicked.connect(self._scene_clicked)
        # under the plot, never over the data; a click on an entry hides its group
        self.legend = pg.LegendItem(labelTextColor=TEXT_COLOUR, colCount=LEGEND_COLUMNS)
        self.view.addItem(self.legend, row=1, col=0)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #6a5d00")
        self.marker = pg.ScatterPlotItem(size=14, symbol="o", pen=pg.mkPen("#20242a", width=2), brush=None)
        self.region = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(255, 200, 0, 60), pen=pg.mkPen(None))
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(controls)
        column.addWidget(self.view, 1)
        column.addWidget(self.note)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self._bin_box())
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setSizes([700, 260])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.splitter)
        self.kind_combo.currentIndexChanged.connect(self.draw)
        for combo in (self.x_combo, self.y_combo, self.group_combo):
            combo.currentIndexChanged.connect(self.draw)

    def _bin_box(self) -> QWidget:
        """The list of a clicked bin's episodes, its header and the button copying its filter expression."""
        self.bin_box = QWidget()
        box = QVBoxLayout(self.bin_box)
        box.setContentsMargins(0, 0, 0, 0)
        self.bin_label = QLabel()
        self.bin_label.setWordWrap(True)
        self.bin_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.bin_list = QListWidget()
        self.bin_list.itemClicked.connect(self._list_clicked)
        self.bin_list.itemActivated.connect(self._list_clicked)
        self.copy_button = QToolButton()
        self.copy_button.setText("Copy filter")
        self.copy_button.clicked.connect(lambda: QApplication.clipboard().setText(self.listed_where))
        box.addWidget(self.bin_label)
        box.addWidget(self.bin_list, 1)
        box.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignRight)
        self.bin_box.hide()
        return self.bin_box

    @staticmethod
    def _combo(items: Sequence[str], tip: str) -> QComboBox:
        combo = QComboBox()
        combo.addItems(list(items))
        combo.setToolTip(tip)
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(6)
        return combo

    # ---- the runs --------------------------------------------------------------------------------------------
    def set_runs(self, runs: Sequence[tuple[str, Run]]) -> None:
        """Plot the ``(name, run)`` pairs open in the window; read when the panel is (or next is) shown."""
        self.runs = list(runs)
        self._stale = True
        if self.shown:
            self.refresh()

    def set_shown(self, shown: bool) -> None:
        """Whether the panel is on the screen (its dock's ``visibilityChanged``: a dock tabbed behind another
        still says ``isVisible()``); the runs are read when it is."""
        self.shown = shown
        if shown and self._stale:
            self.refresh()

    def refresh(self) -> None:
        """Read the runs' columns (those not read at their present size), fill the choosers, draw."""
        self._stale = False
        self._tables = {id(run): (run, run_size(run), self._table_of(run)) for _, run in self.runs}
        self.table = sweep.sweep_table([(name, self._tables[id(run)][2]) for name, run in self.runs])
        metrics, groupings = self.table.metrics(), self.table.groupings()
        preferred = next((g for g in PREFERRED_GROUPINGS if g in groupings), NO_GROUPING)
        second = next((m for m in ("turns", *metrics) if m in metrics and m != (metrics or [""])[0]), "")
        for combo, names, first in (
            (self.x_combo, metrics, metrics[0] if metrics else ""),
            (self.y_combo, metrics, second),
            (self.group_combo, [NO_GROUPING, *groupings], preferred),
        ):
            refill(combo, names, first)
        self.draw()

    def _table_of(self, run: Run) -> RunTable:
        """The run's columns, built again only when its index has grown (a run still being played)."""
        known = self._tables.get(id(run))
        if known is not None and known[0] is run and known[1] == run_size(run):
            return known[2]
        return run.table()

    # ---- drawing ----------------------------------------------------------------------------------------------
    @property
    def kind(self) -> str:
        return self.kind_combo.currentText()

    @property
    def grouping(self) -> str | None:
        name = self.group_combo.currentText()
        return None if name in ("", NO_GROUPING) else name

    def draw(self) -> None:
        """Draw the chosen plot from the runs' columns."""
        scatter = self.kind == SCATTER
        self.y_label.setVisible(scatter)
        self.y_combo.setVisible(scatter)
        self._clear()
        x = self.x_combo.currentText()
        if not x:
            self.note.setText("Nothing to plot: the open runs have no numbers per episode" if self.runs else "")
            return
        y = self.y_combo.currentText() if scatter else None
        self.selection = sweep.select(self.table, x, y, self.grouping)
        self.note.setText(self.selection.note())
        by = f" by {self.grouping}" if self.grouping else ""
        what = f"{y} against {x}" if y else x
        self.plot.setTitle(f"{self.table.title()} · {what}{by}", color=TEXT_COLOUR, size="10pt")
        if y is None:
            self._draw_histogram(x)
        else:
            self._draw_scatter(x, y)
        self.plot.enableAutoRange()

    def _clear(self) -> None:
        self.plot.clear()  # the legend's entries go with the items
        self.legend.clear()
        self.items = []
        self.edges = np.zeros(0)
        self.bin_box.hide()
        self.listed_where = ""

    def _draw_histogram(self, x: str) -> None:
        series = self.selection.series
        values = np.concatenate([s.x for s in series]) if series else np.zeros(0)
        self.edges = sweep.bin_edges(values, self.table.integer(x))
        for k, s in enumerate(series):
            pen = pg.mkPen(series_colour(k), width=2)
            item = pg.PlotDataItem(self.edges, sweep.counts(s.x, self.edges), stepMode="center", pen=pen)
            self._add(item, s)
        self._axes(x, "episodes")
        self.view.setToolTip(HISTOGRAM_TIP)

    def _draw_scatter(self, x: str, y: str) -> None:
        dense = sum(len(s.rows) for s in self.selection.series) > DENSE_POINTS
        for k, s in enumerate(self.selection.series):
            colour = pg.mkColor(series_colour(k))
            colour.setAlpha(90 if dense else 220)
            item = pg.ScatterPlotItem(
                x=sweep.jittered(self.table, x, s.rows),
                y=sweep.jittered(self.table, y, s.rows),
                data=s.rows,
                size=5 if dense else 8,
                pen=None,
                brush=pg.mkBrush(colour),
                hoverable=True,
                tip=self._point_tip,
            )
            item.sigClicked.connect(self._point_clicked)
            # the legend shows a solid swatch (a translucent 5-pixel one is hard to see); hiding it hides the points
            swatch = pg.ScatterPlotItem(size=10, pen=None, brush=pg.mkBrush(series_colour(k)))
            swatch.visibleChanged.connect(lambda item=item, swatch=swatch: item.setVisible(swatch.isVisible()))
            self._add(item, s, swatch)
        self._axes(self._axis_name(x), self._axis_name(y))
        self.view.setToolTip(SCATTER_TIP)

    def _add(self, item: pg.GraphicsObject, series: Series, swatch: pg.GraphicsObject | None = None) -> None:
        """Draw a series' ``item``, named in the legend by ``swatch`` (the item itself when None)."""
        self.plot.addItem(item)
        self.legend.addItem(swatch or item, f"{series.label} ({len(series.rows):,})")
        self.items.append(item)

    def _axes(self, bottom: str, left: str) -> None:
        plot = self.plot
        plot.setLabel("bottom", bottom, color=TEXT_COLOUR)
        plot.setLabel("left", left, color=TEXT_COLOUR)

    def _axis_name(self, name: str) -> str:
        return f"{name} (jittered ±{JITTER:g})" if self.table.integer(name) else name

    # ---- clicks -----------------------------------------------------------------------------------------------
    def _point_tip(self, x: float, y: float, data: int) -> str:
        """A hovered point's episode and its values (unjittered)."""
        row = int(data)
        run, episode_id = self.table.key(row)
        x_name, y_name = self.x_combo.currentText(), self.y_combo.currentText()
        where = f" ({run})" if len(self.runs) > 1 else ""
        values = (f"{name} = {self.table.numbers(name)[row]:.4g}" for name in dict.fromkeys((x_name, y_name)))
        return f"{episode_id}{where}\n" + "\n".join(values)

    def _point_clicked(self, _item: pg.ScatterPlotItem, points: Sequence[pg.SpotItem], _event: object) -> None:
        """Open the episode of the point clicked (the one drawn on top, where points overlap)."""
        if len(points):
            self.open_row(int(points[0].data()), points[0].pos())

    def open_row(self, row: int, at: QPointF | None = None) -> None:
        """Ask for the episode of table row ``row``; ``at`` rings its point."""
        if at is not None:
            self.marker.setData([at.x()], [at.y()])
            if self.marker.scene() is None:
                self.plot.addItem(self.marker, ignoreBounds=True)
        self.episodeRequested.emit(*self.table.key(row))

    def _scene_clicked(self, event: MouseClickEvent) -> None:
        """A click in a histogram: the bin under it lists its episodes (nothing above every outline)."""
        if self.kind != HISTOGRAM or not len(self.edges) or event.button() != Qt.MouseButton.LeftButton:
            return
        view = self.plot.getViewBox()
        scene_pos = event.scenePos()
        if not view.sceneBoundingRect().contains(scene_pos):
            return
        point = view.mapSceneToView(scene_pos)
        k = int(sweep.bin_of(np.array([point.x()]), self.edges)[0])
        if k >= 0:
            self.open_bin(k, point.y())

    def shown_series(self) -> list[tuple[int, Series]]:
        """The series whose legend entry is on, with their colour index."""
        return [
            (k, s)
            for k, (s, item) in enumerate(zip(self.selection.series, self.items, strict=True))
            if item.isVisible()
        ]

    def open_bin(self, k: int, height: float | None = None) -> int:
        """List bin ``k``'s episodes of every shown group and open the first; ``height`` (a click's y) above every
        outline lists nothing. Returns how many episodes the bin holds."""
        x = self.x_combo.currentText()
        picked = [(k_colour, s, s.rows[sweep.bin_of(s.x, self.edges) == k]) for k_colour, s in self.shown_series()]
        total = sum(len(rows) for _, _, rows in picked)
        if not total or (height is not None and height > max(len(rows) for _, _, rows in picked)):
            return 0
        self._list_bin(x, k, picked, total)
        first = self.bin_list.item(0)
        self.bin_list.setCurrentItem(first)
        self._list_clicked(first)
        return total

    def _list_bin(self, x: str, k: int, picked: list[tuple[int, Series, np.ndarray]], total: int) -> None:
        closing = "]" if k == len(self.edges) - 2 else ")"
        span = f"[{self.edges[k]:.4g}, {self.edges[k + 1]:.4g}{closing}"
        parts = ", ".join(f"{s.label} {len(rows):,}" for _, s, rows in picked if len(rows))
        self.listed_where = sweep.bin_where(x, self.edges, k) + self._groups_where([s for _, s, _ in picked])
        self.bin_label.setText(f"<b>{x}</b> in {span}: {total:,} episode{'s' if total != 1 else ''} ({parts})")
        self.copy_button.setToolTip(
            f"Copy the filter that keeps these episodes (browser, report --where):\n{self.listed_where}"
        )
        self.bin_list.clear()
        values = self.table.numbers(x)
        shown = 0
        for colour, s, rows in picked:
            for row in rows[: MAX_LISTED - shown].tolist():
                run, episode_id = self.table.key(row)
                where = f"  [{run}]" if len(self.runs) > 1 and self.grouping != RUN else ""
                item = QListWidgetItem(f"{episode_id}  {values[row]:.4g}  {s.label}{where}")
                item.setData(Qt.ItemDataRole.UserRole, row)
                item.setForeground(pg.mkColor(series_colour(colour)))
                self.bin_list.addItem(item)
            shown = min(MAX_LISTED, shown + len(rows))
        if total > shown:
            more = QListWidgetItem(f"… and {total - shown:,} more: copy the filter for the browser")
            more.setFlags(Qt.ItemFlag.NoItemFlags)
            self.bin_list.addItem(more)
        self.region.setRegion((self.edges[k], self.edges[k + 1]))
        if self.region.scene() is None:
            self.plot.addItem(self.region, ignoreBounds=True)
        self.bin_box.show()

    def _groups_where(self, shown: list[Series]) -> str:
        """`` and (GROUP or GROUP)`` keeping the shown groups when some are hidden ("" when all are shown, or the
        grouping is by run, which the browser's run menu chooses)."""
        clauses = [sweep.group_where(self.table, self.grouping, s.rows) for s in shown]
        if len(shown) == len(self.selection.series) or not all(clauses):
            return ""
        return f" and {clauses[0]}" if len(clauses) == 1 else " and (" + " or ".join(f"({c})" for c in clauses) + ")"

    def _list_clicked(self, item: QListWidgetItem) -> None:
        row = item.data(Qt.ItemDataRole.UserRole)
        if row is not None:
            self.open_row(int(row))


def run_size(run: Run) -> int:
    """How many summaries ``run`` holds now (a run still being played grows)."""
    return len(run.summaries)


def refill(combo: QComboBox, names: Sequence[str], default: str) -> None:
    """Put ``names`` in ``combo`` keeping its choice when still there, else choosing ``default``; quietly."""
    current = combo.currentText()
    combo.blockSignals(True)
    combo.clear()
    combo.addItems(list(names))
    combo.setCurrentIndex(max(0, combo.findText(current if current in names else default)))
    combo.blockSignals(False)
