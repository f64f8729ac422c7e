"""Scripted agents for the CRAFT block world: oracle directors and builders, a rule-following builder and a
random builder, plus the registry :data:`AGENTS` that agent specs (``builder=scripted``) are looked up in.

Privilege. Only the oracle agents read the target (the ``board`` of the task given to ``reset``); every
other agent ignores the task and works from its observation alone.

* :class:`OracleDirector` (``oracle`` for D1/D2/D3): each turn, the oracle moves it can *see* (below), one of
  which it says in templated English (:func:`~simlab.worlds.blocks.language.describe_move`). A move is
  visible to a director when any cell it covers, at the move's layer, is among the director's visible
  cell-layers (:func:`~simlab.worlds.blocks.views.sees_move`): its wall cells at every layer, and for D2
  with ``interior="paper"`` also (1,1) and (2,1) at their top *target* layer only. A large block seen end-on
  is still described whole: the oracle director is privileged and knows its partner cell. It avoids repeating
  a move another director already gave this turn; if all its visible moves were said it agrees briefly,
  and with none it says it has nothing to add. ``oracle:first`` (default) says the first visible move in
  oracle order, ``oracle:random`` a seeded choice.
* :class:`OracleBuilder` (``oracle`` for the builder): the ceiling. It plays one of the oracle candidates
  of its observation (``data["candidates"]``), the first by default or a seeded choice with
  ``oracle:random``; when the world sends no candidates field at all it computes the oracle moves itself
  from the target. With no move available it asks for clarification.
* :class:`ScriptedBuilder` (``scripted``): parses this turn's director messages in order and plays the first
  parsed move the engine accepts, preferring one that matches an oracle candidate when candidates are
  shown (or, when its observation holds the target, a verified progress move towards it); otherwise it asks
  for clarification. When its observation offers simulations (``builder="tools"``) it follows the reference's
  tool workflow instead: it simulates each instruction it heard, once, as it heard it, then plays the
  simulated move that went best (:meth:`ScriptedBuilder.tool_reply`). Deterministic.
* :class:`RandomBuilder` (``random``): a uniformly random legal move from :func:`legal_moves`.
* :class:`SilentDirector` (``silent``): never gives an instruction (for tests).

Every random choice comes from :func:`simlab.core.seeding.rng` with the seed given to ``reset``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from simlab.core.seeding import rng
from simlab.core.world import Agent, Observation, Reply, ScriptedAgent
from simlab.worlds.blocks.language import describe_move, parse_moves
from simlab.worlds.blocks.model import (
    BLOCK_CODES,
    CELLS,
    COLORS,
    Action,
    Board,
    Cell,
    Move,
    adjacent,
    color_of,
    is_large,
)
from simlab.worlds.blocks.oracle import oracle_moves
from simlab.worlds.blocks.simulation import simulate_action
from simlab.worlds.blocks.views import DIRECTORS, WALL_NAMES, sees_move, visible_cell_layers

BUILDER = "builder"
CLARIFY_QUESTION = "Which block should I place next? Please give colour, size, cell and layer."
NO_CANDIDATE_QUESTION = "I have no verified move to choose from. Which block should I place or remove next?"
CHOICES = ("first", "random")


# ---- shared helpers ---------------------------------------------------------------------------------------
def is_director(role: str) -> bool:
    """True for D1, D2 and D3."""
    return role in DIRECTORS


def clarify(question: str) -> Reply:
    """A builder's clarification reply: the question is both the public message and the action's text."""
    return Reply(message=question, action={"action": Action.CLARIFY.value, "text": question})


def play(move: Move, reasoning: str) -> Reply:
    """A builder's move reply (no public message)."""
    return Reply(message=None, reasoning=reasoning, action=move.to_json())


def message_text(item: Any) -> str:
    """The text of one message entry: ``{"role": ..., "text": ...}`` or a plain string."""
    return str(item.get("text", "")) if isinstance(item, Mapping) else str(item)


def message_role(item: Any) -> str | None:
    """The speaker of one message entry, when it names one."""
    return str(item["role"]) if isinstance(item, Mapping) and "role" in item else None


def effect(board: Board, move: Move) -> tuple[Action, Any] | None:
    """What a legal move does (its action and the piece it puts down or takes off); None when illegal.

    Two spellings of the same move (a large block named from either cell, a removal with or without its
    span) have the same effect.
    """
    result = board.check(move)
    return (move.action, result.piece) if result.ok else None


