"""121 replies real small models (SmolLM2-135M, Qwen2.5-0.5B, served by llama.cpp) gave SimLab's openai agent:
each is read by its role's protocol or refused with ReplyError, and the give-up rule turns a refused one into
a reply the world accepts. Model output is data: none of it may crash a parser or a world."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simlab.core.family import ReplyError
from simlab.testing import play
from simlab.testing.fuzz import observations_of
from simlab.worlds import get_family

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "live_model_replies.json"
REPLIES = json.loads(FIXTURE.read_text("utf-8"))["replies"]


@pytest.fixture(scope="module")
def observations() -> dict[tuple[str, str], object]:
    """A live observation for every (world, role) of the fixtures."""
    out = {}
    for world in sorted({r["world"] for r in REPLIES}):
        family = get_family(world)
        episode = play(family, family.tasks.generate(1, 0)[0], [], 0, None)
        out.update({(world, o.role): o for o in observations_of(family, episode)})
    return out


def test_the_fixtures_are_all_here():
    assert len(REPLIES) == 121


@pytest.mark.parametrize("k", range(len(REPLIES)))
def test_a_real_model_reply_is_read_or_refused_never_crashed_on(observations, k):
    reply = REPLIES[k]
    family = get_family(reply["world"])
    observation = observations[(reply["world"], reply["role"])]
    protocol = family.protocol(reply["role"], observation, family.check_settings({}))
    try:
        read = protocol.parse(reply["content"], observation)
    except ReplyError:
        read = protocol.give_up(reply["content"])
    world = family.world(family.tasks.generate(1, 0)[0], family.check_settings({}))
    world.reset(0)
    while world.agent_selection not in (None, reply["role"]):
        role = world.agent_selection
        world.step(family.protocol(role, world.observe(role), world.settings).give_up(""))
    if world.agent_selection == reply["role"]:
        events = world.step(read)
        assert all(e.kind for e in events)
