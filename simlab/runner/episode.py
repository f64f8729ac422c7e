"""Run one episode: the AEC loop between a world and its agents, recorded as events."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from simlab.core import events as ev
from simlab.core.deadline import Deadline, EpisodeTimedOut, running_until
from simlab.core.episode import Episode
from simlab.core.errors import ConfigError, InfrastructureError
from simlab.core.events import Event
from simlab.core.limits import MAX_TURNS
from simlab.core.records import check_summary
from simlab.core.seeding import stable_seed
from simlab.core.usage import model_usage
from simlab.core.world import Agent, Reply, World

STEPS_PER_TURN = 1_000
"""The most steps a world may take without its turn advancing: far past any protocol's (a blocks turn with
every director speaking and every simulate call made is 24), so more means a world that never ends."""
MAX_STEPS = STEPS_PER_TURN * MAX_TURNS
"""The most steps of an episode: every turn of the largest budget at the per-turn bound."""

UNREADABLE = "unreadable_reply"
"""The code of the protocol error recorded when a role's reply could not be read and its give-up rule acted."""


class EpisodeCancelled(Exception):
    """Raised by :func:`run_episode` when its ``cancel`` check says to drop the episode unfinished."""


def episode_seed(run_seed: int, episode_id: str) -> int:
    """Every random choice of an episode flows from this: the run seed and the episode id, stably hashed."""
    return stable_seed("episode", run_seed, episode_id)


class EpisodeRun:
    """One episode being played: the AEC loop, one agent action at a time, recorded as it goes.

    This is the only episode driver: :func:`run_episode` (the CLI, batch runs, Ray workers) loops it to the
    end, the app's live play and fork step it from a worker thread between pauses. ``specs`` maps each role
    to the agent spec string recorded in the episode (``"oracle"``, ``"human"``...). ``resume_from`` (seed,
    events) continues a world already advanced by :mod:`simlab.runner.fork` instead of resetting it.

    When an agent raises :class:`~simlab.core.errors.InfrastructureError` (its model endpoint failed),
    :meth:`step` keeps the act's raw records, notes the failure in ``infrastructure`` and re-raises it; the
    episode is then over and :meth:`finish` records it as an abort with that ``infrastructure`` field. When
    an agent raises :class:`~simlab.core.deadline.EpisodeTimedOut` (the episode's deadline passed during its
    act) :meth:`step` keeps the act's raw records and re-raises it.
    """

    def __init__(
        self,
        world: World,
        agents: Mapping[str, Agent],
        episode_id: str,
        run_seed: int,
        specs: Mapping[str, str] | None = None,
        resume_from: tuple[int, list[Event]] | None = None,
        max_steps: int = MAX_STEPS,
    ) -> None:
        missing = [role for role in world.roles if role not in agents]
        if missing:
            raise ConfigError(f"no agent for role(s) {', '.join(missing)}")
        self.world, self.agents, self.max_steps = world, dict(agents), max_steps
        self.resume_from = resume_from
        seed = resume_from[0] if resume_from is not None else episode_seed(run_seed, episode_id)
        self.episode = Episode(episode_id, world.family, seed, world.task, world.settings, dict(specs or {}))
        self.steps = 0
        self._turn_steps = (0, 0)  # (turn, steps taken in it): a world whose turn never advances never ends
        self.replies: dict[str, dict[str, int]] = {}  # role -> acts and unreadable replies (give-ups)
        self.infrastructure: dict[str, Any] | None = None  # the endpoint failure that ended the episode

    @property
    def finished(self) -> bool:
        return self.world.finished or self.infrastructure is not None

    def start(self) -> list[Event]:
        """Reset the world (or take the fork's prefix) and every agent; returns the set-up events."""
        seed = self.episode.seed
        events = self.world.reset(seed) if self.resume_from is None else list(self.resume_from[1])
        for event in events:  # a fork's prefix: its acts count like the ones played here
            if event.kind == "observation" and event.role:
                self.replies.setdefault(event.role, {"acts": 0, "unreadable": 0})["acts"] += 1
            elif event.kind == "protocol_error" and event.data.get("code") == UNREADABLE and event.role:
                self.replies.setdefault(event.role, {"acts": 0, "unreadable": 0})["unreadable"] += 1
        for role, agent in self.agents.items():
            agent.reset(stable_seed("agent", seed, role), role, self.world.task)
        self.episode.events.extend(events)
        return events

    def step(self, on_observation: Callable[[Event], None] | None = None) -> tuple[list[Event], list[dict[str, Any]]]:
        """The role in turn observes and acts; returns the events its act caused and its raw model records.

        The observation event is recorded (and handed to ``on_observation``) before the agent acts, so a
        watcher sees what a slow agent or a person is answering."""
        if self.infrastructure is not None:
            raise RuntimeError(f"{self.episode.episode_id}: the episode ended when a model endpoint failed")
        role = self.world.agent_selection
        if role is None:
            raise RuntimeError(f"{self.episode.episode_id}: the episode is over; nothing may act")
        observation = self.world.observe(role)
        seen = observation.to_event(text_only=bool(getattr(self.agents[role], "text_only", False)))
        self.episode.events.append(seen)
        if on_observation is not None:
            on_observation(seen)
        try:
            reply = self.agents[role].act(observation)
        except InfrastructureError as exc:
            self._keep_raw(observation.turn, role, exc.records)
            exc.role = exc.role or role
            self.infrastructure = exc.to_json()
            raise
        except EpisodeTimedOut as exc:  # the cut call is recorded; the caller ends the episode as timed out
            self._keep_raw(observation.turn, role, exc.records)
            raise
        raw = [{"turn": observation.turn, "role": role, **dict(r)} for r in reply.raw]
        events = apply_reply(self.world, role, observation.turn, reply)
        self._count(role, reply)
        self.episode.events.extend(events)
        self.episode.raw.extend(raw)
        self._guard(observation.turn)
        return events, raw

    def _guard(self, turn: int) -> None:
        """RuntimeError (a world's bug) past ``max_steps`` or :data:`STEPS_PER_TURN` steps in one turn."""
        self.steps += 1
        same = self._turn_steps[1] + 1 if self._turn_steps[0] == turn else 1
        self._turn_steps = (turn, same)
        if self.world.finished:
            return
        if self.steps >= self.max_steps or same >= STEPS_PER_TURN:
            where = f"{self.steps} steps" if same < STEPS_PER_TURN else f"{same} steps of turn {turn}"
            raise RuntimeError(f"{self.episode.episode_id}: the world did not finish within {where}")

    def _keep_raw(self, turn: int, role: str, records: Iterable[Mapping[str, Any]]) -> None:
        """The raw records of an act that raised, kept in the episode."""
        self.episode.raw.extend({"turn": turn, "role": role, **dict(r)} for r in records)

    def _count(self, role: str, reply: Reply) -> None:
        counts = self.replies.setdefault(role, {"acts": 0, "unreadable": 0})
        counts["acts"] += 1
        counts["unreadable"] += reply.problem is not None

    def finish(self, stopped: bool = False, timeout: float | None = None) -> Episode:
        """The episode with its summary: the world's own once finished; otherwise an abort, either ended by
        a model endpoint's failure (``infrastructure``), ``stopped`` by the user or cut off by ``timeout``.
        Adds the agents' specs and model usage."""
        summary = self.world.summary()
        if self.infrastructure is not None:
            summary = {**summary, "outcome": "abort", "infrastructure": dict(self.infrastructure)}
        elif not self.world.finished:
            summary = {**summary, "outcome": "abort", "stopped": True} if stopped else timed_out(summary, timeout)
        summary["agents"] = dict(self.episode.agents)
        summary["replies"] = {role: dict(counts) for role, counts in sorted(self.replies.items())}
        if self.episode.raw:
            summary["usage"] = model_usage(self.episode.raw)
        check_summary(summary, f"world {self.episode.world!r}")
        self.episode.summary = summary
        return self.episode


