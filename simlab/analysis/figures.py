"""``report RUN... --figures DIR``: the analysis figures a run's family declares, as CSV, PNG and SVG.

Generic: it knows no family. For each :class:`~simlab.core.family.FigureSpec` of the run's family it computes
the :class:`~simlab.core.family.FigureData` from the recorded episodes (sorted by id), writes ``NAME.csv``
(exactly the plotted numbers: ``series, x, y, error``) and draws ``NAME.png`` and ``NAME.svg`` with
matplotlib (Agg, imported only here and only when drawing). The same run gives the same bytes: the rows
follow the data's order, the SVG ids are salted with a constant and no date is written.

Several runs of one family draw together (:func:`run_figures`): each figure is computed per run and the
series merged, every label prefixed with its run's name (``RUNNAME · label``), so a run's rows in the merged
CSV are its own figure's rows under prefixed labels.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simlab.analysis.judgments import RunJudgments, judge_figure
from simlab.analysis.report import natural_key
from simlab.core.errors import SimlabError
from simlab.core.family import FigureData, FigureSeries, FigureSpec, WorldFamily
from simlab.core.judging import Judge
from simlab.core.recording import Run
from simlab.core.writing import check_output_folder, write_atomic
from simlab.worlds import get_family

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from simlab.core.episode import Episode

CSV_COLUMNS = ("series", "x", "y", "error")
STABLE_RC: dict[Any, Any] = {
    "svg.hashsalt": "simlab-figures",
    "svg.fonttype": "path",
    "figure.dpi": 100,
    "font.size": 9,
}
FIGURE_SIZE = (6.4, 4.0)
BAR_GROUP_WIDTH = 0.8
LEGEND_GAP = 0.03  # between the x axis' labels and the legend's top, in axes units
RUN_SEPARATOR = " · "  # between a run's name and a series label when several runs are drawn together


def figure_csv(data: FigureData) -> str:
    """The plotted numbers, one row per point: series label, x, y and the error bar (empty when none)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for series in data.series:
        for p in series.points:
            writer.writerow([series.label, p.x, repr(p.y), "" if p.error is None else repr(p.error)])
    return out.getvalue()


def run_figures(
    runs: Sequence[tuple[str, Sequence[Episode]]], family: WorldFamily
) -> list[tuple[FigureSpec, FigureData]]:
    """Each figure of ``family`` computed per run (its episodes sorted by id, naturally) and merged.

    ``runs`` are ``(name, episodes)`` in the order their series should appear. With one run the series are
    the figure's own; with several, each label is prefixed ``"NAME · "``. Raises ValueError when ``runs``
    is empty."""
    if not runs:
        raise ValueError("run_figures needs at least one run")
    ordered = [(name, sorted(episodes, key=lambda e: natural_key(e.episode_id))) for name, episodes in runs]
    return [
        (spec, merge_figures([(name, spec.make(episodes)) for name, episodes in ordered])) for spec in family.figures
    ]


def merge_figures(parts: Sequence[tuple[str, FigureData]]) -> FigureData:
    """One figure of several runs: their series in run order, labels prefixed with the run's name when there
    are several. Everything else (kind, axis labels...) is the first's, as one spec gives the same for any
    run; a fixed y range is widened to cover every run's."""
    first = parts[0][1]
    if len(parts) == 1:
        return first
    series = tuple(
        FigureSeries(f"{name}{RUN_SEPARATOR}{s.label}", s.points) for name, data in parts for s in data.series
    )
    ranges = [data.y_range for _, data in parts if data.y_range is not None]
    y_range = None
    if len(ranges) == len(parts):  # a run that fits its axis to the data lets the merged figure fit it too
        y_range = (min(low for low, _ in ranges), max(high for _, high in ranges))
    return dataclasses.replace(first, series=series, y_range=y_range)


def write_figures(run: Run, out_dir: Path) -> list[Path]:
    """Every figure of ``run``'s family into ``out_dir`` (created); returns the files written, in order.

    Raises SimlabError when the run has no episodes or its family declares no figures; a figure with no
    points (nothing of its kind was recorded) is written as a CSV header and an empty plot."""
    return write_run_figures([(run.path.name, run)], out_dir)


def write_run_figures(runs: Sequence[tuple[str, Run]], out_dir: Path) -> list[Path]:
    """Every figure of the runs' family, their series together (see :func:`run_figures`), into ``out_dir``.

    ``runs`` are ``(name, run)``, all of one world family (the caller checks: the first run's family draws).
    Raises SimlabError when a run has no episodes or the family declares no figures."""
    for _, run in runs:
        if not run.summaries:
            raise SimlabError(f"{run.path}: the run has no finished episodes, so there is nothing to draw")
    family = get_family(str(runs[0][1].config.get("world")))
    if not family.figures:
        raise SimlabError(f"world {family.name!r} declares no analysis figures")
    figures = run_figures([(name, run.episodes()) for name, run in runs], family)
    return [path for spec, data in figures for path in write_figure(spec, data, out_dir)]


def given(data: FigureData, _episodes: Sequence[Episode]) -> FigureData:
    """A figure's ``make`` for data computed beforehand (from judgments, not episodes)."""
    return data


def judge_figure_spec(judge: Judge, data: FigureData) -> FigureSpec:
    """The figure of ``judge`` as ``report --figures`` names and titles it (``judge_NAME``)."""
    title = judge.title if judge.figure is not None else f"{judge.title}, per question"
    return FigureSpec(f"judge_{judge.name}", title, functools.partial(given, data))


