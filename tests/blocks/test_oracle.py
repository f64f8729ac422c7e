"""Oracle moves (appendix B.1): builders that follow them finish, and every move is verified progress."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from simlab.worlds.blocks.generator import build_order, generate_structures
from simlab.worlds.blocks.model import BLOCK_CODES, CELLS, Action, Board, Move, adjacent
from simlab.worlds.blocks.oracle import (
    distance,
    grounded_prefix,
    is_complete,
    oracle_moves,
    sample_candidates,
)

STRUCTURES = generate_structures(100, 0)


def all_legal_moves(board: Board) -> list[Move]:
    """Every place/remove move the engine accepts on ``board``."""
    moves = []
    for cell in CELLS:
        h = board.height(cell)
        moves.append(Move.remove(cell, h - 1))
        for code in BLOCK_CODES:
            spans = [c for c in CELLS if adjacent(cell, c)] if code[1] == "l" else [None]
            moves.extend(Move.place(code, cell, h, span) for span in spans)
    return [m for m in moves if board.check(m).ok]


def run_builder(target: Board, pick) -> int:
    board, turns = Board(), 0
    while not is_complete(board, target):
        moves = oracle_moves(board, target)
        assert moves, "oracle stuck on an incomplete board"
        assert board.apply(pick(moves, turns)).ok
        turns += 1
        assert turns <= 40
    return turns


def test_first_move_builder_completes_every_structure() -> None:
    for s in STRUCTURES:
        turns = run_builder(s.board, lambda moves, _turn: moves[0])
        assert turns == len(build_order(s)) == distance(Board(), s.board) - sum(p.large for p in s.board.pieces())


def test_sampled_builder_completes_every_structure() -> None:
    # mirror the game: each turn the builder sees five sampled candidates and takes any one of them
    for s in STRUCTURES:
        board, turns = Board(), 0
        while not is_complete(board, s.board):
            candidates = sample_candidates(board, s.board, 5, s.id, turns)
            assert 1 <= len(candidates) <= 5
            assert board.apply(random.Random(turns).choice(candidates)).ok
            turns += 1
        assert turns == len(build_order(s))


def test_sample_candidates_is_deterministic_subset_in_order() -> None:
    target = STRUCTURES[3].board
    every = oracle_moves(Board(), target)
    assert len(every) > 5
    picked = sample_candidates(Board(), target, 5, "structure_003", 0)
    assert len(picked) == 5 and picked == sample_candidates(Board(), target, 5, "structure_003", 0)
    assert picked == [m for m in every if m in picked]
    assert sample_candidates(Board(), target, 50, "x") == every
    samples = {tuple(sample_candidates(Board(), target, 5, "structure_003", t)) for t in range(10)}
    assert len(samples) > 1


def test_large_placement_listed_once_in_canonical_form() -> None:
    target = Board.from_codes({(0, 1): ["bl"], (0, 0): ["bl"]}, [(0, (0, 0), (0, 1))])
    assert oracle_moves(Board(), target) == [Move.place("bl", (0, 0), 0, (0, 1))]


def test_large_placement_waits_for_partner() -> None:
    target = Board.from_codes({(0, 0): ["gs", "bl"], (0, 1): ["rs", "bl"]}, [(1, (0, 0), (0, 1))])
    board = Board.from_codes({(0, 0): ["gs"]}, [])
    assert oracle_moves(board, target) == [Move.place("rs", (0, 1), 0)]


def test_wrong_block_buried_under_correct_large_block_is_exposed() -> None:
    """The reference's per-cell rules deadlock here; the grounded prefix removes the covering block first."""
    spans = [(1, (0, 0), (0, 1))]
    target = Board.from_codes({(0, 0): ["gs", "bl"], (0, 1): ["rs", "bl", "ys"]}, spans)
    board = Board.from_codes({(0, 0): ["os", "bl"], (0, 1): ["rs", "bl", "ys"]}, spans)
    assert oracle_moves(board, target) == [Move.remove((0, 1), 2)]
    assert run_from(board, target) == 6  # ys, bl and os off, then gs, bl and ys on


def run_from(board: Board, target: Board) -> int:
    turns = 0
    while not is_complete(board, target):
        assert board.apply(oracle_moves(board, target)[0]).ok
        turns += 1
    return turns


def test_excess_and_wrong_top_removed() -> None:
    target = Board.from_codes({(0, 0): ["gs"], (0, 1): ["rs"]}, [])
    board = Board.from_codes({(0, 0): ["gs", "ys"], (0, 1): ["bs"], (0, 2): ["os"]}, [])
    assert oracle_moves(board, target) == [Move.remove((0, 0), 1), Move.remove((0, 1), 0), Move.remove((0, 2), 0)]


