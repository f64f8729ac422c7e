"""Batch runs: plan the episodes of a run from its config, play them, and write the run folder.

The config written to ``run.json`` holds everything needed to reproduce the run: world, seed, settings,
agent specs, repeats and the tasks themselves (so a run does not depend on a structures folder staying put).
Resuming re-reads that config and plays only the episodes the index does not list yet.

Episodes are played on a thread pool (``concurrency`` at a time; each builds its own world and agents) and
written by the calling thread as they finish, so index lines may come in any order while every episode is
the same as in a one-at-a-time run. How a run was played (concurrency, episode timeout) is not part of the
reproducible config: it is kept in ``run.json`` under ``runtime``, for information.

With ``processes`` above 1 the episode threads are spread over that many worker processes (see
:mod:`simlab.runner.process_pool`): a live batch at high concurrency is bound by one process's interpreter
lock. The run folder is the same whatever the number of processes; like the concurrency, it is how the run
was played, not what it is, and being a property of the machine it is not recorded.

``executor="ray"`` plays the episodes as Ray remote tasks instead (on a local Ray instance, or across the
cluster named by ``$RAY_ADDRESS``; see :mod:`simlab.runner.ray_executor`); the run folder is still written
here, by the calling thread, and the episodes are the same.

An episode ended by a model endpoint's failure (its summary has ``infrastructure``; see
:class:`~simlab.core.errors.InfrastructureError`) is not the model's result: its file is kept for inspection
but its index line is not written, so it does not count as done and ``resume`` plays it again. No episode
starts after the first such failure (the endpoint is down); those in flight finish, then :func:`run` raises
the failure.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from simlab.agents.resolve import make_agents, refuse_secrets, role_agent_settings, role_specs
from simlab.core.episode import Episode
from simlab.core.errors import ConfigError, InfrastructureError
from simlab.core.limits import (
    MAX_CONCURRENCY,
    MAX_PROCESSES,
    MAX_REPEATS,
    MAX_RUN_EPISODES,
    MAX_SEED,
    MAX_TASKS,
    shown,
)
from simlab.core.plugins import AgentSpec, Registry
from simlab.core.recording import (
    EPISODES_DIR,
    INDEX_FILE,
    RUN_FILE,
    Run,
    RunWriter,
    check_episode_id,
    read_json,
    write_json_atomic,
)
from simlab.core.writing import TEMP_NAME
from simlab.runner.planned import Planned, agent_specs, play_planned
from simlab.worlds import WorldFamily, get_family

Progress = Callable[[int, int, Episode], None]
"""Called after each episode is written: (episodes written so far, episodes to play, the episode)."""
EXECUTORS = ("local", "ray")
"""Where episodes are played: ``local`` threads (in this process or spread over worker processes), or ``ray``
remote tasks."""
THREADS_PER_PROCESS = 16
"""The fewest episode threads :func:`default_processes` gives a worker process (below it, one process)."""


class EpisodePool(Protocol):
    """Plays planned episodes somewhere (threads, Ray tasks); each future is the episode, or None if stopped."""

    def submit(self, item: Planned) -> Future[Episode | None]: ...

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None: ...


@dataclass(frozen=True)
class RunConfig:
    """What ``python main.py run`` was asked to do (composed from its sources by :mod:`simlab.runner.run_config`)."""

    world: str
    seed: int = 0
    episodes: int | None = None
    repeats: int = 1
    agents: Sequence[str] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    tasks: list[dict[str, Any]] | None = None  # None: generate ``episodes`` tasks from the seed
    groups: Sequence[str] = ()  # only tasks of these groups (a blocks tier, a rooms question type)
    generate_options: Mapping[str, Any] = field(default_factory=dict)  # the family's generate options
    agent_settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # role or group -> settings

    @classmethod
    def from_record(cls, recorded: Mapping[str, Any]) -> RunConfig:
        """The config that makes the run a ``run.json`` config records (its tasks given, as recorded)."""
        return cls(
            world=str(recorded["world"]),
            seed=int(recorded["seed"]),
            repeats=int(recorded["repeats"]),
            agents=[f"{role}={spec}" for role, spec in recorded["agents"].items()],
            settings=dict(recorded["settings"]),
            tasks=list(recorded["tasks"]),
            agent_settings={role: dict(values) for role, values in (recorded.get("agent_settings") or {}).items()},
        )

    def to_json(self, family: WorldFamily) -> dict[str, Any]:
        """The reproducible config as ``run.json`` records it: every role's agent, every setting (defaults
        filled in, checked by the family) and the tasks themselves."""
        specs = role_specs(family, [AgentSpec.parse(a) for a in self.agents])
        refuse_secrets(self.settings, "world setting")
        refuse_secrets(self.generate_options, "generate option")
        return {
            "world": self.world,
            "seed": self.seed,
            "repeats": self.repeats,
            "agents": {role: spec.spec() for role, spec in specs.items()},
            "settings": family.check_settings(self.settings),
            "agent_settings": role_agent_settings(family, self.agent_settings),
            "tasks": self.plan_tasks(family),
        }

    def plan_tasks(self, family: WorldFamily) -> list[dict[str, Any]]:
        """The tasks to play: those given (checked, filtered by group, the first ``episodes``), or
        ``episodes`` tasks generated from the seed. ConfigError when there is nothing to play, or a task's id
        cannot name a file or names two tasks."""
        groups = family.check_groups(self.groups)
        self._check_counts(family)
        if self.tasks is not None:
            _check_episode_total(len(self.tasks[: self.episodes] if self.episodes else self.tasks), self.repeats)
            for k, task in enumerate(self.tasks):
                try:
                    family.tasks.validate(task)
                except (ValueError, TypeError, KeyError) as exc:
                    raise ConfigError(f"task {k} ({str(task.get('id', '?'))[:80]}): {exc}") from None
            tasks = [t for t in self.tasks if not groups or family.tasks.group_of(t) in groups]
            tasks = list(tasks[: self.episodes] if self.episodes else tasks)
        elif not self.episodes:
            raise ConfigError("--episodes must be at least 1 when no tasks are given")
        else:
            _check_episode_total(self.episodes, self.repeats)
            tasks = family.tasks.generate(
                self.episodes, self.seed, family.generate_options(self.generate_options), groups
            )
        return _playable(tasks, groups)

    def _check_counts(self, family: WorldFamily) -> None:
        """ConfigError, before any task is made, for a seed, a number of tasks or of repeats out of range (a run
        config's values reach here unchecked by the command line's flags)."""
        if not 0 <= self.seed <= MAX_SEED:
            raise ConfigError(f"--seed {shown(self.seed)}: expected 0 to {MAX_SEED:,} (seeds are 63-bit)")
        most = MAX_TASKS if self.tasks is not None else family.tasks.max_tasks
        if self.episodes is not None and not 1 <= self.episodes <= most:
            raise ConfigError(
                f"--episodes {shown(self.episodes)}: expected 1 to {most:,}, the most {family.name} tasks a run plays"
            )
        if not 1 <= self.repeats <= MAX_REPEATS:
            raise ConfigError(f"--repeats {shown(self.repeats)}: expected 1 to {MAX_REPEATS:,}")


def _check_episode_total(tasks: int, repeats: int) -> None:
    """ConfigError when ``tasks`` played ``repeats`` times are more episodes than a run holds."""
    if tasks * repeats > MAX_RUN_EPISODES:
        raise ConfigError(
            f"{tasks:,} tasks played {repeats:,} times are {tasks * repeats:,} episodes, and a run holds at most "
            f"{MAX_RUN_EPISODES:,} (each is a file and an index line): lower --episodes or --repeats"
        )


def _playable(tasks: list[dict[str, Any]], groups: Sequence[str]) -> list[dict[str, Any]]:
    """``tasks`` when there is at least one and every id is a distinct plain name (it names files)."""
    if not tasks:
        which = f" of {'/'.join(groups)}" if groups else ""
        raise ConfigError(f"no tasks{which} to play: nothing would run")
    seen: set[str] = set()
    for task in tasks:
        task_id = check_episode_id(str(task.get("id", "task")), "task id")
        if task_id in seen:
            raise ConfigError(f"task id {task_id!r} names two tasks; every task needs its own id")
        seen.add(task_id)
    return tasks


def episode_ids(config: Mapping[str, Any]) -> list[Planned]:
    """(episode id, task, repeat) for every episode of a run config, in a fixed order."""
    out = []
    for repeat in range(int(config.get("repeats", 1))):
        for task in config["tasks"]:
            out.append((f"{task.get('id', 'task')}-r{repeat}", task, repeat))
    return out


def run(
    config: RunConfig | None,
    out_dir: str | Path,
    resume: bool = False,
    progress: Progress | None = None,
    registry: Registry | None = None,
    concurrency: int = 1,
    episode_timeout: float | None = None,
    stop: threading.Event | None = None,
    executor: str = "local",
    processes: int | None = None,
) -> RunWriter:
    """Play every episode of a run (or, with ``resume``, those not finished yet) into ``out_dir``.

    ``concurrency`` episodes are in flight at once. An episode still running after ``episode_timeout``
    seconds is recorded as an abort at its next step (see :func:`~simlab.runner.episode.run_episode`).
    Once ``stop`` is set no new episode starts; those in flight finish and are written, then ``run`` returns
    (compare ``writer.done`` with :func:`episode_ids` to tell). An exception (KeyboardInterrupt included)
    drops the episodes in flight unwritten; the index stays valid and ``resume`` replays them. When a model
    endpoint fails, no new episode starts either; the episodes in flight finish, those the failure ended are
    kept out of the index, and ``run`` raises the first :class:`~simlab.core.errors.InfrastructureError`
    (``resume`` plays exactly the episodes not done).

    ``executor`` is ``"local"`` (a thread pool) or ``"ray"`` (Ray remote tasks, ``concurrency`` in flight;
    needs ``pip install 'simlab[cluster]'``). Either can resume a run the other started. ``processes`` spreads
    the local executor's threads over that many worker processes (None: :func:`default_processes`).
    """
    _check_runtime(concurrency, episode_timeout, executor, processes)
    if processes is None:
        processes = default_processes(concurrency) if executor == "local" else 1
    runtime: dict[str, Any] = {"concurrency": concurrency, "episode_timeout": episode_timeout}
    if executor != "local":
        runtime["executor"] = executor
    writer, family = _open(config, out_dir, resume, registry, runtime)
    if resume:
        _remove_stale_temp_files(writer.path)
    todo = [item for item in episode_ids(writer.config) if item[0] not in writer.done]
    written = 0

    saved_by_workers = executor == "local"  # threads write their own files; Ray workers cannot reach the folder

    def write(episodes: Sequence[Episode]) -> None:
        """Episodes that finished together, in plan order: their files (unless the workers wrote them), then
        their index lines at once (one fsync), then the progress of each."""
        nonlocal written
        if not saved_by_workers:  # an episode ended by the endpoint too: its file is kept for inspection
            for episode in episodes:
                writer.save(episode)
        done = [episode for episode in episodes if not ended_by_infrastructure(episode)]  # those are not done
        if done:
            writer.index_all(done)
        for episode in done:
            written += 1
            if progress is not None:
                progress(written, len(todo), episode)

    save = writer.save if saved_by_workers else None
    batch = _Batch(family, writer.config, registry, episode_timeout, stop, executor, save, processes, writer.path)
    try:
        # A new run wrote its runtime with its config (run.json is written once: 100 ms of the interpreter lock
        # for 200 embedded tasks); a resumed one notes this session's while the first episodes play.
        started = (lambda: _record_runtime(writer, runtime)) if resume else None
        batch.play(todo, concurrency, write, started=started)
    finally:
        writer.close()  # the run's lock is let go however the batch ended (a failure's trace keeps the writer)
    return writer


def ended_by_infrastructure(episode: Episode) -> bool:
    """Whether a model endpoint's failure ended ``episode`` (its summary says so under ``infrastructure``)."""
    return bool(episode.summary.get("infrastructure"))


