"""CRAFT's per-turn game records (divergenceData) import as episodes, replayed through our engine."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from simlab.cli import main
from simlab.core.errors import FormatError
from simlab.core.recording import load_episode, load_run
from simlab.worlds.blocks.craft_check import check_game
from simlab.worlds.blocks.craft_import import Notes, board_from_codes
from simlab.worlds.blocks.craft_run import DEFAULT_STRUCTURES, import_craft_run
from simlab.worlds.blocks.craft_structures import craft_structures
from simlab.worlds.blocks.craft_turns import is_turn_log, parse_board_text, read_turn_log
from simlab.worlds.blocks.metrics import attempted_removes, oracle_removes

FIXTURES = Path(__file__).parent / "fixtures" / "craft_turn_log"
LOG = FIXTURES / "gpt-4o-mini + 4o-mini_structure_005.json"
STALE_LAST_TURN = FIXTURES / "Qwen7B + 4o-mini_structure_006.json"


def _raw() -> list[dict]:
    return json.loads(LOG.read_text("utf-8"))


def _entry(data: list[dict], turn: int) -> dict:
    return next(e for e in data if e["turn"] == turn)


def _set(entry: dict, **fields: object) -> None:
    """Change a field in every director's copy of the turn (the log repeats the turn's data per director)."""
    for d in ("D1", "D2", "D3"):
        entry[d].update(fields)


def _targets() -> dict:
    data = json.loads(DEFAULT_STRUCTURES.read_text("utf-8"))
    return {s.id: s for s in craft_structures(DEFAULT_STRUCTURES, data)}


def _game(data: list[dict]):
    return read_turn_log(LOG, data, _targets()).game


def test_the_shipped_structures_are_the_papers_twenty():
    """7 simple, 8 medium and 5 complex, 21 to 25 blocks, mean 23.2 (the paper's section 5.1)."""
    structures = list(_targets().values())
    tiers = [s.tier for s in structures]
    blocks = [s.board.block_count() for s in structures]
    assert (tiers.count("simple"), tiers.count("medium"), tiers.count("complex")) == (7, 8, 5)
    assert (min(blocks), max(blocks), sum(blocks) / len(blocks)) == (21, 25, 23.2)


def test_a_published_log_imports_every_turn_as_logged(tmp_path):
    data = _raw()
    report = import_craft_run(LOG, tmp_path / "run")
    run = load_run(tmp_path / "run")
    assert len(run.summaries) == 1 and "imported 1 game(s), 18 turns" in report
    episode = load_episode(next((tmp_path / "run" / "episodes").glob("*.json")))
    assert episode.task["id"] == "structure_005" and episode.agents["D1"] == "craft:gpt-4o-mini"
    assert episode.agents["builder"] == "craft:4o-mini"
    # every logged turn is there, each with the builder's move or the log's "no move", in turn order
    played = [e.turn for e in episode.events if e.kind in ("action", "protocol_error")]
    assert played == sorted(e["turn"] for e in data)
    said = [(e.turn, e.role, e.data["text"]) for e in episode.events if e.kind == "message"]
    logged = sorted((e["turn"], d, e[d]["utterance"]) for e in data for d in ("D1", "D2", "D3") if e[d]["utterance"])
    assert sorted(said) == logged
    # the board after each turn is the logged one
    for entry in data:
        after = parse_board_text(entry["D1"]["structureAfter"], "after", Notes([], ""))
        board = episode.state_at(entry["turn"])["board"]["stacks"]
        assert {k: v for k, v in board.items()} == {f"{r},{c}": codes for (r, c), codes in after.items()}
    results = {e.turn: e.data for e in episode.events if e.kind == "result"}
    assert results[2]["logged"]["followed_director"] == _entry(data, 2)["builderSelected"]
    assert episode.summary["metrics"]["reference_disagreements"] == 0


def test_oracle_metrics_are_unknown_not_zero_for_records_without_candidates(tmp_path):
    import_craft_run(LOG, tmp_path / "run")
    run = load_run(tmp_path / "run")
    metrics = run.summaries[0]["metrics"]
    assert metrics["oracle_availability"] is None and metrics["communication_failure_rate"] is None
    assert metrics["overall_progress"] > 0
    episode = run.episodes()[0]
    assert not any("candidates" in e.data for e in episode.events if e.kind == "result")
    assert set(oracle_removes(episode)) == {None}  # the Removes plot draws no oracle line, not a flat zero
    assert attempted_removes(episode)[-1] == 0.0


def test_a_large_block_takes_its_second_cell_from_the_board_after():
    game = _game(_raw())
    move = next(t.move for t in game.turns if t.number == 6)
    assert (move.block, move.cell, move.span_to) == ("rl", (0, 1), (0, 2))


def test_the_references_stale_last_turn_is_found_and_nothing_else():
    """A published record whose turn 20 repeats turn 19's boards (docs/BLOCKS.md: a logging slip of the
    reference): the two disagreements are there, at turn 20, and no other turn of the game disagrees."""
    data = json.loads(STALE_LAST_TURN.read_text("utf-8"))
    found = check_game(read_turn_log(STALE_LAST_TURN, data, _targets()).game)
    assert [(d.turn, d.code) for d in found] == [(20, "board_before_differs"), (20, "board_after_differs")]
    assert "(1,2): ours ['ys', 'yl'] logged ['ys', 'yl', 'os']" in found[1].message


def test_a_move_the_log_made_but_our_rules_refuse_is_a_disagreement():
    data = _raw()
    _set(_entry(data, 2), moveData="Action: place, bs, Layer: 1, Position: (1,0)")  # (1,0) is empty: layer 0
    found = check_game(_game(data))
    assert [(d.turn, d.code) for d in found] == [(2, "legal_there_refused_here")]
    assert "next block goes on layer 0" in found[0].message


def test_a_move_the_log_refused_but_our_rules_allow_is_a_disagreement():
    data = _raw()
    _set(_entry(data, 9), moveData="Action: place, rs, Layer: 2, Position: (0,1)")  # on top of two rl: legal
    found = check_game(_game(data))
    assert [(d.turn, d.code) for d in found] == [(9, "refused_there_legal_here")]


def test_a_different_board_after_is_a_disagreement_and_counted_once():
    data = _raw()
    entry = _entry(data, 7)  # place bs on (1,0) layer 1; the log now says a green one landed there
    _set(entry, structureAfter=entry["D1"]["structureAfter"].replace("'(1,0)': ['bs', 'bs']", "'(1,0)': ['bs', 'gs']"))
    found = check_game(_game(data))
    assert [(d.turn, d.code) for d in found] == [(7, "board_after_differs"), (8, "board_before_differs")]
    assert "(1,0): ours ['bs', 'bs'] logged ['bs', 'gs']" in found[0].message


def test_a_refused_large_move_without_its_span_is_noted_not_judged():
    data = _raw()
    _set(_entry(data, 9), moveData="Action: place, gl, Layer: 1, Position: (1,0)")
    notes: list[str] = []
    assert check_game(_game(data), notes) == []
    assert any("turn 9" in n and "not checked" in n for n in notes)


def test_turns_missing_from_the_log_are_noted_not_counted(tmp_path):
    report = import_craft_run(LOG, tmp_path / "run")
    assert "turns not in the log: 4, 12" in report
    assert "turn 5: the board changed in turns missing from the log" in report


def test_the_disagreements_are_events_in_the_episode_and_in_the_report(tmp_path, capsys):
    data = _raw()
    _set(_entry(data, 9), moveData="Action: place, rs, Layer: 2, Position: (0,1)")
    log = tmp_path / "logs" / LOG.name
    log.parent.mkdir()
    log.write_text(json.dumps(data), "utf-8")
    assert main(["import", "craft", str(log.parent), "--out", str(tmp_path / "run")]) == 0
    assert "1 disagreement(s) in 18 turns (refused_there_legal_here 1)" in capsys.readouterr().out
    episode = load_episode(next((tmp_path / "run" / "episodes").glob("*.json")))
    checks = [e for e in episode.events if e.kind == "check"]
    assert [(e.turn, e.data["code"], e.data["detail"]["kind"]) for e in checks] == [
        (9, "reference_disagreement", "refused_there_legal_here")
    ]
    assert main(["report", str(tmp_path / "run"), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "reference_disagreements" in json.dumps(report)


def test_a_board_is_parsed_never_evaluated():
    notes: list[str] = []
    assert parse_board_text("__import__('os').system('true')", "structureBefore", Notes(notes, "f")) is None
    assert notes and "structureBefore is not a board" in notes[0]
    codes = parse_board_text("{'(0,0)': ['bl'], '(0,1)': ['bl'], '(2,2)': []}", "b", Notes([], ""))
    assert codes is not None and codes[(0, 0)] == ["bl"] and codes[(1, 1)] == []


def test_large_halves_are_paired_when_the_log_gives_no_spans():
    codes = {c: [] for c in [(r, k) for r in range(3) for k in range(3)]}
    codes[(0, 0)], codes[(0, 1)], codes[(1, 1)], codes[(2, 1)] = ["bl"], ["bl"], ["gl"], ["gl"]
    board = board_from_codes(codes)
    assert board is not None and {p.cells for p in board.pieces() if p.large} == {((0, 0), (0, 1)), ((1, 1), (2, 1))}
    codes[(2, 1)] = ["rl"]  # a large half with no partner of its code: no legal board
    assert board_from_codes(codes) is None


def test_the_format_is_told_apart_from_run_logs_and_structures():
    assert is_turn_log(_raw())
    assert not is_turn_log({"games": []}) and not is_turn_log([{"id": "structure_001", "structure": {}}])


def test_a_log_of_a_structure_not_in_the_structures_file_is_refused_naming_it(tmp_path):
    data = _raw()
    for entry in data:
        _set(entry, structure="structure_777")
    log = tmp_path / "log.json"
    log.write_text(json.dumps(data), "utf-8")
    with pytest.raises(FormatError, match=r"log\.json.*structure.*'structure_777' is not one of its ids"):
        import_craft_run(log, tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_structures_option_names_the_targets_file(tmp_path, capsys):
    data = json.loads(DEFAULT_STRUCTURES.read_text("utf-8"))
    only = [copy.deepcopy(s) for s in data if s["id"] == "structure_005"]
    only[0]["id"] = "structure_005"
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(only), "utf-8")
    args = ["import", "craft", str(LOG), "--out", str(tmp_path / "run"), "--structures", str(path)]
    assert main(args) == 0
    assert main(["import", "craft", str(LOG), "--out", str(tmp_path / "r2"), "--bogus", "1"]) == 2
    assert "unknown option(s) --bogus 1; its options: --structures FILE" in capsys.readouterr().err


def test_other_commands_still_refuse_unknown_arguments():
    with pytest.raises(SystemExit) as exc:
        main(["worlds", "--bogus"])
    assert exc.value.code == 2
