"""World families and the registry that finds them by name without importing them all.

Each family module exposes ``FAMILY``, a :class:`WorldFamily` saying how to make tasks, which world class
runs them, which roles exist (and role groups such as ``director`` for D1-D3) and its built-in agents.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simlab.core.errors import ConfigError
from simlab.core.plugins import load_target
from simlab.core.world import Agent, World

FAMILIES: dict[str, str] = {
    "blocks": "simlab.worlds.blocks.family:FAMILY",
    "rooms": "simlab.worlds.rooms.family:FAMILY",
}


@dataclass(frozen=True)
class WorldFamily:
    """How the engine drives one kind of world."""

    name: str
    world: type[World]
    roles: tuple[str, ...]
    role_groups: Mapping[str, tuple[str, ...]]
    generate: Callable[..., list[dict[str, Any]]]  # (n, seed, options=None) -> tasks
    load_tasks: Callable[[Path], list[dict[str, Any]]]
    agents: Mapping[str, Callable[..., Agent]]
    default_agents: Mapping[str, str]
    check_settings: Callable[[Mapping[str, Any]], None]  # raises ConfigError naming a bad setting
    headline_metrics: Sequence[str] = ()
    default_settings: Mapping[str, Any] = field(default_factory=dict)

    def expand_role(self, role: str) -> tuple[str, ...]:
        """``director`` -> (D1, D2, D3); a concrete role -> itself. Raises ConfigError when unknown."""
        if role in self.role_groups:
            return self.role_groups[role]
        if role in self.roles:
            return (role,)
        names = ", ".join([*self.role_groups, *self.roles])
        raise ConfigError(f"world {self.name!r} has no role {role!r}; roles: {names}")


def get_family(name: str) -> WorldFamily:
    """The family called ``name``; ConfigError listing the known ones otherwise."""
    if name not in FAMILIES:
        raise ConfigError(f"unknown world {name!r}; known worlds: {', '.join(sorted(FAMILIES))}")
    return load_target(FAMILIES[name])
