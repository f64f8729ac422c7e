"""A step redraws only what changed (issue 28): the 3D view gives a gone item's actor to a new item of the same
look, the agent panels collapse the sections a turn leaves empty (no widget shown or hidden) and lay a turn's
grid out as before when it comes back, the plots share one scene, a family without a 3D scene changes its
picture without laying the window out. Each keeps showing exactly what a fresh drawing shows, stepping forward
and back."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import pyvista as pv
from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QWidget

from simlab.core.recording import load_run
from simlab.gui.agent_panels import ROW_SLACK, AgentPanel, AgentPanels
from simlab.gui.playback import PlaybackModel
from simlab.gui.scene_canvas import SceneCanvas
from simlab.gui.turn_sheet import GAP
from simlab.render.scene import EDGE_DARKENING, CameraPose, SceneItem, darker, is_text
from simlab.runner.batch import RunConfig, run
from simlab.runner.demo import DEMO_RUN
from tests.gui.conftest import EventCounter, shown_window, wait_shown
from tests.gui.test_rooms_app import _display_point

CAMERA = CameraPose("test", (4.0, -6.0, 5.0), (1.0, 1.0, 0.5), (0.0, 0.0, 1.0))
RED, BLUE = (0.9, 0.1, 0.1), (0.1, 0.2, 0.9)


def _block(key: str, x: float, colour: tuple[float, float, float] = RED) -> SceneItem:
    return SceneItem(key, "block", pv.Box(bounds=(x, x + 0.9, 0, 0.9, 0, 0.9)), colour, tooltip=key)


@pytest.fixture
def canvas(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    host.resize(320, 240)
    made = SceneCanvas(host)
    made.widget.setGeometry(0, 0, 320, 240)
    host.show()
    wait_shown(qtbot, made.widget)
    made.set_camera(CAMERA)
    yield made
    made.close()


def _frame(canvas: SceneCanvas) -> np.ndarray:
    canvas.plotter.render()
    return np.asarray(canvas.plotter.screenshot(return_img=True))


def _actors(canvas: SceneCanvas) -> list[object]:
    """The actors drawn (spare ones are kept hidden)."""
    return [actor for actor in canvas.plotter.renderer.actors.values() if actor.GetVisibility()]


def test_a_gone_items_actor_shows_the_new_item_of_its_look(canvas):
    canvas.show([_block("a", 0.0)])
    (first,) = _actors(canvas)
    canvas.show([_block("b", 2.0)])  # "a" went, "b" of the same look came: one actor, its mesh swapped
    (reused,) = _actors(canvas)
    assert reused.GetAddressAsString("vtkObject") == first.GetAddressAsString("vtkObject")
    assert reused.GetMapper().GetInput().GetBounds() == pytest.approx((2.0, 2.9, 0, 0.9, 0, 0.9))
    assert canvas.key_at(*_display_point(canvas, (2.45, 0.45, 0.9))) == "b"  # picking knows the actor's new key


def test_reused_actors_draw_what_a_fresh_canvas_draws(canvas, qtbot):
    forward = [[_block("a", 0.0), _block("c", 1.0, BLUE)], [_block("b", 2.0, BLUE), _block("c", 1.0)]]
    for items in (*forward, forward[0], forward[1]):  # forward, back, forward again
        canvas.show(items)
        shown = _frame(canvas)
        canvas.clear()
        canvas.show(items)
        assert np.array_equal(_frame(canvas), shown)
        assert len(_actors(canvas)) == len(items)


def test_a_handed_on_actor_takes_the_new_items_colour(canvas):
    canvas.show([_block("a", 0.0)])
    canvas.show([_block("b", 2.0, BLUE)])
    (actor,) = _actors(canvas)
    assert actor.GetProperty().GetColor() == pytest.approx(BLUE, abs=1 / 255)  # colours pass through 8 bits
    assert actor.GetProperty().GetEdgeColor() == pytest.approx(darker(BLUE, EDGE_DARKENING), abs=1 / 255)


def test_an_actor_left_spare_is_kept_hidden_for_an_item_to_come(canvas):
    both, alone = [_block("a", 0.0), _block("c", 1.0, BLUE)], [_block("c", 1.0, BLUE)]
    frames = []
    for items in (both, alone):  # each drawn on a fresh canvas
        canvas.clear()
        canvas.show(items)
        frames.append(_frame(canvas))
    canvas.clear()
    canvas.show(both)
    (gone,) = [actor for actor in _actors(canvas) if actor.GetMapper().GetInput().GetBounds()[0] == 0.0]
    canvas.show(alone)  # "a" went and no item took its actor: hidden, not removed
    assert len(_actors(canvas)) == 1 and len(canvas.plotter.renderer.actors) == 2
    assert canvas.key_at(*_display_point(canvas, (0.45, 0.45, 0.9))) == ""  # a hidden actor is never picked
    assert np.array_equal(_frame(canvas), frames[1])  # and draws nothing
    canvas.show(both)  # "a" is back on the hidden actor, drawn as a fresh canvas draws it
    assert gone.GetAddressAsString("vtkObject") in {a.GetAddressAsString("vtkObject") for a in _actors(canvas)}
    assert len(canvas.plotter.renderer.actors) == 2
    assert np.array_equal(_frame(canvas), frames[0])


def test_an_item_of_another_look_gets_an_actor_of_its_own(canvas):
    canvas.show([_block("a", 0.0)])
    (first,) = _actors(canvas)
    ghost = SceneItem("g", "target", pv.Box(bounds=(2, 2.9, 0, 0.9, 0, 0.9)), RED, opacity=0.3)
    canvas.show([ghost])
    (actor,) = _actors(canvas)
    assert actor.GetAddressAsString("vtkObject") != first.GetAddressAsString("vtkObject")
    assert actor.GetProperty().GetOpacity() == pytest.approx(0.3)


def test_the_3d_view_after_steps_back_and_forth_is_the_turn_drawn_afresh(qtbot, tmp_path):
    win = shown_window(qtbot, tmp_path, DEMO_RUN)
    win.open_episode_id(win.browser.visible_episode_ids()[0])
    canvas = win.world.canvas
    for turn in (6, 7, 8, 5, 9, 6):  # blocks come and go: their actors are handed on
        win.playback.seek(turn)
        wanted = {item.key: tuple(item.mesh.bounds) for item in canvas.items if not is_text(item)}
        drawn = {key: canvas._shown[key].actor.GetBounds() for key in wanted}  # with any drag offset
        assert drawn == wanted
        assert len(_actors(canvas)) == len(canvas.items)
        shown = _frame(canvas)
        canvas.clear()
        win.world.redraw()
        assert np.array_equal(_frame(canvas), shown)
    win.close()


def _grid_state(widget: AgentPanels) -> list[tuple[object, ...]]:
    """Where each panel sits, how tall its row must be and how wide its pictures are drawn."""
    out = []
    for role in widget.roles():
        panel = widget.panel(role)
        row, column = widget._grid.getItemPosition(widget._grid.indexOf(panel))[:2]
        out.append((role, (row, column), widget.row_heights()[row], panel.picture_widths()))
    return out


@pytest.mark.parametrize("size", [(480, 900), (900, 420)])
def test_agent_panels_laid_out_on_steps_as_laid_out_afresh(qtbot, size):
    playback = PlaybackModel()
    widget = _shown_panels(qtbot, playback, size)
    playback.set_episode(load_run(DEMO_RUN).episodes()[0])
    for turn in (1, 2, 3, 9, 8, 4, 12, 3, 9, 1):  # the last three laid out as remembered
        playback.seek(turn)
        qtbot.wait(1)
        stepped = _grid_state(widget)
        widget._reflow()  # what every step did before: the whole grid laid out again
        qtbot.wait(1)
        assert _grid_state(widget) == stepped


def test_a_row_keeps_its_height_while_turns_need_a_little_less(qtbot):
    """Stepping, a row that a turn needs at most ROW_SLACK pixels less of keeps its height (a director's message
    comes and goes: the panels below stay put); every panel still fits its row; a new area lays the rows out at
    their own heights again, as a fresh grid would."""
    playback = PlaybackModel()
    widget = _shown_panels(qtbot, playback, (480, 900))
    playback.set_episode(load_run(DEMO_RUN).episodes()[0])
    kept = 0
    for turn in range(3, playback.last_turn + 1):  # every director has observed by turn 3
        before = widget.row_heights()
        playback.seek(turn)
        qtbot.wait(1)
        after = widget.row_heights()
        for role in widget.roles():
            panel = widget.panel(role)
            row = widget._grid.getItemPosition(widget._grid.indexOf(panel))[0]
            assert panel.heightForWidth(panel.width()) <= after[row], f"turn {turn}: {role} cut short"
        shrunk = [old - new for old, new in zip(before, after, strict=True) if new < old]
        assert all(drop > ROW_SLACK for drop in shrunk), f"turn {turn}: rows shrank by {shrunk}"
        kept += sum(new == old for old, new in zip(before, after, strict=True))
    assert kept > 0
    widget.resize(470, 900)  # another area: the rows as a fresh grid lays them out
    qtbot.wait(1)
    assert widget.row_heights() == _shown_panels(qtbot, playback, (470, 900)).row_heights()


def _shown_panels(qtbot, playback: PlaybackModel, size: tuple[int, int]) -> AgentPanels:
    """Agent panels of ``playback``'s episode, shown at ``size``."""
    widget = AgentPanels(playback)
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    wait_shown(qtbot, widget)
    return widget