def legal_moves(board: Board) -> list[Move]:
    """Every legal place and remove move, one spelling each (a large block from its first sorted cell)."""
    moves: list[Move] = []
    for cell in CELLS:
        layer = board.height(cell)
        for code in BLOCK_CODES:
            spans: Iterable[Cell | None] = (
                [c for c in CELLS if c > cell and adjacent(cell, c)] if is_large(code) else [None]
            )
            moves.extend(Move.place(code, cell, layer, span) for span in spans)
        top = board.top(cell)
        if top is not None and top.cells[0] == cell:
            moves.append(Move.remove(cell, top.layer, top.cells[1] if top.large else None))
    return [m for m in moves if board.check(m).ok]


def _target(task: Mapping[str, Any], who: str) -> Board:
    board = task.get("board") if isinstance(task, Mapping) else None
    if not isinstance(board, Mapping):
        raise ValueError(f"{who} is privileged and needs the task's target 'board'; the task has none")
    return Board.from_json(board)


def _pick(moves: Sequence[Move], choice: str, r: random.Random) -> Move:
    return moves[0] if choice == "first" else r.choice(list(moves))


class _Oracle(ScriptedAgent):
    """Base of the privileged agents: they read the target from the task and choose first or at random."""

    def __init__(self, role: str, choice: str = "first") -> None:
        super().__init__(role)
        self.choice = choice
        self.target = Board()

    def reset(self, seed: int, role: str, task: Mapping[str, Any]) -> None:
        super().reset(seed, role, task)
        self.target = _target(task, f"the oracle {'builder' if role == BUILDER else 'director'}")


# ---- directors --------------------------------------------------------------------------------------------
class OracleDirector(_Oracle):
    """Privileged director: says an oracle move it can see on its wall (see the module docstring)."""

    def act(self, observation: Observation) -> Reply:
        data = observation.data
        board = Board.from_json(data["board"])
        director = str(data.get("director", self.role))
        visible = visible_cell_layers(self.target, director, data.get("interior", "paper"))
        moves = [m for m in oracle_moves(board, self.target) if sees_move(m, visible)]
        said = _said(board, data.get("this_turn") or [])
        fresh = [m for m in moves if effect(board, m) not in said]
        reasoning = self._reasoning(board, director, visible, moves)
        if fresh:
            r = self.turn_rng(observation, "oracle-director")
            move = _pick(fresh, self.choice, r)
            return Reply(message=describe_move(move, r, _remove_reason(board, self.target, move)), reasoning=reasoning)
        if moves:
            speaker = said.get(effect(board, moves[0])) or "the others"
            return Reply(message=f"Agreed with {speaker}.", reasoning=reasoning)
        return Reply(
            message=f"Nothing more to add from the {WALL_NAMES.get(director, director)} wall.", reasoning=reasoning
        )

    def _reasoning(self, board: Board, director: str, visible: set[tuple[Cell, int]], moves: list[Move]) -> str:
        wrong = sorted((c, layer) for c, layer in visible if board.at(c, layer) != self.target.at(c, layer))
        wall = WALL_NAMES.get(director, director)
        needs = ", ".join(f"({c[0]},{c[1]}) layer {layer}" for c, layer in wrong) or "nothing"
        options = "; ".join(m.describe() for m in moves) or "none"
        return (
            f"My wall ({wall}) still needs {len(wrong)} cell-layer(s) fixed: {needs}. "
            f"Oracle moves I can see: {options}. The board has {board.block_count()} blocks."
        )


def _said(board: Board, this_turn: Iterable[Any]) -> dict[tuple[Action, Any] | None, str]:
    """Effects of the moves already given this turn -> who gave them first ("another director" if unnamed)."""
    said: dict[tuple[Action, Any] | None, str] = {}
    for item in this_turn:
        for move in parse_moves(message_text(item), board):
            said.setdefault(effect(board, move), message_role(item) or "another director")
    said.pop(None, None)
    return said


def _remove_reason(board: Board, target: Board, move: Move) -> str | None:
    """Why a block must come off, in words without coordinates; None for a placement."""
    if move.action is not Action.REMOVE or move.cell is None or move.layer is None:
        return None
    piece, wanted = board.at(move.cell, move.layer), target.at(move.cell, move.layer)
    if piece is None:
        return None
    if wanted is None:
        return "nothing belongs there"
    if color_of(wanted.code) != color_of(piece.code):
        return f"it should be {color_of(wanted.code)}"
    if wanted != piece:
        return "it is the wrong size or in the wrong position"
    return "it sits on a wrong block below"


class SilentDirector(ScriptedAgent):
    """A director that never gives an instruction."""

    def act(self, observation: Observation) -> Reply:
        return Reply(message="Nothing to add.", reasoning="The silent baseline gives no instructions.")


