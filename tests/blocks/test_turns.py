"""Per-turn values of blocks episodes (CRAFT table 8's units) and ``report --correlate ... --unit turn`` on a
run whose turn-level relation is built in."""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy import stats

from simlab.cli import main
from simlab.core import events as ev
from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.core.recording import RunWriter
from simlab.worlds import get_family
from simlab.worlds.blocks.model import Move, MoveError
from simlab.worlds.blocks.turns import turn_values
from simlab.worlds.blocks.world import BUILDER, summarize, turn_record

PLACE = Move.place("ys", (1, 0), 0)
OTHER = Move.place("gs", (0, 0), 0)
REMOVE = Move.remove((2, 2), 1)


def builder_turn(turn: int, move: Move | None, ok: bool, oracle: list[Move], progress: float) -> list[Event]:
    """What a live builder turn records: its action (when there is one), the result and the scores."""
    out = [Event("action", turn, BUILDER, {"action": move.to_json()})] if move is not None else []
    if move is None:
        out.append(ev.protocol_error(turn, BUILDER, "bad_move", "the builder's reply held no move"))
    result = {"ok": ok, "message": "", "oracle": [m.to_json() for m in oracle], "candidates": []}
    out.append(Event("result", turn, "engine", result))
    out.append(ev.score(turn, {"overall_progress": progress}))
    return out


def test_each_builder_turn_gives_the_table_8_values() -> None:
    events = [
        ev.score(0, {"overall_progress": 0.0}),
        ev.message(1, "D1", "put the yellow block down"),
        ev.message(1, "D2", "yes"),
        *builder_turn(1, PLACE, True, [PLACE, REMOVE], 0.25),  # an oracle move, executed
        ev.message(2, "D3", "take it off"),
        *builder_turn(2, REMOVE, False, [OTHER], 0.25),  # a remove the engine rejected
        *builder_turn(3, Move.clarify("which?"), True, [], 0.25),  # a question, no candidates
        *builder_turn(4, None, False, [REMOVE], 0.25),  # no move at all
        *builder_turn(5, OTHER, True, [OTHER, OTHER, REMOVE, REMOVE], 0.1),  # executed, then lost progress
    ]
    rows = turn_values(Episode("e", "blocks", 0, {}, events=events))
    column = {name: [row[name] for row in rows] for name in rows[0]}
    assert column["followed_oracle"] == [1.0, 0.0, None, 0.0, 1.0]
    assert column["attempted_remove"] == [0.0, 1.0, 0.0, 0.0, 0.0]
    assert column["oracle_remove_share"] == [0.5, 0.0, None, 1.0, 0.5]
    assert column["remove_gap"] == [-0.5, 1.0, None, -1.0, -0.5]
    assert column["failed"] == [0.0, 1.0, None, None, 0.0]
    assert column["progress_gain"] == pytest.approx([0.25, 0.0, 0.0, 0.0, -0.15])
    assert column["director_words"] == [6.0, 3.0, 0.0, 0.0, 0.0]


def test_an_imported_turn_keeps_the_reference_verdict_and_its_candidates() -> None:
    result = {"ok": True, "candidates": [REMOVE.to_json()], "followed_oracle": True}  # no "oracle" list logged
    events = [Event("action", 1, BUILDER, {"action": PLACE.to_json()}), Event("result", 1, "engine", result)]
    (row,) = turn_values(Episode("e", "blocks", 0, {}, events=events))
    assert row["followed_oracle"] == 1.0 and row["oracle_remove_share"] == 1.0


def test_the_blocks_family_declares_its_turn_values() -> None:
    assert get_family("blocks").turn_metrics is turn_values


def synthetic_episode(k: int, turns: int) -> Episode:
    """Odd turns: the builder removes where the oracle places (not followed, rejected); even turns: it plays
    the oracle's move. So attempted removes go with not following the oracle, exactly."""
    events = [ev.score(0, {"overall_progress": 0.0})]
    log = []
    for t in range(1, turns + 1):
        move, ok = (REMOVE, False) if t % 2 else (PLACE, True)
        events += [ev.message(t, "D1", "word " * (t + k)), *builder_turn(t, move, ok, [PLACE], t / 100)]
        log.append(turn_record(t, move, ok, None if ok else MoveError.NOT_TOP, [PLACE], t / 100))
    final = {"iou": 0.0, "completion": 0.0, "position_accuracy": 0.0, "overall_progress": turns / 100, "distance": 0}
    task = {"id": f"structure_{k:03d}", "board": {"stacks": {}}}
    agents = {"D1": "oracle", "D2": "oracle", "D3": "oracle", BUILDER: "scripted"}
    summary = {**summarize(task, log, final, False), "agents": agents}
    return Episode(f"structure_{k:03d}-r0", "blocks", k, task, {}, agents, events, summary=summary)


@pytest.fixture(scope="module")
def synthetic_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("turns") / "run"
    episodes = [synthetic_episode(k, 6) for k in range(3)]
    config = {"world": "blocks", "seed": 0, "repeats": 1, "agents": {}, "settings": {}}
    writer = RunWriter(folder, {**config, "tasks": [e.task for e in episodes]})
    for episode in episodes:
        writer.add(episode)
    return folder


def test_report_correlates_the_per_turn_values_over_every_turn(synthetic_run: Path, capsys) -> None:
    assert main(["report", str(synthetic_run), "--correlate", "followed_oracle", "--unit", "turn"]) == 0
    text = capsys.readouterr().out
    table = text[text.index("turn-level correlations with followed_oracle") :]
    assert "across the 18 turns that have it (of 18 turns in 3 episodes" in table
    removes = next(line.split() for line in table.splitlines() if line.startswith("attempted_remove "))
    assert removes[1:4] == ["turn", "18", "-1.000***"] and removes[5] == "-1.000***"
    words = next(line.split() for line in table.splitlines() if line.startswith("director_words "))
    followed = [float(t % 2 == 0) for _ in range(3) for t in range(1, 7)]
    expected = stats.spearmanr([t + k for k in range(3) for t in range(1, 7)], followed).statistic
    assert words[2] == "18" and words[5].startswith(f"{expected:+.3f}")


def test_turn_correlations_write_their_figure_and_table(synthetic_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "figs"
    assert (
        main(["report", str(synthetic_run), "--correlate", "followed_oracle", "--unit", "turn", "--figures", str(out)])
        == 0
    )
    assert (out / "turn_correlations.png").stat().st_size > 0
    assert "attempted_remove,turn,18," in (out / "turn_correlations_table.csv").read_text(encoding="utf-8")
