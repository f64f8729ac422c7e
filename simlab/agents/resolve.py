"""Turn agent specs (``builder=scripted``, ``director=oracle``, ``D2=myplugin:arg``) into agents.

A spec names either a world's built-in agent (scripted, oracle and random baselines live with their world)
or an agent type from a plugin (see :mod:`simlab.core.plugins`). Group roles such as ``director`` expand to
their members; a later, more specific spec wins (``director=oracle D2=random``).

An agent's own settings (``--agent-setting ROLE.KEY=VALUE``, a run config's ``[agents.ROLE]`` table) reach its
factory under ``"agent"``, and one it does not take is refused, as an unknown world setting is: a factory
declares the ones it takes as ``agent_settings`` (:data:`SETTINGS_ATTRIBUTE`); a world's built-in agents that
declare none take none; a plugin's agent that declares none gets them all and checks them itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from simlab.core.errors import ConfigError
from simlab.core.plugins import AgentSpec, Registry, discover
from simlab.core.secrets import ALLOWED_NAMES, ENV_NAME, secret_places, value_is_secret
from simlab.core.world import Agent
from simlab.worlds import WorldFamily


def role_specs(
    family: WorldFamily, specs: Iterable[AgentSpec], base: Mapping[str, str] | None = None, complete: bool = True
) -> dict[str, AgentSpec]:
    """Every role of the world mapped to the spec that plays it: ``base`` (role -> spec, e.g. the agents an
    episode had) or else the family's defaults, then ``specs`` with role groups before single roles, so
    ``D2=random director=oracle`` gives D2 the random agent in any order, on the command line and in the app.
    ConfigError when a role has no agent, unless not ``complete`` (then such a role is left out: a source
    that another will complete)."""
    chosen: dict[str, AgentSpec] = {}
    start = base if base else family.default_agents
    defaults = [AgentSpec.parse(f"{role}={spec}") for role, spec in start.items()]
    ordered = sorted(specs, key=lambda s: s.role not in family.role_groups)  # groups before single roles
    for spec in [*defaults, *ordered]:
        for role in family.expand_role(spec.role):
            chosen[role] = AgentSpec(role, spec.name, spec.arg)
    missing = [r for r in family.roles if r not in chosen]
    if missing and complete:
        raise ConfigError(f"no agent for role(s) {', '.join(missing)}; pass --agent ROLE=NAME")
    return {r: chosen[r] for r in family.roles if r in chosen}


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
    agent_settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Agent]:
    """One fresh agent per role. ``agent_settings`` maps a role or role group to the agent's own settings
    (a live model's endpoint, temperature...), handed to the factory under ``"agent"``. A spec that does not
    fit its role raises ConfigError saying why."""
    per_role = role_agent_settings(family, agent_settings or {})
    out: dict[str, Agent] = {}
    for role, spec in specs.items():
        factory = agent_factory(family, spec.name, registry)
        check_agent_settings(family, role, spec, factory, per_role.get(role, {}))
        try:
            out[role] = factory(role, spec.arg, {**settings, "world": family.name, "agent": per_role.get(role, {})})
        except ValueError as exc:
            raise ConfigError(f"agent {role}={spec.spec()}: {exc}") from None
    return out


SETTINGS_ATTRIBUTE = "agent_settings"
"""What an agent factory declares the settings it takes under: a collection of their names (or a pydantic model,
whose fields are the names), e.g. ``make_agent.agent_settings = ("note",)``."""


def declared_settings(family: WorldFamily, name: str, factory: Callable[..., Agent]) -> frozenset[str] | None:
    """The settings agent type ``name`` takes: those its factory declares (:data:`SETTINGS_ATTRIBUTE`); none for
    a world's built-in agent that declares nothing (scripted, oracle and random play by the world's settings);
    None (unknown) for a plugin's agent that declares nothing: it is handed them all and checks them itself,
    as the ``openai`` agent does."""
    declared: Any = getattr(factory, SETTINGS_ATTRIBUTE, None)
    if declared is None:
        return frozenset() if name in family.agents else None
    if isinstance(declared, type) and issubclass(declared, BaseModel):
        return frozenset(declared.model_fields)
    return frozenset([declared] if isinstance(declared, str) else declared)


def check_agent_settings(
    family: WorldFamily, role: str, spec: AgentSpec, factory: Callable[..., Agent], values: Mapping[str, Any]
) -> None:
    """ConfigError naming the role, the first setting its agent does not take and the ones it does (an unknown
    ``--agent-setting`` is refused as an unknown ``--set`` is, not ignored)."""
    accepted = declared_settings(family, spec.name, factory)
    unknown = sorted(set(values) - accepted) if accepted is not None else []
    if not unknown:
        return
    played = f"{role} plays {spec.spec()}"
    if not accepted:
        raise ConfigError(
            f"unknown agent setting {role}.{unknown[0]}: {played}, which takes no settings (a world's built-in agents "
            "play by the world's settings, given with --set; `worlds` lists them)"
        )
    raise ConfigError(f"unknown agent setting {role}.{unknown[0]}: {played}, which takes {', '.join(sorted(accepted))}")


def refuse_secrets(values: Any, what: str) -> None:
    """ConfigError naming the first place in ``values`` that holds (or looks like) a credential: run configs
    and command-line settings are recorded, so keys come from the environment, named by ``api_key_env``."""
    for name in sorted(ALLOWED_NAMES & set(values) if isinstance(values, Mapping) else ()):
        value = values[name]
        if isinstance(value, str) and not ENV_NAME.match(value) and not value_is_secret(value):
            raise ConfigError(
                f"{what} {name}: expected the name of an environment variable (such as OPENAI_API_KEY), "
                f"got {value[:40]!r}"
            )
    places = secret_places(values)
    if places:
        raise ConfigError(
            f"{what} {places[0]}: this looks like a credential, and settings are recorded; put the key in an "
            "environment variable and name the variable with api_key_env (a URL must not carry a password)"
        )


def role_agent_settings(
    family: WorldFamily, agent_settings: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Per-role agent settings (groups first, then single roles override). Refuses anything that looks like a
    secret: run configs are recorded, so keys must come from the environment (name the variable with
    ``api_key_env``)."""
    out: dict[str, dict[str, Any]] = {}
    ordered = sorted(agent_settings.items(), key=lambda kv: kv[0] not in family.role_groups)
    for role, values in ordered:
        refuse_secrets(values, f"agent setting {role}")
        for concrete in family.expand_role(role):
            out.setdefault(concrete, {}).update(values)
    return out
