"""Rooms in the app: frustums, the visibility overlay, named objects highlighted, the Answerer's panel."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from simlab.core.recording import load_run
from simlab.gui.main_window import MainWindow
from simlab.runner.batch import RunConfig, run
from simlab.worlds.rooms.scene import mentioned_at, scene_and_views


@pytest.fixture(scope="module")
def rooms_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("rooms") / "run"
    run(RunConfig("rooms", seed=0, episodes=5, agents=["answerer=oracle", "helper=oracle"]), out)
    return out


@pytest.fixture
def window(qtbot, tmp_path, rooms_run):
    win = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    assert win.open_path(rooms_run)
    yield win
    win.close()


def test_overlay_tints_every_seen_object_and_draws_the_corner_rays(window):
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    _scene, views = scene_and_views(window.playback.episode)
    assert window.world.count("frustum") == 2
    assert window.world.count("tint") == len({*views.answerer_visible, *views.helper_visible})
    assert window.world.count("ray") >= 2  # visible rays from each camera at least
    modes = [window.world.target_mode.itemText(k) for k in range(window.world.target_mode.count())]
    assert modes == ["Shown", "Hidden"] and "Who sees what" in window.world.target_mode.toolTip()
    window.world.target_mode.setCurrentText("Hidden")
    assert window.world.count("tint") == 0 and window.world.count("ray") == 0
    assert set(window.world.cameras) == {"answerer", "helper", "top", "free"}


def test_objects_named_in_the_selected_message_are_highlighted(window):
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    episode = window.playback.episode
    for turn in range(episode.last_turn + 1):
        window.playback.seek(turn)
        assert window.world.count("highlight") == len(mentioned_at(episode, turn))
    assert any(mentioned_at(episode, t) for t in range(episode.last_turn + 1))  # the Helper names what it sees


def test_the_answerer_panel_shows_its_view_the_question_and_the_answers(window):
    ids = window.browser.visible_episode_ids()
    mapping = next(i for i in ids if "mapping" in i)
    window.open_episode_id(mapping)
    window.playback.last()
    answerer = window.agents.panel("answerer")
    assert len(answerer.pixmaps()) == 3  # its view, the map it was shown, the question card with the answers
    assert all(not p.isNull() for p in answerer.pixmaps())
    assert len(window.agents.panel("helper").pixmaps()) == 1
    summary = next(s for s in load_run(window.run.path).summaries if s["episode_id"] == mapping)
    assert summary["outcome"] == "success"


def test_a_wrong_answer_is_a_mistake_in_every_panel_and_next_error_finds_it(qtbot, tmp_path):
    out = tmp_path / "single-view"
    run(RunConfig("rooms", seed=0, episodes=12, agents=["answerer=single-view", "helper=silent"]), out)
    wrong = next(s for s in load_run(out).summaries if s["outcome"] == "failure")
    assert wrong["errors"] == 1  # a wrong answer counts
    win = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    assert win.open_path(out) and win.open_episode_id(wrong["episode_id"])
    assert win.playback.next_error()  # the answer's turn is an error turn
    panel = win.agents.panel("answerer")
    assert "MISTAKE [wrong answer]" in panel.message.text() and "ok:" not in panel.message.text()
    assert "MISTAKE [wrong answer]" in win.dialogue.browser.toPlainText()
    assert win.timeline.label_text().endswith(f"of {wrong['turns']}")  # the browser and the timeline agree
    win.close()
