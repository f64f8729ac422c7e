"""Run one episode: the AEC loop between a world and its agents, recorded as events."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.core.seeding import stable_seed
from simlab.core.world import Agent, World


class EpisodeCancelled(Exception):
    """Raised by :func:`run_episode` when its ``cancel`` check says to drop the episode unfinished."""


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
    timeout: float | None = None,
    cancel: Callable[[], bool] | None = None,
    resume_from: tuple[int, list[Event]] | None = None,
) -> Episode:
    """Play ``world`` to the end with one agent per role and return the recorded episode.

    ``specs`` maps each role to the agent spec string recorded in the episode (``"oracle"``...).
    ``max_steps`` guards against a world whose protocol never ends.

    ``timeout`` (seconds of wall-clock time) and ``cancel`` are checked between steps, never inside one: a
    step stuck in an agent call ends when the call does (a live-model agent's own HTTP timeout bounds it).
    Past the timeout the episode ends as an abort (see :func:`timed_out`) with the events recorded so far;
    when ``cancel()`` is true, :class:`EpisodeCancelled` is raised and nothing is returned.

    ``resume_from`` (seed, events) continues a world already advanced by :mod:`simlab.runner.fork` instead
    of resetting it; the episode keeps that seed and starts with those events.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    if resume_from is None:
        seed = episode_seed(run_seed, episode_id)
        events = world.reset(seed)
    else:
        seed, events = resume_from[0], list(resume_from[1])
    for role, agent in agents.items():
        agent.reset(stable_seed("agent", seed, role), role, world.task)
    raw: list[dict[str, Any]] = []
    steps = 0
    while not world.finished:
        if cancel is not None and cancel():
            raise EpisodeCancelled(episode_id)
        if deadline is not None and time.monotonic() > deadline:
            break
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
    summary = world.summary() if world.finished else timed_out(world.summary(), timeout)
    summary["agents"] = dict(specs or {})
    if raw:
        summary["usage"] = model_usage(raw)
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


def timed_out(summary: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    """The summary of an episode cut off by its timeout: outcome ``abort``, the timeout (seconds) in
    ``timeout`` and one more error than the world counted (the timeout itself)."""
    errors = summary.get("errors")
    return {**summary, "outcome": "abort", "errors": (errors if isinstance(errors, int) else 0) + 1, "timeout": timeout}


def model_usage(raw: list[dict[str, Any]]) -> dict[str, float]:
    """Totals of an episode's model calls: requests, prompt/completion/total tokens and, when the agents were
    given prices, cost. Read from the raw stream's ``usage`` and ``cost`` fields."""
    totals = {"requests": float(len(raw)), "prompt_tokens": 0.0, "completion_tokens": 0.0, "total_tokens": 0.0}
    cost = 0.0
    priced = False
    for record in raw:
        usage = record.get("usage") or {}
        for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
            totals[name] += float(usage.get(name) or 0)
        if record.get("cost") is not None:
            cost += float(record["cost"])
            priced = True
    if priced:
        totals["cost"] = round(cost, 8)
    return totals