def write_figure(spec: FigureSpec, data: FigureData, out_dir: Path) -> list[Path]:
    """``NAME.csv`` (the plotted numbers), ``NAME.png`` and ``NAME.svg`` of one figure into ``out_dir``, a
    folder for outputs (never a run's: :func:`~simlab.core.writing.check_output_folder`)."""
    check_output_folder(out_dir, "figures into")
    csv_path = write_atomic(out_dir, f"{spec.name}.csv", figure_csv(data))
    return [csv_path, *draw(spec, data, out_dir)]


def write_judge_figures(runs: Sequence[tuple[str, Run]], judged: Sequence[RunJudgments], out_dir: Path) -> list[Path]:
    """One figure per judge that rated any of ``runs`` (``judged`` in the same order):
    ``judge_NAME.csv/.png/.svg``, per question the mean and SEM over items, a series per lineup (and run)."""
    judges = list({j.name: j for part in judged for j in part.judges}.values())
    written: list[Path] = []
    for judge in judges:
        pairs = zip(runs, judged, strict=True)
        data = merge_figures([(name, judge_figure(judge, part.records, run.summaries)) for (name, run), part in pairs])
        spec = judge_figure_spec(judge, data)
        written += write_figure(spec, data, out_dir)
    return written


NEAR_EQUAL = 0.05
"""x values spread over less than this share of their size are drawn as the equal values they nearly are."""


def x_limits(data: FigureData) -> tuple[float, float] | None:
    """A fixed x range for numbers spread over less than :data:`NEAR_EQUAL` of their size (None: leave it to
    the plot). Auto-scaling would zoom into the spread (178.662 to 178.670 words) and draw noise as a
    trend; here the values keep their size: centred, with a tenth of their size on each side."""
    if data.kind == "bar":
        return None
    xs = [float(p.x) for s in data.series for p in s.points]
    if not xs:
        return None
    low, high = min(xs), max(xs)
    size = max(abs(low), abs(high), 1.0)
    if high - low >= NEAR_EQUAL * size:
        return None
    middle, half = (low + high) / 2, 2 * NEAR_EQUAL * size
    return middle - half, middle + half


def draw(spec: FigureSpec, data: FigureData, out_dir: Path) -> list[Path]:
    """``spec.name``.png and .svg of ``data`` in ``out_dir``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context(STABLE_RC):
        fig, ax = plt.subplots(figsize=FIGURE_SIZE)
        try:
            _DRAW[data.kind](ax, data)
            ax.set_title(spec.title)
            ax.set_xlabel(data.x_label)
            ax.set_ylabel(data.y_label)
            if data.y_range is not None:
                ax.set_ylim(*data.y_range)
            if (limits := x_limits(data)) is not None:
                ax.set_xlim(*limits)
            if any(s.points for s in data.series):
                ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, _below_axis(fig, ax)))
            png, svg = io.BytesIO(), io.BytesIO()
            fig.savefig(png, format="png", metadata={"Software": None}, bbox_inches="tight")
            fig.savefig(svg, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
        finally:
            plt.close(fig)
    return [
        write_atomic(out_dir, f"{spec.name}.png", png.getvalue()),
        write_atomic(out_dir, f"{spec.name}.svg", svg.getvalue()),
    ]


def _below_axis(fig: Figure, ax: Axes) -> float:
    """Where the legend's top goes, in axes units: under everything the x axis draws (long rotated category
    names and the axis label included), so the legend never covers them nor the data."""
    fig.canvas.draw()
    box = ax.get_tightbbox(fig.canvas.get_renderer())  # type: ignore[attr-defined]
    bottom = box.y0 if box is not None else 0.0
    return float(ax.transAxes.inverted().transform((0.0, bottom))[1]) - LEGEND_GAP


def _errors(points: Sequence[Any]) -> list[float] | None:
    return [p.error or 0.0 for p in points] if any(p.error is not None for p in points) else None


def _draw_line(ax: Axes, data: FigureData) -> None:
    from matplotlib.ticker import MaxNLocator

    for s in data.series:
        xs, ys = [float(p.x) for p in s.points], [p.y for p in s.points]
        ax.errorbar(xs, ys, yerr=_errors(s.points), marker="o", markersize=3, capsize=2, label=s.label)
    if all(float(p.x).is_integer() for s in data.series for p in s.points):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # turns and budgets: no tick at 2.5


def _draw_scatter(ax: Axes, data: FigureData) -> None:
    for s in data.series:
        xs, ys = [float(p.x) for p in s.points], [p.y for p in s.points]
        ax.errorbar(xs, ys, yerr=_errors(s.points), fmt="o", capsize=2, label=s.label)


def bar_categories(data: FigureData) -> list[str]:
    """The bars' categories: in numeric order when every one is a number (component counts), else in the order
    the series first name them (a taxonomy's own order)."""
    xs = list(dict.fromkeys(p.x for s in data.series for p in s.points))
    if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs):
        xs.sort()
    return list(dict.fromkeys(str(x) for x in xs))


def _draw_bar(ax: Axes, data: FigureData) -> None:
    categories = bar_categories(data)
    width = BAR_GROUP_WIDTH / max(len(data.series), 1)
    for k, s in enumerate(data.series):
        offset = (k - (len(data.series) - 1) / 2) * width
        xs = [categories.index(str(p.x)) + offset for p in s.points]
        ax.bar(xs, [p.y for p in s.points], width, yerr=_errors(s.points), capsize=2, label=s.label)
    ax.set_xticks(range(len(categories)), categories, rotation=30, ha="right")


_DRAW = {"line": _draw_line, "scatter": _draw_scatter, "bar": _draw_bar}
