"""The ``replay`` agent: plays back, for its role, the replies that role gave in another run's episode of the
same task and repeat, so a recorded model can be scored again under changed rules without being asked again.

The recorded run is read through SimLab's own reading path (:func:`simlab.core.recording.load_run` and
``Run.load_episode``: checked JSON, never code), and the replies are taken from it as a fork takes them
(:func:`simlab.runner.fork.recorded_steps`: each step's message, private reasoning, action and, for a reply
that could not be read, why). The k-th time the role acts, it gives the k-th reply it recorded.

Two things can go wrong, and each is said where the agent protocol lets it be said:

* the episode's task is not in the recorded run (or has the same id but other content): nothing could be
  played back, so :meth:`ReplayAgent.reset` raises a ConfigError naming the run and the task, which stops
  the run before that episode records anything;
* the role acts more often than it did in the recording (a longer turn budget, a rule that asks again): the
  agent has no reply to give, and ``act`` must return one, so it answers with the family's own give-up reply
  for the role (what a model whose reply could not be read does) with ``problem`` saying that the recording
  ran out. The episode goes on and records that, counted as an unreadable reply of the role.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from simlab.core.errors import ConfigError
from simlab.core.recording import INDEX_FILE, Run, load_run
from simlab.core.world import Observation, Reply
from simlab.runner.fork import recorded_steps
from simlab.worlds import get_family


class ReplaySettings(BaseModel):
    """What ``--agent-setting ROLE.KEY=VALUE`` (or a run config's ``[agents.ROLE]``) gives the agent."""

    model_config = ConfigDict(extra="forbid", strict=True)

    run: str
    """The recorded run folder whose replies are played back."""
    episode_map: dict[str, str] = {}
    """Task id of this run -> episode id of the recorded run to play back for it (default: the recorded
    episode of the same task id and repeat)."""


class MakeAgent:
    """The factory ``plugin.toml`` names (a callable object, so it can carry ``agent_settings``, the settings
    the agent takes, which SimLab reads to refuse any other ``--agent-setting`` before anything is written)."""

    agent_settings = ReplaySettings

    def __call__(self, role: str, arg: str | None, settings: Mapping[str, Any]) -> ReplayAgent:
        """A replay agent for ``role``. ValueError (the runner's ConfigError) for an argument, a missing or
        malformed setting, or a recorded run of another world."""
        if arg:
            raise ValueError(
                f"replay takes no argument (got {arg!r}); name the run with --agent-setting {role}.run=PATH"
            )
        chosen = _settings(role, settings.get("agent", {}))
        run = _recorded_run(chosen.run)
        world = str(settings.get("world", ""))
        if run.config.get("world") != world:
            raise ValueError(f"run {chosen.run} is a {run.config.get('world')!r} run, this one plays {world!r}")
        return ReplayAgent(role, run, chosen.episode_map, settings)


make_agent = MakeAgent()


def _settings(role: str, given: Mapping[str, Any]) -> ReplaySettings:
    """``given`` checked, as a one-line ValueError naming the setting (pydantic's own message is a page)."""
    try:
        return ReplaySettings.model_validate(dict(given))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        if first["type"] == "missing" and where == "run":
            raise ValueError(f"replay needs the recorded run: --agent-setting {role}.run=PATH") from None
        raise ValueError(f"agent setting {role}.{where}: {first['msg']}") from None


def _recorded_run(path: str) -> Run:
    """The run at ``path``, read once per state of its index: the runner makes a fresh agent per episode,
    and reading a large index again for each would cost as much as the run."""
    index = Path(path) / INDEX_FILE
    stat = os.stat(index) if index.is_file() else None
    return _load_run(str(Path(path).resolve()), stat.st_mtime_ns if stat else 0, stat.st_size if stat else 0)


@functools.lru_cache(maxsize=4)
def _load_run(path: str, mtime_ns: int, size: int) -> Run:
    del mtime_ns, size  # part of the cache key only
    return load_run(path)


class ReplayAgent:
    """Plays back one role's recorded replies (see the module docstring)."""

    def __init__(self, role: str, run: Run, episode_map: Mapping[str, str], settings: Mapping[str, Any]) -> None:
        self.role = role
        self.run = run
        self.episode_map = dict(episode_map)
        self.settings = dict(settings)
        self.source = ""
        self.replies: list[Reply] = []
        self.given = 0

    def reset(self, seed: int, role: str, task: Mapping[str, Any]) -> None:
        """Find the recorded episode of ``task`` and this repeat and take the role's replies from it. The task
        is read only to find that episode (its id, and its content compared with the recorded one)."""
        self.role = role
        task_id = str(task.get("id", ""))
        episode_id = self.episode_map.get(task_id) or self._recorded_id(task_id)
        try:
            episode = self.run.load_episode(episode_id)
        except KeyError:
            raise ConfigError(
                f"replay: run {self.run.path} has no episode {episode_id!r} (episode_map of task {task_id!r})"
            ) from None
        if dict(episode.task) != dict(task):
            raise ConfigError(
                f"replay: task {task_id!r} in run {self.run.path} (episode {episode_id}) is not the task played "
                "here: same id, other content"
            )
        self.source = episode_id
        self.replies = [reply for who, reply in recorded_steps(episode, episode.last_turn) if who == role]
        self.given = 0

    def _recorded_id(self, task_id: str) -> str:
        repeat = int(self.settings.get("repeat", 0))
        for summary in self.run.summaries:
            if summary.get("task_id") == task_id and int(summary.get("repeat", 0)) == repeat:
                return str(summary["episode_id"])
        raise ConfigError(
            f"replay: run {self.run.path} has no episode of task {task_id!r} repeat {repeat}; map it to one "
            f'with --agent-setting {self.role}.episode_map=\'{{"{task_id}": "EPISODE_ID"}}\''
        )

    def act(self, observation: Observation) -> Reply:
        """The next recorded reply, or the family's give-up reply saying that the recording ran out."""
        if self.given < len(self.replies):
            self.given += 1
            return self.replies[self.given - 1]
        protocol = get_family(str(self.settings["world"])).protocol(self.role, observation, self.settings)
        problem = (
            f"replay: episode {self.source} of run {self.run.path} has no more replies for {self.role} "
            f"(it recorded {len(self.replies)})"
        )
        return replace(protocol.give_up(""), problem=problem)
