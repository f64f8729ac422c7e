"""Progress metrics, the failure taxonomy and the remove gap on hand-checked cases."""

from __future__ import annotations

import pytest

from simlab.worlds.blocks.metrics import (
    classify_turn,
    is_communication_failure,
    move_error_from_text,
    progress,
    progress_from_codes,
    remove_gap,
)
from simlab.worlds.blocks.model import Action, Board, Move, MoveError

# Target: large blue over (0,0)-(0,1) on layer 0, green on (0,0), red at (0,2), yellow at (1,0): 5 entries.
TARGET_CODES = {(0, 0): ["bl", "gs"], (0, 1): ["bl"], (0, 2): ["rs"], (1, 0): ["ys"]}
TARGET_SPANS = [(0, (0, 0), (0, 1))]


@pytest.fixture
def target() -> Board:
    return Board.from_codes(TARGET_CODES, TARGET_SPANS)


def test_empty_board_against_target(target: Board) -> None:
    m = progress(Board(), target)
    assert m["iou"] == 0.0 and m["completion"] == 0.0
    assert m["position_accuracy"] == pytest.approx(5 / 9)  # the five cells empty on both sides
    assert m["overall_progress"] == pytest.approx(5 / 27)


def test_complete_board_scores_one(target: Board) -> None:
    m = progress(target.copy(), target)
    assert all(m[k] == pytest.approx(1.0) for k in ("iou", "completion", "position_accuracy", "overall_progress"))


def test_both_empty_follows_reference() -> None:
    # 0/0 is 0.0 for IoU and completion in the reference; every cell matches for position accuracy.
    m = progress(Board(), Board())
    assert (m["iou"], m["completion"], m["position_accuracy"], m["distance"]) == (0.0, 0.0, 1.0, 1.0)


def test_wrong_block(target: Board) -> None:
    board = Board.from_codes({(0, 0): ["bl", "os"], (0, 1): ["bl"], (0, 2): ["rs"], (1, 0): ["ys"]}, TARGET_SPANS)
    m = progress(board, target)
    # (0,0): {bl,os} vs {bl,gs}: 1 shared of 3; the other cells match: IoU 4/6, completion 4/5, PA 8/9.
    assert m["iou"] == pytest.approx(4 / 6)
    assert m["completion"] == pytest.approx(4 / 5)
    assert m["position_accuracy"] == pytest.approx(8 / 9)
    assert m["overall_progress"] == pytest.approx((4 / 6 + 4 / 5 + 8 / 9) / 3)


def test_extra_block(target: Board) -> None:
    board = target.copy()
    board.apply(Move.place("os", (2, 2), 0))
    m = progress(board, target)
    assert m["iou"] == pytest.approx(5 / 6)
    assert m["completion"] == 1.0  # an extra block never lowers completion
    assert m["position_accuracy"] == pytest.approx(8 / 9)


def test_sets_not_multisets() -> None:
    # [gs, gs] against [gs]: the sets are equal, so IoU and position accuracy are perfect; completion is 1/1.
    m = progress_from_codes({(0, 0): ["gs", "gs"]}, {(0, 0): ["gs"]})
    assert (m["iou"], m["completion"], m["position_accuracy"]) == (1.0, 1.0, 1.0)
    # ...while a repeated target code counts twice in completion.
    assert progress_from_codes({(0, 0): ["gs"]}, {(0, 0): ["gs", "gs"]})["completion"] == 0.5


def test_layer_exact_completion() -> None:
    # Same blocks in the wrong order: full IoU and position accuracy, no completion.
    m = progress_from_codes({(1, 1): ["rs", "gs"]}, {(1, 1): ["gs", "rs"]})
    assert (m["iou"], m["completion"], m["position_accuracy"]) == (1.0, 0.0, 1.0)


def test_codes_variant_accepts_illegal_boards() -> None:
    m = progress_from_codes({(0, 0): ["gl", "xx", "gs", "gs"]}, {(0, 0): ["gl"]})
    assert m["completion"] == 1.0 and m["iou"] == pytest.approx(1 / 3)


# ---- taxonomy ---------------------------------------------------------------------------------------------

ORACLE = [Move.place("bl", (0, 0), 0, (0, 1)), Move.place("ys", (1, 0), 0), Move.remove((2, 2), 1)]