def stored_runtime(out_dir: str | Path) -> dict[str, Any]:
    """The runtime options (``concurrency``, ``episode_timeout``) a run folder was last played with, or {};
    ConfigError naming ``run.json``'s field when they are not what the options take."""
    path = Path(out_dir) / RUN_FILE
    obj = read_json(path) if os.path.lexists(path) else {}
    runtime = obj.get("runtime") if isinstance(obj, dict) else None
    if not isinstance(runtime, dict):
        return {}
    try:
        _check_runtime(runtime.get("concurrency", 1), runtime.get("episode_timeout"))
    except ConfigError as exc:
        said = f"{path}, field runtime (how the run was last played)"
        raise ConfigError(f"{said}: {exc}; give the option to replace it") from None
    return dict(runtime)


def default_processes(concurrency: int) -> int:
    """The worker processes a local batch of ``concurrency`` episodes uses when not told: one per core this
    process may run on, each with at least :data:`THREADS_PER_PROCESS` episode threads (so a batch of a few
    episodes at once stays in this process: spreading it would cost more start-up than it saves)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cores, concurrency // THREADS_PER_PROCESS, MAX_PROCESSES))


def _check_runtime(
    concurrency: int, episode_timeout: float | None, executor: str = "local", processes: int | None = None
) -> None:
    if not _whole_in(concurrency, MAX_CONCURRENCY):
        raise ConfigError(f"--concurrency {shown(concurrency)}: expected a whole number from 1 to {MAX_CONCURRENCY}")
    if processes is not None and not _whole_in(processes, MAX_PROCESSES):
        raise ConfigError(f"--processes {shown(processes)}: expected a whole number from 1 to {MAX_PROCESSES}")
    if processes is not None and processes > 1 and executor != "local":
        raise ConfigError(f"--processes {processes}: only the local executor plays in worker processes")
    if episode_timeout is not None and not _positive_seconds(episode_timeout):
        raise ConfigError(f"--episode-timeout {shown(episode_timeout)}: expected a positive number of seconds")
    if executor not in EXECUTORS:
        raise ConfigError(f"--executor {executor!r}: expected one of {', '.join(EXECUTORS)}")
    if executor == "ray":  # fails early, before anything is written, when ray is not installed
        import simlab.runner.ray_executor  # noqa: F401


def _whole_in(value: object, most: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= most


def _positive_seconds(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < math.inf


def _open(
    config: RunConfig | None,
    out_dir: str | Path,
    resume: bool,
    registry: Registry | None,
    runtime: Mapping[str, Any],
) -> tuple[RunWriter, WorldFamily]:
    """The run folder's writer (new, recording ``runtime`` with the config, or the one to resume) and its world
    family; checks the agents first."""
    if config is None:
        if not (resume and (Path(out_dir) / RUN_FILE).exists()):
            raise ConfigError(f"{out_dir}: no run to resume there (no {RUN_FILE}); start one with a config")
        writer = RunWriter(out_dir, {}, resume=True, check=lambda recorded: check_resumable(recorded, registry))
        return writer, get_family(writer.config["world"])
    family = get_family(config.world)
    config_json = config.to_json(family)
    # Build every agent once before anything is written, so a bad spec or setting leaves no run folder.
    make_agents(family, agent_specs(config_json), config_json["settings"], registry, config_json["agent_settings"])
    return RunWriter(out_dir, config_json, resume=resume, runtime=runtime), family


def check_resumable(recorded: Run, registry: Registry | None = None) -> None:
    """ConfigError naming what stops a run folder from being resumed, found before anything is written:
    ``run.json`` records what a new run could not be (every check and bound of a new run applies to it, its
    agents built once), or the index lists episodes the plan does not hold or whose files are gone (resuming
    would call them done)."""
    where = recorded.path / RUN_FILE
    source = recorded.config.get("imported_from")
    if source:
        tool = source.get("tool", "another tool") if isinstance(source, dict) else "another tool"
        raise ConfigError(f"{where}: an import from {tool}; it holds recorded episodes only, with none left to play")
    try:
        config = RunConfig.from_record(recorded.config)
        family = get_family(config.world)
        config_json = config.to_json(family)
        make_agents(family, agent_specs(config_json), config_json["settings"], registry, config_json["agent_settings"])
        if config_json["agents"] != recorded.config["agents"]:  # a new run records every role's agent
            roles = ", ".join(config_json["agents"])
            raise ConfigError(f"field config.agents: expected an agent for each role ({roles}) and no other")
    except (ConfigError, ValueError) as exc:
        said = f"{where} records a run SimLab cannot play (edited by hand, or by another version)"
        raise ConfigError(f"{said}: {exc}") from None
    _check_index(recorded)


def _check_index(recorded: Run) -> None:
    """ConfigError when the index lists an episode the run's plan does not hold, or one whose file is missing."""
    planned = {episode_id for episode_id, _, _ in episode_ids(recorded.config)}
    stray = [s["episode_id"] for s in recorded.summaries if s["episode_id"] not in planned]
    if stray:
        raise ConfigError(
            f"{recorded.path / INDEX_FILE} lists {len(stray):,} episode(s) that run.json does not plan "
            f"({', '.join(stray[:3])}): the index is another run's or was edited; nothing was written"
        )
    folder = recorded.path / EPISODES_DIR
    if os.path.lexists(folder) and not folder.is_dir():
        raise ConfigError(f"{folder}: expected the folder of the run's episode files, found a file")
    entries = list(os.scandir(folder)) if folder.is_dir() else []
    present = {e.name for e in entries if e.is_file(follow_symlinks=False)}
    other = next((e.name for e in entries if e.name not in present), None)
    if other is not None:  # a folder where an episode file goes would fail its write, after the episode played
        raise ConfigError(f"{folder / other}: expected an episode file; the episodes folder holds episode files only")
    missing = [s["file"] for s in recorded.summaries if Path(s["file"]).name not in present]
    _refuse_listed(recorded, missing, "are missing")
    damaged = [s["file"] for s in recorded.summaries if not _whole(recorded.path / s["file"])]
    _refuse_listed(recorded, damaged, "are cut short or are not episodes")


