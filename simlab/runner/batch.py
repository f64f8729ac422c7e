"""Batch runs: plan the episodes of a run from its config, play them, and write the run folder.

The config written to ``run.json`` holds everything needed to reproduce the run: world, seed, settings,
agent specs, repeats and the tasks themselves (so a run does not depend on a structures folder staying put).
Resuming re-reads that config and plays only the episodes the index does not list yet.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simlab.agents.resolve import make_agents, role_specs
from simlab.core.episode import Episode
from simlab.core.errors import ConfigError
from simlab.core.plugins import AgentSpec, Registry
from simlab.core.recording import RUN_FILE, RunWriter
from simlab.runner.episode import run_episode
from simlab.worlds import WorldFamily, get_family

Progress = Callable[[int, int, Episode], None]


@dataclass
class RunConfig:
    """What ``python main.py run`` was asked to do."""

    world: str
    seed: int = 0
    episodes: int | None = None
    repeats: int = 1
    agents: Sequence[str] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    tasks: list[dict[str, Any]] | None = None  # None: generate ``episodes`` tasks from the seed
    generate_options: Mapping[str, Any] = field(default_factory=dict)  # e.g. rooms: {"task": "counting"}

    def to_json(self, family: WorldFamily) -> dict[str, Any]:
        specs = role_specs(family, [AgentSpec.parse(a) for a in self.agents])
        return {
            "world": self.world,
            "seed": self.seed,
            "repeats": self.repeats,
            "agents": {role: spec.spec() for role, spec in specs.items()},
            "settings": {**family.default_settings, **dict(self.settings)},
            "tasks": self.plan_tasks(family),
        }

    def plan_tasks(self, family: WorldFamily) -> list[dict[str, Any]]:
        if self.tasks is not None:
            return list(self.tasks[: self.episodes] if self.episodes else self.tasks)
        if not self.episodes or self.episodes < 1:
            raise ConfigError("--episodes must be at least 1 when no tasks are given")
        return family.generate(self.episodes, self.seed, dict(self.generate_options))


def episode_ids(config: Mapping[str, Any]) -> list[tuple[str, dict[str, Any], int]]:
    """(episode id, task, repeat) for every episode of a run config, in a fixed order."""
    out = []
    for repeat in range(int(config.get("repeats", 1))):
        for task in config["tasks"]:
            out.append((f"{task.get('id', 'task')}-r{repeat}", task, repeat))
    return out


def _specs(config: Mapping[str, Any]) -> dict[str, AgentSpec]:
    return {role: AgentSpec.parse(f"{role}={spec}") for role, spec in config["agents"].items()}


def run(
    config: RunConfig | None,
    out_dir: str | Path,
    resume: bool = False,
    progress: Progress | None = None,
    registry: Registry | None = None,
) -> RunWriter:
    """Play every episode of a run (or, with ``resume``, those not finished yet) into ``out_dir``."""
    if config is None:
        if not (resume and (Path(out_dir) / RUN_FILE).exists()):
            raise ConfigError(f"{out_dir}: no run to resume there (no {RUN_FILE}); start one with a config")
        writer = RunWriter(out_dir, {}, resume=True)
        family = get_family(writer.config["world"])
    else:
        family = get_family(config.world)
        config_json = config.to_json(family)
        family.check_settings(config.settings)
        make_agents(family, _specs(config_json), config_json["settings"], registry)  # fail before writing
        writer = RunWriter(out_dir, config_json, resume=resume)
    specs = _specs(writer.config)
    todo = [item for item in episode_ids(writer.config) if item[0] not in writer.done]
    for k, (episode_id, task, repeat) in enumerate(todo, 1):
        settings = {**writer.config["settings"], "repeat": repeat}
        world = family.world(task, settings)
        agents = make_agents(family, specs, settings, registry)
        episode = run_episode(world, agents, episode_id, int(writer.config["seed"]), writer.config["agents"])
        episode.summary["repeat"] = repeat
        writer.add(episode)
        if progress is not None:
            progress(k, len(todo), episode)
    return writer
