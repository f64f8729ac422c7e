"""Import of a reference-format CRAFT log (our own hand-made fixture)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from simlab.core.errors import FormatError
from simlab.worlds.blocks.craft_import import import_craft_log, read_craft_log, recompute_metrics
from simlab.worlds.blocks.metrics import classify_turn
from simlab.worlds.blocks.model import Action, Board, Move, MoveError

FIXTURE = Path(__file__).parent / "fixtures" / "craft_log_small.json"


@pytest.fixture(scope="module")
def imp():
    return import_craft_log(FIXTURE)


def test_reader_accepts_bare_infinity() -> None:
    data = read_craft_log(FIXTURE)
    assert math.isinf(data["games"][0]["progress_summary"]["estimated_turns_remaining"])


def test_experiment_info(imp) -> None:
    assert imp.models == {"director": "toy-director", "builder": "toy-builder"}
    assert imp.settings["max_turns"] == 6 and imp.settings["use_oracle"] is True
    assert "models" not in imp.settings


def test_games_and_targets(imp) -> None:
    assert [g.structure_id for g in imp.games] == ["fixture_001", "fixture_002"]
    game = imp.games[0]
    assert game.archetypes == {"D1": "assertive", "D2": "cautious", "D3": "observant"}
    assert isinstance(game.target, Board)
    assert game.target.codes((0, 0)) == ["bl", "gs"] and game.target.at((0, 1), 0).cells == ((0, 0), (0, 1))
    assert game.final_progress == pytest.approx(0.659259, abs=1e-6)


def test_every_turn_imported(imp) -> None:
    game = imp.games[0]
    assert [t.number for t in game.turns] == [1, 2, 3, 4, 5, 6]
    kinds = [t.move.action if t.move else None for t in game.turns]
    assert kinds == [Action.PLACE, Action.PLACE, Action.CLARIFY, Action.PLACE, Action.PLACE, Action.REMOVE]
    assert game.turns[1].move == Move.place("bl", (0, 0), 0, (0, 1))
    assert game.turns[2].move.text == "Which cell is the middle of D1's wall?"
    assert [t.executed for t in game.turns] == [True, True, False, False, True, True]


def test_messages_in_speaking_order(imp) -> None:
    first = imp.games[0].turns[0].messages
    assert [m.role for m in first] == ["D2", "D1", "D3"]
    assert first[0].reasoning == "Far right corner needs red."
    assert first[0].message == "Small red in my bottom right corner."
    assert imp.games[0].turns[5].messages == []


def test_oracle_positions_in_every_form(imp) -> None:
    t2, t6 = imp.games[0].turns[1], imp.games[0].turns[5]
    assert t2.oracle == [Move.place("bl", (0, 0), 0, (0, 1)), Move.place("ys", (1, 0), 0)]
    assert t6.oracle[-1] == Move.remove((1, 1), 0)
    assert imp.games[0].turns[2].oracle == []


def test_failed_move(imp) -> None:
    t4 = imp.games[0].turns[3]
    assert t4.error is MoveError.WRONG_LAYER
    assert t4.error_text.startswith("Wrong layer at (1,0)")
    assert t4.logged_metrics is None
    assert t4.after_source == "next_turn" and t4.codes_after == t4.codes_before
    assert classify_turn(t4.move, t4.executed, t4.error, t4.oracle) == "engine-layer"


def test_boards_before_and_after(imp) -> None:
    turns = imp.games[0].turns
    assert all(t.board_before is not None and t.board_after is not None for t in turns)
    assert turns[4].board_after.codes((1, 1)) == ["os"]  # the "(1, 1)" key form
    assert turns[4].board_before == turns[3].board_after  # rebuilt although spans_before is missing
    assert turns[5].board_after == turns[1].board_after


def test_skipped_notes(imp) -> None:
    notes = "\n".join(imp.skipped)
    assert "fixture_001 turn 5: spans_before missing" in notes
    assert "fixture_001 turn 5: D2: public_message missing" in notes
    assert "fixture_001 turn 6: director_responses missing" in notes
    assert "fixture_002 turn 1: turn aborted" in notes
    assert "fixture_002 turn 1: no move_attempted" in notes


def test_aborted_turn(imp) -> None:
    (turn,) = imp.games[1].turns
    assert turn.move is None and not turn.executed and turn.after_source == "final_structure"


def test_recomputed_metrics_equal_logged(imp) -> None:
    checks = recompute_metrics(imp)
    assert [(c.game, c.turn) for c in checks] == [("fixture_001", n) for n in (1, 2, 5, 6)]
    assert all(c.max_abs_diff < 1e-6 for c in checks)
    assert set(checks[0].logged) == {"iou", "completion", "position_accuracy", "overall_progress", "distance"}


@pytest.mark.parametrize("cut", [100, 2000, -30])
def test_truncated_file_names_file(tmp_path: Path, cut: int) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text(FIXTURE.read_text(encoding="utf-8")[:cut], encoding="utf-8")
    with pytest.raises(FormatError, match=r"broken\.json, line \d+ column \d+: expected JSON"):
        import_craft_log(bad)


def test_garbled_and_non_object_files(tmp_path: Path) -> None:
    garbled = tmp_path / "garbled.json"
    garbled.write_bytes(b'{"games": [\xff\xfe]}')
    with pytest.raises(FormatError, match=r"garbled\.json"):
        read_craft_log(garbled)
    listing = tmp_path / "list.json"
    listing.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(FormatError, match=r"list\.json, top level: expected a JSON object"):
        read_craft_log(listing)


def test_missing_sections_do_not_crash(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("{}", encoding="utf-8")
    imp = import_craft_log(empty)
    assert imp.games == [] and len(imp.skipped) == 2
