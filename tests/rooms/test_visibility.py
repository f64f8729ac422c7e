"""Corner ray-casting visibility, the naive baseline, pixel counts and view sampling, on rooms made of boxes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh

from simlab.worlds.rooms import cameras, render
from simlab.worlds.rooms import visibility as vis
from simlab.worlds.rooms.model import Camera
from tests.rooms.box_scenes import box, random_room, room, use_boxes

LOOK_WEST = Camera((5.5, 2.3, 1.6), math.pi)


@pytest.fixture(autouse=True)
def _boxes(monkeypatch: pytest.MonkeyPatch) -> None:
    use_boxes(monkeypatch)


def screened_room():
    """A red box in front of a partition wall, a blue box hidden behind it, one box beside the view."""
    return room(
        [
            box("front", (3.0, 2.0, 0.0), (3.6, 2.6, 0.8)),
            box("partition", (2.0, 0.3, 0.0), (2.1, 4.7, 2.2), rgb=(200, 200, 200)),
            box("behind", (0.5, 2.0, 0.0), (1.1, 2.6, 0.8), rgb=(30, 30, 200)),
            box("beside", (5.2, 4.5, 0.0), (5.8, 4.9, 0.8), rgb=(30, 200, 30)),
        ]
    )


def test_box_behind_a_wall_is_hidden_and_one_in_front_is_visible() -> None:
    scene = screened_room()
    geom = vis.SceneGeometry(scene)
    assert geom.backend == "embree"
    assert vis.visible_objects(geom, LOOK_WEST) == ["front", "partition"]
    rays = vis.corner_rays(geom, LOOK_WEST, scene.object("behind"))
    assert len(rays) == 8 and all(r.in_frustum and r.blocked for r in rays)
    assert {r.hit_object for r in rays} <= {"front", "partition"}


def test_the_scene_mesh_is_the_objects_then_the_shell_joined_as_trimesh_joins_them() -> None:
    scene = screened_room()
    mesh, owners = vis.scene_mesh(scene)
    parts = [vis.object_mesh(obj) for obj in scene.objects] + [part for _, part, _ in vis.room_shell(scene)]
    joined = trimesh.util.concatenate(parts)
    assert np.array_equal(mesh.vertices, joined.vertices) and np.array_equal(mesh.faces, joined.faces)
    assert np.array_equal(mesh.face_normals, joined.face_normals)
    shell = sum(len(part.faces) for _, part, _ in vis.room_shell(scene))
    assert (
        owners.tolist()
        == [k for k, obj in enumerate(scene.objects) for _ in range(len(parts[k].faces))] + [vis.SHELL] * shell
    )


def test_object_beside_the_frustum_is_not_visible() -> None:
    scene = screened_room()
    assert not vis.in_frustum(LOOK_WEST, scene.object("beside").center)
    assert vis.in_frustum(LOOK_WEST, scene.object("front").center)
    assert not vis.in_frustum(LOOK_WEST, (6.0, 2.3, 1.6))  # behind the camera
    rays = vis.corner_rays(vis.SceneGeometry(scene), LOOK_WEST, scene.object("beside"))
    assert not any(r.in_frustum for r in rays)


def test_in_frustum_uses_the_aspect_ratio_horizontally() -> None:
    camera = Camera((0.0, 0.0, 1.0), 0.0, pitch=0.0, fov=60.0, width=1600, height=800)
    half_v = math.tan(math.radians(30))
    assert vis.in_frustum(camera, (1.0, -1.9 * half_v, 1.0))  # within the 2:1 horizontal extent
    assert not vis.in_frustum(camera, (1.0, 0.0, 1.0 + 1.1 * half_v))
    assert not vis.in_frustum(camera, (1.0, -2.1 * half_v, 1.0))


def test_min_corners_is_respected() -> None:
    """A box cut by the bottom edge of the view shows exactly its four top corners."""
    camera = Camera((5.5, 2.3, 1.0), math.pi, pitch=0.0, fov=30.0)
    cut = box("cut", (2.0, 2.0, 0.0), (2.4, 2.6, 1.0))
    scene = room([cut])
    geom = vis.SceneGeometry(scene)
    good = [r for r in vis.corner_rays(geom, camera, cut) if r.in_frustum and not r.blocked]
    assert len(good) == 4
    assert vis.visible_objects(geom, camera, min_corners=4) == ["cut"]
    assert vis.visible_objects(geom, camera, min_corners=5) == []


@pytest.mark.parametrize("seed", range(6))
def test_embree_and_naive_agree_on_random_rooms(seed: int) -> None:
    scene = random_room(seed, count=7)
    geom = vis.SceneGeometry(scene)
    for k in range(4):
        camera = Camera((1.0 + k * 1.2, 0.5 + (seed % 3) * 1.5, 1.6), k * math.pi / 2 + seed)
        assert vis.visible_objects(geom, camera) == vis.naive_visible_objects(scene, camera)


def test_both_agents_in_one_query_match_one_at_a_time() -> None:
    scene = random_room(11, count=8)
    geom = vis.SceneGeometry(scene)
    cameras = [Camera((1.0, 1.0, 1.6), 0.7), Camera((5.0, 4.0, 1.6), 3.5)]
    assert vis.visible_for_cameras(geom, cameras) == [vis.visible_objects(geom, c) for c in cameras]


def test_pixel_counts_positive_for_visible_and_zero_for_hidden() -> None:
    counts = render.pixel_counts(screened_room(), LOOK_WEST, (320, 240))
    assert counts["front"] > 1000 and counts["partition"] > counts["front"]
    assert counts["behind"] == 0 and counts["beside"] == 0
    assert render.agreement(screened_room(), LOOK_WEST, (320, 240)) == 1.0


def test_min_pixels_scales_with_area() -> None:
    assert render.min_pixels((1280, 720)) == 1000
    assert render.min_pixels((640, 360)) == 250


def ring_room():
    """Sixteen boxes along the walls of a 7 x 6 m room, a table in the middle and a rug."""
    xs, ys = (0.3, 1.8, 3.2, 4.6, 6.1), (1.6, 2.8, 4.0)
    spots = [(x, y) for x in xs for y in (0.3, 5.1)] + [(x, y) for x in (0.3, 6.1) for y in ys]
    objects = [box(f"box_{k:02d}", (x, y, 0.0), (x + 0.6, y + 0.6, 0.9)) for k, (x, y) in enumerate(spots)]
    objects.append(box("table", (3.0, 2.5, 0.0), (4.0, 3.5, 0.75), rgb=(120, 80, 40)))
    objects.append(box("rug", (2.5, 2.0, 0.0), (4.5, 4.0, 0.01), rgb=(90, 40, 120)))
    return room(objects, width=7.0, depth=6.0)


def test_sample_views_meets_its_constraints_and_is_deterministic() -> None:
    scene = ring_room()
    settings = {"id_size": (256, 192)}
    pair = cameras.sample_views(scene, 5, settings)
    assert pair is not None
    assert len(pair.shared) >= 2 and len(pair.answerer_only) >= 2 and len(pair.helper_only) >= 2
    assert cameras.view_constraints(pair, scene)
    pool = vis.coverage_pool(scene)
    assert "rug" not in pool and len(set(pair.answerer_visible) | set(pair.helper_visible)) >= 0.6 * len(pool)
    for camera in (pair.answerer, pair.helper):
        assert camera.position[2] == 1.6 and camera.pitch == pytest.approx(math.radians(-10))
        assert 0.4 <= camera.position[0] <= 6.6 and 0.4 <= camera.position[1] <= 5.6
    assert cameras.sample_views(scene, 5, settings) == pair
    assert vis.ViewPair.from_json(pair.to_json()) == pair


def test_sample_views_from_a_geometry_shared_between_samplings_is_each_samplings_own() -> None:
    scene, settings = ring_room(), {"id_size": (256, 192)}
    shared = vis.SceneGeometry(scene)
    alone = [cameras.sample_views(scene, seed, settings) for seed in (5, 6, 7)]
    assert [cameras.sample_views(scene, seed, settings, shared) for seed in (7, 5, 6)] == [alone[2], *alone[:2]]
    assert len({pair.answerer.position for pair in alone if pair is not None}) == 3  # three different samplings


def test_sample_views_gives_up_with_none() -> None:
    scene = room([box("lonely", (2.0, 2.0, 0.0), (2.5, 2.5, 0.5))])
    assert cameras.sample_views(scene, 1, {"max_attempts": 5, "pixel_filter": False}) is None


def test_a_ray_layer_moved_casts_as_one_built_where_its_triangles_now_are() -> None:
    """An editor's dragged object keeps its BVH and casts at it moved: the same rays hit at the same distances as
    at a layer built from the mesh moved, for rays from all around at a catalog object (a room's most detailed), and
    the moved layer's mesh is that mesh."""
    from simlab.worlds.rooms import catalog
    from simlab.worlds.rooms.generator import generate_scene

    mesh = max((catalog.object_mesh(o) for o in generate_scene(2, 4).objects), key=lambda m: len(m.faces))
    shift = np.array([1.37, -0.52, 0.0])
    moved = vis.RayLayer(mesh).moved(shift / 2).moved(shift / 2)  # a drag's steps add up
    built = vis.RayLayer(trimesh.Trimesh(mesh.vertices + shift, mesh.faces, process=False))
    rng = np.random.default_rng(5)
    centre = np.asarray(mesh.centroid) + shift
    origins = centre + rng.normal(size=(400, 3)) * 2.0
    directions = centre + rng.normal(size=(400, 3)) * 0.3 - origins
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    far, faces = moved.first_hits(origins, directions)
    far_built, faces_built = built.first_hits(origins, directions)
    hit = faces >= 0
    assert np.array_equal(hit, faces_built >= 0) and hit.sum() > 100
    assert np.allclose(far[hit], far_built[hit], rtol=0.0, atol=1e-9)
    # the same face, but where a ray meets two at one distance (an edge, or coplanar parts): either is first
    assert (faces == faces_built).mean() > 0.95
    assert np.allclose(moved.mesh.vertices, mesh.vertices + shift) and moved.faces == len(mesh.faces)
