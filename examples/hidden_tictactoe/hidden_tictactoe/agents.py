"""Scripted agents and the registry :data:`AGENTS` that ``--agent ROLE=NAME[:ARG]`` looks names up in.

They read ``observation.data`` only (never the task, which they are handed too):

* seer ``oracle``: names the next unmarked cell of the safe line ("Mark (0,2) next. The safe line is row 0:
  (0,0) (0,1) (0,2).") and notes the mines in its private reasoning;
* seer ``silent``: wishes luck and says nothing useful (a floor for the player);
* player ``scripted[:SLIP]``: marks the cell the seer's message names ("Mark (i,j)", else the first cell it
  writes that is still free), asks when it names none; with SLIP (0-1) it sometimes marks a random free cell;
* player ``random``: marks a random cell it does not know to be taken.

Every random choice comes from :func:`simlab.core.seeding.rng` with the seed given to ``reset``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from simlab.core.seeding import rng
from simlab.core.world import Agent, Observation, Reply

from hidden_tictactoe.board import CELLS, Cell, cell_text, cells_text, parse_cell
from hidden_tictactoe.roles import PLAYER, SEER

MARK_RE = re.compile(r"mark\s*\(\s*(\d)\s*,\s*(\d)\s*\)", re.IGNORECASE)
CELL_RE = re.compile(r"\(\s*(\d)\s*,\s*(\d)\s*\)")
QUESTION = "Which cell is safe to mark?"


def _cells(data: Mapping[str, Any], name: str) -> list[Cell]:
    return [parse_cell(c) for c in data.get(name) or []]


def taken(data: Mapping[str, Any]) -> set[Cell]:
    """Cells the observation shows as taken: marks, the opponent's O's and mines already stepped on."""
    return {*_cells(data, "marks"), *_cells(data, "blocked"), *_cells(data, "revealed")}


def named_cell(text: str, skip: set[Cell]) -> Cell | None:
    """The cell a message asks for: after "mark", else the first one it writes that is not in ``skip``."""
    found = MARK_RE.search(text)
    if found:
        return (int(found.group(1)), int(found.group(2)))
    cells = [(int(i), int(j)) for i, j in CELL_RE.findall(text)]
    return next((c for c in cells if c not in skip), None)


class _Scripted:
    """Common state: the role and the seed, set by ``reset`` (the task is ignored)."""

    def __init__(self, role: str) -> None:
        self.role, self.seed = role, 0

    def reset(self, seed: int, role: str, task: Mapping[str, Any]) -> None:
        """Start an episode."""
        self.seed, self.role = seed, role


class OracleSeer(_Scripted):
    """Names the next unmarked cell of the safe line it sees."""

    def act(self, observation: Observation) -> Reply:
        data = observation.data
        target, marks = _cells(data, "target"), set(_cells(data, "marks"))
        todo = [c for c in target if c not in marks] or target
        line = f"The safe line is {data.get('line')}: {cells_text(target)}."
        thought = f"Mines at {cells_text(_cells(data, 'mines'))}; {len(target) - len(todo)} of 3 safe cells marked."
        return Reply(message=f"Mark {cell_text(todo[0])} next. {line}", reasoning=thought)


class SilentSeer(_Scripted):
    """Never says where to go."""

    def act(self, observation: Observation) -> Reply:
        return Reply(message="Good luck!")


class ScriptedPlayer(_Scripted):
    """Marks the cell the seer names this turn (sometimes a random free one, with probability ``slip``)."""

    def __init__(self, role: str, slip: float = 0.0) -> None:
        super().__init__(role)
        self.slip = slip

    def act(self, observation: Observation) -> Reply:
        data = observation.data
        skip = taken(data)
        said = " ".join(str(m.get("text", "")) for m in data.get("this_turn") or [])
        cell = named_cell(said, skip)
        if cell is None:
            return Reply(message=QUESTION)
        r = rng(self.seed, self.role, "slip", observation.turn)
        if self.slip and r.random() < self.slip:
            cell = r.choice([c for c in CELLS if c not in skip] or [cell])
        return Reply(action={"cell": [cell[0], cell[1]]})


class RandomPlayer(_Scripted):
    """Marks a random cell it does not know to be taken."""

    def act(self, observation: Observation) -> Reply:
        free = [c for c in CELLS if c not in taken(observation.data)] or list(CELLS)
        cell = rng(self.seed, self.role, "random", observation.turn).choice(free)
        return Reply(action={"cell": [cell[0], cell[1]]})


# ---- the registry -----------------------------------------------------------------------------------------
def _check(name: str, role: str, plays: str, arg: str | None, takes_arg: bool = False) -> None:
    if role not in (SEER, PLAYER):
        raise ValueError(f"unknown role {role!r}; tictactoe has roles {SEER} and {PLAYER}")
    if role != plays:
        raise ValueError(f"the {name} agent plays the {plays} only, not the {role}")
    if arg is not None and not takes_arg:
        raise ValueError(f"the {name} agent takes no argument, got {arg!r}")


def make_oracle(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``oracle``: the :class:`OracleSeer`."""
    _check("oracle", role, SEER, arg)
    return OracleSeer(role)


def make_silent(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``silent``: the :class:`SilentSeer`."""
    _check("silent", role, SEER, arg)
    return SilentSeer(role)


def make_scripted(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``scripted[:SLIP]``: the :class:`ScriptedPlayer`; SLIP is a probability between 0 and 1."""
    _check("scripted", role, PLAYER, arg, takes_arg=True)
    try:
        slip = float(arg) if arg is not None else 0.0
    except ValueError:
        raise ValueError(f"scripted:SLIP expects a number between 0 and 1, got {arg!r}") from None
    if not 0.0 <= slip <= 1.0:
        raise ValueError(f"scripted:SLIP expects a number between 0 and 1, got {arg!r}")
    return ScriptedPlayer(role, slip)


def make_random(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``random``: the :class:`RandomPlayer`."""
    _check("random", role, PLAYER, arg)
    return RandomPlayer(role)


AGENTS: dict[str, Callable[..., Agent]] = {
    "oracle": make_oracle,
    "silent": make_silent,
    "scripted": make_scripted,
    "random": make_random,
}