@pytest.mark.parametrize(
    ("move", "ok", "error", "expected"),
    [
        (Move.place("ys", (1, 0), 0), True, None, "correct"),
        (Move.place("bl", (0, 0), 0, (0, 1)), True, None, "correct"),
        (Move.remove((2, 2), 1), True, None, "correct"),
        (Move.place("ys", (1, 1), 0), True, None, "wrong-position"),
        (Move.remove((1, 0), 0), True, None, "wrong-position"),  # action differs
        (Move.place("ys", (1, 0), 1), False, MoveError.WRONG_LAYER, "engine-layer"),
        (Move.place("gl", (0, 0), 0), False, MoveError.SPAN_MISSING, "engine-span"),
        (Move.place("zz", (0, 0), 0), False, MoveError.UNKNOWN_BLOCK, "engine-other"),
        (Move.place("rs", (1, 0), 0), True, None, "wrong-colour"),
        (Move.place("bs", (0, 0), 0), True, None, "wrong-colour"),  # right colour, wrong size
        (Move.place("bl", (0, 0), 0, (1, 0)), True, None, "wrong-span"),
        (Move.clarify("which one?"), False, MoveError.NOT_A_MOVE, "clarify"),
        (None, False, None, "engine-other"),
    ],
)
def test_taxonomy(move: Move | None, ok: bool, error: MoveError | None, expected: str) -> None:
    assert classify_turn(move, ok, error, ORACLE) == expected


def test_taxonomy_engine_error_wins_over_oracle_match() -> None:
    assert classify_turn(Move.place("ys", (1, 0), 0), False, MoveError.STACK_FULL, ORACLE) == "engine-layer"


def test_taxonomy_without_oracle() -> None:
    assert classify_turn(Move.place("ys", (1, 0), 0), True, None, []) == "no-oracle"


@pytest.mark.parametrize(
    ("text", "code", "category"),
    [
        ("Wrong layer at (1,0): got 1, expected 0 (stack has 0 blocks)", MoveError.WRONG_LAYER, "engine-layer"),
        ("Cannot remove layer 0 at (1,0) — must remove top block first (layer 1)", MoveError.NOT_TOP, "engine-layer"),
        (
            "span_to (1,1) has 1 blocks, (1,0) has 0 — both must be at same height to place on same layer",
            MoveError.SPAN_HEIGHT_MISMATCH,
            "engine-span",
        ),
        (
            "Large block 'bl' needs span_to — specify which adjacent cell it extends into",
            MoveError.SPAN_MISSING,
            "engine-span",
        ),
        ("Block 'xs' not in available blocks", MoveError.UNKNOWN_BLOCK, "engine-other"),
        ("Illegal span into invisible cell: (1,1)↔(1,2).", MoveError.SPAN_MISMATCH, "engine-span"),
        ("Move execution failed", None, "engine-other"),
    ],
)
def test_error_texts(text: str, code: MoveError | None, category: str) -> None:
    assert move_error_from_text(text) is code
    assert classify_turn(Move.place("ys", (1, 0), 0), False, text, ORACLE) == category


def test_communication_failure() -> None:
    assert not is_communication_failure(ORACLE, Move.place("ys", (1, 0), 0), True)
    assert is_communication_failure(ORACLE, Move.place("ys", (1, 1), 0), True)
    assert is_communication_failure(ORACLE, Move.clarify("which?"), False)  # by definition 4.1
    assert is_communication_failure(ORACLE, None, False)
    assert not is_communication_failure([], Move.place("ys", (1, 1), 0), True)


# ---- remove gap -------------------------------------------------------------------------------------------


def test_remove_gap() -> None:
    place, remove = Move.place("ys", (1, 0), 0), Move.remove((2, 2), 1)
    turns = [
        (Action.REMOVE, [place, place, place, remove]),  # 1/4 of the candidates remove
        ("remove", [place, place]),
        (Action.PLACE, []),  # no candidates: counts for the attempted rate only
        (None, [place, remove]),  # 1/2
    ]
    assert remove_gap(turns) == pytest.approx(2 / 4 - (1 / 4 + 0 + 1 / 2) / 3)
    assert remove_gap(turns, oracle_rate="any") == pytest.approx(2 / 4 - 2 / 3)
    assert remove_gap([]) == 0.0
    with pytest.raises(ValueError, match="oracle_rate"):
        remove_gap(turns, oracle_rate="bogus")  # type: ignore[arg-type]
