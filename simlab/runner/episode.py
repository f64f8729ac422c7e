"""Run one episode: the AEC loop between a world and its agents, recorded as events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simlab.core.episode import Episode
from simlab.core.seeding import stable_seed
from simlab.core.world import Agent, World


def episode_seed(run_seed: int, episode_id: str) -> int:
    """Every random choice of an episode flows from this: the run seed and the episode id, stably hashed."""
    return stable_seed("episode", run_seed, episode_id)


def run_episode(
    world: World,
    agents: Mapping[str, Agent],
    episode_id: str,
    run_seed: int,
    specs: Mapping[str, str] | None = None,
    max_steps: int = 10_000,
) -> Episode:
    """Play ``world`` to the end with one agent per role and return the recorded episode.

    ``specs`` maps each role to the agent spec string recorded in the episode (``"oracle"``...).
    ``max_steps`` guards against a world whose protocol never ends.
    """
    seed = episode_seed(run_seed, episode_id)
    events = world.reset(seed)
    for role, agent in agents.items():
        agent.reset(stable_seed("agent", seed, role), role, world.task)
    raw: list[dict[str, Any]] = []
    steps = 0
    while not world.finished:
        role = world.agent_selection
        assert role is not None
        observation = world.observe(role)
        events.append(observation.to_event())
        reply = agents[role].act(observation)
        raw.extend({"turn": observation.turn, "role": role, **dict(r)} for r in reply.raw)
        events.extend(world.step(reply))
        steps += 1
        if steps >= max_steps:
            raise RuntimeError(f"{episode_id}: the world did not finish within {max_steps} steps")
    summary = world.summary()
    summary["agents"] = dict(specs or {})
    return Episode(
        episode_id=episode_id,
        world=world.family,
        seed=seed,
        task=world.task,
        settings=world.settings,
        agents=dict(specs or {}),
        events=events,
        raw=raw,
        summary=summary,
    )
