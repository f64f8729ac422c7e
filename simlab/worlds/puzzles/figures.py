"""The COMMA paper's model-free analyses of a puzzles run, as plain figure data (``report --figures``).

* **success against conversation budget** (fig. 4): for each budget b from 1 to the run's turn limit, the
  share of episodes solved by turn b (``acl_taken``, the turn the puzzle was solved). It reads the recorded
  trajectories, so it assumes agents play the same whatever the limit (no agent here is told it);
* **partial success per category** (fig. 6): mean PSR with its standard error per capability category (a
  puzzle counts in each of its one or two categories).

Each figure has one series per agent lineup.
"""

from __future__ import annotations

from collections.abc import Sequence

from simlab.analysis.stats import mean_sem_ci
from simlab.core.episode import Episode
from simlab.core.family import FigureData, FigurePoint, FigureSeries, FigureSpec, by_lineup
from simlab.worlds.puzzles.puzzle import CATEGORIES


def solved_at(episode: Episode) -> float | None:
    """The turn that solved the puzzle, or None when it was not solved."""
    if episode.summary.get("outcome") != "success":
        return None
    value = episode.summary.get("metrics", {}).get("acl_taken")
    return float(value) if isinstance(value, (int, float)) else None


def turn_limit(episodes: Sequence[Episode]) -> int:
    """The smallest turn limit the episodes were played with: every budget up to it is observed in all."""
    return min(int(e.settings.get("turns", 0)) for e in episodes) if episodes else 0


def success_by_budget(episodes: Sequence[Episode]) -> FigureData:
    """COMMA fig. 4: success rate as a function of the allowed conversation turns."""
    budgets = range(1, turn_limit(episodes) + 1)
    series = []
    for label, group in by_lineup(episodes):
        solved = [solved_at(e) for e in group]
        points = tuple(FigurePoint(b, sum(t is not None and t <= b for t in solved) / len(group)) for b in budgets)
        series.append(FigureSeries(label, points))
    return FigureData("line", "allowed conversation turns", "success rate", tuple(series), (0.0, 1.0))


def partial_success_by_category(episodes: Sequence[Episode]) -> FigureData:
    """COMMA fig. 6: mean partial success rate (0-100) per puzzle category, with standard errors."""
    series = []
    for label, group in by_lineup(episodes):
        points = []
        for category in CATEGORIES:
            members = [e for e in group if category in e.summary.get("categories", ())]
            summary = mean_sem_ci([e.summary.get("metrics", {}).get("psr") for e in members])
            if summary.mean is not None:
                points.append(FigurePoint(category, summary.mean, summary.sem, tuple(e.episode_id for e in members)))
        series.append(FigureSeries(label, tuple(points)))
    return FigureData("bar", "puzzle category", "partial success rate (%)", tuple(series), (0.0, 100.0))


FIGURES = (
    FigureSpec("puzzles_success_by_budget", "Success vs conversation budget (COMMA fig. 4)", success_by_budget),
    FigureSpec("puzzles_psr_by_category", "Partial success per category (COMMA fig. 6)", partial_success_by_category),
)
