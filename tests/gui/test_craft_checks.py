"""A CRAFT per-turn record imported into a run opens in the app like any run, and the turns where our engine
disagrees with the logged game show in the dialogue and the timeline (never in what a role is shown)."""

from __future__ import annotations

import json
from pathlib import Path

from simlab.worlds.blocks.craft_run import import_craft_run

LOG = Path(__file__).resolve().parents[1] / "blocks" / "fixtures" / "craft_turn_log"
LOG = LOG / "gpt-4o-mini + 4o-mini_structure_005.json"


def _mutated_run(tmp_path: Path) -> Path:
    """The published log with turn 9's "no move" replaced by a move our engine finds legal, logged as refused."""
    data = json.loads(LOG.read_text("utf-8"))
    entry = next(e for e in data if e["turn"] == 9)
    for d in ("D1", "D2", "D3"):
        entry[d]["moveData"] = "Action: place, rs, Layer: 2, Position: (0,1)"
    log = tmp_path / LOG.name
    log.write_text(json.dumps(data), "utf-8")
    import_craft_run(log, tmp_path / "run")
    return tmp_path / "run"


def test_an_imported_game_steps_and_shows_its_disagreements(window, qtbot, tmp_path):
    run = _mutated_run(tmp_path)
    assert window.open_path(run) and window.open_episode_id("gpt-4o-mini-4o-mini_structure_005")
    window.playback.seek(9)
    qtbot.wait(10)
    text = window.dialogue.browser.document().toPlainText()
    assert "CHECK [reference_disagreement]" in text
    assert "the log's engine refused PLACE rs @ (0,1) layer 2; ours accepts it" in text
    assert "1 check finding" in window.timeline.scrubber.tooltip_for_turn(9)
    assert "check finding" not in window.timeline.scrubber.tooltip_for_turn(8)
    builder = window.agents.panel("builder")
    assert "reference_disagreement" not in builder.observation_text.body.text()
    window.playback.seek(20)
    assert window.timeline.label_text().startswith("turn 20 of 20")