def test_the_plots_share_one_scene_and_their_cursors_follow(qtbot, tmp_path):
    win = shown_window(qtbot, tmp_path, DEMO_RUN)
    win.open_episode_id(win.browser.visible_episode_ids()[0])
    plots = win.plots.plots
    assert len(plots) == 2 and plots[0].scene() is plots[1].scene()
    for turn in (3, 1, 7):
        win.playback.seek(turn)
        assert win.plots.cursor_turn() == turn
        assert win.plots.view.cursor_x(0) == win.plots.view.cursor_x(1) is not None
    win.close()


def test_the_turns_number_changes_without_laying_out_the_status_bar_or_the_timeline(qtbot, tmp_path):
    win = shown_window(qtbot, tmp_path, DEMO_RUN)
    win.open_episode_id(win.browser.visible_episode_ids()[0])
    win.playback.seek(1)
    QApplication.processEvents()
    watched = [EventCounter([QEvent.Type.LayoutRequest], widget) for widget in (win.statusBar(), win.timeline)]
    for turn in (2, 3, 9, 10, 4):  # labels of fixed size: a new text asks no layout of the window
        win.playback.seek(turn)
        QApplication.processEvents()
        label = win.status_label
        assert f"turn {turn} of" in label.text()
        assert label.fontMetrics().horizontalAdvance(label.text()) <= label.width()  # the whole text shows
    assert [requests.count for requests in watched] == [0, 0]
    win.close()


