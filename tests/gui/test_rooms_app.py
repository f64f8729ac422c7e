"""Rooms in the app: frustums, the visibility overlay, named objects highlighted, the Answerer's panel."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt

from simlab.core.recording import load_run
from simlab.gui.agent_panels import ANNOTATED
from simlab.gui.main_window import MainWindow
from simlab.runner.batch import RunConfig, run
from simlab.worlds.rooms.scene import mentioned_at, scene_and_views
from tests.gui.conftest import wait_shown


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
    wait_shown(qtbot, win)
    assert win.open_path(rooms_run)
    yield win
    win.close()


def test_overlay_tints_every_seen_object_and_draws_the_corner_rays(window):
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    _scene, views = scene_and_views(window.playback.episode)
    assert window.world.count("frustum") == 2
    assert window.world.count("tint") == len({*views.answerer_visible, *views.helper_visible})
    assert window.world.count("ray") == 0  # off at first: drawn for every object, rays hide the room
    window.world.set_layer_visible("Corner rays", True)
    assert window.world.count("ray") >= 2  # visible rays from each camera at least
    assert not window.world.target_mode.isVisible()  # the layer list switches tints and rays on their own
    assert set(window.world.cameras) == {"answerer", "helper", "top", "free"}


def test_the_layer_list_switches_tints_rays_and_walls_apart_and_shows_the_legend(window):
    world = window.world
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    assert world.layer_names() == ["Who sees what", "Corner rays", "Cameras", "Named this turn", "Walls", "Objects"]
    tints_row = world.layer_list.topLevelItem(0)
    legend = [tints_row.child(k).text(0) for k in range(tints_row.childCount())]
    assert legend == ["Answerer only", "Helper only", "both agents"]
    tints, walls = world.count("tint"), world.count("wall")
    assert tints and walls and not world.count("ray")  # the rays start off
    world.set_layer_visible("Corner rays", True)
    assert world.count("ray")
    world.set_layer_visible("Corner rays", False)
    assert world.count("ray") == 0 and world.count("tint") == tints
    world.set_layer_visible("Walls", False)
    assert world.count("wall") == 0 and world.count("floor")  # the floor is in no layer: always drawn
    window.open_episode_id(window.browser.visible_episode_ids()[1])  # the choice outlives the episode
    assert world.count("ray") == 0 and world.count("wall") == 0 and world.count("tint")
    world.set_layer_visible("Corner rays", True)
    assert world.count("ray")


def _display_point(world, point):
    """Where a world point lands in the 3D view, in VTK display pixels (origin bottom left)."""
    renderer = world.plotter.renderer
    renderer.SetWorldPoint(*point, 1.0)
    renderer.WorldToDisplay()
    x, y, _z = renderer.GetDisplayPoint()
    return round(x), round(y)


def test_clicking_an_object_says_who_sees_it_and_draws_its_rays(window, qtbot):
    from PySide6.QtCore import QPoint, Qt

    world = window.world
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    world.set_camera("top")
    world.plotter.render()
    scene, views = scene_and_views(window.playback.episode)
    clickable = []
    for object_id in views.helper_only:
        x, y = _display_point(world, scene.object(object_id).center)
        if world.key_at(x, y).split(":")[1:2] == [object_id]:
            clickable.append((object_id, x, y))
    assert clickable, "no Helper-only object is in sight from the top camera"
    object_id, x, y = clickable[0]
    height = world.plotter.interactor.height()
    qtbot.mouseClick(world.plotter.interactor, Qt.MouseButton.LeftButton, pos=QPoint(x, height - 1 - y))
    text = world.selection.text()
    assert object_id in text and "Helper sees it" in text and "Answerer does not see it" in text
    assert world.count("selection") >= 2  # its outline and at least one set of rays
    qtbot.mouseClick(world.plotter.interactor, Qt.MouseButton.LeftButton, pos=QPoint(2, 2))  # empty space
    assert world.count("selection") == 0 and "Click an object" in world.selection.text()


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
    assert [p.name for p in answerer.pictures()] == ["view", "map"]  # as sent: its view and the map it was shown
    window.agents.set_mode(ANNOTATED)  # and for the researcher, the question card with the answers
    assert [p.name for p in answerer.pictures()] == ["view", "map", "question"]
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
    shown = panel.sheet.content.message  # what the panel draws under the answer
    assert "MISTAKE [wrong answer]" in shown and "ok:" not in shown
    assert "MISTAKE [wrong answer]" in win.dialogue.browser.toPlainText()
    assert win.timeline.label_text().endswith(f"of {wrong['turns']}")  # the browser and the timeline agree
    win.close()


def test_the_browsers_key_columns_fit_its_default_width(window):
    """Episode, outcome, score and turns are readable without scrolling at the window's default size."""
    window.resize(1600, 1000)
    table = window.browser.table
    header, model = table.horizontalHeader(), table.model()
    names = [model.headerData(k, Qt.Orientation.Horizontal) for k in range(4)]
    assert names == ["Episode", "Outcome", "Score", "Turns"]
    assert sum(header.sectionSize(k) for k in range(4)) <= table.viewport().width()
