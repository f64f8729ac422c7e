"""``report RUN --figures DIR``: the analysis figures a run's family declares, as CSV, PNG and SVG.

Generic: it knows no family. For each :class:`~simlab.core.family.FigureSpec` of the run's family it computes
the :class:`~simlab.core.family.FigureData` from the recorded episodes (sorted by id), writes ``NAME.csv``
(exactly the plotted numbers: ``series, x, y, error``) and draws ``NAME.png`` and ``NAME.svg`` with
matplotlib (Agg, imported only here and only when drawing). The same run gives the same bytes: the rows
follow the data's order, the SVG ids are salted with a constant and no date is written.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simlab.analysis.report import natural_key
from simlab.core.errors import SimlabError
from simlab.core.family import FigureData, FigureSpec
from simlab.core.recording import Run
from simlab.worlds import get_family

if TYPE_CHECKING:
    from matplotlib.axes import Axes

CSV_COLUMNS = ("series", "x", "y", "error")
STABLE_RC: dict[Any, Any] = {
    "svg.hashsalt": "simlab-figures",
    "svg.fonttype": "path",
    "figure.dpi": 100,
    "font.size": 9,
}
FIGURE_SIZE = (6.4, 4.0)
BAR_GROUP_WIDTH = 0.8
LEGEND_BELOW = -0.3  # the legend's top, in axes units: under the x labels, never over the data


def figure_csv(data: FigureData) -> str:
    """The plotted numbers, one row per point: series label, x, y and the error bar (empty when none)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for series in data.series:
        for p in series.points:
            writer.writerow([series.label, p.x, repr(p.y), "" if p.error is None else repr(p.error)])
    return out.getvalue()


def write_figures(run: Run, out_dir: Path) -> list[Path]:
    """Every figure of ``run``'s family into ``out_dir`` (created); returns the files written, in order.

    Raises SimlabError when the run has no episodes or its family declares no figures; a figure with no
    points (nothing of its kind was recorded) is written as a CSV header and an empty plot."""
    if not run.summaries:
        raise SimlabError(f"{run.path}: the run has no finished episodes, so there is nothing to draw")
    family = get_family(str(run.config.get("world")))
    if not family.figures:
        raise SimlabError(f"world {family.name!r} declares no analysis figures")
    episodes = sorted(run.episodes(), key=lambda e: natural_key(e.episode_id))
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for spec in family.figures:
        data = spec.make(episodes)
        csv_path = out_dir / f"{spec.name}.csv"
        csv_path.write_text(figure_csv(data), encoding="utf-8")
        written += [csv_path, *draw(spec, data, out_dir)]
    return written


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
            if any(s.points for s in data.series):
                ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, LEGEND_BELOW))
            paths = [out_dir / f"{spec.name}.png", out_dir / f"{spec.name}.svg"]
            fig.savefig(paths[0], metadata={"Software": None}, bbox_inches="tight")
            fig.savefig(paths[1], metadata={"Date": None, "Creator": None}, bbox_inches="tight")
        finally:
            plt.close(fig)
    return paths


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