def _refuse_listed(recorded: Run, files: list[str], what: str) -> None:
    if files:
        raise ConfigError(
            f"{recorded.path}: the index lists {len(files):,} episode(s) whose files {what} "
            f"({', '.join(files[:3])}); resuming would call them done. Restore the files, or remove their "
            f"lines from {INDEX_FILE} to play them again"
        )


def _whole(path: Path) -> bool:
    """Whether an episode file begins and ends as SimLab writes one (a JSON object whose first key is its
    format). Its two ends only: reading every episode of a large run to resume it would cost minutes."""
    with open(path, "rb") as f:
        head = f.read(64).lstrip()
        f.seek(max(0, os.fstat(f.fileno()).st_size - 16))
        tail = f.read().rstrip()
    return head.startswith(b"{") and b'"format"' in head and tail.endswith(b"}")


def _remove_stale_temp_files(run_dir: Path) -> None:
    """Temporary files a killed run left mid-write: no writer owns them any more. Only SimLab's own (regular
    files named as it names them), never another file of the folder."""
    for folder in (run_dir, run_dir / EPISODES_DIR):
        for entry in os.scandir(folder):
            if TEMP_NAME.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                Path(entry.path).unlink(missing_ok=True)


def _record_runtime(writer: RunWriter, runtime: Mapping[str, Any]) -> None:
    """Note in ``run.json`` how this session plays the run (replaced atomically; the config is untouched)."""
    path = writer.path / RUN_FILE
    obj = read_json(path)
    if obj.get("runtime") != dict(runtime):
        write_json_atomic(path, {**obj, "runtime": dict(runtime)}, 2, within=writer.path)


