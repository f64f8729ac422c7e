"""Work on a thread beside the GUI's: what keeps it from deadlocking the app.

Python's cyclic garbage collector runs in whichever thread happens to allocate past its threshold. Run in a
worker thread, it may free the wrappers of Qt objects left in reference cycles (a closed window's widgets):
their C++ destructor takes Qt's connection lock there and then waits for the GIL, while the GUI thread,
holding the GIL, waits for that lock inside a Qt call. Both wait for ever (seen: the Search dock indexing
while an episode opened). So while a background job runs, the collector is paused (``gc.disable`` is
process-wide) and cycles are collected afterwards, and in the GUI thread: reference counting still frees
all the rest at once, and a job lasts seconds.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_running = 0  # background jobs inside collector_paused now
_resume = False  # whether the collector was on when the first of them began


@contextmanager
def collector_paused() -> Iterator[None]:
    """While inside (a worker thread's job): no automatic garbage collection in any thread; it is switched
    back on when the last job running leaves, if it was on when the first began."""
    global _running, _resume
    with _lock:
        if _running == 0:
            _resume = gc.isenabled()
            gc.disable()
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0 and _resume:
                gc.enable()
