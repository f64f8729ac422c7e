"""Scripted agents for the COMMA puzzles, and the registry :data:`AGENTS` agent specs are looked up in.

* ``random`` solver: one legal action drawn uniformly each turn, never a word (the paper's Random row).
* ``scripted`` solver: does the actions the expert's last message names on ``Do: ACTION`` lines (a line only
  it can carry out, such as typing its own PIN, through the puzzle's ``solver_steps``); otherwise it tells
  the expert what it sees and remembers (the puzzle's ``describe``). It never reveals private values.
* ``oracle`` expert: knows the instance: it names every remaining correct action at once (the solution as
  the module will play it, from the world's privileged plan), so a scripted solver finishes in two turns.
* ``manual`` expert: holds only the manual and answers the solver's descriptions by its rules (each puzzle's
  ``advise``): the scripted ceiling of the real protocol.
* ``silent`` expert: says nothing useful (for tests and solver-alone baselines).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from simlab.core.world import Agent, Observation, Reply, ScriptedAgent
from simlab.worlds.puzzles.puzzle import DO, puzzle_class
from simlab.worlds.puzzles.world import EXPERT, SOLVER

QUESTION = "What should I do?"


def named_actions(text: str) -> list[str]:
    """The actions a message names on ``Do: ACTION`` lines, in order."""
    return [line.strip()[len(DO) :].strip() for line in text.splitlines() if line.strip().startswith(DO)]


def last_said(observation: Observation, role: str) -> str:
    """The last message of ``role`` in the observation's shared history ("" when none)."""
    tag = f"] {role}: "
    for line in reversed(observation.history):
        if tag in line:
            return line.split(tag, 1)[1]
    return ""


def said_by(observation: Observation, role: str) -> list[str]:
    """Every message of ``role`` in the shared history, oldest first."""
    tag = f"] {role}: "
    return [line.split(tag, 1)[1] for line in observation.history if tag in line]


class RandomSolver(ScriptedAgent):
    """One uniformly random legal action per turn."""

    def act(self, observation: Observation) -> Reply:
        legal = list(observation.data.get("actions") or [])
        if not legal:
            return Reply(message=QUESTION)
        return Reply(action={"actions": [self.turn_rng(observation, "random-solver").choice(legal)]})


class ScriptedSolver(ScriptedAgent):
    """Follows the expert's ``Do:`` lines once, else describes the module."""

    def reset(self, seed: int, role: str, task: Mapping[str, Any]) -> None:
        super().reset(seed, role, task)
        self.acted_on = -1  # the history length when it last acted: each instruction is followed once

    def act(self, observation: Observation) -> Reply:
        kind = puzzle_class(str(observation.data.get("puzzle")))
        note = str(observation.data.get("note") or "")
        asked = named_actions(last_said(observation, EXPERT))
        wanted = [action for line in asked for action in kind.solver_steps(line, note)]
        fresh = len(observation.history) != self.acted_on
        # the first must be legal now; later ones may wait for a screen the earlier ones open (the world
        # stops a list at its first action that is not legal)
        if wanted and fresh and wanted[0] in (observation.data.get("actions") or []):
            self.acted_on = len(observation.history)
            return Reply(action={"actions": wanted}, reasoning="Doing what the expert said.")
        words = str(observation.data.get("description") or "")
        return Reply(message=f"{words} {QUESTION}".strip())


class OracleExpert(ScriptedAgent):
    """Names every remaining correct action at once."""

    def act(self, observation: Observation) -> Reply:
        plan = list((observation.data.get("privileged") or {}).get("plan") or [])
        if not plan:
            return Reply(message="Describe the module, please.")
        return Reply(message="Do exactly this:\n" + "\n".join(f"{DO}{a}" for a in plan))


class ManualExpert(ScriptedAgent):
    """Answers the solver's descriptions from the manual's rules alone."""

    def act(self, observation: Observation) -> Reply:
        kind = puzzle_class(str(observation.data.get("puzzle")))
        return Reply(message=kind.advise(said_by(observation, SOLVER)))


class SilentExpert(ScriptedAgent):
    def act(self, observation: Observation) -> Reply:
        return Reply(message="I cannot help you.")


def _factory(cls: Callable[[str], Agent], roles: tuple[str, ...]) -> Callable[..., Agent]:
    name = getattr(cls, "__name__", "agent")  # a class: its name and docstring describe the agent

    def make(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
        if role not in roles:
            raise ValueError(f"the {name} plays the {' and '.join(roles)}, not {role!r} (roles: {SOLVER}, {EXPERT})")
        if arg is not None:
            raise ValueError(f"the {name} takes no argument, got {arg!r}")
        return cls(role)

    make.__doc__ = cls.__doc__
    return make


AGENTS: dict[str, Callable[..., Agent]] = {
    "random": _factory(RandomSolver, (SOLVER,)),
    "scripted": _factory(ScriptedSolver, (SOLVER,)),
    "oracle": _factory(OracleExpert, (EXPERT,)),
    "manual": _factory(ManualExpert, (EXPERT,)),
    "silent": _factory(SilentExpert, (EXPERT,)),
}
