"""Work on a thread beside the GUI's: what keeps it from deadlocking the app.

Python's cyclic garbage collector runs in whichever thread happens to allocate past its threshold. Run in a
worker thread, it may free the wrappers of Qt objects left in reference cycles (a closed window's widgets):
their C++ destructor takes Qt's connection lock there and then waits for the GIL, while the GUI thread,
holding the GIL, waits for that lock inside a Qt call. Both wait for ever (seen: the Search dock indexing
while an episode opened). Two guards, which share one count of holds on the automatic collector:

- :class:`GuiThreadCollector` (the app's and the editor's, :func:`collection_in_gui_thread` around their event
  loop, and each main or editor window's while it is shown, :func:`collect_while_shown`, for a script that
  drives a window with an event loop of its own): automatic collection is off, and the GUI thread collects on
  a timer, as pyqtgraph's ``GarbageCollector`` does. No thread collects but the GUI's, however long a job or a
  live session waiting for a person lasts, and no collection starts inside a Qt destructor (seen: a deferred
  animation's deletion looked a Python override up, the allocation collected a pyqtgraph item, whose
  destructor waited for the object mutex its caller held).
- :func:`collector_paused` (every background job): the collector is off while the job runs, for code that
  runs without the app's collector (tests, an embedding application); reference counting still frees all the
  rest at once. When the last job ends in a worker thread, the GUI thread switches collection back on: switched
  on in the worker, the collection owed since the job began ran there at its next allocation (seen: a live
  episode's thread collecting as it left, while the GUI thread connected a signal, both waiting for ever).
"""

from __future__ import annotations

import gc
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial

from PySide6.QtCore import QEvent, QObject, QTimer, Signal

_lock = threading.Lock()
_holds = 0  # collector_paused jobs running now, plus the GUI-thread collector while it runs
_resume = False  # whether the collector was on when the first hold was taken
_pending = False  # the last hold ended in a worker thread: the GUI thread is to switch the collector back on
_next_full = -math.inf  # when a GuiThreadCollector may collect the oldest generation again (every one of them)


def _hold() -> None:
    global _holds, _resume, _pending
    with _lock:
        if _holds == 0:
            _resume, _pending = gc.isenabled() or _pending, False
            gc.disable()
        _holds += 1


def _release() -> None:
    global _holds, _pending
    with _lock:
        _holds -= 1
        if _holds or not _resume:
            return
        if threading.current_thread() is threading.main_thread():
            gc.enable()
            return
        # Not here: the collection owed since the first hold would run at this thread's next allocation.
        _pending = True
    _gui_thread.resume.emit()  # queued to the GUI thread (the one this module was imported in)


class _GuiThread(QObject):
    """Switches the collector back on in the GUI thread, for the last hold to end in a worker thread."""

    resume = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.resume.connect(self._resume)

    def _resume(self) -> None:
        global _pending
        with _lock:
            if _holds == 0 and _pending:
                gc.enable()
                _pending = False


_gui_thread = _GuiThread()


def holds() -> int:
    """How many holds keep automatic collection off now: background jobs running, and the app's collector."""
    with _lock:
        return _holds


@contextmanager
def collector_paused() -> Iterator[None]:
    """While inside (a worker thread's job): no automatic garbage collection in any thread; it is switched
    back on when the last hold ends, if it was on when the first began (by the GUI thread's event loop when
    that hold ends in another thread)."""
    _hold()
    try:
        yield
    finally:
        _release()


FULL_SHARE = 0.02
"""At most this share of the time goes to full collections: one walks every object the process holds (0.2-0.4 s
with a 100,000-episode run open, measured), where CPython's own collector skips most of them (it collects the
oldest generation only once the objects that reached it since the last time are a quarter of those it holds,
a count Python code cannot read)."""


class GuiThreadCollector(QObject):
    """Holds automatic collection off from :meth:`start` to :meth:`stop` and collects on a timer instead, in
    the thread this object lives in (the GUI's), each generation when its count passed the collector's own
    threshold: what automatic collection would have done, at most a timer period later, but for full
    collections, which wait until the last one's time (by any collector: the app's and each window's) is at most
    :data:`FULL_SHARE` of the time since (the younger generations are collected meanwhile). ``clock``: seconds,
    for tests."""

    def __init__(
        self, interval_ms: int = 1000, parent: QObject | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(parent)
        self._clock = clock
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect_due)
        # Whether it holds, in a list the release at its deletion shares: a collector deleted while it holds (its
        # window deleted without being closed) hands collection back; by then this object cannot be read.
        self._holding = [False]
        self.destroyed.connect(partial(_release_held, self._holding))

    def start(self) -> None:
        """Take over collection (once; a second start does nothing)."""
        if not self._holding[0]:
            self._holding[0] = True
            _hold()
            self._timer.start()

    def stop(self) -> None:
        """Hand collection back (as it was when started, once no background job holds it)."""
        if self._holding[0]:
            self._timer.stop()
            _release_held(self._holding)

    def collect_due(self) -> int:
        """Collect the oldest generation whose count is past its threshold (with the younger ones, as
        ``gc`` does), a full collection only once its time has come; returns the objects found unreachable, 0
        when nothing was due."""
        global _next_full
        thresholds = gc.get_threshold()
        due = [generation for generation, count in enumerate(gc.get_count()) if count > thresholds[generation]]
        oldest = len(thresholds) - 1
        if due and due[-1] == oldest and self._clock() < _next_full:
            due.pop()  # not yet: the younger ones due are collected
        if not due:
            return 0
        if due[-1] != oldest:
            return gc.collect(due[-1])
        start = self._clock()
        found = gc.collect(oldest)
        end = self._clock()
        _next_full = end + (end - start) / FULL_SHARE
        return found


def _release_held(holding: list[bool], *_args: object) -> None:
    if holding[0]:
        holding[0] = False
        _release()


class _WhileShown(QObject):
    """Starts its collector when the window it watches is shown and stops it when the window is hidden by the
    program (closed; a hide the window system sends, as a minimized window gets, leaves it running)."""

    def __init__(self, window: QObject, collector: GuiThreadCollector) -> None:
        super().__init__(window)
        self.collector = collector

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Show:
            self.collector.start()
        elif event.type() == QEvent.Type.Hide and not event.spontaneous():
            self.collector.stop()
        return False


def collect_while_shown(window: QObject) -> GuiThreadCollector:
    """Hold automatic collection off from when ``window`` is shown until it is closed or hidden (or deleted), a
    :class:`GuiThreadCollector` collecting on its timer instead: a window driven by an event loop that is not
    the app's (a script's, a notebook's, a test's) is as safe as in the app."""
    collector = GuiThreadCollector(parent=window)
    window.installEventFilter(_WhileShown(window, collector))
    return collector


@contextmanager
def collection_in_gui_thread(parent: QObject | None = None) -> Iterator[GuiThreadCollector]:
    """While inside (an app's event loop): cyclic collection made only by a :class:`GuiThreadCollector` made
    here, in this (the GUI) thread; handed back as it was when the block ends, however it ends."""
    collector = GuiThreadCollector(parent=parent)
    collector.start()
    try:
        yield collector
    finally:
        collector.stop()
