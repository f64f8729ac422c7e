"""A run's configuration, built in one place from its sources: the command line, a run.toml (``--config``) and,
on ``--resume``, the ``run.json`` the run recorded.

The precedence, written here once (:func:`compose`)::

    the command line      each option given wins (--turns N is --set turns=N)
      over ONE whole description of the run, the first there is of:
    a --config file       a run as a whole: a key the file leaves out has its default, never another source's
    run.json (--resume)   the run as recorded
    a new run's defaults  world blocks, seed 0, one repeat, the family's agents and settings

The command line is laid over that description: world settings key by key, agents role by role (a group's spec
over each of its roles, so ``--agent director=oracle`` replaces a file's ``D2``), agent settings role by role
and key by key; the description's settings of a role's agent are dropped when the command line gives the role
another agent (a model's endpoint was meant for that model).

``--resume`` plays the run as ``run.json`` records it. Options given with it are composed as for any run and
compared with the recorded run by value (:func:`simlab.runner.resume.config_changes`): an option equal to what
was recorded is accepted (``--turns 5`` against a recorded budget of 5), another is refused naming the option
and both values. How a run is played (:class:`Runtime`) is not what it is: it may change on resume, and what
is not given is taken from how the run was last played.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from simlab.agents.resolve import role_agent_settings, role_specs
from simlab.core.errors import ConfigError, SimlabError
from simlab.core.plugins import AgentSpec
from simlab.core.recording import RUN_FILE, RunWriter, load_run
from simlab.core.writing import check_output_folder
from simlab.runner.batch import Progress, RunConfig, run, stored_runtime
from simlab.runner.config_file import load_run_config
from simlab.runner.resume import ConfigChange, config_changes
from simlab.worlds import DEFAULT_WORLD, get_family


@dataclass(frozen=True)
class RunOptions:
    """What the command line of ``run`` says, parsed: each option None (or empty) where it was not given."""

    out: Path
    resume: bool = False
    config_file: Path | None = None
    world: str | None = None
    agents: tuple[str, ...] = ()  # ROLE=SPEC, in the order given
    agent_settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # role or group -> settings
    settings: Mapping[str, Any] = field(default_factory=dict)  # --set
    turns: int | None = None
    episodes: int | None = None
    repeats: int | None = None
    seed: int | None = None
    tasks_path: Path | None = None
    groups: tuple[str, ...] = ()
    concurrency: int | None = None
    episode_timeout: float | None = None
    executor: str = "local"
    processes: int | None = None

    def describes_a_run(self) -> bool:
        """Whether an option saying what the run is was given (not only how to play it)."""
        return any(getattr(self, name) not in (None, (), {}) for name in RUN_DEFINING)


RUN_DEFINING = (
    "config_file",
    "world",
    "agents",
    "agent_settings",
    "settings",
    "turns",
    "episodes",
    "repeats",
    "seed",
    "tasks_path",
    "groups",
)
"""The fields of :class:`RunOptions` that say what a run is; the others say how to play it."""


@dataclass(frozen=True)
class Runtime:
    """How a run is played: not part of what it is, so it may change on resume."""

    concurrency: int = 1
    episode_timeout: float | None = None  # seconds; None: no limit
    executor: str = "local"
    processes: int | None = None  # worker processes; None: as many as suit the machine and the concurrency


@dataclass(frozen=True)
class ResolvedRun:
    """A run ready to play: where, what, and how."""

    out: Path
    config: RunConfig | None  # None on resume: the run run.json records (the batch checks it before writing)
    runtime: Runtime

    @property
    def resume(self) -> bool:
        """Whether this finishes the run recorded in :attr:`out` rather than starting one."""
        return self.config is None

    def play(self, progress: Progress | None = None, stop: threading.Event | None = None) -> RunWriter:
        """Play the run (see :func:`simlab.runner.batch.run`)."""
        return run(
            self.config,
            self.out,
            self.resume,
            progress,
            concurrency=self.runtime.concurrency,
            episode_timeout=self.runtime.episode_timeout,
            stop=stop,
            executor=self.runtime.executor,
            processes=self.runtime.processes,
        )


def resolve(options: RunOptions) -> ResolvedRun:
    """The run ``options`` ask for, checked against the disk before anything is written: on resume, ConfigError
    naming each option whose value differs from the recorded run's; for a new run, WriteRefused when ``--out``
    is inside a file or folder the run reads."""
    if options.resume:
        refuse_changes(options)
        return ResolvedRun(options.out, None, runtime(options))
    inputs = [path for path in (options.tasks_path, options.config_file) if path is not None]
    check_output_folder(options.out, "run --out", inputs=inputs)
    return ResolvedRun(options.out, compose(options), runtime(options))


def compose(options: RunOptions, recorded: Mapping[str, Any] | None = None) -> RunConfig:
    """The run the sources describe: the command line over a ``--config`` file, else over ``recorded`` (a
    ``run.json`` config, on resume), else over a new run's defaults (the module's table)."""
    return _overridden(_description(options, recorded), options)


def _description(options: RunOptions, recorded: Mapping[str, Any] | None) -> RunConfig:
    """The whole description the command line is laid over: a file, else the recorded run, else defaults."""
    if options.config_file is not None:
        return load_run_config(options.config_file)
    if recorded is not None:
        return RunConfig.from_record(recorded)
    return RunConfig(options.world or DEFAULT_WORLD)


def _overridden(base: RunConfig, options: RunOptions) -> RunConfig:
    """``base`` with every option given in its place."""
    family = get_family(options.world or base.world)
    before = role_specs(family, [AgentSpec.parse(a) for a in base.agents], complete=False)  # options may complete it
    after = role_specs(family, [AgentSpec.parse(a) for a in options.agents], base=_spec_texts(before))
    kept = role_agent_settings(family, base.agent_settings)
    agent_settings = {role: values for role, values in kept.items() if after[role] == before.get(role)}
    given = role_agent_settings(family, options.agent_settings)
    for role, values in given.items():
        agent_settings[role] = {**agent_settings.get(role, {}), **values}
    return replace(
        base,
        world=family.name,
        seed=base.seed if options.seed is None else options.seed,
        episodes=base.episodes if options.episodes is None else options.episodes,
        repeats=base.repeats if options.repeats is None else options.repeats,
        agents=[f"{role}={spec}" for role, spec in _spec_texts(after).items()],
        settings={**base.settings, **_given_settings(options)},
        tasks=family.tasks.load(options.tasks_path) if options.tasks_path else base.tasks,
        groups=options.groups or tuple(base.groups),
        agent_settings=agent_settings,
    )


def _spec_texts(specs: Mapping[str, AgentSpec]) -> dict[str, str]:
    """Role -> ``NAME[:ARG]``."""
    return {role: spec.spec() for role, spec in specs.items()}


def _given_settings(options: RunOptions) -> dict[str, Any]:
    """The world settings the command line gives: ``--set``, and ``--turns`` as ``--set turns``."""
    given = dict(options.settings)
    if options.turns is None:
        return given
    if "turns" in given and given["turns"] != options.turns:
        raise ConfigError(f"--turns {options.turns} and --set turns={given['turns']} say two budgets: give one")
    return {**given, "turns": options.turns}


def runtime(options: RunOptions) -> Runtime:
    """How to play: each option as given, else on resume as ``run.json`` says the run was last played, else
    one episode at a time with no time limit."""
    stored = stored_runtime(options.out) if options.resume else {}
    concurrency = options.concurrency if options.concurrency is not None else stored.get("concurrency", 1)
    timeout = options.episode_timeout if options.episode_timeout is not None else stored.get("episode_timeout")
    return Runtime(concurrency, timeout or None, options.executor, options.processes)  # a timeout of 0 is none


def refuse_changes(options: RunOptions) -> None:
    """ConfigError naming each option that would change the run being resumed, with its recorded and its given
    value. Options equal to the recorded run's are accepted: the interrupted command with ``--resume``
    appended resumes it."""
    if not options.describes_a_run() or not (options.out / RUN_FILE).is_file():
        return  # nothing given to compare; without a run.json the batch says there is no run to resume
    recorded = load_run(options.out).config
    try:
        described = _described(options, recorded)
    except SimlabError as exc:  # the options alone make no run (--group of no recorded task): say which option
        if not options.groups:
            raise
        raise ConfigError(f"--group {' '.join(options.groups)}: the recorded run has no task of it ({exc})") from None
    changes = config_changes(recorded, described)
    if changes:
        said = "; ".join(change.describe(_option_of(change, options)) for change in changes)
        from_file = f" (the values of --config {options.config_file} count as given)" if options.config_file else ""
        raise ConfigError(
            f"--resume plays the run as {options.out}/run.json recorded it; these options would change it: {said}"
            f"{from_file}. Drop them, or start a new run in another folder (--concurrency, --episode-timeout and "
            "--executor may change on resume)"
        )


def _described(options: RunOptions, recorded: Mapping[str, Any]) -> dict[str, Any]:
    """The run.json config the sources describe, with ``episodes``: the number of tasks they ask for.

    Tasks the run would generate are not made again: the recorded ones stand for them, cut to --episodes and
    --group as given tasks are."""
    base = _description(options, recorded)
    world = options.world or base.world
    if world != recorded["world"]:
        return {"world": world}  # the rest would not fit the recorded world: compared by its name alone
    config = _overridden(base, options)
    loads_tasks = options.tasks_path is not None or (options.config_file is not None and base.tasks is not None)
    if not loads_tasks:
        config = replace(config, tasks=list(recorded["tasks"]))
    described = config.to_json(get_family(world))
    # A setting newer than the recorded run is compared only when a source names it.
    named = {*recorded["settings"], *config.settings}
    described["settings"] = {k: v for k, v in described["settings"].items() if k in named}
    described["episodes"] = config.episodes if config.episodes and not loads_tasks else len(described["tasks"])
    return described


def _option_of(change: ConfigChange, options: RunOptions) -> str:
    """The option that sets the part of a run config a change is at."""
    path = change.path
    part = path[0]
    if part == "agents":
        return f"--agent {path[1]}"
    if part == "agent_settings":
        return f"--agent-setting {path[1]}.{path[2]}"
    if part == "settings":
        return "--turns" if path[1] == "turns" and options.turns is not None else f"--set {path[1]}"
    if part in ("episodes", "tasks"):
        given = (("--tasks", options.tasks_path), ("--episodes", options.episodes), ("--group", options.groups))
        flags = "/".join(flag for flag, value in given if value) or "the tasks"
        return flags if part == "episodes" else f"{flags}: task {int(path[1]) + 1}"
    return f"--{part}"
