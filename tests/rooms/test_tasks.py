"""The five tasks: answers, distractor rules (no option one view alone rules out), lettering, margins, map swaps."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from simlab.worlds.rooms.model import Camera
from simlab.worlds.rooms.tasks import (
    DIRECTIONS,
    TASKS,
    Question,
    against_wall,
    bearing,
    bin_edge_distance,
    candidates,
    corner_distance,
    direction_of,
    make_question,
    map_layout,
)
from tests.rooms.handmade import ANSWERER_CAMERA, HELPER_CAMERA, FakeViews, box, living_room, room

SEEDS = range(12)


def answer_value(q: Question):
    return q.option_objects[q.answer]


@pytest.mark.parametrize("task", TASKS)
def test_every_task_makes_a_question_that_survives_json(task):
    scene, views = living_room()
    q = make_question(task, scene, views, 3)
    assert q is not None and q.task == task and q.scene_id == scene.id
    assert Question.from_json(q.to_json()) == q
    assert make_question(task, scene, views, 3) == q  # deterministic


def test_unknown_task_is_refused():
    scene, views = living_room()
    with pytest.raises(ValueError, match="unknown rooms task"):
        make_question("painting", scene, views, 0)


def test_a_candidate_is_lettered_where_asked_and_shuffled_by_the_seed():
    scene, views = living_room()
    candidate = candidates("counting", scene, views, 0)[0]
    for letter in range(4):
        q = candidate.question(5, letter)
        assert q.answer == "ABCD"[letter] and answer_value(q) == candidate.values[0]
        assert sorted(q.options) == sorted(candidate.labels)
    assert len({candidate.question(seed, 0).options for seed in SEEDS}) > 1
    assert len({candidate.question(seed).answer for seed in SEEDS}) > 1


def of(task, scene, views, **settings):
    return [c.question(0, 0) for c in candidates(task, scene, views, 0, settings or None)]


def test_anchor_answer_is_shared_and_every_distractor_is_in_the_answerers_view_only():
    scene, views = living_room()
    questions = of("anchor", scene, views)
    assert {answer_value(q) for q in questions} == {"sofa_0", "table_0", "chair_1"}
    for q in questions:
        others = [v for k, v in q.option_objects.items() if k != q.answer]
        assert len(set(q.options)) == 4 and all(v in views.answerer_only for v in others)
        if answer_value(q) == "chair_1":  # the red chair is the Answerer's look-alike of the blue one
            assert "chair_0" in others and q.details["kinds"]["chair_0"] == "look_alike"


def test_anchor_needs_three_objects_only_the_answerer_sees():
    scene, views = living_room()
    assert of("anchor", scene, replace(views, answerer_visible=["sofa_0", "table_0", "chair_1", "lamp_0"])) == []


def test_counting_counts_a_shared_instance_once_with_windows_no_lower_than_the_answerers_count():
    scene, views = living_room()  # chairs: red (Answerer), blue (both), green (Helper)
    chairs = [q for q in of("counting", scene, views) if q.details["category"] == "chair"]
    assert chairs and all(q.text == "What is the total number of chairs in the room?" for q in chairs)
    windows = set()
    for q in chairs:
        values = sorted(q.option_objects.values())
        assert answer_value(q) == 3 and values == list(range(values[0], values[0] + 4))
        assert values[0] >= 2 and q.details["naive_sum"] == 4  # the Answerer sees two chairs
        windows.add(values[0])
    assert windows == {2, 3}  # the answer takes every place the Answerer's count leaves it


def test_counting_skips_a_kind_with_an_instance_nobody_sees():
    scene, views = living_room()
    views = replace(views, helper_visible=[i for i in views.helper_visible if i != "chair_2"])
    assert "chair" not in {q.details["category"] for q in of("counting", scene, views)}


def test_corner_distance_is_the_nearest_corner_pair():
    a = ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    b = ((3.0, 0.0, 0.0), (4.0, 1.0, 1.0))
    assert corner_distance(a, b) == pytest.approx(2.0)
    assert corner_distance(a, a) == 0.0


def test_distance_target_is_held_by_one_agent_who_sees_one_candidate_and_the_answer_is_clear():
    scene, views = living_room()
    questions = of("distance", scene, views)
    assert {q.details["holder"] for q in questions} == {"answerer", "helper"}
    for q in questions:
        holder = set(views.answerer_visible if q.details["holder"] == "answerer" else views.helper_visible)
        partner_only = set(views.helper_only if q.details["holder"] == "answerer" else views.answerer_only)
        picked = list(q.option_objects.values())
        assert q.target in holder and q.target not in views.shared
        assert len([i for i in picked if i in holder]) == 1
        assert len([i for i in picked if i in partner_only]) == 3
        target = scene.object(q.target).bbox
        dist = {i: corner_distance(target, scene.object(i).bbox) for i in picked}
        ordered = sorted(dist.values(), reverse=q.details["mode"] == "farthest")
        assert dist[answer_value(q)] == pytest.approx(ordered[0])
        assert abs(ordered[0] - ordered[1]) >= 0.5
        assert q.details["mode"] in q.text


def test_distance_without_a_clear_winner_is_skipped():
    ring = [(4 + 2 * math.cos(k * math.pi / 2), 3 + 2 * math.sin(k * math.pi / 2), 0.45) for k in range(4)]
    scene = room(
        box("lamp_4", "black", (4, 3, 0.45)),
        *(box(f"lamp_{k}", c, p) for k, (c, p) in enumerate(zip(("red", "blue", "green", "white"), ring, strict=True))),
    )
    answerer = ["lamp_4", "lamp_0"]  # the target in the middle of a ring of lamps, all as far from it
    views = FakeViews(ANSWERER_CAMERA, HELPER_CAMERA, answerer, ["lamp_0", "lamp_1", "lamp_2", "lamp_3"])
    assert of("distance", scene, views) == []
    assert of("distance", scene, views, distance_margin=0.0) != []


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        ((3.0, 0.0, 1.6), "front"),  # straight ahead (+x)
        ((0.0, -3.0, 0.2), "right"),  # the right vector of yaw 0 is -y; height does not matter
        ((0.0, 3.0, 1.6), "left"),
        ((-3.0, 0.0, 1.6), "behind"),
        ((2.0, -2.0, 1.6), "front-right"),
        ((-2.0, -2.0, 1.6), "behind-right"),
        ((-2.0, 2.0, 0.0), "behind-left"),
        ((2.0, 2.0, 1.6), "front-left"),
    ],
)
def test_direction_bins(point, expected):
    camera = Camera((0.0, 0.0, 1.6), 0.0)
    assert direction_of(bearing(camera, point)) == expected


def test_bin_edges():
    assert bin_edge_distance(0.0) == 22.5
    assert bin_edge_distance(20.0) == pytest.approx(2.5)
    assert direction_of(-179.0) == direction_of(180.0) == "behind"
    assert direction_of(22.0) == "front" and direction_of(23.0) == "front-right"


def test_direction_targets_helper_only_objects_away_from_bin_edges_with_a_symmetric_option_set():
    scene, views = living_room()
    questions = of("direction", scene, views)
    for q in questions:
        assert q.target in views.helper_only
        assert bin_edge_distance(q.details["bearing"]) >= 5.0
        truth = direction_of(bearing(views.answerer, scene.object(q.target).center))
        assert answer_value(q) == truth
        steps = sorted(DIRECTIONS.index(v) for v in q.option_objects.values())
        base = next(b for b in range(8) if {(b + d) % 8 for d in (0, 1, 4, 5)} == set(steps))
        assert DIRECTIONS.index(truth) in ((base) % 8, (base + 1) % 8, (base + 4) % 8, (base + 5) % 8)
    # the chair (bearing 21.8) and the plant (-24.4) sit within 5 degrees of a bin edge
    assert {q.target for q in questions} <= {"cabinet_0", "bookshelf_0", "door_0"}
    # the answer is the first of its neighbouring pair in one candidate and the second in the other
    for target in {q.target for q in questions}:
        firsts = set()
        for q in (q for q in questions if q.target == target):
            k = DIRECTIONS.index(answer_value(q))
            firsts.add(DIRECTIONS[(k + 1) % 8] in q.option_objects.values())
        assert firsts == {True, False}
    assert of("direction", scene, views, direction_edge=23.0) == []


def test_mapping_offers_the_true_map_and_plausible_swaps():
    scene, views = living_room()
    questions = of("mapping", scene, views)
    assert [q.answer for q in questions].count("yes") == 1 and len(questions) >= 2
    for q in questions:
        assert q.options == ("yes", "no")
        if q.answer == "yes":
            assert q.map_swap is None
            continue
        ((a, b),) = q.map_swap
        assert a in views.helper_only and b in views.helper_only
        assert scene.object(a).category != scene.object(b).category
        assert against_wall(scene, a) == against_wall(scene, b)
        true = map_layout(scene, [a, b], views.answerer)
        shown = map_layout(scene, [a, b], views.answerer, q.map_swap)
        assert shown[a] == true[b] and shown[b] == true[a]
        assert math.dist(true[a], true[b]) >= 1.0


def test_map_layout_faces_plus_y():
    scene, views = living_room()
    layout = map_layout(scene, ["table_0", "door_0"], views.answerer)
    assert layout["table_0"] == pytest.approx((0.0, 3.0))  # 3 m straight ahead
    assert layout["door_0"][0] > 0  # the door is to the Answerer's right


def test_mapping_needs_a_plausible_swap():
    scene = room(
        box("chair_0", "red", (2, 1, 0.45)), box("chair_1", "blue", (6, 1, 0.45)), box("lamp_0", "red", (6.5, 1, 0.45))
    )
    views = FakeViews(ANSWERER_CAMERA, HELPER_CAMERA, ["chair_0"], ["chair_1", "lamp_0"])
    assert of("mapping", scene, views) == []  # the only different-category pair is 0.5 m apart
