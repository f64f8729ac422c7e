"""The engine: rules, error codes, serialisation, and invariants under random move sequences."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simlab.worlds.blocks.model import (
    BLOCK_CODES,
    CELLS,
    MAX_HEIGHT,
    Action,
    Board,
    Move,
    MoveError,
    adjacent,
)


def assert_invariants(board: Board) -> None:
    """Heights within bounds; every piece sits at its layer in each of its cells; dominoes paired."""
    for cell in CELLS:
        stack = board.stacks[cell]
        assert len(stack) <= MAX_HEIGHT
        for layer, piece in enumerate(stack):
            assert piece.layer == layer and cell in piece.cells
            if piece.large:
                a, b = piece.cells
                assert a < b and adjacent(a, b)
                assert board.at(a, layer) is piece and board.at(b, layer) is piece
            else:
                assert piece.cells == (cell,)
    assert Board.from_json(json.loads(json.dumps(board.to_json()))) == board


def snapshot(board: Board) -> dict:
    return {c: [(p.code, p.cells, p.layer, id(p)) for p in s] for c, s in board.stacks.items()}


# A raw move: action, cell, layer offset from the cell's height (so many are legal), code, span direction.
raw_moves = st.tuples(
    st.sampled_from([Action.PLACE, Action.REMOVE, Action.CLARIFY]),
    st.sampled_from(CELLS),
    st.sampled_from([-2, -1, 0, 0, 0, 1, 3]),
    st.sampled_from([*BLOCK_CODES, "zz"]),
    st.sampled_from([None, (0, 1), (1, 0), (0, -1), (-1, 0), (1, 1), (5, 5)]),
)


def to_move(board: Board, raw: tuple) -> Move:
    action, cell, offset, code, delta = raw
    if action is Action.CLARIFY:
        return Move.clarify("which one?")
    layer = board.height(cell) + offset - (1 if action is Action.REMOVE else 0)
    span = None if delta is None else (cell[0] + delta[0], cell[1] + delta[1])
    if action is Action.PLACE:
        return Move.place(code, cell, layer, span)
    return Move.remove(cell, layer, span)


@settings(max_examples=300, deadline=None)
@given(st.lists(raw_moves, min_size=1, max_size=60))
def test_random_move_sequences_keep_invariants(raws: list[tuple]) -> None:
    board = Board()
    for raw in raws:
        move = to_move(board, raw)
        before, count = snapshot(board), board.block_count()
        result = board.apply(move)
        if result.ok:
            assert result.piece is not None and result.error is None
            sign = 1 if move.action is Action.PLACE else -1
            assert board.block_count() == count + sign * len(result.piece.cells)
        else:
            assert result.error is not None and result.message
            assert snapshot(board) == before
        assert_invariants(board)


def test_large_block_needs_equal_heights() -> None:
    board = Board()
    assert board.apply(Move.place("gs", (0, 0), 0)).ok
    result = board.apply(Move.place("bl", (0, 0), 1, (0, 1)))
    assert result.error is MoveError.SPAN_HEIGHT_MISMATCH
    assert board.apply(Move.place("bl", (0, 1), 0, (1, 1))).ok
    assert board.codes((0, 1)) == ["bl"] and board.codes((1, 1)) == ["bl"]


@pytest.mark.parametrize(
    ("move", "error"),
    [
        (Move.place("bl", (0, 0), 0), MoveError.SPAN_MISSING),
        (Move.place("bs", (0, 0), 0, (0, 1)), MoveError.SPAN_ON_SMALL),
        (Move.place("bl", (0, 0), 0, (1, 1)), MoveError.SPAN_NOT_ADJACENT),
        (Move.place("xx", (0, 0), 0), MoveError.UNKNOWN_BLOCK),
        (Move.place("gs", (0, 0), 1), MoveError.WRONG_LAYER),
        (Move.place("gs", (0, 3), 0), MoveError.BAD_COORDINATES),
        (Move(Action.PLACE, (0, 0), True, "gs"), MoveError.WRONG_LAYER),  # a bool is not a layer
        (Move.remove((0, 0), 0), MoveError.EMPTY_STACK),
        (Move.clarify("?"), MoveError.NOT_A_MOVE),
    ],
)
def test_rejections(move: Move, error: MoveError) -> None:
    board = Board()
    result = board.apply(move)
    assert result.error is error and not result.ok
    assert board == Board()


def test_covered_large_block_cannot_be_removed() -> None:
    board = Board()
    for move in (Move.place("rl", (0, 0), 0, (0, 1)), Move.place("gs", (0, 1), 1)):
        assert board.apply(move).ok
    assert board.check(Move.remove((0, 0), 0)).error is MoveError.NOT_TOP
    assert board.check(Move.remove((0, 0), 0, (1, 0))).error is MoveError.SPAN_MISMATCH
    assert board.apply(Move.remove((0, 1), 1)).ok
    assert board.apply(Move.remove((0, 1), 0, (0, 0))).ok
    assert board == Board()


def test_move_json_round_trip_and_describe() -> None:
    move = Move.place("bl", (1, 0), 0, (2, 0))
    assert Move.from_json(move.to_json()) == move
    assert move.describe() == "PLACE bl @ (1,0) layer 0 -> (2,0)"
    assert Move.from_json(Move.remove((0, 0), 2).to_json()) == Move.remove((0, 0), 2)
    with pytest.raises(ValueError, match="'layer'"):
        Move.from_json({"action": "place", "block": "gs", "cell": [0, 0], "layer": "x"})


@pytest.mark.parametrize(
    ("codes", "spans", "message"),
    [
        ({(0, 0): ["gs", "gs", "gs", "gs"]}, [], "at most 3"),
        ({(0, 0): ["gl"]}, [], "no span partner"),
        ({(0, 0): ["gs"], (0, 1): ["gs"]}, [(0, (0, 0), (0, 1))], "small but listed"),
        ({(0, 0): ["gl"], (0, 1): ["bl"]}, [(0, (0, 0), (0, 1))], "does not match"),
        ({(0, 0): ["gl"], (0, 1): ["gl"]}, [(0, (0, 0), (1, 1))], "not adjacent"),
        ({(0, 0): ["gs"]}, [(1, (0, 0), (0, 1))], "no block on that layer"),
        ({(0, 0): ["gl"], (0, 1): ["gl"], (1, 1): ["gl"]}, [(0, (0, 0), (0, 1)), (0, (0, 1), (1, 1))], "other half"),
    ],
)
def test_from_codes_rejects_inconsistent_input(codes: dict, spans: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Board.from_codes(codes, spans)


def test_from_json_names_bad_field() -> None:
    with pytest.raises(ValueError, match="'stacks'"):
        Board.from_json({"stacks": []})
    with pytest.raises(ValueError, match=r"'spans\[0\]'"):
        Board.from_json({"stacks": {}, "spans": [["a"]]})
