"""One planned episode of a run, played from the run's config: the work every executor does.

Kept apart from :mod:`simlab.runner.batch` (which plans, schedules and writes) so an executor that plays
episodes elsewhere (:mod:`simlab.runner.ray_executor`'s workers) needs only this, and the batch module alone
chooses the executor: the dependency runs one way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from simlab.agents.resolve import make_agents
from simlab.core.episode import Episode
from simlab.core.family import WorldFamily
from simlab.core.plugins import AgentSpec, Registry
from simlab.runner.episode import run_episode

Planned = tuple[str, dict[str, Any], int]
"""(episode id, task, repeat), as planned by :func:`simlab.runner.batch.episode_ids`."""


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
