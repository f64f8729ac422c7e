"""The analysis figures of the open runs, in the app (issue 15): the *Figures* dock.

:class:`FiguresPanel` shows every :class:`~simlab.core.family.FigureSpec` of the runs' family computed across
the runs (several runs: their series side by side, each label prefixed ``RUNNAME · ``, as
:func:`simlab.analysis.figures.merge_figures` does for ``report RUN... --figures``). A combo picks the figure;
it is drawn with pyqtgraph exactly as its CSV says: lines and scatters with their error bars, grouped bars
with the categories in :func:`~simlab.analysis.figures.bar_categories` order, the fixed y range, the axis
labels and a legend under the plot (never over the data). A series' colour is the one its position gets in
matplotlib's default cycle, so the app and the exported PNG agree.

After the family's figures come the judges' (one per judge that rated any of the runs, as ``report --figures``
draws it) and, when the runs hold at least three agent lineups, the feature correlations with the family's
first headline metric (CRAFT's table 7, as ``report --correlate METRIC --figures`` draws it).

Reading every episode of a big run takes a while, so a run's figures are computed in a thread (a progress bar
meanwhile; the window keeps painting) and cached per run folder, until its index changes. A result that
arrives after :meth:`FiguresPanel.set_runs` was called again is dropped.

The open episode is linked through :meth:`FiguresPanel.set_cursor`: a figure over turns gets a vertical line
at the current turn (:attr:`FigureData.x_is_turn`), drawn by its view as the Plots dock's is
(:class:`~simlab.gui.cursor_view.CursorView`) and dragged to another turn the same way, and the points computed
from the open episode (:attr:`FigurePoint.episodes`: a lineup's mean, a bar's bucket) are ringed or outlined.
"""

from __future__ import annotations

import csv
import io
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from simlab.analysis.correlations import (
    MIN_LINEUPS,
    RunFeatures,
    correlation_figure,
    correlation_spec,
    feature_correlations,
    lineup_count,
    message_words,
)
from simlab.analysis.figures import (
    BAR_GROUP_WIDTH,
    bar_categories,
    figure_csv,
    judge_figure_spec,
    merge_figures,
    run_figures,
    write_figure,
    x_limits,
)
from simlab.analysis.judgments import RunJudgments, judge_figure, run_judgments
from simlab.core.errors import SimlabError
from simlab.core.exports import export_into
from simlab.core.family import FigureData, FigureSeries, FigureSpec, WorldFamily
from simlab.core.judging import JUDGMENTS_DIR, Judge
from simlab.core.reading import resolved
from simlab.core.recording import INDEX_FILE, Run, load_episode
from simlab.gui.background import collector_paused
from simlab.gui.cursor_view import CursorView
from simlab.gui.plots import whole_turn_step
from simlab.render.formatting import esc
from simlab.worlds import get_family

# matplotlib's default colour cycle ("tab10"): series k has the same colour here and in the exported PNG.
SERIES_COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
HIGHLIGHT_COLOUR = "#20242a"
TEXT_COLOUR = "#20242a"
NO_DATA = "no data: nothing of this kind was recorded in these runs"
Y_PADDING = 0.05  # of a fixed y range, so a marker at its edge (accuracy 1.0) is drawn whole
PROGRESS_STEPS = 100  # progress reports per computation at most, however many episodes it reads

RunKey = tuple[str, int, int, int]
"""A run folder, its index's size and modification time, and the bytes of its judgments: a run that grew or
was judged again is read again."""


def skipped_note(skipped: Sequence[str], shown: int = 3) -> str:
    """The note naming episodes left out of the figures because their files could not be read ("" if none)."""
    if not skipped:
        return ""
    more = f"; and {len(skipped) - shown} more" if len(skipped) > shown else ""
    count = f"{len(skipped)} episode{'s' if len(skipped) != 1 else ''}"
    return f"{count} left out of the figures (unreadable files): {'; '.join(skipped[:shown])}{more}"


def series_colour(index: int) -> str:
    """The colour of the figure's ``index``-th series (matplotlib's cycle, repeating after ten)."""
    return SERIES_COLOURS[index % len(SERIES_COLOURS)]


