"""The CRAFT paper's model-free analyses of a blocks run, as plain figure data (``report --figures``).

Each builder turn is read from its ``result`` event (the engine's verdict, the ``taxonomy`` label and the
``oracle`` candidates of that turn) and the builder's ``action`` event of the same turn:

* **removes per turn** (fig. 5): per turn t, over the episodes that played t, the share whose builder
  attempted a remove and the share whose oracle set held a remove;
* **failure taxonomy** (fig. 3, table 4): each label's share of the oracle-available turns, pooled over the
  episodes (the paper's normalisation);
* **turn-level outcomes** (fig. 8): shares of all turns with the oracle available, followed (the taxonomy's
  ``correct``), executed (a place or remove the engine accepted) and without the oracle.

Every figure has one series per agent lineup, so episodes played by different agents stay apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from simlab.core.episode import Episode
from simlab.core.family import FigureData, FigurePoint, FigureSeries, FigureSpec, by_lineup
from simlab.worlds.blocks.metrics import TAXONOMY
from simlab.worlds.blocks.simulation import is_simulation_event


@dataclass(frozen=True)
class BuilderTurn:
    """What one builder turn did, as recorded."""

    turn: int
    action: str | None
    ok: bool
    taxonomy: str
    oracle_remove: bool


def builder_turns(episode: Episode) -> list[BuilderTurn]:
    """The episode's builder turns in order, one per ``result`` event (a simulate call's answer is no turn)."""
    played = [e for e in episode.events if not is_simulation_event(e)]
    actions = {e.turn: e.data.get("action") for e in played if e.kind == "action"}
    out = []
    for event in played:
        if event.kind != "result":
            continue
        action = actions.get(event.turn)
        name = action.get("action") if isinstance(action, Mapping) else None
        oracle = event.data.get("oracle") or []
        remove = any(isinstance(m, Mapping) and m.get("action") == "remove" for m in oracle)
        out.append(BuilderTurn(event.turn, name, bool(event.data.get("ok")), str(event.data.get("taxonomy")), remove))
    return out


def _labelled(label: str) -> Callable[[BuilderTurn], bool]:
    """A test for builder turns with taxonomy ``label``."""
    return lambda turn: turn.taxonomy == label


def _share(turns: Sequence[BuilderTurn], test: Callable[[BuilderTurn], bool]) -> float:
    return sum(map(test, turns)) / len(turns) if turns else 0.0


def removes_per_turn(episodes: Sequence[Episode]) -> FigureData:
    """CRAFT fig. 5: attempted against oracle-prescribed remove rate per turn."""
    series = []
    for label, group in by_lineup(episodes):
        per_turn: dict[int, list[BuilderTurn]] = {}
        for episode in group:
            for t in builder_turns(episode):
                per_turn.setdefault(t.turn, []).append(t)
        turns = sorted(per_turn)
        attempted = tuple(FigurePoint(t, _share(per_turn[t], lambda b: b.action == "remove")) for t in turns)
        oracle = tuple(FigurePoint(t, _share(per_turn[t], lambda b: b.oracle_remove)) for t in turns)
        series += [FigureSeries(f"attempted ({label})", attempted), FigureSeries(f"oracle ({label})", oracle)]
    return FigureData("line", "turn", "remove rate", tuple(series), (0.0, 1.0), x_is_turn=True)


def failure_taxonomy(episodes: Sequence[Episode]) -> FigureData:
    """CRAFT fig. 3 / table 4: each taxonomy label's share of the oracle-available turns."""
    series = []
    for label, group in by_lineup(episodes):
        available = [t for e in group for t in builder_turns(e) if t.taxonomy != "no-oracle"]
        ids = tuple(e.episode_id for e in group)
        points = tuple(FigurePoint(name, _share(available, _labelled(name)), episodes=ids) for name in TAXONOMY[1:])
        series.append(FigureSeries(label, points))
    return FigureData("bar", "failure category", "share of oracle-available turns", tuple(series), (0.0, 1.0))


OUTCOMES: tuple[tuple[str, Callable[[BuilderTurn], bool]], ...] = (
    ("oracle available", lambda b: b.taxonomy != "no-oracle"),
    ("oracle followed", lambda b: b.taxonomy == "correct"),
    ("execution success", lambda b: b.ok and b.action in ("place", "remove")),
    ("no oracle", lambda b: b.taxonomy == "no-oracle"),
)


def turn_outcomes(episodes: Sequence[Episode]) -> FigureData:
    """CRAFT fig. 8: turn-level outcome rates over all builder turns."""
    series = []
    for label, group in by_lineup(episodes):
        turns = [t for e in group for t in builder_turns(e)]
        ids = tuple(e.episode_id for e in group)
        points = tuple(FigurePoint(name, _share(turns, test), episodes=ids) for name, test in OUTCOMES)
        series.append(FigureSeries(label, points))
    return FigureData("bar", "outcome", "share of turns", tuple(series), (0.0, 1.0))


FIGURES = (
    FigureSpec("blocks_removes_per_turn", "Attempted vs oracle remove rate per turn (CRAFT fig. 5)", removes_per_turn),
    FigureSpec("blocks_failure_taxonomy", "Failure taxonomy (CRAFT fig. 3, table 4)", failure_taxonomy),
    FigureSpec("blocks_turn_outcomes", "Turn-level outcome rates (CRAFT fig. 8)", turn_outcomes),
)
