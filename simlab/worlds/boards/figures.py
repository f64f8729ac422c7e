"""The cobot paper's repair analyses of a boards run, as plain figure data (``report --figures``).

Both are read from each episode's summary metrics, bucketed by the target's component count:

* **clarification and correction rates** (figs. 6 and 11): the share of episodes holding at least one
  clarification question of the robot (``clarified``) and at least one correction of the programmer
  (``corrected``: an instruction after a round that did not bring the board closer to the target);
* **success within them** (figs. 7 and 12): the success rate among the episodes that clarified
  (``success_when_clarified``) and among those that corrected (``success_when_corrected``); a component
  count with no such episode has no bar.

Each series is one measure for one agent lineup.
"""

from __future__ import annotations

from collections.abc import Sequence

from simlab.analysis.stats import mean_sem_ci
from simlab.core.episode import Episode
from simlab.core.family import FigureData, FigurePoint, FigureSeries, FigureSpec, by_lineup

RATES = (("clarification", "clarified"), ("correction", "corrected"))
SUCCESS = (("after clarification", "success_when_clarified"), ("after correction", "success_when_corrected"))


def _metric(episode: Episode, name: str) -> float | None:
    value = episode.summary.get("metrics", {}).get(name)
    return float(value) if isinstance(value, (int, float)) else None


def _by_components(episodes: Sequence[Episode], metric: str) -> tuple[FigurePoint, ...]:
    """Mean of ``metric`` per component count (ascending), over the episodes where it is defined."""
    counts = sorted({int(c) for e in episodes if (c := _metric(e, "components")) is not None})
    points = []
    for count in counts:
        bucket = [e for e in episodes if _metric(e, "components") == count and _metric(e, metric) is not None]
        mean = mean_sem_ci([_metric(e, metric) for e in bucket]).mean
        if mean is not None:
            points.append(FigurePoint(str(count), mean, episodes=tuple(e.episode_id for e in bucket)))
    return tuple(points)


def _figure(episodes: Sequence[Episode], measures: Sequence[tuple[str, str]], y_label: str) -> FigureData:
    series = tuple(
        FigureSeries(f"{name} ({label})", _by_components(group, metric))
        for label, group in by_lineup(episodes)
        for name, metric in measures
    )
    return FigureData("bar", "component count", y_label, series, (0.0, 1.0))


def repair_rates(episodes: Sequence[Episode]) -> FigureData:
    """Cobot figs. 6 and 11: share of episodes with a clarification / a correction, per component count."""
    return _figure(episodes, RATES, "share of episodes")


def repair_success(episodes: Sequence[Episode]) -> FigureData:
    """Cobot figs. 7 and 12: success among the episodes that clarified / corrected, per component count."""
    return _figure(episodes, SUCCESS, "success rate")


FIGURES = (
    FigureSpec("boards_repair_rates", "Clarifying and correcting by component count (cobot figs. 6, 11)", repair_rates),
    FigureSpec("boards_repair_success", "Success after clarifying or correcting (cobot figs. 7, 12)", repair_success),
)
