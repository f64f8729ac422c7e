"""Python's garbage collector never runs in a worker thread (a collection there could free Qt objects and
deadlock the GUI thread): background jobs pause it while they run, and the app collects in the GUI thread on a
timer."""

from __future__ import annotations

import gc
import math
import threading
import weakref

import pytest
import shiboken6
from PySide6.QtCore import QSettings

from simlab.gui import background
from simlab.gui.background import (
    FULL_SHARE,
    GuiThreadCollector,
    collection_in_gui_thread,
    collector_paused,
    holds,
)
from simlab.gui.main_window import MainWindow
from tests.gui.conftest import wait_shown

KEEPS_ITS_OWN_COLLECTION = True  # tests when collection is on and off (see conftest)


@pytest.fixture(autouse=True)
def no_job_running(qtbot):
    """Every test starts with no hold on the collector (a job another test left running has ended)."""
    qtbot.waitUntil(lambda: holds() == 0, timeout=20000)


def test_the_collector_is_off_while_jobs_run_and_back_after_the_last_by_the_gui_thread(qtbot):
    assert gc.isenabled()
    inside, release = threading.Event(), threading.Event()

    def job() -> None:
        with collector_paused():
            inside.set()
            release.wait(10)

    worker = threading.Thread(target=job)
    worker.start()
    inside.wait(10)
    with collector_paused():  # a second job while the first runs
        assert not gc.isenabled()
    assert not gc.isenabled()  # the first still runs
    release.set()
    worker.join(10)
    assert not gc.isenabled()  # the last job ended in its thread: never switched on there (it would collect there)
    qtbot.waitUntil(gc.isenabled, timeout=5000)  # the GUI thread's event loop does it


def test_a_collector_switched_off_before_stays_off():
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


class _Node:
    """A reference cycle only the cyclic collector can free."""

    def __init__(self) -> None:
        self.me = self


def _cycle() -> weakref.ref[_Node]:
    return weakref.ref(_Node())


def test_the_gui_thread_collector_frees_cycles_on_its_timer_and_no_thread_collects_by_itself(qtbot):
    collector = GuiThreadCollector(interval_ms=20)
    collector.start()
    try:
        assert not gc.isenabled()
        gc.collect()
        few = _cycle()
        assert collector.collect_due() == 0 and few() is not None  # nothing due: nothing collected
        cycle = _cycle()
        kept = [[] for _ in range(3 * gc.get_threshold()[0])]  # past generation 0's threshold
        qtbot.waitUntil(lambda: cycle() is None and few() is None, timeout=5000)
        assert not gc.isenabled() and kept
    finally:
        collector.stop()
    assert gc.isenabled()


def test_the_app_s_collection_ends_with_its_block_and_a_job_still_running_keeps_it_off(qapp):
    with pytest.raises(RuntimeError), collection_in_gui_thread(qapp) as collector:
        assert not gc.isenabled() and collector.parent() is qapp
        raise RuntimeError("the window failed to open")  # handed back however the block ends
    assert gc.isenabled() and holds() == 0
    with collector_paused():
        with collection_in_gui_thread():
            pass
        assert not gc.isenabled()  # the job's hold stays
    assert gc.isenabled()


def test_a_window_shown_without_the_app_s_loop_holds_collection_until_it_is_closed(qtbot, tmp_path):
    """A script that shows a main window and runs an event loop of its own (not ``run_app``) is as safe as the
    app: no automatic collection while the window is shown (one could start inside a Qt destructor)."""
    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    assert gc.isenabled()  # made, not shown: nothing held yet
    window.show()
    wait_shown(qtbot, window)
    assert not gc.isenabled() and holds() == 1
    window.hide()
    window.show()
    assert holds() == 1  # shown again: one hold, not two
    window.close()
    assert gc.isenabled() and holds() == 0


def test_a_window_deleted_while_shown_hands_collection_back(qtbot, tmp_path):
    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    window.show()
    wait_shown(qtbot, window)
    qtbot.wait(100)  # what the window posted at its show (sizing the docks) has run
    assert not gc.isenabled()
    shiboken6.delete(window)  # never closed: its collector goes with it
    assert gc.isenabled() and holds() == 0


def test_a_collector_deleted_while_it_holds_releases_its_hold(qapp):
    collector = GuiThreadCollector()
    collector.start()
    assert holds() == 1
    shiboken6.delete(collector)
    assert holds() == 0 and gc.isenabled()


def _full_collection_due() -> None:
    """Make the oldest generation due: each collection of the middle one counts one toward it."""
    for _ in range(gc.get_threshold()[2] + 1):
        gc.collect(1)


def test_a_full_collection_waits_until_the_last_one_s_time_is_a_small_share_of_the_time_since(qapp, monkeypatch):
    """With a large run open a full collection takes 0.2-0.4 s: the collector runs one at most so often that
    they take FULL_SHARE of the time, and collects the younger generations meanwhile."""
    ticks = iter([0.0, 0.0, 0.5, 10.0, 30.0, 30.0, 30.1])  # a full one taking 0.5 s, a check at 10 s, one at 30 s
    collector = GuiThreadCollector(clock=lambda: next(ticks))
    monkeypatch.setattr(background, "_next_full", -math.inf)  # no full collection made before, on this clock
    was_enabled = gc.isenabled()
    gc.disable()  # no automatic collection resets the counts under the test
    try:
        _full_collection_due()
        collector.collect_due()
        assert gc.get_count()[2] == 0  # the first: nothing to wait for
        _full_collection_due()
        kept = [[] for _ in range(2 * gc.get_threshold()[0])]  # the youngest due too
        assert 10.0 < 0.5 + 0.5 / FULL_SHARE < 30.0
        collector.collect_due()  # 10 s after one of 0.5 s: not yet
        assert gc.get_count()[2] > gc.get_threshold()[2] and gc.get_count()[0] < gc.get_threshold()[0] and kept
        collector.collect_due()  # 30 s: its time has come
        assert gc.get_count()[2] == 0
    finally:
        if was_enabled:
            gc.enable()
