"""Turn agent specs (``builder=scripted``, ``director=oracle``, ``D2=myplugin:arg``) into agents.

A spec names either a world's built-in agent (scripted, oracle and random baselines live with their world)
or an agent type from a plugin (see :mod:`simlab.core.plugins`). Group roles such as ``director`` expand to
their members; a later, more specific spec wins (``director=oracle D2=random``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from simlab.core.errors import ConfigError
from simlab.core.plugins import AgentSpec, Registry, discover
from simlab.core.world import Agent
from simlab.worlds import WorldFamily


def role_specs(family: WorldFamily, specs: Iterable[AgentSpec]) -> dict[str, AgentSpec]:
    """Every role of the world mapped to the spec that plays it (defaults first, then ``specs`` in order)."""
    chosen: dict[str, AgentSpec] = {}
    defaults = [AgentSpec(role, name) for role, name in family.default_agents.items()]
    ordered = sorted(specs, key=lambda s: s.role not in family.role_groups)  # groups before single roles
    for spec in [*defaults, *ordered]:
        for role in family.expand_role(spec.role):
            chosen[role] = AgentSpec(role, spec.name, spec.arg)
    missing = [r for r in family.roles if r not in chosen]
    if missing:
        raise ConfigError(f"no agent for role(s) {', '.join(missing)}; pass --agent ROLE=NAME")
    return {r: chosen[r] for r in family.roles}


def agent_factory(family: WorldFamily, name: str, registry: Registry | None) -> Callable[..., Agent]:
    """The factory for agent type ``name``: the world's own first, then plugins (loaded only now)."""
    if name in family.agents:
        return family.agents[name]
    registry = registry if registry is not None else discover()
    if name in registry.agent_names():
        return registry.load_agent_factory(name)
    known = ", ".join(sorted({*family.agents, *registry.agent_names()}))
    raise ConfigError(f"unknown agent {name!r} for world {family.name!r}; available: {known}")


def make_agents(
    family: WorldFamily,
    specs: Mapping[str, AgentSpec],
    settings: Mapping[str, Any],
    registry: Registry | None = None,
) -> dict[str, Agent]:
    """One fresh agent per role. A spec that does not fit its role raises ConfigError saying why."""
    out: dict[str, Agent] = {}
    for role, spec in specs.items():
        factory = agent_factory(family, spec.name, registry)
        try:
            out[role] = factory(role, spec.arg, {**settings, "world": family.name})
        except ValueError as exc:
            raise ConfigError(f"agent {role}={spec.spec()}: {exc}") from None
    return out
