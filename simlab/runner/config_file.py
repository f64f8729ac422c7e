"""Run configs in TOML: ``python main.py run --config run.toml --out RUN_DIR``.

::

    world = "blocks"           # required
    seed = 0
    episodes = 20              # tasks generated from the seed ...
    tasks = "structures/"      # ... or played from a file or folder (relative to this file)
    repeats = 3
    groups = ["simple"]        # only tasks of these groups (blocks tiers, rooms question types...)

    [settings]                 # world settings, as --set
    turns = 20

    [generate]                 # the family's generate options, as the flags of `generate NAME`

    [agents.director]          # a role or a role group
    agent = "openai:gpt-4o-mini"          # the spec, NAME[:ARG]
    base_url = "http://127.0.0.1:8000/v1" # everything else goes to the agent as its settings
    api_key_env = "OPENAI_API_KEY"        # the NAME of the variable holding the key, never the key
    temperature = 0.7

    [agents.builder]
    agent = "scripted"

Command-line options given with ``--config`` override the file's values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simlab.core.errors import FormatError
from simlab.core.reading import read_toml, resolved
from simlab.runner.batch import RunConfig
from simlab.worlds import get_family

TOP_LEVEL = {"world", "seed", "episodes", "tasks", "repeats", "groups", "settings", "generate", "agents"}


def load_run_config(path: str | Path) -> RunConfig:
    """Read a TOML run config; FormatError names the file and the field that is wrong."""
    path = Path(path)
    data = read_toml(path)
    unknown = sorted(set(data) - TOP_LEVEL)
    if unknown:
        raise FormatError(path, f"key {unknown[0]!r}", f"unknown; expected one of {', '.join(sorted(TOP_LEVEL))}")
    world = _field(path, data, "world", str, None)
    family = get_family(world)
    specs, agent_settings = _agents(path, data.get("agents", {}))
    tasks_path = _field(path, data, "tasks", str, None, required=False)
    tasks = family.tasks.load(resolved(path.parent / tasks_path)) if tasks_path else None
    groups = _field(path, data, "groups", list, [])
    if not all(isinstance(g, str) for g in groups):
        raise FormatError(path, "key 'groups'", f"expected a list of strings, got {groups!r}")
    return RunConfig(
        world=world,
        seed=_field(path, data, "seed", int, 0),
        episodes=_field(path, data, "episodes", int, None, required=False),
        repeats=_field(path, data, "repeats", int, 1),
        agents=specs,
        settings=dict(_field(path, data, "settings", dict, {})),
        tasks=tasks,
        groups=tuple(groups),
        generate_options=dict(_field(path, data, "generate", dict, {})),
        agent_settings=agent_settings,
    )


def _agents(path: Path, table: Any) -> tuple[list[str], dict[str, dict[str, Any]]]:
    if not isinstance(table, dict):
        raise FormatError(path, "table 'agents'", "expected [agents.ROLE] tables")
    specs, settings = [], {}
    for role, entry in table.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("agent"), str):
            raise FormatError(path, f"agents.{role}", 'expected a table with agent = "NAME[:ARG]"')
        specs.append(f"{role}={entry['agent']}")
        rest = {k: v for k, v in entry.items() if k != "agent"}
        if rest:
            settings[role] = rest
    return specs, settings


def _field(path: Path, data: dict[str, Any], name: str, kind: type, default: Any, required: bool = True) -> Any:
    value = data.get(name, default)
    if value is None:
        if required and default is None and name == "world":
            raise FormatError(path, f"key {name!r}", 'missing; name the world family, e.g. world = "blocks"')
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise FormatError(path, f"key {name!r}", f"expected {kind.__name__}, got {value!r}")
    return value
