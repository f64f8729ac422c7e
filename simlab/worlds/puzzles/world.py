"""The COMMA game master: a solver who sees a puzzle module and an expert who holds its manual.

A turn (paper section 4.1, appendix D) is the solver's output: one legal action, or a newline-separated list of
them (matched by exact name), which the module performs in order; or anything else, which goes to the expert,
whose reply ends the turn. The solver sees the module's picture, the legal actions, the environment's
feedback and the dialogue; the expert sees the manual and the dialogue only. The episode ends when the module
is solved, after ``mistakes`` strikes, or after ``turns`` turns. A mistake inside an action list stops the
list by default (``after_mistake``: the paper does not say).

The expert's observation carries, under ``data["privileged"]``, the rest of the solution as the module will
play it (every correct action from now, simulated on a copy): only the oracle expert reads it; it is never in
the text a model or a person is shown.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field

from simlab.core import events as ev
from simlab.core.events import Event
from simlab.core.family import Settings
from simlab.core.seeding import stable_seed
from simlab.core.world import LazyImages, Observation, Reply, World
from simlab.worlds.puzzles.leaks import revealed
from simlab.worlds.puzzles.puzzle import Puzzle, puzzle_class

SOLVER, EXPERT = "solver", "expert"
ROLES = (SOLVER, EXPERT)
PALETTE: dict[str, tuple[int, int, int]] = {SOLVER: (21, 101, 192), EXPERT: (194, 94, 0)}
MAX_PLAN = 200  # actions the privileged plan simulates at most (every puzzle solves in far fewer)


class PuzzlesSettings(Settings):
    """The COMMA protocol's limits and the choices the paper leaves open (docs/PUZZLES.md)."""

    turns: int = Field(
        10, ge=1, le=1000, description="conversation turns (the paper's 10; its released config used 20)"
    )
    mistakes: int = Field(3, ge=1, le=100, description="strikes that end the episode (the paper's 3)")
    after_mistake: Literal["stop", "continue"] = Field(
        "stop", description="a mistake inside an action list stops the rest of the list, or the list goes on"
    )
    acl: Literal["before_solving", "taken"] = Field(
        "before_solving",
        description="conversation length: turns before the action that ended the episode, the limit when it ran "
        "out (fits the paper's tables), or turns taken to solve, the limit when failed (its text); both are "
        "recorded, this one is 'acl'",
    )


