"""The cobot board's rules: every placement rule in the reference's order with its message and code, the board
unchanged by a refused move, remove/move/clear as intended, and the invariants under random move sequences."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simlab.worlds.boards.api import execute
from simlab.worlds.boards.model import (
    COLOURS,
    HALF_OF,
    SHAPES,
    Board,
    BoardError,
    Placement,
    Rules,
    build,
    move,
    placements_of,
    put,
    remove,
)


def board_of(*calls: tuple[str, str, int, int]) -> Board:
    return build([Placement(*c) for c in calls])


# (board before, put arguments, code, message): one case per rule, in the reference's order
RULES = [
    ((), ("washer", "red", 0, 1), "out_of_bounds", "x,y coordinates out of bounds"),
    ((), ("washer", "red", 9, 1), "out_of_bounds", "x,y coordinates out of bounds"),
    (
        (),
        ("bolt", "red", 1, 1),
        "unknown_shape",
        "Unknown shape used in put(). Use only screw, washer, nut, bridge-h, and bridge-v shapes",
    ),
    ((), ("bridge-h-left", "red", 1, 1), "bridge_half", "Use 'bridge-h' or 'bridge-v' for shape placement"),
    (
        (),
        ("washer", "purple", 1, 1),
        "unknown_colour",
        "Unknown color used in put(). Use only red, green, blue, and yellow colors",
    ),
    (
        (("bridge-h", "yellow", 2, 2), ("washer", "red", 2, 2), ("nut", "blue", 2, 2), ("screw", "green", 2, 2)),
        ("washer", "yellow", 2, 2),
        "no_space",
        "No more space to place shapes at this location (2,2)",
    ),
    ((), ("bridge-h", "red", 3, 8), "bridge_out_of_bounds", "while placing bridge-h, y coordinate out of bounds"),
    ((), ("bridge-v", "red", 8, 3), "bridge_out_of_bounds", "while placing bridge-v, x coordinate out of bounds"),
    (
        (("washer", "red", 2, 2), ("nut", "blue", 2, 2), ("washer", "red", 2, 3), ("nut", "blue", 2, 3)),
        ("bridge-h", "green", 2, 2),
        "bridge_level",
        "bridge-h can only be placed at levels 1 and 2",
    ),
    ((("screw", "red", 4, 4),), ("washer", "blue", 4, 4), "on_screw", "Cannot place a shape on top of a screw"),
    (
        (("washer", "red", 4, 4), ("nut", "blue", 4, 4)),
        ("washer", "green", 4, 4),
        "same_shape",
        "Cannot stack same shapes on top of each other at location (4,4)",
    ),
    (
        (("washer", "red", 4, 4), ("screw", "blue", 4, 5)),
        ("bridge-h", "green", 4, 4),
        "bridge_on_screw",
        "Cannot place a bridge on top of a screw",
    ),
    (
        (("washer", "red", 4, 4),),
        ("nut", "red", 4, 4),
        "same_colour",
        "Cannot stack same colors on top of each other at location (4,4)",
    ),
    (
        (("washer", "red", 4, 4), ("nut", "blue", 4, 5)),
        ("bridge-h", "blue", 4, 4),
        "same_colour",
        "Cannot stack same colors on top of each other at location (4,4)",
    ),
    (
        (("washer", "red", 4, 4),),
        ("bridge-h", "green", 4, 4),
        "depth_mismatch",
        "depth mismatch while placing bridge-h, adjacent cell has different depth",
    ),
    (
        (("washer", "red", 4, 5),),
        ("bridge-h", "green", 4, 4),
        "depth_mismatch",
        "depth mismatch while placing bridge-h, adjacent cell has different depth",
    ),
]


@pytest.mark.parametrize(("before", "args", "code", "message"), RULES)
def test_every_rule_refuses_with_its_code_and_message_and_changes_nothing(before, args, code, message):
    board = board_of(*before)
    snapshot = board.copy()
    with pytest.raises(BoardError) as caught:
        put(board, *args)
    assert (caught.value.code, caught.value.message) == (code, message)
    assert board == snapshot


@pytest.mark.parametrize(("before", "args", "code", "message"), RULES)
def test_v1_messages_say_placement_not_possible(before, args, code, message):
    with pytest.raises(BoardError) as caught:
        put(board_of(*before), *args, rules=Rules(messages="v1"))
    assert (caught.value.code, caught.value.message) == (code, "Placement not possible")


def test_the_first_broken_rule_is_the_one_reported():
    board = board_of(("screw", "red", 4, 4))  # on a screw AND the same colour: the screw rule comes first
    with pytest.raises(BoardError, match="screw"):
        put(board, "nut", "red", 4, 4)


def test_alternate_rules_drop_the_colour_rule_and_look_two_levels_down():
    board = board_of(("washer", "red", 4, 4))
    put(board, "nut", "red", 4, 4, Rules(rule_set="alternate"))  # same colour allowed
    with pytest.raises(BoardError) as caught:
        put(board, "washer", "blue", 4, 4, Rules(rule_set="alternate"))
    assert caught.value.code == "same_shape"
    board = board_of(("washer", "red", 5, 5), ("nut", "blue", 5, 5), ("screw", "green", 5, 5))
    assert board.height(5, 5) == 3


def test_bridges_span_two_cells_and_are_listed_as_halves():
    board = board_of(("washer", "yellow", 7, 3), ("nut", "green", 7, 4), ("bridge-h", "blue", 7, 3))
    assert [p.name for p in board.stack(7, 3)] == ["washer", "bridge-h-left"]
    assert [p.name for p in board.stack(7, 4)] == ["nut", "bridge-h-right"]
    board = board_of(("bridge-v", "red", 2, 8))
    assert board.stack(2, 8)[0].name == "bridge-v-top" and board.stack(3, 8)[0].name == "bridge-v-bottom"
    assert board.count() == 1


def test_colour_and_shape_names_are_read_in_any_case():
    board = Board()
    put(board, "Washer", "RED", 1, 1)
    assert board.stack(1, 1)[0].colour == "red"


def test_remove_takes_the_top_piece_and_bridges_whole():
    board = board_of(("washer", "red", 1, 1), ("nut", "blue", 1, 1))
    with pytest.raises(BoardError, match="does not match") as caught:
        remove(board, 1, 1, "washer", "red")
    assert caught.value.code == "remove_mismatch"
    remove(board, 1, 1, "nut", "blue")
    assert [p.name for p in board.stack(1, 1)] == ["washer"]
    board = board_of(("bridge-h", "green", 3, 3))
    remove(board, 3, 4, "bridge-h-right", "green")  # either half, from either cell
    assert board.cells() == []


@pytest.mark.parametrize(
    ("before", "args", "code"),
    [
        ((), (0, 1, "washer", "red"), "remove_out_of_bounds"),
        ((), (1, 1, "washer", "red"), "nothing_to_remove"),
        ((("bridge-h", "green", 3, 3), ("washer", "red", 3, 4)), (3, 3, "bridge-h", "green"), "bridge_incomplete"),
    ],
)
def test_remove_refusals(before, args, code):
    board = board_of(*before)
    snapshot = board.copy()
    with pytest.raises(BoardError) as caught:
        remove(board, *args)
    assert caught.value.code == code
    assert board == snapshot


def test_move_moves_the_top_piece_or_the_listed_stack_all_or_nothing():
    board = board_of(("washer", "red", 1, 1), ("nut", "blue", 1, 1))
    move(board, 1, 1, 2, 2)
    assert [p.name for p in board.stack(2, 2)] == ["nut"] and [p.name for p in board.stack(1, 1)] == ["washer"]
    board = board_of(("washer", "red", 1, 1), ("nut", "blue", 1, 1))
    move(board, 1, 1, 5, 5, [("washer", "red"), ("nut", "blue")])
    assert board.cells() == [(5, 5)] and [p.name for p in board.stack(5, 5)] == ["washer", "nut"]
    board = board_of(("washer", "red", 1, 1), ("nut", "blue", 1, 1), ("washer", "blue", 6, 6))
    snapshot = board.copy()
    with pytest.raises(BoardError) as caught:  # the nut would sit on a blue washer
        move(board, 1, 1, 6, 6)
    assert caught.value.code == "same_colour" and board == snapshot


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ((0, 1, 2, 2), "move_source"),
        ((1, 1, 9, 2), "move_destination"),
        ((1, 1, 1, 1), "move_same"),
        ((1, 1, 2, 2, []), "move_empty_list"),
        ((1, 1, 2, 2, [("washer", "red"), ("nut", "blue"), ("screw", "red")]), "move_not_enough"),
        ((1, 1, 2, 2, [("washer", "red"), ("nut", "green")]), "remove_mismatch"),
        ((1, 1, 3, 3, [("washer", "red"), ("nut", "blue")]), "move_no_space"),
    ],
)
def test_move_refusals(args, code):
    board = board_of(
        ("washer", "red", 1, 1),
        ("nut", "blue", 1, 1),
        *[(s, c, 3, 3) for s, c in (("bridge-h", "yellow"), ("washer", "red"), ("nut", "blue"))],
    )
    snapshot = board.copy()
    with pytest.raises(BoardError) as caught:
        move(board, *args)
    assert caught.value.code == code
    assert board == snapshot


def test_board_json_round_trips_and_refuses_a_half_bridge():
    board = board_of(("washer", "yellow", 7, 3), ("nut", "green", 7, 4), ("bridge-h", "blue", 7, 3))
    assert Board.from_json(board.to_json()) == board
    broken = board.to_json()
    broken["cells"] = broken["cells"][:1]
    with pytest.raises(ValueError, match="no other half"):
        Board.from_json(broken)


def test_placements_of_rebuild_the_board():
    board = board_of(
        ("bridge-v", "yellow", 7, 6),
        ("bridge-v", "yellow", 7, 7),
        ("bridge-h", "blue", 7, 6),
        ("nut", "red", 7, 6),
        ("screw", "yellow", 7, 6),
    )
    assert build(placements_of(board)) == board


# ---- invariants under random programs of puts, removes and moves ------------------------------------------
calls = st.one_of(
    st.tuples(
        st.just("put"),
        st.sampled_from(SHAPES),
        st.sampled_from(COLOURS),
        st.integers(0, 9),
        st.integers(0, 9),
    ),
    st.tuples(
        st.just("remove"), st.integers(1, 8), st.integers(1, 8), st.sampled_from(SHAPES), st.sampled_from(COLOURS)
    ),
    st.tuples(st.just("move"), st.integers(1, 8), st.integers(1, 8), st.integers(1, 8), st.integers(1, 8)),
)


def invariants_hold(board: Board) -> None:
    for cell in board.cells():
        stack = board.stack(*cell)
        assert 1 <= len(stack) <= board.levels  # contiguous from level 1, at most 4
        assert all(p.name != "screw" for p in stack[:-1])  # nothing on a screw
        for below, above in itertools.pairwise(stack):
            assert below.colour != above.colour
    assert board.broken_bridges() == []  # bridges paired at equal height
    for _cell, level, piece in board.pieces():
        if piece.name in HALF_OF:
            assert level <= 2


@settings(max_examples=300, deadline=None)
@given(st.lists(calls, max_size=40))
def test_random_programs_keep_the_invariants_and_refusals_change_nothing(program):
    board = Board()
    for call in program:
        before = board.copy()
        try:
            {"put": put, "remove": remove, "move": move}[call[0]](board, *call[1:])
        except BoardError:
            assert board == before
        invariants_hold(board)


# ---- whole robot programs through the interpreter: all or nothing -------------------------------------------
def call_text(call: tuple) -> str:
    name, *args = call
    return f"{name}(board, {', '.join(repr(a) for a in args)})"


programs = st.lists(st.lists(calls, min_size=1, max_size=8).map(lambda cs: "\n".join(map(call_text, cs))), max_size=6)


@settings(max_examples=1000, deadline=None)
@given(programs)
def test_random_robot_programs_keep_the_invariants_and_a_refused_program_changes_nothing(turns):
    board, history = Board(), ()
    for source in turns:
        before = board.copy()
        run = execute(board, source, Rules(), history)
        assert board == before  # the program ran on a copy
        if run.ok:
            board, history = run.board, run.before_turns
        else:
            assert run.board == before and run.code  # the whole program was thrown away
        invariants_hold(board)
