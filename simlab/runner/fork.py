"""Fork an episode: rebuild the world as it was after a turn, then play on with other agents.

The recorded replies of every step up to the turn are fed back through the world (a message, the private
reasoning and the action each role gave), so the fork continues from exactly that state, history included.
The replayed events are checked against the recording: a world that no longer reproduces it is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simlab.core.episode import Episode
from simlab.core.errors import ConfigError
from simlab.core.events import Event
from simlab.core.world import Agent, Reply, World
from simlab.runner.episode import UNREADABLE, EpisodeRun, apply_reply, play
from simlab.worlds import get_family


def recorded_steps(episode: Episode, turn: int) -> list[tuple[str, Reply]]:
    """(role, reply) for every step whose observation was given at or before ``turn``, in order."""
    steps: list[tuple[str, dict[str, Any]]] = []
    for event in episode.events:
        if event.kind == "observation":
            if event.turn > turn:
                break
            steps.append((event.role or "", {}))
        elif steps and event.role == steps[-1][0] and event.kind in ("message", "reasoning", "action"):
            fields = steps[-1][1]
            if event.kind == "action":
                fields.setdefault("action", event.data.get("action"))
            else:
                fields.setdefault(event.kind, event.data.get("text"))
        elif steps and event.role == steps[-1][0] and event.kind == "protocol_error" and _gave_up(event):
            steps[-1][1].setdefault("problem", event.data.get("message"))
    return [(role, Reply(**fields)) for role, fields in steps]


def _gave_up(event: Event) -> bool:
    return event.data.get("code") == UNREADABLE


def fork_world(episode: Episode, turn: int) -> tuple[World, list[Event]]:
    """A fresh world of the episode's task, advanced through its recorded steps up to ``turn``."""
    if not 0 <= turn <= episode.last_turn:
        raise ConfigError(f"{episode.episode_id}: turn {turn} is outside 0..{episode.last_turn}")
    family = get_family(episode.world)
    world = family.world(episode.task, episode.settings)
    events = world.reset(episode.seed)
    for role, reply in recorded_steps(episode, turn):
        if world.finished or world.agent_selection != role:
            raise ConfigError(f"{episode.episode_id}: the world no longer replays this recording at {role}'s step")
        observation = world.observe(role)
        events.append(observation.to_event())
        events.extend(apply_reply(world, role, observation.turn, reply))
    replayed = [e.to_json() for e in events if e.kind != "observation"]
    recorded = [e.to_json() for e in episode.events if e.kind != "observation"][: len(replayed)]
    if replayed != recorded:
        raise ConfigError(f"{episode.episode_id}: replaying up to turn {turn} does not give the recorded events")
    return world, events


def fork_run(
    episode: Episode, turn: int, agents: Mapping[str, Agent], specs: Mapping[str, str], episode_id: str | None = None
) -> EpisodeRun:
    """An :class:`EpisodeRun` that continues ``episode`` from ``turn`` with ``agents`` (not started yet); its
    episode holds the shared prefix too, is called ``ID-forkTURN`` unless named, and names its origin in
    ``source``."""
    world, prefix = fork_world(episode, turn)
    fork_id = episode_id or f"{episode.episode_id}-fork{turn}"
    playing = EpisodeRun(world, agents, fork_id, 0, specs, resume_from=(episode.seed, prefix))
    playing.episode.source = {"forked_from": episode.episode_id, "turn": turn}
    return playing


def fork_episode(
    episode: Episode, turn: int, agents: Mapping[str, Agent], specs: Mapping[str, str], episode_id: str | None = None
) -> Episode:
    """Play ``episode`` on from ``turn`` with ``agents`` to the end (see :func:`fork_run`)."""
    return play(fork_run(episode, turn, agents, specs, episode_id))
