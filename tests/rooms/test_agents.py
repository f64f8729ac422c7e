"""Scripted rooms agents: the registry, the oracle pair over a simulated dialogue, the single-view and random
answerers."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from simlab.core.seeding import rng
from simlab.core.world import Observation
from simlab.worlds.rooms.agents import AGENTS, VIEW_PREFIX, single_view_answer, solve_single_view
from simlab.worlds.rooms.describe import describe_objects
from simlab.worlds.rooms.model import Camera
from simlab.worlds.rooms.observations import ANSWERER, HELPER, answerer_data, view_entries
from simlab.worlds.rooms.tasks import TASKS, candidates, make_question
from tests.rooms.handmade import FakeViews, box, living_room, room

MAX_ROUNDS = 10


def helper_data(question, scene, views, with_size=True):
    descriptions = describe_objects(scene, sorted({*views.answerer_visible, *views.helper_visible}))
    view = view_entries(scene, views.helper_visible, views.helper, descriptions)
    if not with_size:
        view = [{k: v for k, v in e.items() if k != "world_size"} for e in view]
    return {"role": HELPER, "task": question.task, "view": view}


def play(question, scene, views, answerer, helper, with_size=True):
    """The world's protocol in miniature: alternate messages from the Answerer, stop on "end" or the budget,
    then ask for the answer. Returns (answer reply, history)."""
    static = {ANSWERER: answerer_data(question, scene, views), HELPER: helper_data(question, scene, views, with_size)}
    if not with_size:
        static[ANSWERER]["view"] = [{k: v for k, v in e.items() if k != "world_size"} for e in static[ANSWERER]["view"]]
    agents = {ANSWERER: answerer, HELPER: helper}
    for role, agent in agents.items():
        agent.reset(7, role, {})
    history: list[dict] = []

    def observe(role, phase):
        data = {**static[role], "phase": phase, "history": list(history), "round": len(history) + 1}
        return Observation(role, len(history) + 1, "", data={**data, "max_rounds": MAX_ROUNDS})

    while len(history) < MAX_ROUNDS:
        role = ANSWERER if len(history) % 2 == 0 else HELPER
        reply = agents[role].act(observe(role, "dialogue"))
        history.append({"role": role, "text": reply.message or ""})
        if role == ANSWERER and (reply.action or {}).get("action") == "end":
            break
    return answerer.act(observe(ANSWERER, "answer")), history


def oracle_pair():
    return AGENTS["oracle"](ANSWERER), AGENTS["oracle"](HELPER)


@pytest.mark.parametrize("task", TASKS)
def test_oracle_pair_answers_every_task(task):
    scene, views = living_room()
    for seed in range(10):
        q = make_question(task, scene, views, seed)
        reply, history = play(q, scene, views, *oracle_pair())
        assert reply.action == {"answer": q.answer} and reply.message == q.answer
        assert len(history) == 3  # ask, report, end


def test_the_helper_report_has_no_ids():
    scene, views = living_room()
    q = chairs(scene, views)
    _, history = play(q, scene, views, *oracle_pair())
    report = history[1]["text"]
    assert report.startswith(VIEW_PREFIX)
    assert not any(object_id in report for object_id in views.helper_visible)


@pytest.mark.parametrize("task", ["anchor", "counting", "direction", "mapping"])
def test_oracle_without_box_sizes(task):
    scene, views = living_room()
    for seed in range(5):
        q = make_question(task, scene, views, seed)
        reply, _ = play(q, scene, views, *oracle_pair(), with_size=False)
        assert reply.action == {"answer": q.answer}


def random_room(seed):
    """A cluttered room with a random visibility split (no geometry behind it: the tasks do not need any)."""
    r = rng(seed, "agents-test-room")
    categories = ("chair", "cabinet", "lamp", "plant_container", "shelf", "door", "table")
    colours = ("red", "white", "blue", "green")
    objects = [
        box(
            f"{r.choice(categories)}_{k}",
            r.choice(colours),
            (r.uniform(0.3, 7.7), r.uniform(0.3, 5.7), r.uniform(0.3, 1.5)),
            (r.uniform(0.3, 1.2), r.uniform(0.3, 1.2), r.uniform(0.3, 1.5)),
            r.choice(("small", "medium", "large")),
        )
        for k in range(r.randint(8, 22))
    ]
    ids = [o.id for o in objects]
    split = [r.choice(("a", "h", "both", "both", "none")) for _ in ids]
    answerer = Camera((r.uniform(1, 7), r.uniform(1, 5), 1.6), r.uniform(-math.pi, math.pi))
    helper = Camera((r.uniform(1, 7), r.uniform(1, 5), 1.6), r.uniform(-math.pi, math.pi))
    views = FakeViews(
        answerer,
        helper,
        sorted(i for i, s in zip(ids, split, strict=True) if s in ("a", "both")),
        sorted(i for i, s in zip(ids, split, strict=True) if s in ("h", "both")),
    )
    return room(*objects, scene_id=f"random-{seed}"), views


@pytest.mark.parametrize("task", TASKS)
def test_oracle_pair_on_random_rooms(task):
    made = 0
    for seed in range(40):
        scene, views = random_room(seed)
        q = make_question(task, scene, views, seed)
        if q is None:
            continue
        made += 1
        reply, _ = play(q, scene, views, *oracle_pair())
        assert reply.action == {"answer": q.answer}, (seed, q)
    assert made >= 10


def chairs(scene, views):
    return next(c for c in candidates("counting", scene, views, 0) if c.details["category"] == "chair").question(0, 0)


def test_single_view_counting_never_answers_below_its_own_count():
    scene, views = living_room()
    q = replace(chairs(scene, views), option_objects={"A": 1, "B": 2, "C": 3, "D": 4}, options=("1", "2", "3", "4"))
    data = answerer_data(q, scene, views)
    picks = {q.option_objects[single_view_answer(data, rng(s, "count"))] for s in range(60)}
    assert picks == {2, 3, 4}  # it sees two chairs: one is not the total
    reply, history = play(q, scene, views, AGENTS["single-view"](ANSWERER), AGENTS["oracle"](HELPER))
    assert len(history) == 1 and q.option_objects[reply.action["answer"]] >= 2


def test_single_view_direction_guesses_any_option_seeded():
    scene, views = living_room()
    q = make_question("direction", scene, views, 0)
    data = answerer_data(q, scene, views)
    picks = {q.option_objects[single_view_answer(data, rng(s, "prior"))] for s in range(60)}
    assert picks == set(q.option_objects.values())  # a target it does not see could be anywhere
    assert solve_single_view(q, scene, views, 3) == solve_single_view(q, scene, views, 3)


def test_single_view_mapping_spots_its_own_objects_misplaced():
    scene = room(
        box("chair_0", "red", (3, 1, 0.45)),
        box("lamp_0", "red", (3, 5, 0.45)),
        box("sofa_0", "gray", (6, 4, 0.4)),
        box("table_0", "brown", (6, 1, 0.4)),
    )
    helper = ["sofa_0", "table_0"]
    views = FakeViews(Camera((1.0, 3.0, 1.6), 0.0), Camera((7.0, 3.0, 1.6), math.pi), ["chair_0", "lamp_0"], helper)
    q = make_question("mapping", scene, views, 0)
    data = answerer_data(q, scene, views)
    data["map_objects"] = [{**m, "x": -m["x"]} for m in data["map_objects"]]  # left and right mirrored
    assert single_view_answer(data, rng(0)) == "no"


def test_random_answerer_is_seeded():
    scene, views = living_room()
    q = chairs(scene, views)
    answers = {
        play(q, scene, views, AGENTS["random"](ANSWERER), AGENTS["silent"](HELPER))[0].action["answer"]
        for _ in range(3)
    }
    assert len(answers) == 1 and answers <= {"A", "B", "C", "D"}


def test_oracle_answerer_with_a_silent_helper_keeps_asking_then_answers():
    scene, views = living_room()
    q = chairs(scene, views)
    reply, history = play(q, scene, views, AGENTS["oracle"](ANSWERER), AGENTS["silent"](HELPER))
    assert len(history) == MAX_ROUNDS and reply.action["answer"] in ("A", "B", "C", "D")


@pytest.mark.parametrize(
    ("name", "role", "message"),
    [
        ("single-view", HELPER, "answerer only"),
        ("random", HELPER, "answerer only"),
        ("silent", ANSWERER, "helper only"),
        ("oracle", "director", "unknown role"),
    ],
)
def test_registry_refuses_specs_that_do_not_fit(name, role, message):
    with pytest.raises(ValueError, match=message):
        AGENTS[name](role)


def test_registry_refuses_arguments():
    with pytest.raises(ValueError, match="no argument"):
        AGENTS["oracle"](ANSWERER, "fast")
