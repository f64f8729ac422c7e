"""The rooms family as the engine sees it: tasks are question instances, roles the Answerer and the Helper."""

from __future__ import annotations

from simlab.worlds import WorldFamily
from simlab.worlds.rooms.agents import AGENTS
from simlab.worlds.rooms.benchmark import generate_tasks, load_questions
from simlab.worlds.rooms.world import ANSWERER, DEFAULT_SETTINGS, HELPER, RoomsWorld, check_settings

FAMILY = WorldFamily(
    name="rooms",
    world=RoomsWorld,
    roles=(ANSWERER, HELPER),
    role_groups={},
    generate=generate_tasks,
    load_tasks=load_questions,
    agents=AGENTS,
    default_agents={ANSWERER: "oracle", HELPER: "oracle"},
    check_settings=check_settings,
    headline_metrics=("accuracy", "invalid", "words", "mentions_per_message"),
    default_settings=DEFAULT_SETTINGS,
)
