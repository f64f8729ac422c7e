"""Clicking an object in the rooms 3D view: who sees it, the corner counts behind it, its rays."""

from __future__ import annotations

import re

import pytest

from simlab.testing import play
from simlab.worlds import get_family
from simlab.worlds.rooms.inspection import LAYERS, inspect_item, object_id_of
from simlab.worlds.rooms.scene import scene_and_views

FAMILY = get_family("rooms")
COUNTS = re.compile(r"(\d+) of 8 corners in view and unblocked \((\d+) needed\)")


@pytest.fixture(scope="module")
def episode():
    task = FAMILY.tasks.generate(1, 0, groups=["counting"])[0]
    return play(FAMILY, task, ["answerer=oracle", "helper=oracle"], 0, None)


def test_every_objects_verdict_is_the_recorded_one_and_the_counts_back_it(episode):
    scene, views = scene_and_views(episode)
    for obj in scene.objects:
        found = inspect_item(episode, 1, f"object:{obj.id}")
        assert found is not None and found.title.startswith(f"{obj.id}: ") and obj.category in found.title
        for name, seen in (("Answerer", views.answerer_visible), ("Helper", views.helper_visible)):
            line = next(line for line in found.lines if line.startswith(f"{name} "))
            assert line.startswith(f"{name} sees it") == (obj.id in seen), line
            free, needed = map(int, COUNTS.search(line).groups())
            if obj.id in seen:  # the recorded set keeps only objects with enough free corners
                assert free >= needed, line
            elif free >= needed:
                assert "pixel filter" in line, line


def test_the_selection_draws_sixteen_rays_and_hides_the_others(episode):
    _scene, views = scene_and_views(episode)
    found = inspect_item(episode, 1, f"tint:{views.shared[0]}")
    assert found is not None and found.hides == ("ray",)
    rays = [item for item in found.items if item.key.startswith("selected:rays:")]
    assert sum(item.mesh.n_lines for item in rays) == 16  # eight corners from each of the two eyes
    assert all(item.kind == "selection" for item in found.items)


def test_keys_that_name_no_object_inspect_to_nothing(episode):
    assert object_id_of("object:sofa_0:2") == "sofa_0" and object_id_of("highlight:lamp_1") == "lamp_1"
    for key in ("shell:floor", "frustum:answerer", "rays:helper:visible", "object:", "tint:not_an_object", ""):
        assert inspect_item(episode, 1, key) is None, key


def test_the_layers_split_the_overlay():
    assert {kind for layer in LAYERS for kind in layer.kinds} >= {"tint", "ray", "frustum", "wall", "highlight"}
