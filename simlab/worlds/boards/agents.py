"""Scripted agents for the cobot boards, and the registry :data:`AGENTS` agent specs are looked up in.

Privilege. Only the oracles read the target from the task given to ``reset``; the scripted and random robots
work from their observation alone (in the single-agent condition the observation holds the target).

* :class:`OracleProgrammer` (``oracle``): says the next step in plain English (:func:`language.say`): first
  the top piece of any cell that is not on its way to the target is removed, then the target's pieces are
  placed level by level; ``DONE`` when the board matches.
* :class:`OracleRobot` (``oracle``): the single-agent ceiling. Writes code that builds the whole target from
  the current board (clearing it first when it holds a wrong piece); acknowledges when the board matches.
* :class:`ScriptedRobot` (``scripted``): turns the instruction's sentences into API calls
  (:func:`language.read_steps`); asks for clarification when a sentence names an action it cannot complete
  or when its last code failed.
* ``noisy[:RATE]`` for either role: the oracle programmer or the scripted robot, but each component it says
  or codes is, with chance RATE (0.2 by default), got wrong the way people and models get it wrong: another
  colour, a cell off by one, or the colour of the piece it goes on (a same-colour stacking error).
* :class:`RandomRobot` (``random``): 1-3 random ``put`` calls, now and then a question.

Every random choice comes from :func:`simlab.core.seeding.rng` with the seed given to ``reset``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from simlab.core.seeding import rng
from simlab.core.world import Agent, Observation, Reply, ScriptedAgent
from simlab.worlds.boards.language import NotUnderstood, Step, read_steps, say
from simlab.worlds.boards.model import COLOURS, HALF_OF, SHAPES, Board, Placement, bridge_anchor, put
from simlab.worlds.boards.targets import Target
from simlab.worlds.boards.world import DONE, PROGRAMMER, ROBOT

DEFAULT_NOISE = 0.2
MISTAKES = ("colour", "cell", "same_colour")


# ---- what is left to do ----------------------------------------------------------------------------------
def next_step(board: Board, target: Board) -> Step | None:
    """The next step towards ``target``: removing the top of a cell that is not a prefix of its target
    stack (the partner cell's first when a bridge is buried there), else the first missing target piece,
    level by level in row order; None when the board matches."""
    for cell in board.cells():
        if board.stack(*cell) != target.stack(*cell)[: board.height(*cell)]:
            return Step("remove", _removable(board, cell))
    for level in range(1, target.levels + 1):
        for cell in target.cells():
            stack = target.stack(*cell)
            if len(stack) < level or board.height(*cell) >= level:
                continue
            piece = stack[level - 1]
            anchor = bridge_anchor(piece, *cell) if piece.name in HALF_OF else cell
            return Step("place", Placement(piece.shape, piece.colour, *anchor))
    return None


def _removable(board: Board, cell: tuple[int, int]) -> Placement:
    """The top piece of ``cell``, or of a bridge partner's cell when the bridge has pieces on its far half."""
    for _ in range(board.levels * 2):  # each hop goes to a taller stack, so this ends quickly
        top = board.stack(*cell)[-1]
        if top.name not in HALF_OF:
            return Placement(top.shape, top.colour, *cell)
        anchor = bridge_anchor(top, *cell)
        half = HALF_OF[top.name][1]
        other = anchor if half == 1 else Placement(top.shape, top.colour, *anchor).cells()[1]
        if board.height(*other) <= board.height(*cell):
            return Placement(top.shape, top.colour, *anchor)
        cell = other
    raise AssertionError("no removable piece found")  # a valid board always has one


def target_code(board: Board, target: Board) -> list[str]:
    """API calls that turn ``board`` into ``target``: the missing pieces when every stack is on its way,
    else ``clear(board)`` and the whole target."""
    lines: list[str] = []
    work = board.copy()
    if any(board.stack(*c) != target.stack(*c)[: board.height(*c)] for c in board.cells()):
        lines, work = ["clear(board)"], Board(board.rows, board.cols)
    while (step := next_step(work, target)) is not None:
        lines.append(step.code())
        put(work, step.placement.shape, step.placement.colour, step.placement.x, step.placement.y)
    return lines


def code_reply(lines: list[str], reasoning: str) -> Reply:
    return Reply(action={"status": "code", "details": "\n".join(lines)}, reasoning=reasoning)


def question(text: str) -> Reply:
    return Reply(action={"status": "clarification", "details": text})


def acknowledge(text: str) -> Reply:
    return Reply(action={"status": "acknowledgement", "details": text})


def mistaken(placement: Placement, board: Board, r: random.Random) -> Placement:
    """``placement`` got wrong in one of the :data:`MISTAKES` ways, drawn from ``r``."""
    kind = r.choice(MISTAKES)
    below = board.stack(placement.x, placement.y)
    if kind == "same_colour" and below:
        return replace(placement, colour=below[-1].colour)
    if kind == "cell":
        dx, dy = r.choice(((1, 0), (-1, 0), (0, 1), (0, -1)))
        x, y = placement.x + dx, placement.y + dy
        if board.inside(x, y):
            return replace(placement, x=x, y=y)
    return replace(placement, colour=r.choice([c for c in COLOURS if c != placement.colour]))


# ---- agents ----------------------------------------------------------------------------------------------
class _Scripted(ScriptedAgent):
    """A scripted agent that may slip: ``noise`` is its chance of getting a component wrong."""

    def __init__(self, role: str, noise: float = 0.0) -> None:
        super().__init__(role)
        self.noise = noise

    def slips(self, observation: Observation) -> random.Random | None:
        """A random source when this act is one of the noisy agent's mistakes, else None."""
        r = rng(self.seed, self.role, "noise", observation.turn, len(observation.history))
        return r if self.noise and r.random() < self.noise else None


class OracleProgrammer(_Scripted):
    """Says the next step precisely; DONE when the board matches (noisy: sometimes gets a step wrong)."""

    def act(self, observation: Observation) -> Reply:
        board, target = Board.from_json(observation.data["board"]), Target.from_json(self.task).board()
        step = next_step(board, target)
        if step is None:
            return Reply(message=DONE, reasoning="The robot's board matches the target.")
        r = self.slips(observation) if step.verb == "place" else None
        if r is not None:
            step = Step("place", mistaken(step.placement, board, r))
        return Reply(message=say(step), reasoning=f"Next: {step.code()}")


class OracleRobot(_Scripted):
    """Writes code that builds the target from the current board."""

    def act(self, observation: Observation) -> Reply:
        board, target = Board.from_json(observation.data["board"]), Target.from_json(self.task).board()
        if board == target:
            return acknowledge(DONE)
        return code_reply(target_code(board, target), "Build the whole target from the task.")


class ScriptedRobot(_Scripted):
    """Codes what the instruction says, sentence by sentence (noisy: sometimes gets a component wrong)."""

    def act(self, observation: Observation) -> Reply:
        data = observation.data
        if data.get("feedback"):
            return question(f"My code failed ({_first_line(str(data['feedback']))}). What should I do instead?")
        if "target" in data:  # the single-agent condition: the target is in the observation
            board, target = Board.from_json(data["board"]), Board.from_json(data["target"])
            return acknowledge(DONE) if board == target else code_reply(target_code(board, target), "From the target.")
        try:
            steps = read_steps(str(data.get("instruction", "")))
        except NotUnderstood as exc:
            return question(str(exc))
        if not steps:
            return acknowledge("Understood.")
        board = Board.from_json(data["board"])
        lines = []
        for step in steps:
            r = self.slips(observation) if step.verb == "place" else None
            lines.append(Step("place", mistaken(step.placement, board, r)).code() if r else step.code())
        return code_reply(lines, f"{len(lines)} step(s) from the instruction.")


def _first_line(feedback: str) -> str:
    lines = [line for line in feedback.splitlines() if line.strip()]
    return lines[1] if len(lines) > 1 else (lines[0] if lines else "")


class RandomRobot(_Scripted):
    """1-3 random puts per reply; one reply in ten is a question."""

    def act(self, observation: Observation) -> Reply:
        r = self.turn_rng(observation, "random-robot")
        if r.random() < 0.1:
            return question("Could you say that again, with the cell?")
        board = Board.from_json(observation.data["board"])
        puts = [
            Placement(r.choice(SHAPES), r.choice(COLOURS), r.randint(1, board.rows), r.randint(1, board.cols)).code()
            for _ in range(r.randint(1, 3))
        ]
        return code_reply(puts, "Random puts.")


# ---- the registry -----------------------------------------------------------------------------------------
def _check(name: str, role: str, roles: tuple[str, ...]) -> None:
    if role not in roles:
        plays = " and ".join(roles)
        raise ValueError(f"the {name} agent plays the {plays}, not {role!r} (boards roles: {PROGRAMMER}, {ROBOT})")


def _no_arg(name: str, arg: str | None) -> None:
    if arg is not None:
        raise ValueError(f"the {name} agent takes no argument, got {arg!r}")


def make_oracle(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``oracle``: :class:`OracleProgrammer` or :class:`OracleRobot`."""
    _check("oracle", role, (PROGRAMMER, ROBOT))
    _no_arg("oracle", arg)
    return OracleProgrammer(role) if role == PROGRAMMER else OracleRobot(role)


def make_scripted(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``scripted``: the :class:`ScriptedRobot`."""
    _check("scripted", role, (ROBOT,))
    _no_arg("scripted", arg)
    return ScriptedRobot(role)


def make_noisy(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``noisy[:RATE]``: the oracle programmer or scripted robot getting a component wrong with chance RATE."""
    _check("noisy", role, (PROGRAMMER, ROBOT))
    try:
        rate = float(arg) if arg is not None else DEFAULT_NOISE
    except ValueError:
        rate = -1.0
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"the noisy agent takes a mistake rate between 0 and 1, got {arg!r}")
    return OracleProgrammer(role, rate) if role == PROGRAMMER else ScriptedRobot(role, rate)


def make_random(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``random``: the :class:`RandomRobot`."""
    _check("random", role, (ROBOT,))
    _no_arg("random", arg)
    return RandomRobot(role)


AGENTS: dict[str, Callable[..., Agent]] = {
    "oracle": make_oracle,
    "scripted": make_scripted,
    "noisy": make_noisy,
    "random": make_random,
}
