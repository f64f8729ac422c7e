"""One planned episode of a run, played from the run's config: the work every executor does.

Kept apart from :mod:`simlab.runner.batch` (which plans, schedules and writes) so an executor that plays
episodes elsewhere (:mod:`simlab.runner.ray_executor`'s workers) needs only this, and the batch module alone
chooses the executor: the dependency runs one way.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from simlab.agents.resolve import make_agents
from simlab.core.episode import Episode
from simlab.core.family import WorldFamily
from simlab.core.plugins import AgentSpec, Registry
from simlab.runner.episode import run_episode

Planned = tuple[str, dict[str, Any], int]
"""(episode id, task, repeat), as planned by :func:`simlab.runner.batch.episode_ids`."""


class EpisodeQueue:
    """The episodes a pool was given and has not started yet, each with the future it returned for it. Not
    locked: the pool holds its own lock around every call. ``stopping()`` true resolves what is left to None."""

    def __init__(self, stopping: Callable[[], bool]) -> None:
        self.stopping = stopping
        self._items: deque[tuple[Planned, Future[Episode | None]]] = deque()

    def put(self, item: Planned) -> Future[Episode | None]:
        """Queue ``item``; its future."""
        future: Future[Episode | None] = Future()
        self._items.append((item, future))
        return future

    def take(self) -> tuple[Planned, Future[Episode | None]] | None:
        """The next episode to start, its future marked running; those cancelled are skipped, and once
        ``stopping()`` each is resolved to None instead. None when nothing is left to start."""
        while self._items:
            item, future = self._items.popleft()
            if self.stopping() or not future.set_running_or_notify_cancel():
                if not future.cancelled():
                    future.set_result(None)
                continue
            return item, future
        return None

    def drain(self) -> list[Future[Episode | None]]:
        """Empty the queue; the futures of what it held (for the caller to cancel or fail)."""
        futures = [future for _, future in self._items]
        self._items.clear()
        return futures

    def futures(self) -> list[Future[Episode | None]]:
        """The futures of what is queued."""
        return [future for _, future in self._items]

    def __bool__(self) -> bool:
        return bool(self._items)


def agent_specs(config: Mapping[str, Any]) -> dict[str, AgentSpec]:
    """The parsed agent spec of every role of a run config (its ``agents`` table, role -> spec)."""
    return {role: AgentSpec.parse(f"{role}={spec}") for role, spec in config["agents"].items()}


def play_planned(
    family: WorldFamily,
    config: Mapping[str, Any],
    item: Planned,
    registry: Registry | None,
    timeout: float | None,
    cancel: Callable[[], bool] | None = None,
) -> Episode:
    """One episode with its own world and agents, built from the run config (the repeat joins the settings)."""
    episode_id, task, repeat = item
    settings = {**config["settings"], "repeat": repeat}
    world = family.world(task, settings)
    agents = make_agents(family, agent_specs(config), settings, registry, config.get("agent_settings") or {})
    seed, recorded = int(config["seed"]), config["agents"]
    episode = run_episode(world, agents, episode_id, seed, recorded, timeout=timeout, cancel=cancel)
    episode.summary["repeat"] = repeat
    return episode
