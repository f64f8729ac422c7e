"""Play a run's episodes in worker processes, each running its share of the episode threads.

A batch of live episodes at high concurrency is bound by the interpreter lock of the one process that plays
it: every thread's HTTP client work (the ``openai`` client, httpx, pydantic) and every system call waits for
it. ``run(..., processes=N)`` spreads the ``concurrency`` episode threads over N worker processes (one
interpreter lock each), so their CPU work runs on as many cores.

What stays in the calling process: planning, scheduling (at most ``concurrency`` episodes in the workers,
the rest queued here, so a stop or an endpoint's failure starts no more at once) and the run's index and
``run.json``, written by the one process that holds the run's lock, exactly as with threads. Each worker plays
an episode from the run config, writes its file into the run folder (as the thread pool's savers do) and
sends the :class:`~simlab.core.episode.Episode` back. Episodes are the same whatever the number of processes:
each is built from its own seed and task, never from what else the process played.

A worker that dies (killed, out of memory) fails the episodes it was playing with :class:`WorkerDied`; the
batch writes every episode that finished, then raises, and ``resume`` plays the rest. Workers exit with the
calling process however it ends (:func:`simlab.core.processes.exit_with_parent`), and when it closes their
pipe.

Workers are forked (tens of milliseconds: they share what the calling process has imported), except from a
process that has rendered, whose GL context a fork would share (the app, a rooms build): there a fork server
is started once, a fresh interpreter that imports SimLab and the model client, and forks each worker. Spawning
them instead would import those again in every worker of every batch, about a second of CPU each.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import traceback
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing import connection
from multiprocessing.context import ForkContext, ForkServerContext, SpawnContext
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from simlab.core.episode import Episode
from simlab.core.plugins import Registry
from simlab.core.processes import exit_with_parent, start_method
from simlab.core.recording import save_run_episode
from simlab.core.secrets import scrub_text
from simlab.runner.planned import EpisodeQueue, Planned, play_planned
from simlab.worlds import get_family

Job = tuple[int, Planned]
"""An episode sent to a worker: its number in this pool, and what to play."""
PLAYED, SAVED, FAILED = "played", "saved", "failed"
Outcome = tuple[str, int, Episode | BaseException | None]
"""What a worker sends back, with the job's number: PLAYED (its thread takes the next episode while the file
is written), then SAVED with the episode (its file written), or FAILED with the exception it raised."""


class WorkerDied(RuntimeError):
    """A worker process ended while it was playing episodes (their files may be missing; resume plays them)."""


def shares(concurrency: int, processes: int) -> list[int]:
    """The episode threads of each worker: ``concurrency`` spread as evenly as can be over at most ``processes``
    workers (never a worker with none)."""
    workers = max(1, min(processes, concurrency))
    return [concurrency // workers + (k < concurrency % workers) for k in range(workers)]


class _Worker:
    """The calling process's side of one worker: its process, its pipe, the episodes it holds (played or being
    written) and those of them it is still playing (each takes one of its ``slots`` threads)."""

    def __init__(self, process: BaseProcess, pipe: connection.Connection, slots: int) -> None:
        self.process, self.pipe, self.slots = process, pipe, slots
        self.held: dict[int, Future[Episode | None]] = {}
        self.playing: set[int] = set()
        self.gone = False  # its pipe has closed: it takes no more episodes


class ProcessEpisodePool:
    """Episodes played by worker processes (each with ``shares(concurrency, processes)`` threads), at most
    ``concurrency`` at once; the rest wait here.

    ``submit`` returns at once a future of the episode, whose file is written when it is done (None when
    ``stopping()`` was true before the episode began). ``on_episode`` is called with each finished episode
    before the next queued one may start (so a model endpoint's failure stops the queue at once).
    """

    def __init__(
        self,
        config: Mapping[str, Any],
        registry: Registry | None,
        timeout: float | None,
        concurrency: int,
        processes: int,
        run_dir: Path,
        stopping: Callable[[], bool],
        on_episode: Callable[[Episode], None] | None = None,
    ) -> None:
        self.on_episode = on_episode
        self.queue = EpisodeQueue(stopping)
        self.lock = threading.Lock()  # the queue, each worker's episodes, and sends on the pipes
        self.jobs = 0
        context = _context()
        self.workers: list[_Worker] = []
        for threads in shares(concurrency, processes):
            here, there = context.Pipe()
            args = (there, dict(config), _unloaded(registry), timeout, threads, run_dir, dict(os.environ))
            process = context.Process(target=_serve, args=args, name="simlab-episodes", daemon=True)
            process.start()
            there.close()  # the worker's end: our reads see EOF once it is gone
            self.workers.append(_Worker(process, here, threads))
        self.listener = threading.Thread(target=self._listen, name="simlab-process-results", daemon=True)
        self.listener.start()

    def submit(self, item: Planned) -> Future[Episode | None]:
        """Queue one planned episode; it starts as soon as a worker has a free thread."""
        with self.lock:
            future = self.queue.put(item)
        self._pump()
        return future

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        """Cancel what is queued and end the workers at once if asked (the episodes they play are dropped);
        else wait for the episodes in flight. The workers are ended either way."""
        if cancel_futures:
            with self.lock:
                queued = self.queue.drain()
            for future in queued:
                future.cancel()
            for worker in self.workers:
                worker.process.kill()
        elif wait:
            with self.lock:
                futures = self.queue.futures() + [f for w in self.workers for f in w.held.values()]
            for future in futures:
                future.exception()
        with self.lock:
            for worker in self.workers:
                if not worker.gone:
                    _send(worker.pipe, None)  # the worker finishes what it plays, then exits
        if wait:  # the listener joins each worker as its pipe closes: a fork server's child joined by two threads
            self.listener.join()  # at once read its exit code once and end of file, 255, the second time

    def _pump(self) -> None:
        """Send queued episodes to the workers with free threads (resolving them to None once stopping)."""
        with self.lock:
            while self.queue:
                alive = [w for w in self.workers if not w.gone]
                if not alive:  # nothing left to play them (the batch stops at the first WorkerDied anyway)
                    self._fail_queued(WorkerDied("every worker process has ended"))
                    return
                worker = max(alive, key=lambda w: w.slots - len(w.playing))  # the first of the freest
                taken = self.queue.take() if len(worker.playing) < worker.slots else None
                if taken is None:
                    return
                item, future = taken
                self.jobs += 1
                worker.held[self.jobs] = future
                worker.playing.add(self.jobs)
                _send(worker.pipe, (self.jobs, item))

    def _fail_queued(self, error: BaseException) -> None:
        """Every queued episode's future fails with ``error`` (the lock held)."""
        for future in self.queue.drain():
            if future.set_running_or_notify_cancel():
                future.set_exception(error)

    def _listen(self) -> None:
        """In a thread of its own: settle each episode a worker sends back, and fail those of a worker that
        dies; ends when every worker has."""
        alive = {id(w.pipe): w for w in self.workers}
        while alive:
            for ready in connection.wait([w.pipe for w in alive.values()]):
                worker = alive[id(ready)]
                try:
                    kind, job, payload = worker.pipe.recv()
                except (EOFError, OSError):
                    del alive[id(ready)]
                    self._lost(worker)
                    continue
                self._settle(worker, kind, job, payload)
            self._pump()

    def _settle(self, worker: _Worker, kind: str, job: int, payload: Episode | BaseException | None) -> None:
        """One message of a worker's: a thread freed, or an episode's end (saved, or failed)."""
        with self.lock:
            worker.playing.discard(job)
            future = None if kind == PLAYED else worker.held.pop(job)
        if future is None:
            return
        if isinstance(payload, BaseException):
            future.set_exception(payload)
            return
        if payload is not None and self.on_episode is not None:
            self.on_episode(payload)
        future.set_result(payload)

    def _lost(self, worker: _Worker) -> None:
        """``worker`` is gone: fail the episodes it was playing (any it finished were sent back before)."""
        worker.process.join()
        with self.lock:
            lost, worker.held, worker.playing, worker.gone = worker.held, {}, set(), True
        code = worker.process.exitcode
        for future in lost.values():
            future.set_exception(
                WorkerDied(f"a worker process ended (exit code {code}) while playing {len(lost)} episode(s)")
            )


def _context() -> ForkContext | SpawnContext | ForkServerContext:
    """Fork, unless :func:`simlab.core.processes.start_method` says this process may not: then the fork server
    (the modules every worker needs imported there once, before it starts)."""
    context = start_method()
    if context.get_start_method() == "fork":
        return context
    server = multiprocessing.get_context("forkserver")
    server.set_forkserver_preload([__name__, "simlab.agents.openai_agent"])
    return server


def _unloaded(registry: Registry | None) -> Registry | None:
    """``registry``'s plugins without the factories it has loaded: a spawned worker loads them itself (a
    factory pickles as a reference to a module a plugin's folder holds, which the worker cannot import yet)."""
    return None if registry is None else Registry(plugins=dict(registry.plugins), problems=dict(registry.problems))


def _send(pipe: connection.Connection, message: object) -> None:
    """``message`` down ``pipe`` unless the other end is gone (its reader sees that and says so)."""
    with contextlib.suppress(OSError):  # BrokenPipeError, ConnectionResetError
        pipe.send(message)


def _serve(
    pipe: connection.Connection,
    config: dict[str, Any],
    registry: Registry | None,
    timeout: float | None,
    threads: int,
    run_dir: Path,
    environment: dict[str, str],
) -> None:
    """A worker's body: play each job sent on ``pipe`` on ``threads`` threads, write its file on as many more
    (so the thread that played it takes the next at once, as the thread pool's savers do), send it back; stop
    taking jobs at None (or when the calling process is gone) and exit once those taken are sent."""
    exit_with_parent(os.getppid())  # the calling process, or the fork server, which ends with it
    # Ctrl-C reaches the whole process group: the calling process alone decides (its first lets the episodes
    # in flight finish, here too; its second ends the workers).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The calling process's environment as it is now (the API keys' variables): a fork server's children have
    # the one it was started with, maybe a batch earlier.
    os.environ.clear()
    os.environ.update(environment)
    family = get_family(config["world"])
    sending = threading.Lock()

    def send(outcome: Outcome) -> None:
        with sending:
            try:
                pipe.send(outcome)
            except Exception:  # an exception that cannot be pickled: its text, with the worker's traceback
                pipe.send((FAILED, outcome[1], RuntimeError(traceback.format_exc())))

    def failed(job: int, exc: BaseException) -> None:
        """The calling process raises ``exc``, as a thread pool's future would hold it."""
        exc.add_note(scrub_text(f"(in a worker process)\n{traceback.format_exc()}"))  # a traceback is not pickled
        send((FAILED, job, exc))

    def save(job: int, episode: Episode) -> None:
        try:
            save_run_episode(run_dir, episode)
        except BaseException as exc:
            failed(job, exc)
            return
        send((SAVED, job, episode))

    def play(job: int, item: Planned) -> None:
        try:
            episode = play_planned(family, config, item, registry, timeout)
        except BaseException as exc:
            failed(job, exc)
            return
        send((PLAYED, job, None))
        savers.submit(save, job, episode)

    with (
        ThreadPoolExecutor(threads, thread_name_prefix="simlab-save") as savers,
        ThreadPoolExecutor(threads, thread_name_prefix="simlab-episode") as players,
    ):
        while True:
            try:
                job: Job | None = pipe.recv()
            except (EOFError, OSError):
                return
            if job is None:
                break
            players.submit(play, *job)
