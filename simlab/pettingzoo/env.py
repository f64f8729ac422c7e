"""Any SimLab world as a PettingZoo AEC environment, recorded as an ordinary SimLab episode.

The environment drives the world through the one episode driver, :class:`~simlab.runner.episode.EpisodeRun`:
each ``step(action)`` turns the action into the :class:`Reply` the role's spaces say it stands for and hands
it to the driver as the acting role's agent, so the world judges it exactly as it judges a model's (an illegal
move gets the world's error, recorded, and the protocol goes on or ends), and the episode recorded is the one
``save`` writes and the app opens. Agents are the family's roles; every role shares the team's reward (the
change of the family's reward value, :class:`~simlab.pettingzoo.spaces.WorldSpaces`); the world's own end
(success, abort, too many mistakes) terminates every role and its turn budget truncates them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.conversions import aec_to_parallel

from simlab.core.episode import Episode
from simlab.core.errors import ConfigError
from simlab.core.events import Event
from simlab.core.plugins import load_target
from simlab.core.recording import save_episode
from simlab.core.world import Observation, Reply, World
from simlab.pettingzoo.spaces import RoleSpaces, WorldSpaces
from simlab.runner.episode import EpisodeRun
from simlab.worlds import WorldFamily, get_family

AGENT_SPEC = "pettingzoo"
"""The agent spec recorded for every role played through the adapter."""
RENDER_MODES = ("human", "ansi", "rgb_array")
RENDER_SIZE = (800, 600)
"""Width and height of ``render()``'s picture in ``rgb_array`` mode."""


class _Handed:
    """The agent of every role: it answers with the reply the environment was just handed."""

    text_only = False

    def __init__(self) -> None:
        self.reply: Reply | None = None

    def reset(self, seed: int, role: str, task: Mapping[str, Any]) -> None:
        self.reply = None

    def act(self, observation: Observation) -> Reply:
        reply, self.reply = self.reply, None
        if reply is None:
            raise RuntimeError("the PettingZoo environment acts only inside step()")
        return reply