def run_key(run: Run) -> RunKey:
    """The cache key of ``run``'s figures: its folder, the state of its index and of its judgments."""
    judged = sum(p.stat().st_size for p in (run.path / JUDGMENTS_DIR).glob("*.jsonl"))
    try:
        stat = (run.path / INDEX_FILE).stat()
    except OSError:
        return str(resolved(run.path)), -1, -1, judged
    return str(resolved(run.path)), stat.st_size, stat.st_mtime_ns, judged


@dataclass(frozen=True)
class RunFigures:
    """What one run contributes: its family figures (declared order), a figure per judge that rated it, and
    what the feature correlations need (its summaries, judgments and words per message)."""

    family: tuple[FigureData, ...]
    judges: dict[str, tuple[Judge, FigureData]]
    features: RunFeatures
    judged: RunJudgments
    skipped: tuple[str, ...] = ()  # the episodes whose files could not be read, each with why


class Cancelled(Exception):
    """The computation was superseded: nobody wants its result any more."""


def compute_run(
    name: str, run: Run, family: WorldFamily, cancelled: threading.Event, read: Callable[[], None]
) -> RunFigures:
    """Every figure of ``family`` from ``run``'s episodes, in declared order, and its judges' figures. Calls
    ``read`` after each episode file; raises :class:`Cancelled` as soon as ``cancelled`` is set. An episode
    whose file cannot be read is left out of every figure (its summary too, so the figures agree) and named
    in ``skipped``: one damaged file does not take the run's figures with it."""
    episodes, summaries, skipped = [], [], []
    for summary in run.summaries:
        if cancelled.is_set():
            raise Cancelled
        try:
            episodes.append(load_episode(run.episode_path(summary)))
            summaries.append(summary)
        except (SimlabError, OSError, ValueError) as exc:
            skipped.append(f"{summary.get('episode_id')}: {exc}")
        read()
    judged = run_judgments(run.path, family.name)
    judges = {j.name: (j, judge_figure(j, judged.records, summaries)) for j in judged.judges}
    words = {e.episode_id: message_words(e) for e in episodes}
    features = RunFeatures(summaries, judged.records, words)
    figures = tuple(data for _spec, data in run_figures([(name, episodes)], family))
    return RunFigures(figures, judges, features, judged, tuple(skipped))


@dataclass(frozen=True)
class ShownFigure:
    """One figure as the panel draws it: the spec, the data across the runs, and the run of each series."""

    spec: FigureSpec
    data: FigureData
    series_runs: tuple[str, ...]


