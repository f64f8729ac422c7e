"""The dialogue pane's Judges tab in the app: what the judges said about the open episode's current turn, from
the judgments stored beside the run, and the verdicts of the same episode id in another run kept apart."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from simlab.core.judging import JudgmentRecord, JudgmentWriter
from simlab.core.recording import load_run
from simlab.gui.dialogue import JUDGES_TAB
from simlab.render.judgments import NONE_YET
from tests.gui.test_main_window import make_window


def ps_record(episode_id: str, turn: int, run: int, reason: str, unreadable: str | None = None) -> JudgmentRecord:
    labels = {} if unreadable else {"PS1": "Yes", "PS2": "No"}
    values = {} if unreadable else {"PS1": 1.0, "PS2": 0.0}
    reasons = {} if unreadable else {"PS1": reason, "PS2": "no colour named"}
    return JudgmentRecord("craft-ps", "judge-m", episode_id, turn, "", run, "sha", labels, reasons, unreadable,
                          "I am not sure" if unreadable else "", values)  # fmt: skip


@pytest.fixture
def judged(record, tmp_path: Path) -> tuple[Path, Path]:
    """Two copies of one blocks run: the first judged at turn 2 of its first episode, the second not at all."""
    source = record("builder=scripted:0.4", episodes=2, turns=4)
    first, second = tmp_path / "judged", tmp_path / "plain"
    shutil.copytree(source, first)
    shutil.copytree(source, second)
    episode_id = load_run(first).summaries[0]["episode_id"]
    writer = JudgmentWriter(first)
    writer.append(ps_record(episode_id, 2, 0, "names cell <(1,2)> and layer 0"))
    writer.append(ps_record(episode_id, 2, 1, "", unreadable="no question answered"))
    return first, second


def test_the_judges_tab_shows_the_turns_verdicts_with_reasons_and_follows_the_turn(qtbot, tmp_path, judged):
    window = make_window(qtbot, tmp_path)
    assert window.open_runs(list(judged))
    first, second = (window.browser.visible_keys()[0].run, window.browser.visible_keys()[-1].run)
    episode_id = load_run(judged[0]).summaries[0]["episode_id"]
    assert window.open_episode_id(episode_id, first)
    window.dialogue.tabs.setCurrentIndex(JUDGES_TAB)
    window.playback.seek(2)
    page = window.dialogue.judges_view.toPlainText()
    assert "Pragmatic sufficiency" in page and "judge-m" in page and "2 runs" in page
    assert "names cell <(1,2)> and layer 0" in page  # escaped in the HTML, read back as the text it was
    assert "run 2 could not be read: no question answered" in page
    window.playback.seek(3)
    assert NONE_YET.split(":")[0] in window.dialogue.judges_view.toPlainText()
    window.dialogue.judges_all_box.setChecked(True)
    assert "names cell" in window.dialogue.judges_view.toPlainText()
    assert window.open_episode_id(episode_id, second)  # the same id in the run nobody judged
    assert "names cell" not in window.dialogue.judges_view.toPlainText()
    window.close()