class _ThreadPool:
    """The local executor: ``play`` (one planned episode) on a pool of ``concurrency`` threads and, with ``save``,
    each played episode's file written on a second pool as large, so the thread that played it takes the next
    episode at once: at concurrency 64 writing a file (fsynced, a dozen system calls each waiting for the
    interpreter lock) took 50-70 ms of an episode's 550. A future is done once its episode's file is."""

    def __init__(
        self,
        play: Callable[[Planned], Episode | None],
        concurrency: int,
        save: Callable[[Episode], None] | None = None,
    ) -> None:
        self.play, self.save = play, save
        self.pool = ThreadPoolExecutor(concurrency, thread_name_prefix="simlab-episode")
        self.savers = ThreadPoolExecutor(concurrency, thread_name_prefix="simlab-save") if save else None

    def submit(self, item: Planned) -> Future[Episode | None]:
        played = self.pool.submit(self.play, item)
        if self.savers is None:
            return played
        saved: Future[Episode | None] = Future()
        played.add_done_callback(lambda done: self._hand_on(done, saved))
        return saved

    def _hand_on(self, played: Future[Episode | None], saved: Future[Episode | None]) -> None:
        """``played``'s episode to a saver (in the thread that played it); ``saved`` fails as it did, or when
        the savers are shut down (the batch is being abandoned)."""
        assert self.savers is not None
        try:
            self.savers.submit(self._write, played, saved)
        except RuntimeError as exc:
            saved.set_exception(exc)

    def _write(self, played: Future[Episode | None], saved: Future[Episode | None]) -> None:
        assert self.save is not None
        try:
            episode = played.result()
            if episode is not None:
                self.save(episode)
        except BaseException as exc:  # the batch collects it from ``saved`` as from an episode's own future
            saved.set_exception(exc)
            return
        saved.set_result(episode)

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        self.pool.shutdown(wait=wait, cancel_futures=cancel_futures)
        if self.savers is not None:
            self.savers.shutdown(wait=wait, cancel_futures=cancel_futures)


