"""What ``run --resume`` accepts: the options of the interrupted run's own command, compared by value.

``--resume`` plays the run as its ``run.json`` recorded it. Options given with it describe a run too, and are
accepted when that run is the recorded one (re-running the interrupted command with ``--resume`` appended is
the common way to resume); :func:`config_changes` says where it is not, each difference with the recorded and
the given value, so the command line can refuse exactly those.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MAX_SHOWN = 80
"""Characters of a value a change shows (a task or a board may be long)."""


class _Unset:
    """The value of a setting one side does not name."""

    def __repr__(self) -> str:
        return "(not set)"


UNSET: Any = _Unset()


@dataclass(frozen=True)
class ConfigChange:
    """One difference between a recorded run config and a given one: where (``("settings", "turns")``,
    ``("agents", "builder")``, ``("episodes",)``, ``("tasks", "3")``...) and the two values."""

    path: tuple[str, ...]
    recorded: Any
    given: Any

    def describe(self, label: str) -> str:
        """``--seed: recorded 0, given 4``, with ``label`` naming the option."""
        if self.path == ("episodes",):
            return f"{label}: recorded {_tasks(self.recorded)}, given {_tasks(self.given)}"
        return f"{label}: recorded {_shown(self.recorded)}, given {_shown(self.given)}"


def _tasks(count: int) -> str:
    return f"{count:,} task" + ("" if count == 1 else "s")


def _shown(value: Any) -> str:
    if isinstance(value, _Unset):
        return repr(value)
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


def config_changes(recorded: Mapping[str, Any], given: Mapping[str, Any]) -> list[ConfigChange]:
    """Where ``given`` differs from ``recorded``, by value; both are configs as ``run.json`` records them, and
    ``given`` may hold ``episodes``, the number of tasks it asks for (default: as many as it lists).

    The world first (nothing else compares across worlds); then the seed, the repeats, each role's agent, each
    world setting, each role's agent settings; then the number of tasks and, when there are as many, the first
    task that differs. Values compare as JSON values (a tuple equals its list, 1 equals 1.0)."""
    if given["world"] != recorded["world"]:
        return [ConfigChange(("world",), recorded["world"], given["world"])]
    changes = _mapping_changes((), recorded, given, ("seed", "repeats"))
    changes += _mapping_changes(("agents",), recorded["agents"], given["agents"])
    changes += _mapping_changes(("settings",), recorded["settings"], given["settings"])
    mine, theirs = recorded.get("agent_settings") or {}, given.get("agent_settings") or {}
    for role in sorted({*mine, *theirs}):
        changes += _mapping_changes(("agent_settings", role), mine.get(role) or {}, theirs.get(role) or {})
    return changes + _task_changes(recorded["tasks"], given["tasks"], given.get("episodes"))


def _mapping_changes(
    path: tuple[str, ...], recorded: Mapping[str, Any], given: Mapping[str, Any], keys: tuple[str, ...] = ()
) -> list[ConfigChange]:
    """The keys (``keys``, or every key either names) whose values differ."""
    changes = []
    for key in keys or sorted({*recorded, *given}):
        mine, theirs = recorded.get(key, UNSET), given.get(key, UNSET)
        if _as_json(mine) != _as_json(theirs):
            changes.append(ConfigChange((*path, key), mine, theirs))
    return changes


def _task_changes(recorded: list[Any], given: list[Any], episodes: int | None) -> list[ConfigChange]:
    """The number of tasks when it differs (asked for, or listed: --group may leave fewer than asked for),
    else the first task that differs."""
    asked = len(given) if episodes is None else episodes
    if not asked == len(given) == len(recorded):
        return [ConfigChange(("episodes",), len(recorded), asked if asked != len(recorded) else len(given))]
    for k, (mine, theirs) in enumerate(zip(recorded, given, strict=True)):
        if _as_json(mine) != _as_json(theirs):
            return [ConfigChange(("tasks", str(k)), mine, theirs)]
    return []


def _as_json(value: Any) -> Any:
    """``value`` as it reads back from JSON, so a tuple and its list compare equal."""
    return value if isinstance(value, _Unset) else json.loads(json.dumps(value))
