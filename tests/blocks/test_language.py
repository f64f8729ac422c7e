"""Templated move English: every move round-trips through describe_move and parse_moves, and the parser reads
the phrasings directors (scripted or live) use."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simlab.worlds.blocks.agents import legal_moves
from simlab.worlds.blocks.language import describe_move, parse_moves, phrasings
from simlab.worlds.blocks.model import BLOCK_CODES, CELLS, MAX_HEIGHT, Board, Move, adjacent, is_large

SPANS = [(a, b) for a in CELLS for b in CELLS if adjacent(a, b)]


def all_moves() -> list[Move]:
    """Every well-formed place and remove move (both spellings of each large block), legal or not."""
    moves = []
    for layer in range(MAX_HEIGHT):
        for code in BLOCK_CODES:
            if is_large(code):
                moves += [Move.place(code, a, layer, b) for a, b in SPANS]
            else:
                moves += [Move.place(code, c, layer) for c in CELLS]
        moves += [Move.remove(c, layer) for c in CELLS]
        moves += [Move.remove(a, layer, b) for a, b in SPANS]
    return moves


@pytest.mark.parametrize("move", all_moves(), ids=lambda m: m.describe())
def test_every_move_round_trips_in_every_phrasing(move: Move) -> None:
    texts = {describe_move(move)} | {describe_move(move, random.Random(k)) for k in range(12)}
    for text in texts:
        assert parse_moves(text) == [move], text


def test_rng_varies_the_phrasing_and_is_deterministic() -> None:
    move = Move.place("bl", (1, 0), 1, (2, 0))
    texts = [describe_move(move, random.Random(k)) for k in range(30)]
    assert len(set(texts)) > 3
    assert texts == [describe_move(move, random.Random(k)) for k in range(30)]


def test_description_always_names_coordinates_and_layer() -> None:
    for move in all_moves()[::7]:
        for k in range(5):
            text = describe_move(move, random.Random(k))
            assert re.search(r"layer \d|L\d", text), text
            assert re.search(r"\(\d, ?\d\)|row \d column \d", text), text


def test_examples_from_the_brief() -> None:
    assert (
        describe_move(Move.place("gs", (0, 0), 0))
        == "Place a small green block on layer 0 at the far-left corner (0,0)."
    )
    assert describe_move(Move.place("bl", (1, 0), 1, (2, 0))) == (
        "Place a large blue block on layer 1 at (1,0), spanning to (2,0)."
    )
    removal = describe_move(Move.remove((0, 2), 2), reason="it is the wrong colour")
    assert removal == "Remove the top block at the far-right corner (0,2) on layer 2 (it is the wrong colour)."
    assert parse_moves(removal) == [Move.remove((0, 2), 2)]


def test_phrasings_are_listed() -> None:
    kinds = phrasings()
    assert set(kinds) == {"place_small", "place_large", "remove", "remove_large"}
    assert all(len(templates) >= 2 for templates in kinds.values())


def random_boards(seed: int, n: int) -> list[Board]:
    """Boards reached by random legal moves (placements twice as likely as removals)."""
    r = random.Random(seed)
    board, out = Board(), []
    for _ in range(n):
        moves = legal_moves(board)
        places = [m for m in moves if m.block is not None]
        board.apply(r.choice(places if places and r.random() < 0.67 else moves))
        out.append(board.copy())
    return out


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_every_legal_move_of_random_boards_round_trips(seed: int) -> None:
    for board in random_boards(seed, 12)[::3]:
        for k, move in enumerate(legal_moves(board)):
            text = describe_move(move, random.Random(seed + k))
            assert parse_moves(text) == [move], text
            assert parse_moves(text, board) == [move], text


S = Move.place
R = Move.remove


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("place a small green block on layer 0 at (0,1)", [S("gs", (0, 1), 0)]),
        ("PUT A SMALL RED BLOCK AT (2, 2) ON LAYER 1.", [S("rs", (2, 2), 1)]),
        ("Add a little yellow block at 1,1 on L2", [S("ys", (1, 1), 2)]),
        ("Stack one orange block on the bottom layer at row 2 column 0.", [S("os", (2, 0), 0)]),
        ("Place a green block on the first layer at row 0, col 2", [S("gs", (0, 2), 0)]),
        ("Put a big blue block on layer 1 at (1,0) to (2,0).", [S("bl", (1, 0), 1, (2, 0))]),
        ("Add a long red block across (0,0) and (0,1) on the second layer", [S("rl", (0, 0), 1, (0, 1))]),
        ("Place a domino of yellow on level 2 from [1,2] to [2,2]", [S("yl", (1, 2), 2, (2, 2))]),
        ("Put a blue block at (0,0) spanning to (1,0), layer zero", [S("bl", (0, 0), 0, (1, 0))]),
        ("Place a small red block at (0,0) next to (0,1) on layer 0", [S("rs", (0, 0), 0)]),
        ("At (2,1) on layer 0, place a small orange block.", [S("os", (2, 1), 0)]),
        ("Please place a large green block on the top layer at (0,1), spanning to (0,2)", [S("gl", (0, 1), 2, (0, 2))]),
        ("PLACE gs @ (0,1) layer 0", [S("gs", (0, 1), 0)]),
        ("PLACE bl @ (1,0) layer 0 -> (2,0)", [S("bl", (1, 0), 0, (2, 0))]),
        ("Remove the block at (1,1) on layer 1.", [R((1, 1), 1)]),
        ("Take off the top block at row 0 column 2, layer 2", [R((0, 2), 2)]),
        ("take away the block at (2, 2) layer two", [R((2, 2), 2)]),
        ("Please remove the large block on L1 at (0,1), spanning to (0,2).", [R((0, 1), 1, (0, 2))]),
        (
            "Place a small green block at (0,0) on layer 0. Then remove the block at (1,1), L1.",
            [S("gs", (0, 0), 0), R((1, 1), 1)],
        ),
        (
            "put a big red block on the first layer at 0,1 to 0,2 and take out the block at (2,2) layer 2",
            [S("rl", (0, 1), 0, (0, 2)), R((2, 2), 2)],
        ),
        ("I agree with D1: place a small blue block at (1,2) on layer 0.", [S("bs", (1, 2), 0)]),
    ],
)
def test_varied_phrasings_parse(text: str, expected: list[Move]) -> None:
    assert parse_moves(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Looks good so far.",
        "Agreed with D1.",
        "Nothing more to add from the left wall.",
        "The stack at (0,1) has a green block on layer 1.",
        "Everything is in place at (0,0) on layer 2.",
        "Don't place a green block at (0,0) on layer 0.",
        "Do not remove the block at (1,1) layer 1.",
        "Place it somewhere nice.",
        "Place a green block on layer 0.",
        "Remove the block at (1,1).",
        "__import__('os').system('echo hi') place (0,0)",
    ],
)
def test_non_instructions_parse_to_nothing(text: str) -> None:
    assert parse_moves(text) == []


def test_a_board_fills_in_a_missing_layer() -> None:
    board = Board()
    board.apply(Move.place("gs", (1, 1), 0))
    assert parse_moves("Remove the block at (1,1).", board) == [R((1, 1), 0)]
    assert parse_moves("Put a red block at (1,1).", board) == [S("rs", (1, 1), 1)]
    assert parse_moves("Remove the block at (2,2).", board) == []  # an empty stack has no top layer


def test_values_are_read_as_written_and_left_to_the_engine() -> None:
    moves = parse_moves("Place a small green block at (3,1) on layer 0.")
    assert moves == [S("gs", (3, 1), 0)]
    assert not Board().check(moves[0]).ok
