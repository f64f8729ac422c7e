"""The five tasks: answers, distractor rules, seeded option order, margins, map swaps, the necessity filter."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from simlab.worlds.rooms.agents import solve_single_view
from simlab.worlds.rooms.model import Camera
from simlab.worlds.rooms.tasks import (
    DIRECTIONS,
    TASKS,
    Question,
    bearing,
    bin_edge_distance,
    corner_distance,
    direction_of,
    make_anchor,
    make_counting,
    make_direction,
    make_distance,
    make_mapping,
    make_question,
    map_layout,
    passes_necessity,
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


def test_options_are_shuffled_by_the_seed():
    scene, views = living_room()
    orders = {make_counting(scene, views, seed).options for seed in SEEDS}
    assert len(orders) > 1
    answers = {make_counting(scene, views, seed).answer for seed in SEEDS}
    assert len(answers) > 1


def test_anchor_answer_is_shared_and_distractors_follow_the_rules():
    scene, views = living_room()
    for seed in SEEDS:
        q = make_anchor(scene, views, seed)
        kinds = q.details["kinds"]
        assert len(q.options) == 4 and len(set(q.options)) == 4
        assert answer_value(q) in views.shared and kinds[answer_value(q)] == "shared"
        by_kind = {k: i for i, k in kinds.items()}
        assert by_kind["answerer_only"] in views.answerer_only
        assert by_kind["helper_only"] in views.helper_only
        assert by_kind["third"] not in views.shared
        if answer_value(q) == "chair_1":  # other chairs exist: the third option is a chair of another colour
            assert scene.object(by_kind["third"]).category == "chair"


def test_anchor_needs_both_exclusive_views():
    scene, views = living_room()
    assert make_anchor(scene, replace(views, helper_visible=["sofa_0", "table_0", "chair_1"]), 0) is None


def test_counting_counts_a_shared_instance_once():
    scene, views = living_room()  # chairs: red (Answerer), blue (both), green (Helper)
    for seed in SEEDS:
        q = make_counting(scene, views, seed)
        assert q.text == "What is the total number of chairs in the room?"
        values = sorted(q.option_objects.values())
        assert answer_value(q) == 3
        assert {2, 3, 4} <= set(values) and len(set(values)) == 4 and min(values) >= 1
        assert q.details["naive_sum"] == 4


def test_counting_without_a_shared_instance_has_no_naive_distractor_duplicate():
    scene = room(
        box("chair_0", "red", (2, 1, 0.45)), box("chair_1", "green", (6, 1, 0.45)), box("sofa_0", "gray", (4, 4, 0.4))
    )
    views = FakeViews(ANSWERER_CAMERA, HELPER_CAMERA, ["chair_0", "sofa_0"], ["chair_1", "sofa_0"])
    q = make_counting(scene, views, 0)
    assert answer_value(q) == 2 and 1 in q.option_objects.values()
    assert len(set(q.option_objects.values())) == 4


def test_counting_needs_a_category_the_helper_alone_sees():
    scene, views = living_room()
    views = replace(views, helper_visible=["sofa_0", "table_0", "chair_1", "door_0"])
    assert make_counting(scene, views, 0) is None


def test_corner_distance_is_the_nearest_corner_pair():
    a = ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    b = ((3.0, 0.0, 0.0), (4.0, 1.0, 1.0))
    assert corner_distance(a, b) == pytest.approx(2.0)
    assert corner_distance(a, a) == 0.0


def test_distance_answer_beats_the_runner_up_by_the_margin():
    scene, views = living_room()
    for seed in SEEDS:
        q = make_distance(scene, views, seed)
        assert q is not None
        picked = list(q.option_objects.values())
        assert q.target not in picked and q.target in views.shared
        assert len([i for i in picked if i in views.answerer_only]) == 2
        assert len([i for i in picked if i in views.helper_only]) == 2
        target = scene.object(q.target).bbox
        dist = {i: corner_distance(target, scene.object(i).bbox) for i in picked}
        ordered = sorted(dist.values(), reverse=q.details["mode"] == "farthest")
        assert dist[answer_value(q)] == pytest.approx(ordered[0])
        assert abs(ordered[0] - ordered[1]) >= 0.5
        assert q.details["mode"] in q.text


def test_distance_without_a_clear_winner_is_skipped():
    ring = [(4 + 2 * math.cos(k * math.pi / 2), 3 + 2 * math.sin(k * math.pi / 2), 0.45) for k in range(4)]
    scene = room(
        box("table_0", "brown", (4, 3, 0.45)),
        *(box(f"lamp_{k}", c, p) for k, (c, p) in enumerate(zip(("red", "blue", "green", "white"), ring, strict=True))),
    )
    views = FakeViews(ANSWERER_CAMERA, HELPER_CAMERA, ["table_0", "lamp_0", "lamp_1"], ["table_0", "lamp_2", "lamp_3"])
    assert make_distance(scene, views, 0) is None
    assert make_distance(scene, views, 0, {"distance_margin": 0.0}) is not None


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


def test_direction_targets_helper_only_objects_away_from_bin_edges():
    scene, views = living_room()
    seen = set()
    for seed in SEEDS:
        q = make_direction(scene, views, seed)
        assert q.target in views.helper_only
        assert bin_edge_distance(q.details["bearing"]) >= 5.0
        truth = direction_of(bearing(views.answerer, scene.object(q.target).center))
        assert answer_value(q) == truth
        k = DIRECTIONS.index(truth)
        values = set(q.option_objects.values())
        assert DIRECTIONS[(k + 4) % 8] in values
        assert values & {DIRECTIONS[(k + 1) % 8], DIRECTIONS[(k - 1) % 8]}
        assert len(values) == 4
        seen.add(q.target)
    # the chair (bearing 21.8) and the plant (-24.4) sit within 5 degrees of a bin edge
    assert seen <= {"cabinet_0", "bookshelf_0", "door_0"} and "cabinet_0" in seen
    assert make_direction(scene, views, 0, {"direction_edge": 23.0}) is None


def test_mapping_shows_correct_and_swapped_maps():
    scene, views = living_room()
    questions = [make_mapping(scene, views, seed) for seed in range(30)]
    assert {q.answer for q in questions} == {"yes", "no"}
    for q in questions:
        assert q.options == ("yes", "no")
        if q.answer == "yes":
            assert q.map_swap is None
            continue
        ((a, b),) = q.map_swap
        assert a in views.helper_only and b in views.helper_only
        assert scene.object(a).category != scene.object(b).category
        true = map_layout(scene, [a, b], views.answerer)
        shown = map_layout(scene, [a, b], views.answerer, q.map_swap)
        assert shown[a] == true[b] and shown[b] == true[a]
        assert math.dist(true[a], true[b]) >= 1.0


def test_map_layout_faces_plus_y():
    scene, views = living_room()
    layout = map_layout(scene, ["table_0", "door_0"], views.answerer)
    assert layout["table_0"] == pytest.approx((0.0, 3.0))  # 3 m straight ahead
    assert layout["door_0"][0] > 0  # the door is to the Answerer's right


def test_mapping_needs_a_visible_swap():
    scene = room(
        box("chair_0", "red", (2, 1, 0.45)), box("chair_1", "blue", (6, 1, 0.45)), box("lamp_0", "red", (6.5, 1, 0.45))
    )
    views = FakeViews(ANSWERER_CAMERA, HELPER_CAMERA, ["chair_0"], ["chair_1", "lamp_0"])
    assert make_mapping(scene, views, 0) is None  # the only different-category pair is 0.5 m apart


def test_necessity_filter():
    scene, views = living_room()
    q = make_anchor(scene, views, 0)
    assert not passes_necessity(q, scene, views, lambda q_, *_: q_.answer)
    assert passes_necessity(q, scene, views, lambda *_: "nothing")
    seeds = []
    passes_necessity(q, scene, views, lambda *a: seeds.append(a[3]) or q.answer, tries=3, seed=5)
    assert len(set(seeds)) == 3


def test_necessity_filter_drops_what_one_view_answers():
    scene, views = living_room()
    # only the answer is visible to the Answerer: the single-view solver always picks it
    q = Question(
        "q",
        "anchor",
        scene.id,
        "Which...?",
        ("door", "sofa", "cabinet", "bookshelf"),
        "B",
        {"A": "door_0", "B": "sofa_0", "C": "cabinet_0", "D": "bookshelf_0"},
    )
    assert not passes_necessity(q, scene, views, solve_single_view)
    # counting always needs the Helper: the solver picks the Answerer's own (under)count
    counting = make_counting(scene, views, 0)
    assert passes_necessity(counting, scene, views, solve_single_view)
