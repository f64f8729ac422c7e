"""A rooms benchmark build spread over worker processes writes what one process writes, byte for byte."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from simlab.worlds.rooms.benchmark import (
    build_benchmark,
    picture_jobs,
    room_pictures,
    scene_views,
    select_questions,
)
from simlab.worlds.rooms.model import Scene
from simlab.worlds.rooms.render import (
    pixel_counts,
    pixel_counts_many,
    render_view,
    render_views,
    room_flat_parts,
    topdown_map,
)
from simlab.worlds.rooms.visibility import SceneGeometry, ViewPair


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_build_writes_the_same_files_with_one_worker_or_two(tmp_path: Path) -> None:
    one = _files_of_build(tmp_path / "one", workers=1)
    two = _files_of_build(tmp_path / "two", workers=2)
    assert sorted(one) == sorted(two)
    assert any(name.startswith("views/") for name in one) and any(name.startswith("maps/") for name in one)
    assert [name for name in one if one[name] != two[name]] == []


def _files_of_build(out: Path, workers: int) -> dict[str, bytes]:
    build_benchmark(out, 8, 1, 3, workers=workers)
    return _files(out)


def test_pictures_are_drawn_once_per_room_from_its_first_question_with_every_map() -> None:
    items = select_questions(2, 3, n_rooms=12, workers=1).items
    jobs = picture_jobs(items)
    rooms = [item["scene"]["id"] for item in items]
    assert [job.scene["id"] for job in jobs] == list(dict.fromkeys(rooms))
    for job in jobs:
        first = next(item for item in items if item["scene"]["id"] == job.scene["id"])
        assert job.views == first["views"]
        mapping = [item["id"] for item in items if item["scene"]["id"] == job.scene["id"] and item["task"] == "mapping"]
        assert [question for question, _, _ in job.maps] == mapping


def test_a_rooms_picture_files_hold_exactly_the_views_agents_are_shown_and_the_maps() -> None:
    items = select_questions(2, 3, n_rooms=12, workers=1).items
    job = next(job for job in picture_jobs(items) if job.maps)
    scene, views = Scene.from_json(job.scene), ViewPair.from_json(job.views)
    files = dict(room_pictures(job))
    for role, camera in (("answerer", views.answerer), ("helper", views.helper)):
        written = Image.open(io.BytesIO(files[f"views/{scene.id}_{role}.png"]))
        assert written.tobytes() == render_view(scene, camera).tobytes()  # lossless, whatever the zlib level
    question, seen, swap = job.maps[0]
    pair = ViewPair.from_json(seen)
    drawn = topdown_map(scene, sorted({*pair.answerer_visible, *pair.helper_visible}), pair.answerer, swap=swap)
    assert Image.open(io.BytesIO(files[f"maps/{question}.png"])).tobytes() == drawn.tobytes()


def test_counting_both_cameras_from_one_id_mesh_gives_each_cameras_own_counts() -> None:
    scene, views = _room_with_views()
    cameras = [views.answerer, views.helper]
    together = pixel_counts_many(scene, cameras, (256, 192))
    assert together == [pixel_counts(scene, camera, (256, 192)) for camera in cameras]
    assert together[0] != together[1] and all(any(counts.values()) for counts in together)


def test_both_views_of_a_room_merged_into_three_actors_are_the_pixels_of_its_items() -> None:
    for seed in (3, 4, 5):  # rooms with many objects of several colours each
        made = scene_views(seed, 0)
        assert made is not None
        scene, views = made
        assert len(room_flat_parts(scene)) == 3  # floor, culled walls, objects
        together = render_views(scene, [views.answerer, views.helper], (320, 240))
        alone = [render_view(scene, camera, (320, 240)) for camera in (views.answerer, views.helper)]
        assert [image.tobytes() for image in together] == [image.tobytes() for image in alone]
        assert together[0].tobytes() != together[1].tobytes()


def _room_with_views() -> tuple[Scene, ViewPair]:
    made = scene_views(3, 0)
    assert made is not None
    return made


def test_id_renders_of_a_room_kept_on_the_plotter_count_as_a_fresh_one_after_other_rooms_and_views() -> None:
    rooms = [made for made in (scene_views(seed, 0) for seed in (3, 4)) if made is not None]
    geoms = [SceneGeometry(scene) for scene, _ in rooms]
    size = (256, 192)
    counts = [pixel_counts_many(s, [v.answerer, v.helper], size, g) for (s, v), g in zip(rooms, geoms, strict=True)]
    assert counts[0] != counts[1]
    render_views(rooms[1][0], [rooms[1][1].answerer], size)  # the same plotter, its actors taken off and back
    for (scene, views), geom, seen in zip(rooms, geoms, counts, strict=True):  # each room's id actor after the other's
        for _ in range(2):  # the second time from the id actor kept on the plotter
            assert pixel_counts_many(scene, [views.answerer, views.helper], size, geom) == seen
    assert [pixel_counts(scene, views.answerer, size) for scene, views in rooms] == [c[0] for c in counts]