# ---- builders ---------------------------------------------------------------------------------------------
class ScriptedBuilder(ScriptedAgent):
    """Not privileged: plays the first legal move parsed from this turn's messages (candidates preferred).

    ``slip`` is the chance per move of a listener's slip (seeded): the layer, the colour or the cell is
    misheard, so a run shows engine errors and wrong moves the way a fallible builder makes them. When its
    observation offers simulations it plays by :meth:`tool_reply` instead.
    """

    def __init__(self, role: str, slip: float = 0.0) -> None:
        super().__init__(role)
        self.slip = slip

    def act(self, observation: Observation) -> Reply:
        if "simulations_left" in observation.data:
            return self.tool_reply(observation)
        reply = self._follow(observation)
        r = self.turn_rng(observation, "slip")
        if self.slip and reply.action and reply.action.get("action") != "clarify" and r.random() < self.slip:
            move = _misheard(Move.from_json(reply.action), r)
            return play(move, f"{reply.reasoning} (misheard: playing {move.describe()})")
        return reply

    def _follow(self, observation: Observation) -> Reply:
        data = observation.data
        board = Board.from_json(data["board"])
        parsed = [
            (message_role(m), move) for m in data.get("messages") or [] for move in parse_moves(message_text(m), board)
        ]
        legal = [(who, move) for who, move in parsed if board.check(move).ok]
        candidates = {effect(board, move) for move in _verified_moves(data, board)}
        matching = [(who, move) for who, move in legal if effect(board, move) in candidates]
        if not (matching or legal):
            return clarify(CLARIFY_QUESTION)
        who, move = (matching or legal)[0]
        note = " (it matches an oracle candidate)" if matching else ""
        return play(move, f"Following {who or 'a director'}: {move.describe()}{note}.")

    def tool_reply(self, observation: Observation) -> Reply:
        """The tools condition: simulate the next instruction heard and not yet simulated while simulations are
        left, then play the best simulated move (:func:`_best_simulated`), or clarify when none is worth it."""
        data = observation.data
        heard = self._heard(observation, Board.from_json(data["board"]))
        tried = {_key(a["move"]): a for a in data.get("simulations") or [] if isinstance(a.get("move"), Mapping)}
        fresh = [(who, move) for who, move in heard if _key(move.to_json()) not in tried]
        if fresh and int(data.get("simulations_left") or 0) > 0:
            who, move = fresh[0]
            return Reply(
                reasoning=f"Simulating {who or 'a director'}: {move.describe()}.", action=simulate_action(move)
            )
        best = _best_simulated([move for _, move in heard], tried)
        if best is None:
            return clarify(CLARIFY_QUESTION)
        return play(best, f"Playing the best simulated move: {best.describe()}.")

    def _heard(self, observation: Observation, board: Board) -> list[tuple[str | None, Move]]:
        """This turn's instructions in order, each misheard with chance ``slip`` (the same each time this turn)."""
        r = self.turn_rng(observation, "slip")
        heard: dict[str, tuple[str | None, Move]] = {}
        for item in observation.data.get("messages") or []:
            for move in parse_moves(message_text(item), board):
                move = _misheard(move, r) if self.slip and r.random() < self.slip else move
                heard.setdefault(_key(move.to_json()), (message_role(item), move))
        return list(heard.values())


def _verified_moves(data: Mapping[str, Any], board: Board) -> list[Move]:
    """The verified moves an observation gives: its candidates, or the progress moves towards its target (the
    full-information condition shows the target itself)."""
    if isinstance(data.get("target"), Mapping):
        return oracle_moves(board, Board.from_json(data["target"]))
    return [Move.from_json(c) for c in data.get("candidates") or []]


def _key(move_json: Mapping[str, Any]) -> str:
    """One key per spelling of a move (a ``Move.to_json()``): a heard move and its simulation's answer meet."""
    return repr(sorted(move_json.items()))


def _best_simulated(moves: Sequence[Move], tried: Mapping[str, Mapping[str, Any]]) -> Move | None:
    """The simulated move that went best, as the reference's tool prompt asks: legal, the most progress (when the
    answers hold the target check), never a remove the check calls wrong. Earlier instructions win ties."""
    scored: list[tuple[float, Move]] = []
    for move in moves:
        answer = tried.get(_key(move.to_json()))
        if answer is None or not (answer.get("would") or {}).get("ok"):
            continue
        check = answer.get("feedback") or {}
        if move.action is Action.REMOVE and check.get("structure_placement") is False:
            continue
        scored.append((float(check.get("overall_progress", 0.0)), move))
    return max(scored, key=lambda item: item[0])[1] if scored else None


