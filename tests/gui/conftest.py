"""GUI tests run real Qt widgets and real VTK under Xvfb (started by pytest-xvfb with -noreset)."""

from __future__ import annotations

import gc
import os
from collections.abc import Collection, Iterator
from contextlib import contextmanager

import pytest

# The 3D views' VTK render windows (GLX) need a real X display: never the offscreen platform here (see shared notes).
os.environ.pop("QT_QPA_PLATFORM", None)
os.environ.pop("PYVISTA_OFF_SCREEN", None)

from PySide6.QtCore import QEvent, QObject, QSettings  # after the environment is set for Qt and VTK
from PySide6.QtWidgets import QApplication, QWidget

from simlab.gui.background import collection_in_gui_thread
from simlab.gui.main_window import MainWindow
from simlab.gui.scene_canvas import SceneCanvas
from simlab.render.scene import CameraPose
from tests.said_run import add_said_episode, demo_copy


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path, monkeypatch):
    """Each test gets its own QSettings store and data folder, so saved layouts, recent files and the editor's
    autosaves never leak between tests or into the person's home."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture(autouse=True)
def _collection_as_in_the_app(request, qapp) -> Iterator[None]:
    """Cycles are collected as the app collects them (``run_app``): by a timer of the event loop, never by an
    allocation that happens to run inside a Qt destructor. Automatic collection there once collected a
    pyqtgraph item in the middle of a deferred QPropertyAnimation's deletion, whose destructor waited for the
    object mutex its caller held: a clean-clone suite run hung in test_main_window's fork test (py-spy
    --native). What is left is collected here, between the test's teardown and the next test. A module that
    tests the collection itself (``KEEPS_ITS_OWN_COLLECTION``) is left alone."""
    if getattr(request.module, "KEEPS_ITS_OWN_COLLECTION", False):
        yield
        return
    with collection_in_gui_thread():
        yield
        gc.collect()  # a safe point: no Qt call on the stack


def wait_shown(qtbot, widget, timeout: int = 5000) -> None:
    """Wait until ``widget`` is shown and has a visible region (drawn on the screen).

    ``qtbot.waitExposed`` is a context manager: called bare, as these tests did, it waited for nothing."""
    qtbot.waitUntil(lambda: widget.isVisible() and not widget.visibleRegion().isEmpty(), timeout=timeout)


@contextmanager
def shown_canvas(qtbot, pose: CameraPose) -> Iterator[SceneCanvas]:
    """A 400x300 scene canvas on the screen in a host widget of its own, its camera at ``pose``; closed after."""
    host = QWidget()
    host.resize(400, 300)
    canvas = SceneCanvas(host)
    canvas.widget.resize(400, 300)
    host.show()
    wait_shown(qtbot, host)
    canvas.set_camera(pose)
    try:
        yield canvas
    finally:
        canvas.close()
        host.close()


def shown_window(qtbot, folder, run_dir=None) -> MainWindow:
    """A main window on the screen with settings of its own in ``folder``, ``run_dir`` opened when given."""
    win = MainWindow(QSettings(str(folder / "simlab.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    wait_shown(qtbot, win)
    if run_dir is not None:
        assert win.open_path(run_dir)
    return win


@pytest.fixture
def window(qtbot, tmp_path):
    """A main window with nothing open and settings of its own (files that open something define their own)."""
    win = shown_window(qtbot, tmp_path)
    yield win
    win.close()


@pytest.fixture
def said_run(tmp_path):
    """A copy of the demo run with the episode of :mod:`tests.said_run` added (the notes and search tests')."""
    run = demo_copy(tmp_path)
    add_said_episode(run)
    return run


class EventCounter(QObject):
    """Counts the events of ``kinds`` that ``watched`` gets or, given ``inside`` instead, that any widget inside
    that one gets (the filter then sits on the application until :meth:`remove`)."""

    def __init__(
        self, kinds: Collection[QEvent.Type], watched: QObject | None = None, inside: QWidget | None = None
    ) -> None:
        super().__init__()
        self.kinds, self.inside, self.count = set(kinds), inside, 0
        self._on = watched if watched is not None else QApplication.instance()
        self._on.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in self.kinds and (
            self.inside is None or (isinstance(watched, QWidget) and self.inside.isAncestorOf(watched))
        ):
            self.count += 1
        return False

    def remove(self) -> None:
        self._on.removeEventFilter(self)
