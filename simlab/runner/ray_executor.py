"""Play a run's episodes as Ray remote tasks: the same command on one machine or spread across a cluster.

Imported only for ``run(..., executor="ray")`` (``python main.py run --executor ray``); Ray is an optional
dependency (``pip install 'simlab[cluster]'``).

Where the episodes run: with ``$RAY_ADDRESS`` unset a local Ray instance is started for the run (one CPU slot
per ``concurrency``) and shut down at its end; with ``RAY_ADDRESS`` set (e.g. ``ray://head:10001`` or
``head:6379``) the run joins that cluster and leaves it running. A caller that already called ``ray.init``
keeps its own instance (several runs then share one start-up). Every node needs simlab (and the plugins the
run's agents come from) installed in the same Python environment: no code is shipped with the tasks.

Each remote task gets only plain JSON (world name, task, settings, agent specs and settings, episode id, run
seed, timeout, plugin manifests), rebuilds the world family, world and agents in the worker and returns
``episode.to_json()``. Workers never touch the run folder: the driver turns the JSON back into an
:class:`~simlab.core.episode.Episode` and writes it, exactly as with the local thread pool.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from simlab.core.episode import Episode
from simlab.core.errors import ConfigError
from simlab.core.plugins import Plugin, Registry
from simlab.runner.planned import EpisodeQueue, Planned, play_planned
from simlab.worlds import get_family

try:
    import ray
    from ray.exceptions import RayTaskError
except ImportError as exc:  # ray is optional: say how to get it
    raise ConfigError("the ray executor needs ray: pip install 'simlab[cluster]'") from exc

WORKER_KEYS = ("world", "seed", "agents", "settings", "agent_settings")
"""The part of a run config a worker needs to play any of its episodes (not the task list)."""


def start_ray(num_cpus: int) -> bool:
    """Connect to Ray unless already connected; True when this call did (the caller then shuts it down).

    ``$RAY_ADDRESS`` set: join that cluster. Unset: start a local instance with ``num_cpus`` CPU slots.
    """
    if ray.is_initialized():
        return False
    address = os.environ.get("RAY_ADDRESS") or None
    try:
        ray.init(
            address=address,
            num_cpus=None if address else num_cpus,
            include_dashboard=False,
            ignore_reinit_error=True,
            log_to_driver=False,
        )
    except Exception as exc:  # Ray raises many kinds (timeouts, connection, runtime): nothing was played
        where = f"the cluster at RAY_ADDRESS={address}" if address else "a local Ray instance"
        raise ConfigError(f"--executor ray: {where} did not start ({exc}); no episode was played") from None
    return True


def play_remote_json(
    config: Mapping[str, Any], item: Planned, timeout: float | None, plugins: list[dict[str, Any]] | None
) -> dict[str, Any]:
    """One episode played from plain JSON inputs (the body of the remote task; also callable in-process)."""
    registry = None if plugins is None else Registry(plugins={p["name"]: Plugin(**p) for p in plugins})
    return play_planned(get_family(config["world"]), config, item, registry, timeout).to_json()


_play_remote = ray.remote(num_cpus=1, max_retries=0)(play_remote_json)


def plugin_manifests(registry: Registry | None) -> list[dict[str, Any]] | None:
    """The registry's plugin manifests as JSON (None: the workers discover plugins themselves)."""
    if registry is None:
        return None
    return [{**dataclasses.asdict(p), "agents": dict(p.agents)} for p in registry.plugins.values()]


class RayEpisodePool:
    """Episodes as Ray tasks, at most ``concurrency`` in flight; the rest wait on the driver.

    ``submit`` returns at once a future of the episode (None when ``stopping()`` was true before the episode
    began, as with the thread pool); a task's own exception is re-raised as is (not as a RayTaskError).
    ``on_episode`` is called with each finished episode before the next queued one may start (so a model
    endpoint's failure stops the queue at once).
    """

    def __init__(
        self,
        config: Mapping[str, Any],
        registry: Registry | None,
        timeout: float | None,
        concurrency: int,
        stopping: Callable[[], bool],
        on_episode: Callable[[Episode], None] | None = None,
    ) -> None:
        self.config: Mapping[str, Any] = {key: config[key] for key in WORKER_KEYS if key in config}
        self.plugins, self.timeout = plugin_manifests(registry), timeout
        self.concurrency, self.on_episode = concurrency, on_episode
        self.queue = EpisodeQueue(stopping)
        self.running: dict[Any, Future[Episode | None]] = {}  # ObjectRef -> its episode's future
        self.lock = threading.Lock()
        self.owns_ray = start_ray(concurrency)
        self.config_ref: Any = ray.put(self.config)  # shipped once, not with every task (Ray types refs loosely)

    def submit(self, item: Planned) -> Future[Episode | None]:
        """Queue one planned episode; it starts as soon as fewer than ``concurrency`` tasks are running."""
        with self.lock:
            future = self.queue.put(item)
        self._pump()
        return future

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        """Cancel what is queued and running if asked; wait for the rest; stop Ray if this pool started it."""
        if cancel_futures:
            self._cancel_all()
        if wait:
            with self.lock:
                futures = self.queue.futures() + list(self.running.values())
            for future in futures:
                future.exception()
        if self.owns_ray:
            ray.shutdown()

    def _pump(self) -> None:
        """Start queued episodes while there is room (resolving them to None once stopping)."""
        while True:
            with self.lock:
                taken = self.queue.take() if len(self.running) < self.concurrency else None
                if taken is None:
                    return
                item, future = taken
                ref = _play_remote.remote(self.config_ref, item, self.timeout, self.plugins)
                self.running[ref] = future
            ref.future().add_done_callback(functools.partial(self._finished, ref))

    def _finished(self, ref: Any, done: Future[dict[str, Any]]) -> None:
        """A task ended (in a Ray thread): pass its episode or exception on, then start the next."""
        with self.lock:
            future = self.running.pop(ref, None)
        if future is not None:
            episode = _settle(future, done)
            if episode is not None and self.on_episode is not None:
                self.on_episode(episode)
        self._pump()

    def _cancel_all(self) -> None:
        with self.lock:
            queued = self.queue.drain()
            refs = list(self.running)
        for future in queued:
            future.cancel()
        for ref in refs:
            ray.cancel(ref, force=True)


def _settle(future: Future[Episode | None], done: Future[dict[str, Any]]) -> Episode | None:
    """Complete ``future`` from a finished Ray task: the Episode (also returned), or the task's own exception."""
    try:
        episode = Episode.from_json(done.result())
        future.set_result(episode)
        return episode
    except RayTaskError as exc:
        cause = exc.cause if isinstance(exc.cause, Exception) else exc
        future.set_exception(cause)
    except Exception as exc:  # Ray's own failures (worker died, task cancelled...)
        future.set_exception(exc)
    return None
