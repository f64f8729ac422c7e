"""The Cosmic paper's dialogue analyses of a rooms run, as plain figure data (``report --figures``).

* **words against accuracy** (fig. 8 top): per agent lineup, the mean words per conversation (the summary's
  ``words``) against the mean accuracy, with standard errors on the accuracy;
* **unique objects mentioned per turn** (fig. 8 bottom): per turn, the mean number of distinct objects a
  message named (the ``mentions`` score the world records with each message, resolved by
  :mod:`simlab.worlds.rooms.mentions`) over the episodes with a message on that turn.
"""

from __future__ import annotations

from collections.abc import Sequence

from simlab.analysis.stats import mean_sem_ci
from simlab.core.episode import Episode
from simlab.core.family import FigureData, FigurePoint, FigureSeries, FigureSpec, by_lineup


def _metric(episode: Episode, name: str) -> float | None:
    value = episode.summary.get("metrics", {}).get(name)
    return float(value) if isinstance(value, (int, float)) else None


def words_vs_accuracy(episodes: Sequence[Episode]) -> FigureData:
    """Cosmic fig. 8 top: one point per lineup, mean words per conversation against mean accuracy."""
    series = []
    for label, group in by_lineup(episodes):
        words = mean_sem_ci([_metric(e, "words") for e in group]).mean
        accuracy = mean_sem_ci([_metric(e, "accuracy") for e in group])
        if words is not None and accuracy.mean is not None:
            point = FigurePoint(words, accuracy.mean, accuracy.sem, tuple(e.episode_id for e in group))
            series.append(FigureSeries(label, (point,)))
    return FigureData("scatter", "mean words per conversation", "accuracy", tuple(series), (0.0, 1.0))


def mentions_by_turn(episode: Episode) -> dict[int, float]:
    """The objects each message named, by the turn it was said on (its ``mentions`` score)."""
    return {
        e.turn: float(e.data["metrics"]["mentions"])
        for e in episode.events
        if e.kind == "score" and "mentions" in e.data.get("metrics", {})
    }


def objects_per_turn(episodes: Sequence[Episode]) -> FigureData:
    """Cosmic fig. 8 bottom: mean unique objects mentioned per turn, one line per lineup."""
    series = []
    for label, group in by_lineup(episodes):
        per_turn: dict[int, list[float | None]] = {}
        for episode in group:
            for turn, count in mentions_by_turn(episode).items():
                per_turn.setdefault(turn, []).append(count)
        points = []
        for turn in sorted(per_turn):
            summary = mean_sem_ci(per_turn[turn])
            points.append(FigurePoint(turn, float(summary.mean or 0.0), summary.sem))
        series.append(FigureSeries(label, tuple(points)))
    return FigureData("line", "turn", "unique objects mentioned", tuple(series), x_is_turn=True)


FIGURES = (
    FigureSpec("rooms_words_vs_accuracy", "Words per conversation vs accuracy (Cosmic fig. 8 top)", words_vs_accuracy),
    FigureSpec("rooms_objects_per_turn", "Unique objects mentioned per turn (Cosmic fig. 8 bottom)", objects_per_turn),
)