class SimLabEnv(AECEnv[str, dict[str, Any], dict[str, Any]]):
    """One world family's task as a PettingZoo ``AECEnv`` (see the module's docstring and docs/PETTINGZOO.md).

    ``reset(seed=s)`` starts episode ``TASK-e0`` of run seed ``s`` (SimLab's seeding: the same seed gives the
    same episode, in any process); a reset without a seed starts the next episode of the same run seed."""

    def __init__(
        self,
        family: WorldFamily,
        task: Mapping[str, Any],
        settings: Mapping[str, Any] | None = None,
        render_mode: str | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ConfigError(f"render_mode {render_mode!r}: expected one of {', '.join(RENDER_MODES)}")
        if family.spaces is None:
            raise ConfigError(f"world {family.name!r} declares no PettingZoo spaces (WorldFamily.spaces)")
        family.tasks.validate(task)
        self.family, self.task = family, dict(task)
        self.settings = family.check_settings(settings or {})
        declared: WorldSpaces = load_target(family.spaces)(self.task, self.settings)
        missing = [role for role in family.roles if role not in declared.roles]
        if missing:
            raise ConfigError(f"{family.spaces} gives no spaces for role(s) {', '.join(missing)}")
        self.declared = declared
        self.roles: dict[str, RoleSpaces] = {role: declared.roles[role] for role in family.roles}
        self.possible_agents = list(family.roles)
        self._actions = {role: spec.action_space() for role, spec in self.roles.items()}
        self._observations = {role: spec.observation_space() for role, spec in self.roles.items()}
        self.metadata = {
            "name": f"simlab_{family.name}",
            "render_modes": list(RENDER_MODES),
            "is_parallelizable": declared.parallel,
        }
        self.render_mode = render_mode
        self.run_seed, self.episodes = seed, 0
        self._agent = _Handed()
        self._run: EpisodeRun | None = None
        self._seen: dict[str, dict[str, Any]] = {}  # agent -> its observation since the last step
        self._metrics: dict[str, float] = {}  # every score of the episode so far, the latest of each
        self._value = 0.0  # the reward value after the last step

    # ---- spaces ---------------------------------------------------------------------------------------
    def observation_space(self, agent: str) -> Any:
        return self._observations[agent]

    def action_space(self, agent: str) -> Any:
        return self._actions[agent]

    # ---- the AEC loop ---------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self.run_seed, self.episodes = seed, 0
        episode_id = f"{self.task.get('id') or 'task'}-e{self.episodes}"
        self.episodes += 1
        world = self.family.world(self.task, self.settings)
        agents = dict.fromkeys(self.family.roles, self._agent)
        specs = dict.fromkeys(self.family.roles, AGENT_SPEC)
        self._run = EpisodeRun(world, agents, episode_id, self.run_seed, specs)
        events = self._run.start()
        self._metrics = {}
        self._reward_value(events)  # the scores before anyone acts; the first step's reward counts from 0
        self._value = 0.0
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._seen = {}
        self._skip_agent_selection = None
        self.agent_selection = world.agent_selection or self.agents[0]
        self._set_infos(self._info(None, events))
        self._end_if_finished()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        space = self._actions[agent]
        if not space.contains(action):
            keys = ", ".join(space.spaces)
            raise ValueError(f"{agent}'s action is not in action_space({agent!r}) (a dict of {keys}): {action!r:.200}")
        playing = self._playing()
        self._agent.reply = self.roles[agent].reply(action, playing.world.observe(agent))
        events, _raw = playing.step()
        self._seen = {}
        self._cumulative_rewards[agent] = 0.0
        value = self._reward_value(events)
        self.rewards = dict.fromkeys(self.agents, value - self._value)
        self._value = value
        self._accumulate_rewards()
        self.agent_selection = playing.world.agent_selection or agent
        self._set_infos(self._info(agent, events))
        self._end_if_finished()

    def observe(self, agent: str) -> dict[str, Any]:
        """What ``agent`` is given now (its text and pictures), computed once per step."""
        if agent not in self._seen:
            self._seen[agent] = self.roles[agent].observe(self._playing().world.observe(agent))
        return self._seen[agent]

    def _end_if_finished(self) -> None:
        world = self._playing().world
        if not world.finished:
            return
        ending = self.terminations if world.done else self.truncations
        ending.update(dict.fromkeys(self.agents, True))
        summary = self._playing().finish().summary
        for info in self.infos.values():
            info["summary"] = summary
        self._deads_step_first()

    # ---- rewards and infos ----------------------------------------------------------------------------
    def _reward_value(self, events: list[Event]) -> float:
        for event in events:
            if event.kind == "score":
                self._metrics.update(event.data.get("metrics") or {})
        return float(self.declared.reward(self._metrics))

    def _info(self, agent: str | None, events: list[Event]) -> dict[str, Any]:
        """What a step did: who acted, the events the action caused (as recorded), the engine's result (None
        when the world judged nothing), the protocol errors, and every score so far."""
        results = [e.data for e in events if e.kind == "result"]
        return {
            "role": agent,
            "turn": self._playing().world.turn,
            "events": [e.to_json() for e in events],
            "result": results[-1] if results else None,
            "errors": [e.data for e in events if e.kind == "protocol_error"],
            "metrics": dict(self._metrics),
        }

    def _set_infos(self, info: dict[str, Any]) -> None:
        """Every agent gets the step's info; the one to act next also its action mask, when its role has one."""
        self.infos = {agent: dict(info) for agent in self.agents}
        mask = self.roles[self.agent_selection].mask
        world = self._playing().world
        if mask is not None and not world.finished:
            self.infos[self.agent_selection]["action_mask"] = mask(world.observe(self.agent_selection))

    # ---- the recording --------------------------------------------------------------------------------
    @property
    def world(self) -> World:
        """The world being played (read it, never step it: an oracle baseline may look at its state)."""
        return self._playing().world

    @property
    def episode(self) -> Episode:
        """The episode recorded so far (its summary is filled when it ends, or by :meth:`save`)."""
        return self._playing().episode

    def save(self, path: str | Path) -> Episode:
        """Write the episode played so far as an ordinary SimLab episode file (``python main.py gui PATH``
        opens it) and return it as written. An unfinished episode is written as stopped by the user (outcome
        ``abort``) and goes on being played."""
        playing = self._playing()
        if playing.world.finished:
            save_episode(path, playing.episode)
            return playing.episode
        stopped = replace(playing.finish(stopped=True), events=list(playing.episode.events))
        playing.episode.summary = {}  # still playing: the summary is made when the episode ends
        save_episode(path, stopped)
        return stopped

    def _playing(self) -> EpisodeRun:
        if self._run is None:
            raise RuntimeError("call reset() before using the environment")
        return self._run

    # ---- rendering ------------------------------------------------------------------------------------
    def render(self) -> Any:
        """``rgb_array``: the family's picture of the current turn (the exports' big picture: its 3D scene, or
        its turn pictures); ``ansi``: the turn in words; ``human``: those words printed. None without a mode."""
        if self.render_mode == "rgb_array":
            from simlab.render.episode_pictures import main_picture

            picture, _scene = main_picture(self.episode, self.episode.last_turn, RENDER_SIZE)
            return np.asarray(picture.convert("RGB"), dtype=np.uint8)
        if self.render_mode in ("ansi", "human"):
            words = text_view(self.episode)
            if self.render_mode == "ansi":
                return words
            print(words)
        return None

    def close(self) -> None:
        """Nothing to release: pictures are rendered off screen, one at a time."""


def text_view(episode: Episode) -> str:
    """The current turn in words: a title line (episode, turn, outcome, scores), then what was said and done,
    worded by the one event formatter (private reasoning left out)."""
    from simlab.render.formatting import event_line

    turn = episode.last_turn
    metrics = episode.metrics_at(turn) or {}
    scores = ", ".join(f"{name} {value:.2f}" for name, value in sorted(metrics.items()))
    outcome = episode.summary.get("outcome", "playing")
    lines = [f"{episode.episode_id}: turn {turn}, {outcome}" + (f"; {scores}" if scores else "")]
    for event in episode.events_of_turn(turn):
        line = event_line(event)
        if line is not None and line.kind != "reasoning":
            lines.append(f"{line.who}: {line.plain()}")
    return "\n".join(lines)


def env(
    world: str | WorldFamily,
    task: Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
    render_mode: str | None = None,
    seed: int = 0,
) -> SimLabEnv:
    """A PettingZoo AEC environment playing ``task`` of the world family ``world`` (a name or a family)
    with ``settings`` (checked by the family; defaults otherwise). Without a task, the family's first task
    generated from ``seed``. ConfigError for an unknown world, a bad setting or a family without spaces."""
    family = get_family(world) if isinstance(world, str) else world
    if task is None:
        task = family.tasks.generate(1, seed)[0]
    return SimLabEnv(family, task, settings, render_mode, seed)


def parallel_env(
    world: str | WorldFamily,
    task: Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
    render_mode: str | None = None,
    seed: int = 0,
) -> ParallelEnv[str, dict[str, Any], dict[str, Any]]:
    """:func:`env` as a PettingZoo ``ParallelEnv`` (``aec_to_parallel``), for a family whose spaces declare
    ``parallel`` (every role acts once per cycle, in role order); ConfigError for the others."""
    aec = env(world, task, settings, render_mode, seed)
    if not aec.declared.parallel:
        raise ConfigError(
            f"world {aec.family.name!r} has no parallel form: its roles do not all act once per cycle in role order"
        )
    return aec_to_parallel(aec)