class _Batch:
    """Plays planned episodes on a pool (threads or Ray); the calling thread hands each finished one to ``write``."""

    def __init__(
        self,
        family: WorldFamily,
        config: Mapping[str, Any],
        registry: Registry | None,
        timeout: float | None,
        stop: threading.Event | None,
        executor: str = "local",
        save: Callable[[Episode], None] | None = None,
        processes: int = 1,
        run_dir: Path | None = None,
    ) -> None:
        self.family, self.config, self.registry, self.timeout = family, config, registry, timeout
        self.executor, self.processes, self.run_dir = executor, processes, run_dir
        self.save = save  # writes an episode's file beside the pool that played it (the index stays with the caller)
        self.stop = stop if stop is not None else threading.Event()
        self.halt = threading.Event()  # an episode failed, or a model endpoint did: start no more
        self.abort = threading.Event()  # the caller is gone: episodes in flight end at their next step
        self.error: Exception | None = None
        self.infrastructure: InfrastructureError | None = None  # the first endpoint failure

    def stopping(self) -> bool:
        return self.stop.is_set() or self.halt.is_set()

    def pool(self, concurrency: int) -> EpisodePool:
        """Where the episodes are played: a thread pool, worker processes, or Ray tasks (imported only when
        asked for)."""
        if self.processes > 1 and concurrency > 1 and self.run_dir is not None:
            from simlab.runner.process_pool import ProcessEpisodePool

            return ProcessEpisodePool(
                self.config,
                self.registry,
                self.timeout,
                concurrency,
                self.processes,
                self.run_dir,
                self.stopping,
                on_episode=self.seen,
            )
        if self.executor == "ray":
            from simlab.runner.ray_executor import RayEpisodePool

            return RayEpisodePool(
                self.config, self.registry, self.timeout, concurrency, self.stopping, on_episode=self.seen
            )
        return _ThreadPool(self._play_and_watch, concurrency, self.save)

    def seen(self, episode: Episode) -> None:
        """An episode ended (in the thread that played it): after an endpoint failure, start no more at once."""
        if ended_by_infrastructure(episode):
            self.halt.set()

    def _play_and_watch(self, item: Planned) -> Episode | None:
        episode = self.play_one(item)
        if episode is not None:
            self.seen(episode)
        return episode

    def play(
        self,
        todo: Sequence[Planned],
        concurrency: int,
        write: Callable[[Sequence[Episode]], None],
        started: Callable[[], object] | None = None,
    ) -> None:
        """Play ``todo`` with at most ``2 * concurrency`` episodes submitted at a time (so stopping is cheap).
        Episodes that finish together are handed to ``write`` at once, in plan order (one worker: exactly the
        plan order).
        ``started`` is called once the pool is up and the first episodes are submitted (a pool that cannot
        start has changed nothing; what ``started`` does overlaps their first steps)."""
        items = enumerate(todo)
        pool = self.pool(concurrency)
        pending: dict[Future[Episode | None], int] = {}
        try:
            while True:
                pending.update(self._submit(pool, items, 2 * concurrency - len(pending)))
                if started is not None:
                    started()
                    started = None
                if not pending:
                    break
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                episodes = [self._collect(future) for future in sorted(finished, key=pending.__getitem__)]
                for future in finished:
                    del pending[future]
                write([episode for episode in episodes if episode is not None])
        except BaseException:
            self.abort.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        if self.error is not None:
            raise self.error
        if self.infrastructure is not None:
            raise self.infrastructure

    def _submit(
        self, pool: EpisodePool, items: Iterator[tuple[int, Planned]], room: int
    ) -> dict[Future[Episode | None], int]:
        """Up to ``room`` more episodes submitted, each mapped to its place in the plan."""
        out: dict[Future[Episode | None], int] = {}
        while len(out) < room and not self.stopping():
            k, item = next(items, (-1, None))
            if item is None:
                break
            out[pool.submit(item)] = k
        return out

    def _collect(self, future: Future[Episode | None]) -> Episode | None:
        """The episode a finished future played, to write; None when it failed (noted) or was stopped."""
        try:
            episode = future.result()
        except Exception as exc:  # an agent or world failed: start no more, write the others, then raise it
            self.error = self.error or exc
            self.halt.set()
            return None
        if episode is not None and ended_by_infrastructure(episode):
            self.halt.set()
            if self.infrastructure is None:
                self.infrastructure = InfrastructureError.from_json(dict(episode.summary["infrastructure"]))
        return episode

    def play_one(self, item: Planned) -> Episode | None:
        """One episode with its own world and agents (in a worker thread); None when stopped before it began."""
        if self.stopping():
            return None
        return play_planned(self.family, self.config, item, self.registry, self.timeout, cancel=self.abort.is_set)
