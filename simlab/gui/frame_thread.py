"""The world view's next picture, made on a thread beside the GUI's while the GUI thread updates the other panels.

A step redraws every panel, and the world view's picture of the turn (for a family without a 3D scene: its
pictures drawn and fitted, mostly Pillow's resize) is most of the step's time. Made on the GUI thread, the agents'
panels, plots, dialogue and timeline waited for it; made here, they update while it is made, and the view's
paint waits for it (the view is painted after them, see ``MainWindow``), so the step's frame still shows every
panel at the turn at once. Pillow resizes without Python's lock, so the two threads really run side by side.

The 3D view is not rendered here: VTK's wrappers release Python's lock while VTK renders, and VTK's own garbage
collector then takes a lock of its own and waits for Python's, while the GUI thread, holding Python's lock, makes
a VTK object and waits for VTK's (seen: both test workers stuck for good). What runs here must not use VTK (the 3D
view renders on a thread of its own, under rules that keep the GUI thread off VTK meanwhile: ``offscreen_view``).

Jobs for a later turn (the next one's pictures) are asked for once the step's frame is painted
(:class:`AfterFrame`), so they never slow the frame the person is waiting for.

One thread, so jobs run in the order they were asked for. Jobs run with Python's cyclic collector held off (see
``background``): a collection in this thread could free a Qt object's wrapper and deadlock the GUI's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt

from simlab.gui.background import collector_paused

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="simlab-frames")  # its thread starts at a job


def _run(job: Callable[[], T]) -> T:
    with collector_paused():
        return job()


def submit(job: Callable[[], T]) -> Future[T]:
    """Run ``job`` on the frame thread, after the jobs asked for before it."""
    return _executor.submit(_run, job)


AFTER_FRAME = QEvent.Type(QEvent.registerEventType())
AFTER_FRAME_PRIORITY = Qt.EventPriority.LowEventPriority.value - 1


class AfterFrame(QObject):
    """Calls made on the GUI thread once the frame now being prepared is painted (:meth:`call`): a job asked for
    a later turn (the next one's pictures) then runs beside the GUI thread while the person looks at this turn,
    not while this turn's frame is made (seen: the first pass through an episode drew the next turn's pictures
    during each step, 8-10 ms of CPU that software GL's threads waited for). Qt posts a window's paint request at
    low priority; the calls are posted below it. A child of the widget they serve: deleted with it, its calls
    still to come are dropped."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self._calls: deque[Callable[[], None]] = deque()

    def call(self, call: Callable[[], None]) -> None:
        """Call ``call`` after the frame, after the calls asked for before it."""
        self._calls.append(call)
        QCoreApplication.postEvent(self, QEvent(AFTER_FRAME), AFTER_FRAME_PRIORITY)

    def event(self, event: QEvent) -> bool:
        if event.type() == AFTER_FRAME and self._calls:
            self._calls.popleft()()
            return True
        return bool(super().event(event))


def drain() -> None:
    """Wait until every job asked for so far has run (a benchmark times a gesture with nothing else running)."""
    _executor.submit(lambda: None).result()


class Ahead(Generic[K, T]):
    """Jobs asked of the frame thread before their results are wanted (the next turn's pictures), by key. A
    result is taken when its key is wanted; the jobs no longer wanted are not run if not begun."""

    def __init__(self) -> None:
        self._jobs: dict[K, Future[T]] = {}

    def asked(self) -> dict[K, Future[T]]:
        """The jobs asked for and not taken, by key."""
        return dict(self._jobs)

    def take(self, key: K) -> Future[T] | None:
        """The job asked for ``key``, begun or done (None when there is none, or it had not begun: it is not
        run, and the caller, which wants it now, does the work itself rather than wait behind other jobs)."""
        job = self._jobs.pop(key, None)
        return None if job is None or job.cancel() else job

    def want(self, jobs: Mapping[K, Callable[[], T]]) -> dict[K, T]:
        """Ask for ``jobs`` (those asked for already are not asked again) and forget the others: those not begun
        are not run, those still running are left to finish (taken, or returned by a later call); returns the
        results of those done, made for nothing unless the caller keeps them."""
        done: dict[K, T] = {}
        for key in [key for key in self._jobs if key not in jobs]:
            job = self._jobs[key]
            if job.cancel() or job.done():
                del self._jobs[key]
                if not job.cancelled() and job.exception() is None:
                    done[key] = job.result()
        for key, make in jobs.items():
            if key not in self._jobs:
                self._jobs[key] = submit(make)
        return done

    def drop(self) -> None:
        """Forget every job (another episode): those not begun are not run."""
        for job in self._jobs.values():
            job.cancel()
        self._jobs.clear()
