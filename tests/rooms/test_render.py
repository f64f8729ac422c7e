"""Rooms pictures: scene items, the egocentric view, the id render and the top-down map, on box rooms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh

from simlab.render.scene import offscreen_plotter, render_items
from simlab.worlds.rooms import render as rr
from simlab.worlds.rooms import visibility as vis
from simlab.worlds.rooms.model import Camera
from tests.rooms.box_scenes import box, box_mesh, room, use_boxes

LOOK_WEST = Camera((5.5, 2.5, 1.6), math.pi)


@pytest.fixture(autouse=True)
def _boxes(monkeypatch: pytest.MonkeyPatch) -> None:
    use_boxes(monkeypatch)


def two_boxes():
    """A red box near the west wall in plain view and a blue one hidden right behind a tall grey panel."""
    return room(
        [
            box("red", (0.2, 2.0, 0.0), (0.8, 3.0, 1.0), rgb=(220, 20, 20)),
            box("panel", (3.0, 0.2, 0.0), (3.1, 1.8, 2.4), rgb=(150, 150, 150)),
            box("blue", (2.0, 0.6, 0.0), (2.6, 1.2, 0.8), rgb=(20, 20, 220)),
        ]
    )


def test_ids_encode_and_decode_exactly() -> None:
    codes = np.array([[rr.encode_index(k) for k in (0, 1, 255, 70000)]], dtype=np.uint8)
    assert rr.decode_ids(codes).tolist() == [[0, 1, 255, 70000]]
    assert rr.decode_ids(np.zeros((1, 1, 3), dtype=np.uint8)).tolist() == [[-1]]


def test_id_render_counts_visible_and_hidden_objects() -> None:
    scene = two_boxes()
    ids = rr.render_ids(scene, LOOK_WEST, (320, 240))
    assert ids.shape == (240, 320)
    assert set(np.unique(ids).tolist()) == {-1, 0, 1}
    assert ids[120, 160] == 0  # the red box is straight ahead
    counts = rr.pixel_counts(scene, LOOK_WEST, (320, 240))
    assert counts["red"] > 0 and counts["panel"] > 0 and counts["blue"] == 0


def test_render_view_is_not_blank_and_colours_read_true() -> None:
    image = rr.render_view(two_boxes(), LOOK_WEST, (320, 240))
    pixels = np.asarray(image).astype(int)
    assert image.size == (320, 240) and len(np.unique(pixels.reshape(-1, 3), axis=0)) > 5
    r, g, b = pixels[120, 160]
    assert r > 150 and r > 2.5 * g and r > 2.5 * b


def test_a_view_has_no_blended_edges_and_leaves_the_shared_plotter_multisampled() -> None:
    scene, size = two_boxes(), (320, 240)
    smooth = np.asarray(render_items(rr.room_scene_items(scene), rr.camera_pose(LOOK_WEST), size, "white"))
    with offscreen_plotter(size) as plotter:
        samples = plotter.render_window.GetMultiSamples()  # as many as the GL gives, once it has drawn
    assert samples > 0  # the plotters' default, which other pictures (exports, blocks) are drawn with
    sharp = np.asarray(rr.render_view(scene, LOOK_WEST, size)).reshape(-1, 3)
    # flat faces unblended: a handful of colours (faces and background), where multisampling mixes hundreds
    assert 3 < len(np.unique(sharp, axis=0)) < len(np.unique(smooth.reshape(-1, 3), axis=0)) / 2
    with offscreen_plotter(size) as plotter:
        assert plotter.render_window.GetMultiSamples() == samples


def test_faces_coloured_on_the_cpu_are_vtks_own_lighting_within_one_level() -> None:
    scene, size = two_boxes(), (320, 240)
    items = rr.room_scene_items(scene)
    with offscreen_plotter(size) as plotter, rr.without_anti_aliasing(plotter):
        lit = np.asarray(render_items(items, rr.camera_pose(LOOK_WEST), size, "white"), dtype=int)
    flat = np.asarray(rr.render_view(scene, LOOK_WEST, size), dtype=int)
    assert np.abs(flat - lit).max() <= 1
    assert len(np.unique(flat.reshape(-1, 3), axis=0)) > 4  # lit faces in several shades, not one flat colour


def test_the_same_items_drawn_again_reuse_their_parts_and_give_the_same_pixels() -> None:
    """The editor draws both agents' pictures from a room's kept items after every edit: an item's lit part is
    made once for the item object and gives the pixels a fresh one gives, from any camera."""
    scene, size = two_boxes(), (320, 240)
    items = rr.room_scene_items(scene)
    look_east = Camera((0.5, 2.5, 1.6), 0.0)
    first = [np.asarray(p) for p in rr.render_views_of_items(items, [LOOK_WEST, look_east], size)]
    parts = [rr._flat_lit(item) for item in items]
    again = [np.asarray(p) for p in rr.render_views_of_items(items, [look_east, LOOK_WEST], size)]
    assert [rr._flat_lit(item) for item in items] == parts  # the very same parts: none made again
    fresh = rr.room_scene_items(scene)  # equal items, other objects: parts of their own, the same pixels
    assert all(rr._flat_lit(a) is not b for a, b in zip(fresh, parts, strict=True))
    assert np.array_equal(again[1], first[0]) and np.array_equal(again[0], first[1])
    assert np.array_equal(np.asarray(rr.render_views_of_items(fresh, [LOOK_WEST], size)[0]), first[0])


def two_coloured(obj):
    mesh = box_mesh(obj)
    colours = np.tile([200, 30, 30, 255], (len(mesh.faces), 1))
    colours[:4] = [250, 250, 250, 255]
    mesh.visual.face_colors = colours
    return mesh


def test_scene_items_split_objects_by_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    scene = two_boxes()
    items = rr.room_scene_items(scene, wall_opacity=0.3)
    kinds = {item.key: item.kind for item in items}
    assert kinds["shell:floor"] == "floor" and kinds["shell:wall_north"] == "wall"
    assert kinds["object:red"] == "object"
    assert next(i for i in items if i.key == "object:red").tooltip == "red: red box"
    assert all(i.opacity == 0.3 for i in items if i.kind == "wall")
    monkeypatch.setattr(vis, "object_mesh", two_coloured)
    parts = rr.object_items(scene.object("red"))
    assert [p.key for p in parts] == ["object:red:0", "object:red:1"]
    assert parts[0].color == pytest.approx((200 / 255, 30 / 255, 30 / 255))
    assert parts[0].mesh.n_cells + parts[1].mesh.n_cells == 12


def colour_centroid(image, rgb) -> tuple[float, float]:
    pixels = np.asarray(image).astype(int)
    mask = np.all(pixels == rgb, axis=2)
    assert mask.sum() > 50
    ys, xs = np.nonzero(mask)
    return float(xs.mean()), float(ys.mean())


def map_room():
    return room(
        [
            box("sofa", (4.0, 3.8, 0.0), (5.0, 4.6, 0.8), rgb=(30, 140, 60), category="sofa"),
            box("bed", (0.5, 0.5, 0.0), (1.7, 2.0, 0.6), rgb=(40, 60, 200), category="bed"),
        ]
    )


@pytest.mark.parametrize("yaw", [0.0, 0.6435, 2.5, -1.9])
def test_map_puts_what_the_camera_faces_above_its_marker(yaw: float) -> None:
    scene = map_room()
    target = scene.object("sofa").center
    start = (target[0] - 2.5 * math.cos(yaw), target[1] - 2.5 * math.sin(yaw), 1.6)
    camera = Camera(start, yaw)
    image = rr.topdown_map(scene, ["sofa", "bed"], camera, size=(400, 400))
    x, y = rr.MapFrame(scene, camera, (400, 400)).pixel(start[:2])
    sx, sy = colour_centroid(image, (30, 140, 60))
    assert sy < y - 50 and abs(sx - x) < 12


def test_swap_exchanges_positions_on_the_map() -> None:
    scene = map_room()
    camera = Camera((3.0, 2.5, 1.6), 0.0)
    plain = rr.topdown_map(scene, ["sofa", "bed"], camera, size=(400, 400))
    swapped = rr.topdown_map(scene, ["sofa", "bed"], camera, size=(400, 400), swap=[("sofa", "bed")])
    assert np.abs(np.asarray(plain, dtype=int) - np.asarray(swapped, dtype=int)).sum() > 0
    sofa, bed = colour_centroid(plain, (30, 140, 60)), colour_centroid(plain, (40, 60, 200))
    moved_sofa = colour_centroid(swapped, (30, 140, 60))
    assert math.dist(moved_sofa, bed) < 15 and math.dist(moved_sofa, sofa) > 100


def test_labels_replace_categories() -> None:
    scene = map_room()
    camera = Camera((3.0, 2.5, 1.6), 0.0)
    default = rr.topdown_map(scene, ["sofa", "bed"], camera, size=(400, 400))
    named = rr.topdown_map(scene, ["sofa", "bed"], camera, size=(400, 400), labels={"sofa": "A"})
    assert np.asarray(default).tobytes() != np.asarray(named).tobytes()


def test_overlay_marks_corners() -> None:
    scene = two_boxes()
    geom = vis.SceneGeometry(scene)
    rays = [r for name in ("red", "blue") for r in vis.corner_rays(geom, LOOK_WEST, scene.object(name))]
    image = np.asarray(rr.render_view_overlay(scene, LOOK_WEST, rays, (320, 240))).astype(int)
    for rgb in (rr.CORNER_COLOURS["visible"], rr.CORNER_COLOURS["blocked"]):
        assert np.all(image == rgb, axis=2).sum() > 5


def test_projection_matches_the_render() -> None:
    """The red box's projected corners bound the red pixels of the id render."""
    scene = two_boxes()
    red = scene.object("red")
    uv = rr.project(LOOK_WEST, np.array(red.corners()), (320, 240))
    ys, xs = np.nonzero(rr.render_ids(scene, LOOK_WEST, (320, 240)) == 0)
    assert uv[:, 0].min() - 2 <= xs.min() and xs.max() <= uv[:, 0].max() + 2
    assert uv[:, 1].min() - 2 <= ys.min() and ys.max() <= uv[:, 1].max() + 2


def test_meshes_convert_to_polydata() -> None:
    poly = rr.to_polydata(trimesh.creation.box())
    assert poly.n_cells == 12 and poly.n_points == 8
