"""Referring expressions: shortest unique description per object, relations, plurals."""

from __future__ import annotations

from simlab.core.seeding import rng
from simlab.worlds.rooms.describe import _short_levels, describe_objects, plural, short_descriptions
from simlab.worlds.rooms.generator import generate_scene
from tests.rooms.handmade import box, living_room, room


def describe_all(scene):
    return describe_objects(scene, [o.id for o in scene.objects])


def test_category_alone_when_unique():
    scene = room(box("toilet_0", "white", (1, 1, 0.4)), box("sink_0", "white", (2, 1, 0.8)))
    assert describe_all(scene) == {"toilet_0": "toilet", "sink_0": "sink"}


def test_colour_then_size_then_colour():
    scene = room(
        box("cabinet_0", "yellow", (1, 1, 0.5)),
        box("cabinet_1", "white", (3, 1, 0.5), size_class="large"),
        box("cabinet_2", "white", (5, 1, 0.5), size_class="small"),
    )
    assert describe_all(scene) == {
        "cabinet_0": "yellow cabinet",
        "cabinet_1": "large white cabinet",
        "cabinet_2": "small white cabinet",
    }


def test_windows_are_named_by_their_covering():
    scene, _ = living_room()
    names = describe_all(scene)
    assert names["window_0"] == "window with beige curtains"
    assert names["window_1"] == "window with blue curtains"


def test_relation_to_the_nearest_uniquely_described_neighbour():
    scene = room(
        box("door_0", "purple", (1.0, 0.05, 1.0), (0.9, 0.1, 2.0)),
        box("door_1", "purple", (6.0, 0.05, 1.0), (0.9, 0.1, 2.0)),
        box("cabinet_0", "yellow", (1.9, 0.4, 0.5), (0.6, 0.6, 1.0)),
        box("cabinet_1", "white", (4.0, 5.0, 0.5), (0.6, 0.6, 1.0)),
    )
    names = describe_all(scene)
    assert names["door_0"] == "purple door next to a yellow cabinet"
    assert "door_1" not in names  # its nearest other-category object is 2+ m away: no unique description


def test_above_relation_and_the_article_for_a_unique_category():
    scene = room(
        box("wall_art_0", "blue", (2.0, 0.3, 1.6), (0.6, 0.05, 0.4)),
        box("wall_art_1", "blue", (6.0, 5.9, 1.6), (0.6, 0.05, 0.4)),
        box("cabinet_0", "white", (2.0, 0.3, 0.5), (1.0, 0.6, 1.0)),
        box("plant_container_0", "green", (6.0, 5.0, 0.3), (0.4, 0.4, 0.6)),
    )
    names = describe_all(scene)
    assert names["wall_art_0"] == "blue wall art above the cabinet"
    assert names["wall_art_1"] == "blue wall art next to the plant container"


def test_identical_twins_side_by_side_are_left_out():
    scene = room(
        box("chair_0", "red", (1.0, 1.0, 0.45)),
        box("chair_1", "red", (1.6, 1.0, 0.45)),
        box("table_0", "brown", (1.3, 1.8, 0.4), (1.0, 0.8, 0.8)),
    )
    names = describe_all(scene)
    assert "chair_0" not in names and "chair_1" not in names
    assert names["table_0"] == "table"


def test_descriptions_are_unique_and_independent_of_the_ids_asked():
    categories = ("chair", "cabinet", "lamp", "door")
    colours = ("red", "white", "blue")
    for seed in range(30):
        r = rng(seed, "describe-test")
        objects = [
            box(
                f"{r.choice(categories)}_{k}",
                r.choice(colours),
                (r.uniform(0, 8), r.uniform(0, 6), 0.5),
                size_class=r.choice(("small", "large")),
            )
            for k in range(14)
        ]
        scene = room(*objects)
        names = describe_all(scene)
        assert len(set(names.values())) == len(names)
        some = sorted(names)[::2]
        assert describe_objects(scene, some) == {i: names[i] for i in some}


def test_plural():
    assert [plural(c) for c in ("chair", "shelf", "bench", "plant_container", "library")] == [
        "chairs",
        "shelves",
        "benches",
        "plant containers",
        "libraries",
    ]


def test_short_descriptions_counted_per_category_are_each_object_against_its_peers():
    """The one-pass count of each level's keys gives what comparing every object with each of its category's
    peers gives (the definition), in generated rooms."""
    for k in range(40):
        scene = generate_scene(0, k)
        expected = {}
        for obj in scene.objects:
            peers = [o for o in scene.objects if o.category == obj.category and o.id != obj.id]
            levels = _short_levels(obj)
            unique = [t for n, (t, key) in enumerate(levels) if all(_short_levels(p)[n][1] != key for p in peers)]
            expected[obj.id] = unique[0] if unique else None
        assert short_descriptions(scene) == expected, k
