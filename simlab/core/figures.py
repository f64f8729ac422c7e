"""Analysis figures as plain numbers (no plotting library): what families, judges and correlations compute and
``report --figures`` and the app's Figures dock draw.

Apart from the family contract (:class:`~simlab.core.family.FigureSpec` says how a family computes one) so
that a judge (:mod:`simlab.core.judging`), which the family contract names, can return one too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FigureKind = Literal["line", "bar", "scatter"]


@dataclass(frozen=True)
class FigurePoint:
    """One plotted value: ``x`` is a number (line, scatter) or a category (bar); ``error`` an error bar.

    ``episodes`` are the ids of the episodes the value was computed from, when the figure says so (a lineup's
    mean, a component count's bucket, one episode's own point): the app highlights the points of the episode
    it shows. Empty: not said (per-turn lines, whose cursor is the turn). Not part of the CSV."""

    x: float | str
    y: float
    error: float | None = None
    episodes: tuple[str, ...] = ()


@dataclass(frozen=True)
class FigureSeries:
    """One line, one set of bars or one group of scatter points, under a legend ``label``."""

    label: str
    points: tuple[FigurePoint, ...]


@dataclass(frozen=True)
class FigureData:
    """A figure as plain numbers (no plotting library): what ``report --figures`` draws and writes as CSV.
    Bars of several series are grouped per category: numbers in numeric order, words in first-seen order."""

    kind: FigureKind
    x_label: str
    y_label: str
    series: tuple[FigureSeries, ...]
    y_range: tuple[float, float] | None = None
    x_is_turn: bool = False
    """The x values are turns of the episodes: the app draws the open episode's current turn as a vertical
    line. A budget of turns (COMMA's success by allowed turns) is not a turn of the open episode: no line is
    drawn there. Not part of the CSV."""
