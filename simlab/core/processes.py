"""Worker processes for work that is CPU-bound in Python (rendering id images, sampling views): a
:class:`~concurrent.futures.ProcessPoolExecutor` whose workers never outlive the process that made them.

A pool's workers are ended by the pool when it shuts down, but not when their parent dies without shutting
it down (SIGKILL, SIGTERM's default action, the OOM killer): they would run on as orphans, holding memory and
a CPU each. Every worker here watches its parent and exits once it is gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from multiprocessing.context import ForkContext, SpawnContext
from typing import TypeVar

Job = TypeVar("Job")
Result = TypeVar("Result")

PR_SET_PDEATHSIG = 1
"""prctl(2): the signal a process gets when the thread that made it ends (Linux)."""
PARENT_POLL_S = 0.5
"""How often a worker checks that its parent is alive (a dead parent's workers are gone within this)."""


def process_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes that exit when this process dies, however it dies."""
    return ProcessPoolExecutor(
        workers, mp_context=start_method(), initializer=exit_with_parent, initargs=(os.getpid(),)
    )


def ordered_map(fn: Callable[[Job], Result], jobs: Iterable[Job], workers: int | Executor) -> Iterator[Result]:
    """``fn`` of every job, yielded in the jobs' order whatever order they finish in: in this process when
    ``workers`` <= 1, else in a :func:`process_pool` of that many (``fn`` must be a module-level function), or
    in the pool ``workers`` (kept by the caller for several maps: its processes import and warm up once).
    Results come back one by one, so a caller writing them as they come holds only those finished early."""
    if isinstance(workers, Executor):
        yield from workers.map(fn, jobs)
        return
    if workers <= 1:
        yield from map(fn, jobs)
        return
    with process_pool(workers) as pool:
        # chunks of one: jobs here are whole rooms (tenths of a second each), so even spreading beats batching
        yield from pool.map(fn, jobs)


def start_method() -> ForkContext | SpawnContext:
    """Fork (fast, and a script needs no ``__main__`` guard) unless this process already rendered: a fork
    would share its VTK/OpenGL context (the app, the tests), so then spawn."""
    if "vtkmodules.vtkRenderingCore" in sys.modules:
        return multiprocessing.get_context("spawn")
    return multiprocessing.get_context("fork")


def exit_with_parent(parent: int) -> None:
    """In a worker: ask Linux to kill this process with its parent (at once, even mid-render), and on any
    system a daemon thread that ends it once ``parent`` is no longer its parent (it died and the worker was
    handed to init; a worker busy in C code sees that when the call returns)."""
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(1)  # no cleanup to run: the parent that wanted the results is gone

    threading.Thread(target=watch, name="simlab-parent-watch", daemon=True).start()
