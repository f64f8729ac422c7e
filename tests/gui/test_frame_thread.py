"""A family without a 3D scene has its turn pictures drawn on the frame thread while the other panels update: the
view shows the picture made there, a step paints the world view after the docks (so their paints happen while
it is made), a failure to draw is said in the view instead of raised in a paint, and the next turn's pictures
are drawn ahead, a step to it showing them."""

from __future__ import annotations

import threading
from concurrent.futures import Future

import numpy as np
import pytest
import shiboken6
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QWidget

from simlab.gui import frame_thread
from simlab.gui.world_view import PictureView
from simlab.runner.batch import RunConfig, run
from tests.gui.conftest import shown_window


class _PaintOrder(QObject):
    """The class names of the widgets it filters, in the order they are painted."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[str] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.order.append(type(watched).__name__)
        return False


def _pixels(image: QImage) -> np.ndarray:
    rgb = image.convertToFormat(QImage.Format.Format_RGB32)
    return np.frombuffer(bytes(rgb.constBits()), dtype=np.uint32)


@pytest.fixture(scope="module")
def puzzles_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("frames") / "puzzles"
    run(RunConfig("puzzles", seed=3, episodes=1, agents=["solver=scripted", "expert=oracle"]), folder)
    return folder


def test_a_step_draws_the_pictures_on_the_frame_thread_and_paints_them_after_the_docks(qtbot, tmp_path, puzzles_run):
    window = shown_window(qtbot, tmp_path, puzzles_run)
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    picture = window.world.picture
    shown = picture.image().cacheKey()
    painted = _PaintOrder()
    picture.installEventFilter(painted)
    window.agents.installEventFilter(painted)
    window.playback.seek(1)
    assert picture._coming is not None  # being drawn while the other panels update
    qtbot.waitUntil(lambda: "PictureView" in painted.order)
    assert painted.order.index("PictureView") > painted.order.index("AgentPanels")
    image = picture.image()
    assert image.cacheKey() != shown and not image.isNull()
    assert image.size() == picture.size()  # fitted to the view
    assert (_pixels(picture.grab().toImage()) == _pixels(image)).all()  # what its paint shows


def test_a_picture_that_cannot_be_drawn_is_said_in_the_view(qtbot):
    view = PictureView()
    qtbot.addWidget(view)
    view.resize(300, 200)

    def fail() -> QImage:
        raise ValueError("no such module 'x'")

    view.show_soon(frame_thread.submit(fail))
    view.grab()  # paints, without raising
    assert view.image().isNull()
    assert "could not be drawn: no such module 'x'" in view._error
    done: Future[QImage] = Future()
    done.set_result(QImage(10, 10, QImage.Format.Format_ARGB32_Premultiplied))
    view.show_soon(done)
    assert view.image().width() == 10 and not view._error  # the next picture replaces the message


def test_a_picture_replaced_before_it_is_begun_is_not_made(qtbot):
    view = PictureView()
    qtbot.addWidget(view)
    busy = threading.Event()
    frame_thread.submit(busy.wait)  # the frame thread is held: what follows waits in its queue
    made: list[str] = []

    def picture(name: str) -> QImage:
        made.append(name)
        return QImage(10, 10, QImage.Format.Format_ARGB32_Premultiplied)

    first = frame_thread.submit(lambda: picture("first"))
    view.show_soon(first)
    view.show_soon(frame_thread.submit(lambda: picture("second")))
    busy.set()
    assert view.image().width() == 10
    assert first.cancelled() and made == ["second"]


def test_the_next_turns_picture_is_drawn_ahead_and_a_step_to_it_shows_it(qtbot, tmp_path, puzzles_run):
    window = shown_window(qtbot, tmp_path, puzzles_run)
    window.open_episode_id(window.browser.visible_episode_ids()[0])
    world, playback = window.world, window.playback
    assert playback.last_turn >= 2
    QApplication.processEvents()  # the first frame painted, the next turn's picture is asked for
    frame_thread.drain()
    [(key, ahead)] = world._ahead.asked().items()
    assert key[2] == 1 and ahead.done()  # made while nothing was asked
    playback.seek(1)
    assert world.picture._coming is ahead  # taken, not drawn again
    stepped = _pixels(world.picture.image())
    assert world._ahead.asked() == {}  # the next turn's is asked for once this turn's frame is painted
    QApplication.processEvents()
    [(following_key, following)] = world._ahead.asked().items()
    assert following_key[2] == 2
    world.redraw()  # the same turn drawn afresh: the same picture; the next turn's still coming
    assert world.picture._coming is not ahead and world._ahead.asked() == {following_key: following}
    assert (_pixels(world.picture.image()) == stepped).all()
    playback.seek(0)  # a step back: drawn afresh, and the turn after it asked for
    assert world.picture._coming is not following
    QApplication.processEvents()
    assert [key[2] for key in world._ahead.asked()] == [1]


def test_jobs_asked_ahead_are_taken_made_dropped_or_handed_back():
    """A job not begun when it is wanted now is not run (the caller does the work); one no longer wanted and
    done is handed back; one not begun when no longer wanted is not run."""
    ahead: frame_thread.Ahead[str, str] = frame_thread.Ahead()
    busy = threading.Event()
    frame_thread.submit(busy.wait)  # the frame thread is held: what follows waits in its queue
    made: list[str] = []

    def make(name: str) -> str:
        made.append(name)
        return name

    assert ahead.want({"a": lambda: make("a"), "b": lambda: make("b")}) == {}
    assert ahead.take("a") is None  # not begun: not run
    assert ahead.want({"c": lambda: make("c")}) == {}  # "b" not begun either: dropped
    busy.set()
    frame_thread.drain()
    assert made == ["c"]
    assert ahead.want({}) == {"c": "c"}  # made for nothing: handed back to be kept
    assert ahead.asked() == {}


class _Frames(QObject):
    """Notes each paint request (``UpdateRequest``) a window handles: Qt paints the window's frame there."""

    def __init__(self, order: list[str]) -> None:
        super().__init__()
        self.order = order

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.UpdateRequest:
            self.order.append("frame")
        return False


def test_a_call_after_the_frame_runs_once_the_window_has_painted(qtbot):
    """AfterFrame's calls run after the paint request a change asked for (Qt posts them at low priority), in
    the order they were asked for; those of a deleted owner are dropped."""
    order: list[str] = []
    widget = QWidget()
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    QApplication.processEvents()
    frames = _Frames(order)
    widget.installEventFilter(frames)
    after = frame_thread.AfterFrame(widget)
    after.call(lambda: order.append("first"))
    widget.update()
    after.call(lambda: order.append("second"))
    QApplication.processEvents()
    assert order == ["frame", "first", "second"]
    gone = QWidget()
    frame_thread.AfterFrame(gone).call(lambda: order.append("gone"))
    shiboken6.delete(gone)
    QApplication.processEvents()
    assert order == ["frame", "first", "second"]