@pytest.fixture
def demo_panels(qtbot) -> tuple[AgentPanels, PlaybackModel]:
    """The agent panels shown on the demo run's first episode, and their playback."""
    playback = PlaybackModel()
    widget = _shown_panels(qtbot, playback, (480, 900))
    playback.set_episode(load_run(DEMO_RUN).episodes()[0])
    return widget, playback


def _shown(panel: AgentPanel) -> list[bool]:
    """Whether ``panel`` shows a message, and which of its sections are open (not collapsed)."""
    return [panel.message_text() != "", *(section.height() > 0 for section in panel.sections)]


def test_a_step_collapses_and_expands_sections_without_showing_or_hiding_a_widget(demo_panels, qtbot):
    widget, playback = demo_panels
    playback.seek(4)  # every director has observed by now: a role's first pictures are shown (once, not collapsed)
    qtbot.wait(1)
    # the panels inside the dock (its scroll bar comes and goes)
    events = EventCounter((QEvent.Type.Show, QEvent.Type.Hide), inside=widget.scroll_area.widget())
    changed = 0
    for turn in (*range(5, 13), 4, 5, 0, 1, 2, 3, 4):  # turn 0: no role has observed yet
        before = [shown for role in widget.roles() for shown in _shown(widget.panel(role))]
        playback.seek(turn)
        qtbot.wait(1)
        after = [shown for role in widget.roles() for shown in _shown(widget.panel(role))]
        changed += sum(b != a for b, a in zip(before, after, strict=True))
    events.remove()
    assert changed >= 4  # directors' messages came and went, sections closed at turn 0
    assert events.count == 0