class _Job(QObject):
    """One computation of the runs' figures not cached yet, in a thread of its own. Its signals reach the panel
    on the GUI thread, each naming the job so the panel can tell a stale one."""

    progressed = Signal(object, int)  # job, episodes read so far
    done = Signal(object, object)  # job, {RunKey: RunFigures}
    failed = Signal(object, str)  # job, why

    def __init__(
        self, runs: Sequence[tuple[RunKey, str, Run]], asked: Sequence[tuple[RunKey, str, Run]], family: WorldFamily
    ) -> None:
        super().__init__()
        self.runs, self.family = list(runs), family
        self.asked = list(asked)  # every run of the set_runs call that started it, cached or not
        self.total = sum(len(run.summaries) for _key, _name, run in self.runs)
        self.cancelled = threading.Event()
        self._read = 0

    def start(self) -> None:
        threading.Thread(target=self._run, daemon=True, name="figures").start()

    def _count(self) -> None:
        self._read += 1
        if self._read % max(1, self.total // PROGRESS_STEPS) == 0:
            self.progressed.emit(self, self._read)

    def _run(self) -> None:
        with collector_paused():  # see gui/background.py: a collection here could deadlock the GUI thread
            self._compute()

    def _compute(self) -> None:
        try:
            results = {
                key: compute_run(name, run, self.family, self.cancelled, self._count) for key, name, run in self.runs
            }
        except Cancelled:
            return
        except (SimlabError, OSError, ValueError) as exc:
            self.failed.emit(self, str(exc))
        except Exception as exc:  # a family's bug must reach the person as a message, not end a thread quietly
            self.failed.emit(self, f"computing the {self.family.name} figures failed: {type(exc).__name__}: {exc}")
        else:
            self.done.emit(self, results)


class FiguresPanel(QWidget):
    """The analysis figures of one or more runs of one world family, linked to the open episode.

    Use :meth:`set_runs` when the runs open in the app change and :meth:`set_cursor` when the open episode or
    its turn changes; both are cheap to call again with the same arguments. ``ready`` is emitted each time
    the figures of the latest :meth:`set_runs` are drawn (or could not be computed: the note says why)."""

    ready = Signal()
    turnDragged = Signal(int)  # the turn line, on a figure over turns, dragged by the mouse to this turn

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._cache: dict[RunKey, RunFigures] = {}
        self._runs: list[tuple[RunKey, str, Run]] = []
        self._family: WorldFamily | None = None
        self._job: _Job | None = None
        self._shown: list[ShownFigure] = []
        self._cursor: tuple[str | None, str | None, int] = (None, None, 0)
        self._cursor_items: list[pg.GraphicsObject] = []  # the open episode's marks
        self._picked: str | None = None  # the figure last chosen, chosen again when other runs are shown
        self.highlighted: list[tuple[str, float | str, float]] = []
        """The points marked as the open episode's: (series label, x, y) as in the CSV."""
        self.no_data_note: pg.TextItem | None = None
        """The plot's "no data" note while the figure shown has no point (else None)."""
        self._build()
        self._show_note("Open a run to see its analysis figures")

    # ---- layout -------------------------------------------------------------------------------------------
    def _build(self) -> None:
        self.table = QTableWidget(0, 4)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.hide()
        self.combo = QComboBox()
        self.combo.setToolTip("The analysis figure to show")
        self.combo.currentIndexChanged.connect(self._on_pick)
        self.numbers_button = QPushButton("Numbers")
        self.numbers_button.setCheckable(True)
        self.numbers_button.setToolTip("Show the numbers behind the figure (the rows of its CSV)")
        self.numbers_button.toggled.connect(self._show_numbers)
        self.export_button = QPushButton("Export...")
        self.export_button.setToolTip("Write the figure as CSV, PNG and SVG (as report --figures does)")
        self.export_button.clicked.connect(self._export_clicked)
        bar = QHBoxLayout()
        bar.addWidget(self.combo, 1)
        bar.addWidget(self.numbers_button)
        bar.addWidget(self.export_button)
        self.progress = QProgressBar()
        self.progress.setFormat("Reading episodes: %v of %m")
        self.progress.hide()
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.view = CursorView()  # draws the turn line itself, over a picture it keeps of the figure
        self.view.setBackground("w")
        self.view.setMinimumHeight(120)  # beside the dialogue on a 768-pixel screen, with the dialogue its share
        self.view.turnDragged.connect(self.turnDragged)
        self.plot: pg.PlotItem = self.view.addPlot()
        self.plot.showGrid(x=False, y=True, alpha=0.25)
        for side in ("left", "bottom"):
            self.plot.getAxis(side).setTextPen(TEXT_COLOUR)
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        figure = QWidget()
        figure_layout = QVBoxLayout(figure)
        figure_layout.setContentsMargins(0, 0, 0, 0)
        figure_layout.addWidget(self.view, 1)
        figure_layout.addWidget(self.legend)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(figure)
        self.splitter.addWidget(self.table)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.progress)
        layout.addWidget(self.note)
        layout.addWidget(self.splitter, 1)

    def _show_numbers(self, shown: bool) -> None:
        """The table of the CSV rows under the figure, a third of the height (a splitter hands a widget that
        was hidden no room of its own)."""
        self.table.setVisible(shown)
        if shown:
            height = max(self.splitter.height(), 3)
            self.splitter.setSizes([height * 2 // 3, height // 3])

    # ---- public API ---------------------------------------------------------------------------------------
    def set_runs(self, runs: Sequence[tuple[str, Run]]) -> None:
        """Show the figures of ``runs``, ``(display name, run)`` in the order their series should appear.

        The first run's world family decides the figures; runs of another world are left out (the note says
        which). Runs not in the cache are read in a thread: the figures appear, and ``ready`` is emitted, when
        it ends (at once when every run is cached); a computation still running for other runs is abandoned
        and its result dropped. The same runs again while they are being read change nothing."""
        entries = [(run_key(run), name, run) for name, run in runs]
        if self._job is not None and [e[:2] for e in entries] == [e[:2] for e in self._job.asked]:
            return
        if self._job is not None:
            self._job.cancelled.set()
            self._job = None
        self._runs, self._family = [], None
        self.progress.hide()
        self._show_note("")  # the figures of the runs before are not these runs' figures
        if not runs:
            self._finish("Open a run to see its analysis figures")
            return
        try:
            self._family = get_family(str(runs[0][1].config.get("world")))
        except SimlabError as exc:
            self._finish(f"No figures: {exc}")
            return
        world = self._family.name
        self._runs = [entry for entry in entries if entry[2].config.get("world") == world]
        left_out = [name for _key, name, run in entries if run.config.get("world") != world]
        self._say(f"Left out (not {world} runs): {', '.join(left_out)}" if left_out else "")
        if not self._family.figures:
            self._finish(f"{world} declares no analysis figures")
            return
        missing = [entry for entry in self._runs if entry[0] not in self._cache]
        if missing:
            self._start(missing, entries, self._family)
        else:
            self._present()

    def set_cursor(self, run_name: str | None, episode_id: str | None, turn: int) -> None:
        """Link the figures to the open episode: ``episode_id`` of the run named ``run_name`` (a name given to
        :meth:`set_runs`; None for an episode of no run shown) at ``turn``. A figure over turns shows the turn
        as a vertical line while an episode is open; the points computed from that episode are marked.
        ``episode_id`` None: no episode is open, nothing is marked."""
        same_episode = self._cursor[:2] == (run_name, episode_id)
        self._cursor = (run_name, episode_id, turn)
        if same_episode and self.view.turn is not None:  # a step: only the line moves (the marks are the
            self.view.set_turn(turn)  # episode's): the view repaints the strips it leaves and enters
            return
        self._draw_cursor()

    def turn_line(self) -> float | None:
        """The turn the turn line stands on (None: no line, the figure is not over turns or no episode is open)."""
        return self.view.turn

    def figure_names(self) -> list[str]:
        """The file stems of the figures the combo offers, in its order (the family's declared order)."""
        return [shown.spec.name for shown in self._shown]

    def select(self, name: str) -> None:
        """Show the figure whose file stem is ``name`` (KeyError when the runs have no such figure)."""
        names = self.figure_names()
        if name not in names:
            raise KeyError(f"no figure {name!r}; the figures are {', '.join(names) or 'none'}")
        self.combo.setCurrentIndex(names.index(name))

    def current(self) -> ShownFigure | None:
        """The figure shown, or None while there is none."""
        index = self.combo.currentIndex()
        return self._shown[index] if 0 <= index < len(self._shown) else None

    def busy(self) -> bool:
        """Whether figures are being computed."""
        return self._job is not None

    def export_to(self, folder: Path) -> list[Path]:
        """Write the shown figure into ``folder`` as NAME.csv, NAME.png and NAME.svg, the files
        ``report RUN... --figures`` writes for the same runs; returns them. SimlabError, before anything is
        written, when one would replace a recording (:func:`~simlab.core.exports.export_into`); OSError when it
        cannot write."""
        shown = self.current()
        if shown is None:
            raise SimlabError("there is no figure to export")
        return export_into(folder, lambda scratch: write_figure(shown.spec, shown.data, scratch))

    # ---- computing ----------------------------------------------------------------------------------------
    def _start(
        self, missing: Sequence[tuple[RunKey, str, Run]], asked: Sequence[tuple[RunKey, str, Run]], family: WorldFamily
    ) -> None:
        job = _Job(missing, asked, family)
        job.progressed.connect(self._on_progress)
        job.done.connect(self._on_done)
        job.failed.connect(self._on_failed)
        self._job = job
        self.progress.setRange(0, max(1, job.total))
        self.progress.setValue(0)
        self.progress.show()
        job.start()

    def _on_progress(self, job: _Job, read: int) -> None:
        if job is self._job:
            self.progress.setValue(read)

    def _on_done(self, job: _Job, results: dict[RunKey, RunFigures]) -> None:
        if job is not self._job:
            return  # set_runs was called again meanwhile: these runs are not the ones shown
        self._job = None
        self.progress.hide()
        self._cache.update(results)
        self._present()

    def _on_failed(self, job: _Job, message: str) -> None:
        if job is not self._job:
            return
        self._job = None
        self.progress.hide()
        self._finish(f"The figures could not be computed: {message}")

    def _present(self) -> None:
        """Merge the cached figures of the runs shown and draw the one selected (by name, when it still is)."""
        assert self._family is not None
        per_run = [(name, self._cache[key]) for key, name, _run in self._runs]
        self._shown = []
        for k, spec in enumerate(self._family.figures):
            self._add(spec, [(name, figures.family[k]) for name, figures in per_run])
        for judge_name in dict.fromkeys(j for _name, figures in per_run for j in figures.judges):
            parts = [(name, figures.judges[judge_name]) for name, figures in per_run if judge_name in figures.judges]
            data = merge_figures([(name, data) for name, (_judge, data) in parts])
            self._add(judge_figure_spec(parts[0][1][0], data), [(name, data) for name, (_j, data) in parts])
        self._add_correlations([figures for _name, figures in per_run])
        skipped = skipped_note([f"{name}: {why}" for name, figures in per_run for why in figures.skipped])
        if skipped:  # beside the note on runs of another world, when there is one
            self._say(" ".join(text for text in (self.note.text(), skipped) if text))
        self.combo.blockSignals(True)
        self.combo.clear()
        for shown in self._shown:  # the tooltip: a long title is cut in a narrow dock
            self.combo.addItem(shown.spec.title)
            self.combo.setItemData(self.combo.count() - 1, shown.spec.title, Qt.ItemDataRole.ToolTipRole)
        names = self.figure_names()
        self.combo.setCurrentIndex(names.index(self._picked) if self._picked in names else 0)
        self.combo.blockSignals(False)
        self._draw()
        self.ready.emit()

    def _add(self, spec: FigureSpec, parts: Sequence[tuple[str, FigureData]]) -> None:
        """List the figure of ``spec`` merged from the runs' ``parts`` (each series remembers its run)."""
        runs = tuple(name for name, data in parts for _series in data.series)
        self._shown.append(ShownFigure(spec, merge_figures(parts), runs))

    def _add_correlations(self, per_run: Sequence[RunFigures]) -> None:
        """CRAFT's table 7 as a figure: every feature against the family's first headline metric, across the
        lineups of the runs shown; listed only when there are enough lineups to correlate over."""
        assert self._family is not None
        features = [figures.features for figures in per_run]
        if not self._family.headline_metrics or lineup_count(features) < MIN_LINEUPS:
            return
        target = self._family.headline_metrics[0]
        judges = list({j.name: j for figures in per_run for j in figures.judged.judges}.values())
        try:
            data = correlation_figure(feature_correlations(features, target, judges))
        except ValueError:  # no episode has the target metric: nothing to correlate with
            return
        self._shown.append(ShownFigure(correlation_spec(target, data), data, ("",) * len(data.series)))

    # ---- drawing ------------------------------------------------------------------------------------------
    def _on_pick(self, index: int) -> None:
        if 0 <= index < len(self._shown):
            self._picked = self._shown[index].spec.name
        self._draw()

    def _say(self, text: str) -> None:
        """``text`` in the note line above the figure (hidden when empty)."""
        self.note.setText(text)
        self.note.setVisible(bool(text))

    def _finish(self, text: str) -> None:
        """No figures for these runs: say why, and that this is all there will be."""
        self._show_note(text)
        self.ready.emit()

    def _show_note(self, text: str) -> None:
        """Nothing to draw: clear the plot and the controls, say ``text``."""
        self._shown = []
        self.combo.clear()
        self._say(text)
        self._draw()

    def _draw(self) -> None:
        item = self.plot
        item.clear()
        self._cursor_items, self.no_data_note = [], None
        shown = self.current()
        self.export_button.setEnabled(shown is not None)
        self.combo.setEnabled(shown is not None)
        self.legend.setText("")
        self._fill_table(shown)
        axis = item.getAxis("bottom")
        axis.setTicks(None)
        axis.setTickSpacing()
        axis.setHeight(None)
        item.setLabel("left", shown.data.y_label if shown else "")
        item.setLabel("bottom", shown.data.x_label if shown else "")
        if shown is None:
            return
        data = shown.data
        _DRAW[data.kind](item, data)
        self.legend.setText(_legend_html(data))
        self._set_ranges(item, data)
        self._draw_cursor()

    def _set_ranges(self, item: pg.PlotItem, data: FigureData) -> None:
        points = [p for s in data.series for p in s.points]
        if not points:
            item.setXRange(0, 1, padding=0)
            note = pg.TextItem(NO_DATA, color=TEXT_COLOUR, anchor=(0.5, 0.5))
            low, high = data.y_range or (0.0, 1.0)
            note.setPos(0.5, (low + high) / 2)
            item.addItem(note)
            self.no_data_note = note
        elif (limits := x_limits(data)) is not None:
            item.setXRange(*limits, padding=0)
        else:
            item.enableAutoRange(axis="x")
        if data.y_range is not None:
            item.setYRange(*data.y_range, padding=Y_PADDING)
        elif points:
            item.enableAutoRange(axis="y")
        else:
            item.setYRange(0, 1, padding=0)
        if data.kind == "line" and points and all(float(p.x).is_integer() for p in points):
            step = whole_turn_step(int(max(float(p.x) for p in points)))
            item.getAxis("bottom").setTickSpacing(major=step, minor=step)  # turns and budgets: no tick at 2.5

    def _draw_cursor(self) -> None:
        """The turn line and the open episode's marks on the figure shown."""
        item = self.plot
        for old in self._cursor_items:
            item.removeItem(old)
        self._cursor_items, self.highlighted = [], []
        shown = self.current()
        run_name, episode_id, turn = self._cursor
        if shown is None or episode_id is None or not shown.data.x_is_turn:
            self.view.set_cursor_plots([], 0, 0)
            self.view.set_turn(None)
        else:  # dragged along the figure's turns: the app's playback keeps it within the open episode's
            last = max((float(p.x) for s in shown.data.series for p in s.points), default=0.0)
            self.view.set_cursor_plots([item], 0, last)
            self.view.set_turn(turn)
        if shown is None or episode_id is None:
            return
        series = shown.data.series
        marked = [
            (k, j)
            for k, run in enumerate(shown.series_runs)
            if run == run_name
            for j, p in enumerate(series[k].points)
            if episode_id in p.episodes
        ]
        self.highlighted = [(series[k].label, series[k].points[j].x, series[k].points[j].y) for k, j in marked]
        if marked:
            self._cursor_items.append(_MARK[shown.data.kind](shown.data, marked))
        for new in self._cursor_items:
            new.setZValue(10)
            item.addItem(new, ignoreBounds=True)

    def _fill_table(self, shown: ShownFigure | None) -> None:
        rows = list(csv.reader(io.StringIO(figure_csv(shown.data)))) if shown else [[]]
        self.table.setColumnCount(len(rows[0]))
        self.table.setHorizontalHeaderLabels(rows[0])
        self.table.setRowCount(len(rows) - 1)
        for r, row in enumerate(rows[1:]):
            for c, value in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(value))
        self.table.resizeColumnsToContents()

    # ---- export -------------------------------------------------------------------------------------------
    def _export_clicked(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export the figure into a folder")
        if not folder:
            return
        try:
            written = self.export_to(Path(folder))
        except (OSError, SimlabError) as exc:
            QMessageBox.warning(self, "Export", f"The figure could not be written: {exc}")
            return
        self._say("Wrote " + ", ".join(path.name for path in written) + f" in {folder}")


# ---- the three kinds ---------------------------------------------------------------------------------------


def _errors(item: pg.PlotItem, xs: list[float], series: FigureSeries, colour: str, beam: float) -> None:
    """The series' error bars (the points that have one), ``beam`` wide in x units."""
    bars = [(x, p.y, p.error) for x, p in zip(xs, series.points, strict=True) if p.error is not None]
    if bars:
        x, y, e = (np.array(column, dtype=float) for column in zip(*bars, strict=True))
        item.addItem(pg.ErrorBarItem(x=x, y=y, top=e, bottom=e, beam=beam, pen=colour))


def _beam(data: FigureData) -> float:
    """Error bar caps 2% of the x span wide (1% of a unit when all points share one x)."""
    xs = [float(p.x) for s in data.series for p in s.points]
    return 0.02 * ((max(xs) - min(xs)) or 0.5) if xs else 0.0


def _draw_line(item: pg.PlotItem, data: FigureData) -> None:
    beam = _beam(data)
    for k, series in enumerate(data.series):
        colour = series_colour(k)
        xs, ys = [float(p.x) for p in series.points], [p.y for p in series.points]
        pen = pg.mkPen(colour, width=2)
        line = pg.PlotDataItem(
            xs, ys, pen=pen, symbol="o", symbolSize=6, symbolBrush=colour, symbolPen=None, name=series.label
        )
        item.addItem(line)
        _errors(item, xs, series, colour, beam)


def _draw_scatter(item: pg.PlotItem, data: FigureData) -> None:
    beam = _beam(data)
    for k, series in enumerate(data.series):
        colour = series_colour(k)
        xs, ys = [float(p.x) for p in series.points], [p.y for p in series.points]
        dots = pg.PlotDataItem(
            xs, ys, pen=None, symbol="o", symbolSize=10, symbolBrush=colour, symbolPen=None, name=series.label
        )
        item.addItem(dots)
        _errors(item, xs, series, colour, beam)


def bar_positions(data: FigureData) -> tuple[list[str], float, list[list[float]]]:
    """(the categories in order, a bar's width, each series' bar centres): series side by side in each
    category, the group ``BAR_GROUP_WIDTH`` wide around the category's index, as the exported PNG has them."""
    categories = bar_categories(data)
    n = max(len(data.series), 1)
    width = BAR_GROUP_WIDTH / n
    centres = [
        [categories.index(str(p.x)) + (k - (n - 1) / 2) * width for p in series.points]
        for k, series in enumerate(data.series)
    ]
    return categories, width, centres


def tick_text(category: str) -> str:
    """A category's tick label on a few lines: its words, or the parts of a hyphenated word ("wrong-\nposition").
    Side by side, long names would overlap (pyqtgraph cannot turn them as the exported PNG does)."""
    words = category.split()
    return "\n".join(words) if len(words) > 1 else category.replace("-", "-\n")


def _draw_bar(item: pg.PlotItem, data: FigureData) -> None:
    categories, width, centres = bar_positions(data)
    for k, (series, xs) in enumerate(zip(data.series, centres, strict=True)):
        if not xs:
            continue
        colour = series_colour(k)
        heights = [p.y for p in series.points]
        bars = pg.BarGraphItem(x=xs, height=heights, width=width, brush=colour, pen=pg.mkPen(colour), name=series.label)
        item.addItem(bars)
        _errors(item, xs, series, TEXT_COLOUR, width * 0.4)
    ticks = [(k, tick_text(category)) for k, category in enumerate(categories)]
    axis = item.getAxis("bottom")
    axis.setTicks([ticks])
    # pyqtgraph makes room for one line of tick text: the axis label would be drawn over the second
    lines = max((text.count("\n") + 1 for _k, text in ticks), default=1)
    spacing = QFontMetricsF(axis.style["tickFont"] or axis.font()).lineSpacing()
    axis.setHeight(int(lines * spacing + axis.label.boundingRect().height() + 2 * axis.style["tickTextOffset"][1]))
    if categories:
        item.setXRange(-0.5, len(categories) - 0.5, padding=0.02)


def _mark_points(data: FigureData, marked: Sequence[tuple[int, int]]) -> pg.GraphicsObject:
    """Rings around the open episode's points, ``(series, point)`` indices (a scatter's lineup means)."""
    points = [data.series[k].points[j] for k, j in marked]
    xs, ys = [float(p.x) for p in points], [p.y for p in points]
    ring = pg.mkPen(HIGHLIGHT_COLOUR, width=2.5)
    return pg.ScatterPlotItem(xs, ys, symbol="o", size=20, pen=ring, brush=None)


def _mark_bars(data: FigureData, marked: Sequence[tuple[int, int]]) -> pg.GraphicsObject:
    """A thick outline around the open episode's bars, ``(series, point)`` indices."""
    _categories, width, centres = bar_positions(data)
    xs = [centres[k][j] for k, j in marked]
    heights = [data.series[k].points[j].y for k, j in marked]
    return pg.BarGraphItem(x=xs, height=heights, width=width, brush=None, pen=pg.mkPen(HIGHLIGHT_COLOUR, width=3))


_DRAW = {"line": _draw_line, "scatter": _draw_scatter, "bar": _draw_bar}
_MARK = {"line": _mark_points, "scatter": _mark_points, "bar": _mark_bars}
_SWATCH = {"line": "━●━", "scatter": "●", "bar": "■"}


def _legend_html(data: FigureData) -> str:
    """One line per series, its swatch in its colour (a label too long for the dock wraps, never cut)."""
    swatch = _SWATCH[data.kind]
    return "<br>".join(
        f'<span style="color:{series_colour(k)}">{swatch}</span>&nbsp;{esc(series.label)}'
        for k, series in enumerate(data.series)
    )