class PuzzlesWorld(World):
    """One puzzle instance, a solver and an expert."""

    family = "puzzles"
    roles = ROLES

    def __init__(self, task: Mapping[str, Any], settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(task, PuzzlesSettings.checked(settings))
        self.kind = puzzle_class(str(task.get("puzzle")))
        self.kind.validate(task["instance"])
        self._fresh(0)

    def _fresh(self, seed: int) -> None:
        self.puzzle: Puzzle = self.kind(self.task["instance"], stable_seed("puzzle-play", seed))
        self.history: list[dict[str, Any]] = []
        self.phase = SOLVER
        self.feedback: list[str] = []
        self.mistakes = 0
        self.solved_at: int | None = None
        self.ended_at: int | None = None  # the turn whose action solved the module or made the last strike
        self.actions_taken = 0
        self.leaked: list[str] = []  # names of private values a solver message revealed, in order

    # ---- AEC protocol --------------------------------------------------------------------------------
    def reset(self, seed: int) -> list[Event]:
        self._fresh(seed)
        self.turn = 1
        return [ev.state(0, self._state()), ev.score(0, self._scores())]

    @property
    def agent_selection(self) -> str | None:
        return None if self.finished else self.phase

    @property
    def done(self) -> bool:
        return self.puzzle.solved or self.mistakes >= int(self.settings["mistakes"])

    @property
    def truncated(self) -> bool:
        return not self.done and self.turn > int(self.settings["turns"])

    def observe(self, role: str) -> Observation:
        if role == SOLVER:
            return self._observe_solver()
        if role == EXPERT:
            return self._observe_expert()
        raise ValueError(f"puzzles has no role {role!r}")

    def step(self, reply: Reply) -> list[Event]:
        role = self.agent_selection
        if role is None:
            raise RuntimeError("the episode is over; nothing may act")
        out: list[Event] = []
        named = (reply.action or {}).get("actions") if role == SOLVER else None
        actions = [named] if isinstance(named, str) else list(named or [])  # a person's form names one
        if actions:
            return out + self._act(actions)
        text = (reply.message or "").strip()
        if text:
            out.append(ev.message(self.turn, role, text))
            self.history.append({"turn": self.turn, "role": role, "text": text})
            out += self._leak_check(role, text)
        else:
            out.append(ev.protocol_error(self.turn, role, "no_message", f"the {role} said nothing"))
        if role == SOLVER:
            self.phase = EXPERT
        else:
            self._end_turn()
        return out

    # ---- actions ---------------------------------------------------------------------------------------
    def _act(self, actions: Sequence[Any]) -> list[Event]:
        out: list[Event] = []
        self.feedback = []
        for action in actions:
            name = str(action)
            if self.puzzle.solved or self.mistakes >= int(self.settings["mistakes"]):
                break
            if name not in self.puzzle.actions():
                out.append(
                    ev.protocol_error(self.turn, SOLVER, "illegal_action", f"{name!r} is not a legal action now")
                )
                self.feedback.append(f"{name}: not an action you can take now.")
                break
            step = self.puzzle.act(name)
            self.actions_taken += 1
            out.append(Event("action", self.turn, SOLVER, {"action": {"action": name}, "text": name}))
            data: dict[str, Any] = {"ok": step.kind != "mistake", "kind": step.kind, "message": step.feedback}
            if step.kind == "mistake":
                self.mistakes += 1
                data.update(error="mistake", strikes=self.mistakes)
            out.append(Event("result", self.turn, "engine", data))
            self.feedback.append(step.feedback)
            if step.kind == "solved":
                self.solved_at = self.turn
            if step.kind == "mistake" and self.settings["after_mistake"] == "stop":
                break
        out += [ev.state(self.turn, self._state(str(actions[-1]))), ev.score(self.turn, self._scores())]
        if self.done:
            self.ended_at = self.turn
        self._end_turn()
        return out

    def _leak_check(self, role: str, text: str) -> list[Event]:
        """A protocol error (on the timeline) when a solver message reveals private data, and the running count."""
        private = self.puzzle.private()
        if role != SOLVER or not private:
            return []
        found = [name for name in revealed([text], private) if name not in self.leaked]
        if not found:
            return []
        self.leaked += found
        return [
            ev.protocol_error(self.turn, SOLVER, "private_leak", "the message reveals " + ", ".join(found)),
            ev.score(self.turn, self._scores()),
        ]

    def _end_turn(self) -> None:
        self.turn += 1
        self.phase = SOLVER

    # ---- observations ---------------------------------------------------------------------------------
    def _observe_solver(self) -> Observation:
        parts = [f"Puzzle: {self.kind.title}."]
        note = self.puzzle.solver_note()
        if note:
            parts.append(note)
        legal = self.puzzle.actions()
        parts.append("Possible actions (reply with exact names, one per line):\n" + "\n".join(legal))
        if self.feedback:
            parts.append("What happened:\n" + "\n".join(self.feedback))
        shared = self._shared()
        parts.append("Conversation so far:\n" + ("\n".join(shared) or "(nothing yet)"))
        parts.append(self._turn_line())
        snapshot = self.puzzle.snapshot()
        images = LazyImages({"module": lambda: self.kind.draw(snapshot)})
        data = {"puzzle": self.kind.name, "snapshot": snapshot, "actions": legal, "feedback": list(self.feedback)}
        data["description"] = self.puzzle.describe()  # what the scripted solver says
        data["note"] = note  # the private facts it was told, as the text says them
        words = {"module": self.puzzle.words()}
        return Observation(SOLVER, self.turn, "\n\n".join(parts), images, data, None, words, shared)

    def _observe_expert(self) -> Observation:
        shared = self._shared()
        parts = [
            f"Puzzle: {self.kind.title}. The manual:\n{self.kind.manual()}",
            "Conversation so far:\n" + ("\n".join(shared) or "(nothing yet)"),
            self._turn_line(),
        ]
        data = {"puzzle": self.kind.name, "privileged": {"plan": self._plan()}}
        return Observation(EXPERT, self.turn, "\n\n".join(parts), {}, data, None, {}, shared)

    def _plan(self) -> list[str]:
        """Every correct action from now, as the module will play them (simulated on a copy)."""
        twin, plan = copy.deepcopy(self.puzzle), list[str]()
        while not twin.solved and len(plan) < MAX_PLAN:
            action = twin.oracle()
            plan.append(action)
            if twin.act(action).kind == "mistake":
                break  # an oracle that errs is a bug the puzzle's tests catch; the plan stops here
        return plan

    def _shared(self) -> tuple[str, ...]:
        return tuple(f"[turn {e['turn']}] {e['role']}: {e['text']}" for e in self.history)

    def _turn_line(self) -> str:
        return f"Turn {self.turn} of {self.settings['turns']}; strikes {self.mistakes} of {self.settings['mistakes']}."

    def _state(self, highlight: str | None = None) -> dict[str, Any]:
        return {"puzzle": self.kind.name, "snapshot": self.puzzle.snapshot(), "highlight": highlight}

    def _scores(self) -> dict[str, float]:
        return {"progress": self.puzzle.progress(), "strikes": float(self.mistakes), "leaks": float(len(self.leaked))}

    # ---- results --------------------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        solved, limit = self.puzzle.solved, int(self.settings["turns"])
        used = min(self.turn - 1, limit)
        before = self.ended_at - 1 if self.ended_at is not None else limit  # fits the paper's tables
        taken = self.solved_at if self.solved_at is not None else limit  # the paper's text
        private = self.puzzle.private()
        metrics: dict[str, float | None] = {
            "sr": 100.0 if solved else 0.0,
            "psr": self.puzzle.progress() if self.kind.multi_step else (100.0 if solved else 0.0),
            "mistakes": float(self.mistakes),
            "acl": float(before if self.settings["acl"] == "before_solving" else taken),
            "acl_before_solving": float(before),
            "acl_taken": float(taken),
            "leak": (100.0 if self.leaked else 0.0) if private else None,
            "actions": float(self.actions_taken),
        }
        return {
            "world": self.family,
            "task_id": self.task_id(),
            "group": self.kind.name,
            "categories": list(self.kind.categories),
            "outcome": "success" if solved else "failure",
            "score": metrics["sr"],
            "turns": used,
            "errors": self.mistakes,
            "metrics": metrics,
            "leaked": list(self.leaked),
        }