def apply_reply(world: World, role: str, turn: int, reply: Reply) -> list[Event]:
    """``world.step(reply)`` without the reply's private reasoning, which becomes the role's ``reasoning``
    event here, for every family: no world can put it in a message, an action, another role's observation, a
    metric or a leak count. An ``unreadable_reply`` protocol error comes first when the reply is a give-up
    rule's (its ``problem`` says why the role's own reply could not be read)."""
    events = world.step(replace(reply, reasoning=None) if reply.reasoning is not None else reply)
    if reply.reasoning:
        events.insert(0, ev.reasoning(turn, role, reply.reasoning))
    if reply.problem is not None:
        events.insert(0, ev.protocol_error(turn, role, UNREADABLE, reply.problem))
    return events


def run_episode(
    world: World,
    agents: Mapping[str, Agent],
    episode_id: str,
    run_seed: int,
    specs: Mapping[str, str] | None = None,
    max_steps: int = MAX_STEPS,
    timeout: float | None = None,
    cancel: Callable[[], bool] | None = None,
    resume_from: tuple[int, list[Event]] | None = None,
) -> Episode:
    """Play ``world`` to the end with one agent per role and return the recorded episode (see
    :class:`EpisodeRun`; ``max_steps`` and :data:`STEPS_PER_TURN` guard against a world whose protocol never ends).

    ``timeout`` (seconds of wall-clock time) and ``cancel`` are checked between steps; the timeout also
    reaches into the steps (:mod:`simlab.core.deadline`): a live-model agent cuts its call in flight when it
    passes. Past the timeout the episode ends as an abort (see :func:`timed_out`) with the events recorded so far;
    when ``cancel()`` is true, :class:`EpisodeCancelled` is raised and nothing is returned. When a model
    endpoint fails (InfrastructureError) the episode ends there too, as an abort whose summary says so in
    ``infrastructure``; it is returned, not raised, so the caller decides what an endpoint failure means.
    """
    playing = EpisodeRun(world, agents, episode_id, run_seed, specs, resume_from, max_steps)
    return play(playing, timeout, cancel)


def play(playing: EpisodeRun, timeout: float | None = None, cancel: Callable[[], bool] | None = None) -> Episode:
    """Start ``playing`` and step it to the end (see :func:`run_episode` for ``timeout`` and ``cancel``)."""
    deadline = None if timeout is None else Deadline.after(timeout)
    with running_until(deadline):
        playing.start()
        while not playing.finished:
            if cancel is not None and cancel():
                raise EpisodeCancelled(playing.episode.episode_id)
            if deadline is not None and deadline.left() < 0:
                break
            try:
                playing.step()
            except (InfrastructureError, EpisodeTimedOut):
                break  # recorded by the step: finish() marks the episode
    return playing.finish(timeout=timeout)


def timed_out(summary: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    """The summary of an episode cut off by its timeout: outcome ``abort``, the timeout (seconds) in
    ``timeout`` and one more error than the world counted (the timeout itself)."""
    errors = summary.get("errors")
    return {**summary, "outcome": "abort", "errors": (errors if isinstance(errors, int) else 0) + 1, "timeout": timeout}