# ---- properties on random boards -----------------------------------------------------------------------------
step = st.one_of(
    st.tuples(st.just("oracle"), st.integers(0, 20)),
    st.tuples(st.just("place"), st.sampled_from(CELLS), st.sampled_from(BLOCK_CODES), st.integers(0, 3)),
    st.tuples(st.just("remove"), st.sampled_from(CELLS)),
    st.tuples(st.just("target"), st.sampled_from(CELLS)),
)


def target_piece_move(board: Board, target: Board, cell: tuple[int, int]) -> Move | None:
    """Place the target's block for the cell's current height, whatever lies below (a careless builder).

    This is what puts correct blocks on wrong foundations, the case the grounded prefix exists for."""
    piece = target.at(cell, board.height(cell))
    if piece is None:
        return None
    return Move.place(piece.code, piece.cells[0], piece.layer, piece.cells[1] if piece.large else None)


def sloppy_build(target: Board, count: int, wrong: set[int]) -> Board:
    """The target's first ``count`` build moves, with the blocks numbered in ``wrong`` in the wrong colour.

    Correct blocks then sit on wrong foundations, the case the grounded prefix exists for."""
    board = Board()
    for k, move in enumerate(build_order(target)[:count]):
        if k in wrong:
            code = BLOCK_CODES[(BLOCK_CODES.index(move.block) + 2) % len(BLOCK_CODES)]  # same size, next colour
            move = Move.place(code, move.cell, move.layer, move.span_to)
        assert board.apply(move).ok
    return board


def random_board(target: Board, start: tuple[int, set[int]], steps: list[tuple]) -> Board:
    """A legal board: a sloppy partial build, then oracle moves mixed with arbitrary (possibly wrong) moves."""
    board = sloppy_build(target, *start)
    for s in steps:
        if s[0] == "oracle":
            moves = oracle_moves(board, target)
            move = moves[s[1] % len(moves)] if moves else None
        elif s[0] == "place":
            _, cell, code, k = s
            spans = [c for c in CELLS if adjacent(cell, c)]
            move = Move.place(code, cell, board.height(cell), spans[k % len(spans)] if code[1] == "l" else None)
        elif s[0] == "target":
            move = target_piece_move(board, target, s[1])
        else:
            move = Move.remove(s[1], board.height(s[1]) - 1)
        if move is not None:
            board.apply(move)  # illegal ones are simply rejected
    return board


starts = st.tuples(st.integers(0, 21), st.sets(st.integers(0, 20), max_size=4))
boards = st.tuples(st.integers(0, 99), starts, st.lists(step, max_size=30))


@settings(max_examples=300, deadline=None)
@given(boards)
def test_every_oracle_move_is_legal_progress(case: tuple) -> None:
    target = STRUCTURES[case[0]].board
    board = random_board(target, case[1], case[2])
    before = distance(board, target)
    prefix = grounded_prefix(board, target)
    for move in oracle_moves(board, target):
        result = board.check(move)
        assert result.ok and result.piece is not None
        if move.action is Action.PLACE:
            assert target.at(move.cell, move.layer) == result.piece
            assert all(prefix[c] == board.height(c) for c in result.piece.cells)  # never on a wrong block
        after = board.copy()
        after.apply(move)
        assert distance(after, target) == before - len(result.piece.cells)


@settings(max_examples=300, deadline=None)
@given(boards)
def test_oracle_never_stuck_and_is_exactly_the_progress_moves(case: tuple) -> None:
    target = STRUCTURES[case[0]].board
    board = random_board(target, case[1], case[2])
    moves = oracle_moves(board, target)
    assert (distance(board, target) == 0) == is_complete(board, target)
    assert bool(moves) != is_complete(board, target)
    before = distance(board, target)
    progress = set()
    for move in all_legal_moves(board):
        after = board.copy()
        piece = after.apply(move).piece
        if distance(after, target) == before - len(piece.cells):
            progress.add((move.action, piece))
    assert {(m.action, board.check(m).piece) for m in moves} == progress


@settings(max_examples=200, deadline=None)
@given(boards)
def test_following_the_oracle_finishes_within_distance(case: tuple) -> None:
    target = STRUCTURES[case[0]].board
    board = random_board(target, case[1], case[2])
    budget = distance(board, target)
    assert run_from(board, target) <= budget
