"""Forking an episode: the world replays the recording exactly up to the turn, then new agents play on."""

from __future__ import annotations

import pytest

from simlab.agents.resolve import make_agents, role_specs
from simlab.core.errors import ConfigError
from simlab.core.plugins import AgentSpec
from simlab.runner.fork import fork_episode, fork_world
from simlab.testing import play
from simlab.worlds import get_family


def agents_for(world: str, *specs: str):
    family = get_family(world)
    chosen = role_specs(family, [AgentSpec.parse(s) for s in specs])
    return make_agents(family, chosen, dict(family.default_settings)), {r: s.spec() for r, s in chosen.items()}


@pytest.mark.parametrize(
    ("world", "specs", "groups"),
    [
        ("blocks", ["builder=scripted:0.3"], []),
        ("rooms", ["answerer=oracle"], ["counting"]),
    ],
)
def test_a_fork_replays_the_prefix_exactly_and_plays_on(world, specs, groups):
    family = get_family(world)
    task = family.tasks.generate(1, 2, groups=groups)[0]
    original = play(family, task, specs, 0, None)
    turn = max(1, original.last_turn // 2)
    agents, recorded = agents_for(world, "answerer=random" if world == "rooms" else "builder=oracle")
    fork = fork_episode(original, turn, agents, recorded, f"{original.episode_id}-fork")
    prefix = [e.to_json() for e in original.events if e.turn <= turn and e.kind != "observation"]
    assert [e.to_json() for e in fork.events if e.kind != "observation"][: len(prefix)] == prefix
    assert fork.source == {"forked_from": original.episode_id, "turn": turn}
    assert fork.summary["outcome"] in ("success", "failure", "abort") and fork.agents == recorded


def test_a_fork_outside_the_episode_is_refused():
    family = get_family("blocks")
    original = play(family, family.tasks.generate(1, 0)[0], [], 0, {"turns": 3})
    with pytest.raises(ConfigError, match="outside"):
        fork_world(original, original.last_turn + 5)