def test_collapsed_sections_take_no_room_and_leave_no_gap(demo_panels, qtbot):
    widget, playback = demo_panels
    for turn in (2, 3, 4):  # D1 speaks at turn 2 only: its message is shown, then not
        playback.seek(turn)
        qtbot.wait(1)
        panel = widget.panel("D1")
        stack = [panel.title, panel.sheet, *panel.sections]
        for upper, lower in itertools.pairwise(stack):  # each gap is inside the widget below
            assert lower.y() == upper.geometry().bottom() + 1
        collapsed = [section for section in panel.sections if section.maximumHeight() == 0]
        assert all(section.height() == 0 for section in collapsed)
        sheet = panel.sheet
        assert sheet.height() == sheet.heightForWidth(sheet.width())  # all it draws, and no more
        items = sheet.layout_at(sheet.width()).items
        texts = [item.text.text() for item in items if item.text is not None]
        assert (sheet.content.message in texts) == (panel.message_text() != "")  # no message: no line
        for upper, lower in itertools.pairwise(items):  # a gap between the lines, no more
            assert lower.rect.top() - upper.rect.bottom() - 1 == GAP


def test_a_picture_familys_step_lays_out_no_window(qtbot, tmp_path):
    played = tmp_path / "puzzles"
    run(RunConfig("puzzles", seed=0, episodes=1, agents=["solver=scripted", "expert=oracle"]), played)
    win = shown_window(qtbot, tmp_path, played)
    win.open_episode_id(win.browser.visible_episode_ids()[0])
    for turn in (1, 2, 1, 2):  # settled after opening (the window is laid out once for its new contents)
        win.playback.seek(turn)
        QApplication.processEvents()
    requests = EventCounter([QEvent.Type.LayoutRequest], win)
    for turn in (1, 2, 1, 2):  # the module's picture changes at every turn
        shown = win.world.picture.image().cacheKey()
        win.playback.seek(turn)
        QApplication.processEvents()
        assert win.world.picture.image().cacheKey() != shown
    assert requests.count == 0
    win.close()


def test_a_step_lays_the_agent_panels_out_before_its_frame_is_painted(qtbot, tmp_path):
    """After the one pass of the event loop that paints a step's frame, each panel is as tall as its row must be
    and the panels' area holds them all: the frame shows the turn's layout, not the last turn's (the area was
    resized a pass later, the bottom panel cut off for a frame, when a remembered layout was applied)."""
    played = tmp_path / "puzzles"
    run(RunConfig("puzzles", seed=0, episodes=1, agents=["solver=scripted", "expert=oracle"]), played)
    win = shown_window(qtbot, tmp_path, played)
    win.resize(1600, 1000)
    win.open_episode_id(win.browser.visible_episode_ids()[0])
    widget = win.agents
    for turn in (1, 2, 1, 2, 0, 2, 1):  # the solver's panel is much taller at turn 2; then laid out as remembered
        win.playback.seek(turn)
        QApplication.processEvents()  # one pass: the frame is painted in it
        rows = widget.row_heights()
        for role in widget.roles():
            panel = widget.panel(role)
            row = widget._grid.getItemPosition(widget._grid.indexOf(panel))[0]
            assert panel.height() >= rows[row], f"turn {turn}: {role} squeezed into last turn's height"
            assert panel.geometry().bottom() < widget.scroll_area.widget().height(), f"turn {turn}: {role} cut off"
    win.close()


def _on_screen(widget: QWidget) -> np.ndarray:
    """What the screen shows of ``widget`` now: the frame composed, not a fresh paint (as ``grab`` would be)."""
    corner = widget.mapTo(widget.window(), QPoint(0, 0))
    shot = widget.screen().grabWindow(widget.window().winId(), corner.x(), corner.y(), widget.width(), widget.height())
    image = shot.toImage().convertToFormat(QImage.Format.Format_RGB32)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine() // 4, 4)
    return rows[:, : image.width(), :3].copy()


