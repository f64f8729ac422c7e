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


class _BadMoveFirst:
    """A builder whose first move names no cell it could be, then plays the scripted builder."""

    def __init__(self, inner) -> None:
        self.inner, self.first = inner, True

    def reset(self, seed, role, task) -> None:
        self.inner.reset(seed, role, task)

    def act(self, observation):
        from simlab.core.world import Reply

        if self.first:
            self.first = False
            return Reply(action={"action": "place", "block": "gs", "cell": "the middle", "layer": 0})
        return self.inner.act(observation)


def test_a_recording_with_an_unreadable_move_forks():
    """Blocks recorded no action for a move it could not read, so replaying the recording gave another reply
    and the fork was refused."""
    from simlab.runner.episode import run_episode

    family = get_family("blocks")
    agents, recorded = agents_for("blocks", "builder=scripted")
    agents["builder"] = _BadMoveFirst(agents["builder"])
    task = family.tasks.generate(1, 0)[0]
    original = run_episode(family.world(task, {"turns": 4}), agents, "bad-r0", 0, recorded)
    bad = [e for e in original.events if e.kind == "action" and e.turn == 1]
    assert bad and bad[0].data["action"]["cell"] == "the middle"
    assert any(e.kind == "protocol_error" and e.data["code"] == "bad_move" for e in original.events)
    _world, prefix = fork_world(original, 2)
    assert [e.to_json() for e in prefix if e.kind != "observation"] == [
        e.to_json() for e in original.events if e.turn <= 2 and e.kind != "observation"
    ]
