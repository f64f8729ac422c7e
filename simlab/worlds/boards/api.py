"""The robot's API as its code sees it, and one code turn run atomically on a copy of the board.

The functions are those of the reference game's prompt: ``put(board, shape, color, x, y)``,
``remove(board, x, y, shape, color)`` (also ``removeshape``), ``move(board, x1, y1, x2, y2, shapes_list=None)``,
``clear(board)`` and ``undo(board)``. Arguments are positional or keyword; ``row=``/``col=`` (the paper's own
example) and ``column=``/``colour=`` are aliases. The code is run by :mod:`simlab.worlds.boards.interpreter`,
never by Python: a program that leaves the accepted subset is refused before anything runs, and a program
that fails halfway leaves the board as it was (the copy is thrown away).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from simlab.worlds.boards import model
from simlab.worlds.boards.interpreter import CallError, Limits, ProgramError, run_program
from simlab.worlds.boards.model import Board, BoardError, Placement, Rules

EXECUTION_ERROR = "Error during execution of the code:\n{error}\nPlease correct the code to fix the error."
"""What the robot is told when its code fails (the reference's words)."""


class BoardHandle:
    """What the name ``board`` holds in the robot's code: an opaque token the API functions accept."""

    def __repr__(self) -> str:
        return "board"


@dataclass
class Workbench:
    """The state one code turn works on: a copy of the board, the boards before earlier code turns (for
    ``undo``), the rules, and what the program did."""

    board: Board
    rules: Rules
    before_turns: list[Board]
    handle: BoardHandle = field(default_factory=BoardHandle)
    placed: list[Placement] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)

    def functions(self) -> dict[str, Callable[..., Any]]:
        """The API by name, bound to this workbench."""
        return {
            "put": self.put,
            "remove": self.remove,
            "removeshape": self.remove,
            "move": self.move,
            "clear": self.clear,
            "undo": self.undo,
        }

    # ---- the API ---------------------------------------------------------------------------------------
    def put(
        self,
        board: Any = None,
        shape: Any = None,
        color: Any = None,
        x: Any = None,
        y: Any = None,
        *,
        colour: Any = None,
        row: Any = None,
        col: Any = None,
        column: Any = None,
    ) -> None:
        """put(board, shape, color, x, y): place a shape on the first free level of row x, column y."""
        self._board(board, "put")
        shape, color = _text(shape, "shape", "put"), _text(_alias(color, colour), "color", "put")
        x, y = _int(_alias(x, row), "x", "put"), _int(_alias(y, col, column), "y", "put")
        self.calls.append("put")
        self.placed.append(self._rule(lambda: model.put(self.board, shape, color, x, y, self.rules)))

    def remove(
        self,
        board: Any = None,
        x: Any = None,
        y: Any = None,
        shape: Any = None,
        color: Any = None,
        *,
        colour: Any = None,
        row: Any = None,
        col: Any = None,
        column: Any = None,
    ) -> None:
        """remove(board, x, y, shape, color): take the top piece at row x, column y off (a bridge whole)."""
        self._board(board, "remove")
        x, y = _int(_alias(x, row), "x", "remove"), _int(_alias(y, col, column), "y", "remove")
        shape, color = _text(shape, "shape", "remove"), _text(_alias(color, colour), "color", "remove")
        self.calls.append("remove")
        self._rule(lambda: model.remove(self.board, x, y, shape, color))

    def move(
        self, board: Any = None, x1: Any = None, y1: Any = None, x2: Any = None, y2: Any = None, shapes_list: Any = None
    ) -> None:
        """move(board, x1, y1, x2, y2, shapes_list=None): move the top piece, or the listed pieces (bottom to
        top, as (shape, color) pairs), from (x1, y1) onto (x2, y2)."""
        self._board(board, "move")
        x1, y1 = _int(x1, "x1", "move"), _int(y1, "y1", "move")
        x2, y2 = _int(x2, "x2", "move"), _int(y2, "y2", "move")
        pieces = None if shapes_list is None else _pairs(shapes_list)
        self.calls.append("move")
        self.placed.extend(self._rule(lambda: model.move(self.board, x1, y1, x2, y2, pieces, self.rules)))

    def clear(self, board: Any = None) -> None:
        """clear(board): take every piece off."""
        self._board(board, "clear")
        self.calls.append("clear")
        model.clear(self.board)

    def undo(self, board: Any = None) -> None:
        """undo(board): back to the board before the last successful code turn."""
        self._board(board, "undo")
        if not self.before_turns:
            raise CallError("Nothing to undo: no earlier code turn changed the board", "nothing_to_undo")
        self.calls.append("undo")
        previous = self.before_turns.pop()
        self.board.stacks = previous.copy().stacks

    # ---- helpers ---------------------------------------------------------------------------------------
    def _board(self, value: Any, function: str) -> None:
        if value is not self.handle:
            raise CallError(f"{function}() takes the board as its first argument: {function}(board, ...)", "arguments")

    @staticmethod
    def _rule(action: Callable[[], Any]) -> Any:
        try:
            return action()
        except BoardError as exc:
            raise CallError(exc.message, exc.code) from None


def _alias(value: Any, *aliases: Any) -> Any:
    return next((v for v in (value, *aliases) if v is not None), None)


def _text(value: Any, name: str, function: str) -> str:
    if not isinstance(value, str):
        raise CallError(f"{function}(): {name} must be given as a string, got {_shown(value)}", "arguments")
    return value


def _int(value: Any, name: str, function: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CallError(f"{function}(): {name} must be a whole number (1-based), got {_shown(value)}", "arguments")
    return value


def _pairs(value: Any) -> list[tuple[str, str]]:
    ok = isinstance(value, list | tuple) and all(
        isinstance(p, list | tuple) and len(p) == 2 and all(isinstance(s, str) for s in p) for p in value
    )
    if not ok:
        raise CallError("move(): shapes_list must be a list of (shape, color) pairs, bottom to top", "arguments")
    return [(str(p[0]), str(p[1])) for p in value]


def _shown(value: Any) -> str:
    return "nothing" if value is None else repr(value)[:40]


# ---- one code turn ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Execution:
    """What a code turn did: ``ok`` and the board after it (the board before when it failed), the error's
    ``code`` and ``message`` (the robot's feedback), the failing ``line``, the API calls made."""

    ok: bool
    board: Board
    before_turns: tuple[Board, ...]
    code: str | None = None
    message: str = ""
    line: int | None = None
    calls: tuple[str, ...] = ()
    placed: tuple[Placement, ...] = ()

    def feedback(self) -> str:
        """The message the robot gets for a failed run."""
        where = f"line {self.line}: " if self.line else ""
        return EXECUTION_ERROR.format(error=f"{where}{self.message}")


def execute(
    board: Board, source: str, rules: Rules, before_turns: Sequence[Board] = (), limits: Limits | None = None
) -> Execution:
    """Run the robot's ``source`` on a copy of ``board``: all or nothing. On success the new board and the
    undo history with the old board pushed; on failure the board as it was."""
    bench = Workbench(board.copy(), rules, [b.copy() for b in before_turns])
    try:
        run_program(source, bench.functions(), {"board": bench.handle}, limits or Limits())
    except ProgramError as exc:
        return Execution(
            False, board, tuple(before_turns), exc.code, exc.reason, exc.line, tuple(bench.calls), tuple(bench.placed)
        )
    history = tuple(bench.before_turns) if "undo" in bench.calls else (*before_turns, board)
    return Execution(True, bench.board, history, calls=tuple(bench.calls), placed=tuple(bench.placed))