def test_the_agents_frame_a_step_paints_is_the_dock_laid_out_and_painted_whole(qtbot, tmp_path):
    """The frame painted in a step's own pass of the event loop shows the agent panels as they stand once every
    layout has settled and everything is painted again: no picture cut short, no section where the last turn's
    message left it, no panel squeezed (each was right only a pass or two later)."""
    win = shown_window(qtbot, tmp_path, DEMO_RUN)
    win.resize(1600, 1000)
    win.open_episode_id(win.browser.visible_episode_ids()[0])
    for _ in range(3):
        QApplication.processEvents()
    dock = win.docks["Agents"]
    for turn in range(1, 9):
        win.playback.seek(turn)
        QApplication.processEvents()  # one pass: the step's frame
        stepped = _on_screen(dock)
        for widget in (dock, *dock.findChildren(QWidget)):
            widget.update()
        for _ in range(4):
            QApplication.processEvents()
        assert np.array_equal(stepped, _on_screen(dock)), f"turn {turn}: the step's frame was not the laid-out dock"
    win.close()


PLAYERS = {  # scripted agents: what benchmarks/gui.py steps through, one episode each
    "rooms": ["answerer=oracle", "helper=oracle"],
    "boards": ["programmer=oracle", "robot=scripted"],
    "puzzles": ["solver=scripted", "expert=oracle"],
}


@pytest.mark.parametrize("family", ["blocks", *PLAYERS])
def test_a_step_is_painted_in_one_frame(qtbot, tmp_path, family):
    """Whatever a step changes is painted in the frame of its own pass of the event loop, and the passes after it
    paint nothing: every frame composes the whole window again (a GL view in it), and a scroll bar shown by the
    step, a grid whose area kept its size, a label cut by the dock's edge each made a second frame."""
    played = DEMO_RUN if family == "blocks" else tmp_path / family
    if family in PLAYERS:
        run(RunConfig(family, seed=0, episodes=1, agents=PLAYERS[family]), played)
    win = shown_window(qtbot, tmp_path, played)
    win.resize(1600, 1000)
    win.open_episode_id(win.browser.visible_episode_ids()[0])
    win.statusBar().clearMessage()  # "Opened ...": its timeout would repaint the status bar in a later pass
    paints = EventCounter([QEvent.Type.Paint], inside=win)
    for turn in (1, 0):  # the first step in a window repaints the window's own background a pass later
        win.playback.seek(turn)
    qtbot.waitUntil(lambda: _paints_after_the_frame(paints) == 0)  # every paint of the opening done
    turns = range(win.playback.last_turn + 1)
    later = []  # (turn, paints in the passes after the step's)
    for turn in itertools.chain(turns[1:], turns):  # the second time through, laid out as remembered
        win.playback.seek(turn)
        QApplication.processEvents()  # the step's frame
        later.append((turn, _paints_after_the_frame(paints)))
    paints.remove()
    win.close()
    assert [(turn, count) for turn, count in later if count] == []


def _paints_after_the_frame(paints: EventCounter) -> int:
    """The paint events of three passes of the event loop."""
    paints.count = 0
    for _ in range(3):
        QApplication.processEvents()
    return paints.count


def test_the_keyboard_never_lands_on_a_collapsed_section(demo_panels, qtbot):
    """Tab walks the panels' focusable widgets: none is inside a collapsed (zero-height) section, and an open
    section's toggle (one that can be opened: "No model calls" cannot) is still reached."""
    widget, playback = demo_panels
    for turn in (0, 4):  # turn 0: no role has observed yet, every section collapsed
        playback.seek(turn)
        qtbot.wait(1)
        widget.activateWindow()
        qtbot.waitUntil(widget.isActiveWindow)
        reached: list[QWidget] = []
        for _ in range(60):
            widget.focusNextChild()
            focused = QApplication.focusWidget()
            if focused is None or focused in reached:
                break
            reached.append(focused)
        collapsed = [w for w in reached if any(a.maximumHeight() == 0 for a in _ancestors(w, widget))]
        assert collapsed == []
        toggles = [section.button for role in widget.roles() for section in widget.panel(role).sections]
        open_toggles = [b for b in toggles if b.parentWidget().maximumHeight() > 0 and b.isEnabled()]
        assert (turn == 0) == (open_toggles == [])
        assert set(open_toggles) <= set(reached)


def _ancestors(widget: QWidget, top: QWidget) -> list[QWidget]:
    """``widget`` and its parents up to ``top``."""
    chain = []
    while widget is not None and widget is not top:
        chain.append(widget)
        widget = widget.parentWidget()
    return chain