def _misheard(move: Move, r: random.Random) -> Move:
    """The move with one thing misheard: the layer (one up), the colour, or the cell (a neighbour's)."""
    kind = r.choice(("layer", "colour", "cell") if move.action is Action.PLACE else ("layer", "cell"))
    assert move.cell is not None and move.layer is not None
    if kind == "layer":
        return replace(move, layer=move.layer + 1)
    if kind == "colour" and move.block is not None:
        others = [c for c in COLORS if c[0] != move.block[0]]
        return replace(move, block=r.choice(others)[0] + move.block[1])
    i, j = move.cell
    cell = r.choice([(a, b) for a, b in ((i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1)) if 0 <= a < 3 and 0 <= b < 3])
    span = None if move.span_to is None else (move.span_to[0] + cell[0] - i, move.span_to[1] + cell[1] - j)
    return replace(move, cell=cell, span_to=span)


class OracleBuilder(_Oracle):
    """Privileged ceiling: plays an oracle candidate (see the module docstring)."""

    def act(self, observation: Observation) -> Reply:
        data = observation.data
        board = Board.from_json(data["board"])
        if "candidates" in data:
            moves = [Move.from_json(c) for c in data["candidates"] or []]
        else:
            moves = oracle_moves(board, self.target)
        if not moves:
            return clarify(NO_CANDIDATE_QUESTION)
        move = _pick(moves, self.choice, self.turn_rng(observation, "oracle-builder"))
        return play(move, f"Oracle move: {move.describe()}.")


class RandomBuilder(ScriptedAgent):
    """The random baseline: a uniformly random legal move, from one stream seeded at reset."""

    def __init__(self, role: str) -> None:
        super().__init__(role)
        self.rng = rng(0, role, "random-builder")

    def reset(self, seed: int, role: str, task: Mapping[str, Any]) -> None:
        super().reset(seed, role, task)
        self.rng = rng(seed, role, "random-builder")

    def act(self, observation: Observation) -> Reply:
        moves = legal_moves(Board.from_json(observation.data["board"]))
        if not moves:
            return clarify(CLARIFY_QUESTION)
        move = self.rng.choice(moves)
        return play(move, f"Random legal move: {move.describe()}.")


# ---- the registry -----------------------------------------------------------------------------------------
def _check_role(name: str, role: str, plays: str) -> None:
    if not is_director(role) and role != BUILDER:
        raise ValueError(f"unknown role {role!r}; the blocks world has roles {', '.join(DIRECTORS)} and {BUILDER}")
    if plays == "builder" and role != BUILDER:
        raise ValueError(f"the {name} agent plays the builder only, not {role}")
    if plays == "director" and not is_director(role):
        raise ValueError(f"the {name} agent plays a director only ({', '.join(DIRECTORS)}), not {role}")


def _check_arg(name: str, arg: str | None, allowed: tuple[str, ...] = ()) -> str | None:
    if arg is not None and arg not in allowed:
        expected = f"one of {', '.join(allowed)}" if allowed else "no argument"
        raise ValueError(f"the {name} agent takes {expected}, got {arg!r}")
    return arg


def make_oracle(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``oracle[:first|random]``: an :class:`OracleDirector` for D1-D3, an :class:`OracleBuilder` for the builder."""
    _check_role("oracle", role, "any")
    choice = _check_arg("oracle", arg, CHOICES) or "first"
    return OracleDirector(role, choice) if is_director(role) else OracleBuilder(role, choice)


def make_scripted(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``scripted[:SLIP]``: the :class:`ScriptedBuilder`; SLIP (0-1, default 0) is its chance of mishearing."""
    _check_role("scripted", role, "builder")
    try:
        slip = float(arg) if arg is not None else 0.0
    except ValueError:
        slip = -1.0
    if not 0.0 <= slip <= 1.0:
        raise ValueError(f"the scripted builder takes a slip chance between 0 and 1, got {arg!r}")
    return ScriptedBuilder(role, slip)


def make_random(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``random``: the :class:`RandomBuilder`."""
    _check_role("random", role, "builder")
    _check_arg("random", arg)
    return RandomBuilder(role)


def make_silent(role: str, arg: str | None = None, settings: Mapping[str, Any] | None = None) -> Agent:
    """``silent``: the :class:`SilentDirector`."""
    _check_role("silent", role, "director")
    _check_arg("silent", arg)
    return SilentDirector(role)


AGENTS: dict[str, Callable[..., Agent]] = {
    "oracle": make_oracle,
    "scripted": make_scripted,
    "random": make_random,
    "silent": make_silent,
}
