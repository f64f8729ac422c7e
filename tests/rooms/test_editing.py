"""The rooms editor's document, headless: edits, live visibility, snapping, warnings, pictures, questions
that the CLI runs, files. Real catalog meshes, real ray casting, real renders; no mocks."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from simlab.core.editing import EditError, History
from simlab.worlds import get_family
from simlab.worlds.rooms import visibility
from simlab.worlds.rooms.editing import EDITOR, RoomDocument, default_cameras
from simlab.worlds.rooms.editing_checks import TOLERANCE, _cross, penetration
from simlab.worlds.rooms.editing_place import WALL_SNAP
from simlab.worlds.rooms.generator import generate_scene
from simlab.worlds.rooms.inspection import who_sees
from simlab.worlds.rooms.render import footprint
from simlab.worlds.rooms.scene import ROLE_RGB, SHARED_RGB
from simlab.worlds.rooms.scene_io import load_scene
from simlab.worlds.rooms.visibility import CornerRay, corner_rays

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "scenes" / "rooms" / "example_room_000.json"
FAMILY = get_family("rooms")


def staged() -> tuple[RoomDocument, History]:
    """An empty 6 x 5 m living room, the Answerer at the west wall and the Helper at the east wall facing each
    other, a small plant container in the middle-west and a sofa against the south wall."""
    doc = EDITOR.new({"room_type": "living room", "width": 6.0, "depth": 5.0})
    history = History(doc)
    history.push(doc.set_values("camera:helper", {"x": 5.5, "y": 2.5, "yaw": 180.0}))
    history.push(doc.set_values("camera:answerer", {"x": 0.5, "y": 2.5, "yaw": 0.0}))
    history.push(doc.add("plant container", (2.0, 2.5, 0.0)))
    history.push(doc.add("sofa", (4.5, 0.3, 0.0)))
    history.push(doc.set_values("sofa_1", {"yaw": 90.0, "x": 4.0, "y": 1.5}))  # its back to the Helper
    return doc, history


def tint(doc: RoomDocument, object_id: str):
    return next((item for item in doc.scene_items() if item.key == f"tint:{object_id}"), None)


def test_a_sofa_dragged_in_front_of_what_the_helper_sees_hides_it_and_undo_shows_it_again():
    doc, history = staged()
    assert "plant_container_1" in doc.visible["helper"]
    assert tint(doc, "plant_container_1").color == ROLE_RGB["helper"]
    before = doc.summary()
    assert before.startswith("Answerer sees 1 objects, Helper 2, 1 shared")
    done = len(history.done)
    for x in (4.0, 3.4, 2.6):  # one drag, three steps
        history.push(doc.move("sofa_1", (x, 2.5, 0.0), gesture="drag-1"))
    assert len(history.done) == done + 1
    assert "plant_container_1" not in doc.visible["helper"]
    assert tint(doc, "plant_container_1") is None  # nobody sees it now: no tint
    assert doc.summary().startswith("Answerer sees 1 objects, Helper 1, 1 shared")
    assert "blocked by sofa_1 (8)" in " ".join(doc.inspect("plant_container_1"))
    history.undo()  # the whole drag at once
    assert "plant_container_1" in doc.visible["helper"] and doc.summary() == before
    assert tint(doc, "plant_container_1").color == ROLE_RGB["helper"]


def test_dragging_the_answerers_camera_changes_the_shared_set():
    doc, history = staged()
    assert doc.views.shared == ["sofa_1"] and tint(doc, "sofa_1").color == SHARED_RGB
    history.push(doc.move("camera:answerer", (3.5, 0.5, 0.0), gesture="cam"))
    assert doc.views.shared == [] and doc.cams["answerer"].position == (3.5, 0.5, 1.6)
    assert tint(doc, "sofa_1").color == ROLE_RGB["helper"]
    history.undo()
    assert doc.views.shared == ["sofa_1"]


def test_drops_snap_to_the_floor_onto_tops_and_flush_against_walls():
    doc, history = staged()
    history.push(doc.add("side table", (1.0, 4.0, 0.0)))
    history.push(doc.add("lamp", (1.0, 4.0, 0.9)))  # dropped over the table: stands on its top
    table, lamp = doc.objects["side_table_1"], doc.objects["lamp_1"]
    assert lamp.support == "side_table_1" and lamp.position[2] == pytest.approx(table.bbox[1][2])
    assert "lamp_1" not in {e.id for e in doc.entities() if e.warning}  # standing on a top is no collision
    history.push(doc.move("side_table_1", (2.0, 4.0, 0.0), gesture="t"))  # the lamp comes along
    assert doc.objects["lamp_1"].position[0] == pytest.approx(lamp.position[0] + 1.0)
    history.push(doc.move("lamp_1", (1.0, 1.0, 0.0), gesture="l"))  # off the table: onto the floor
    assert doc.objects["lamp_1"].support == "floor" and doc.objects["lamp_1"].position[2] == 0.0
    half = (table.bbox[1][1] - table.bbox[0][1]) / 2
    history.push(doc.move("side_table_1", (2.0, 5.0 - half - WALL_SNAP / 2, 0.0), gesture="w"))
    assert doc.objects["side_table_1"].bbox[1][1] == pytest.approx(5.0)  # a few cm from the wall: flush
    history.push(doc.move("side_table_1", (9.0, 2.0, 0.0), gesture="w"))  # never through a wall
    assert doc.objects["side_table_1"].bbox[1][0] == pytest.approx(6.0)
    history.push(doc.add("window", (3.0, 4.7, 0.0)))
    window = doc.objects["window_1"]
    assert window.bbox[1][1] == pytest.approx(5.0) and window.position[2] == 0.9  # in the north wall


def test_warnings_name_collisions_outside_descriptions_and_a_camera_in_an_object():
    doc, history = staged()
    assert not [e for e in doc.entities() if e.warning]
    history.push(doc.set_values("plant_container_1", {"x": 4.0, "y": 1.5}))  # into the sofa
    warned = {e.id: e.warning for e in doc.entities() if e.warning}
    assert "goes into sofa_1" in warned["plant_container_1"] and "goes into plant_container_1" in warned["sofa_1"]
    history.undo()
    history.push(doc.set_values("sofa_1", {"x": 5.9}))
    assert "outside the room" in doc.entities()[1].warning
    history.undo()
    history.push(doc.duplicate("plant_container_1"))  # two small white plant containers: no way to tell them apart
    warned = {e.id: e.warning for e in doc.entities() if e.warning}
    assert set(warned) == {"plant_container_1", "plant_container_2"}
    assert all("no description singles it out" in w for w in warned.values())
    history.push(doc.set_values("plant_container_2", {"color": "red"}))
    assert not [e for e in doc.entities() if e.warning]
    history.push(doc.set_values("camera:helper", {"x": 4.0, "y": 1.5, "eye_height": 0.5}))
    assert "inside sofa_1" in next(e.warning for e in doc.entities() if e.id == "camera:helper")


def test_fields_values_and_what_cannot_be_done():
    doc, _ = staged()
    assert [f.name for f in doc.fields("sofa_1")] == ["category", "color", "size", "x", "y", "yaw"]
    assert [f.name for f in doc.fields("camera:helper")] == ["x", "y", "eye_height", "yaw", "pitch", "fov"]
    assert doc.values("sofa_1")["yaw"] == 90.0 and doc.values("camera:helper")["yaw"] == 180.0
    bigger = doc.set_values("sofa_1", {"size": "large"}).changes[0].after
    assert bigger["size_class"] == "large" and bigger["size"][0] > doc.objects["sofa_1"].size[0]
    with pytest.raises(EditError, match="field 'color': expected one of"):
        doc.set_values("sofa_1", {"color": "gold"})
    with pytest.raises(EditError, match="no field 'height'"):
        doc.set_values("sofa_1", {"height": 2})
    with pytest.raises(EditError, match="field 'fov': expected 10 to 120"):
        doc.set_values("camera:answerer", {"fov": 200})
    with pytest.raises(EditError, match="cannot be deleted"):
        doc.remove("camera:answerer")
    with pytest.raises(EditError, match="no 'piano' to add"):
        doc.add("piano")  # the palette's names are the catalog's categories
    assert {p.name for p in doc.palette()} >= {"sofa", "lamp", "window", "wall art"}
    assert doc.entity_of("object:sofa_1:2") == "sofa_1" and doc.entity_of("frustum:helper") == "camera:helper"
    assert doc.entity_of("tint:plant_container_1") == "plant_container_1" and doc.entity_of("shell:floor") is None


def test_add_without_a_point_and_duplicate_find_room_that_crosses_nothing():
    doc, history = staged()
    for _ in range(4):
        history.push(doc.add("armchair"))
        history.push(doc.duplicate(history.done[-1].select))
    assert len(doc.objects) == 10
    assert not [e for e in doc.entities() if "goes into" in e.warning]


def test_a_selected_object_is_outlined_with_its_sixteen_corner_rays_and_presets_include_each_eye():
    doc, _ = staged()
    items = doc.scene_items("sofa_1")
    keys = {item.key for item in items}
    assert {"selected:sofa_1", "frustum:answerer", "frustum:helper", "shell:floor"} <= keys
    rays = [item for item in items if item.key.startswith("selected:rays:")]
    assert sum(item.mesh.n_lines for item in rays) == 16
    assert list(doc.cameras()) == ["answerer", "helper", "top", "free"]
    assert any(line.startswith("Helper sees it: ") for line in doc.inspect("sofa_1"))
    assert doc.inspect("camera:helper")[1].startswith("sees 2 objects: plant_container_1, sofa_1")


def test_pictures_are_rendered_again_only_for_the_camera_that_moved_or_an_object_it_may_show():
    doc, history = staged()
    pictures = doc.pictures()
    assert sorted(pictures) == ["Answerer's view", "Helper's view"]
    assert pictures["Helper's view"].size == (480, 360)
    renders = doc.parts.renders
    assert doc.pictures()["Helper's view"] is pictures["Helper's view"] and doc.parts.renders == renders
    history.push(doc.move("camera:answerer", (0.5, 2.0, 0.0), gesture="a"))
    again = doc.pictures()
    assert doc.parts.renders == renders + 1 and again["Helper's view"] is pictures["Helper's view"]
    history.push(doc.add("chair", (0.3, 4.7, 0.0)))  # behind the Helper's back, beside the Answerer
    doc.pictures()
    assert doc.parts.renders == renders + 2


def drawn(items) -> dict:
    """Scene items as what they draw: per key its look and its points."""
    return {item.key: (item.kind, item.color, item.opacity, np.asarray(item.mesh.points)) for item in items}


def test_what_a_drag_keeps_between_steps_gives_what_a_document_made_afresh_gives():
    """The facts and items kept between edits (moved items, kept tints and crossing verdicts, facts worked out
    once per edit) are those of a document made from the same room with nothing kept, at every step."""
    doc, history = staged()
    history.push(doc.add("side table", (2.0, 1.2, 0.0)))
    history.push(doc.add("lamp", (2.0, 1.2, 0.9)))  # on the table's top: it comes along
    steps = [(2.6, 2.0, 0.0), (4.0, 1.5, 0.0), (3.0, 3.0, 0.0), (2.2, 2.6, 0.0)]  # into the sofa, then out
    warned, handed = [], []  # items handed out stay as they were: a canvas may still draw their meshes
    for k, to in enumerate([*steps, None]):
        if to is None:
            history.undo()  # the whole drag: back where it was made
        else:
            history.push(doc.move("side_table_1", to, gesture="drag"))
        fresh = RoomDocument(doc.scene, dict(doc.cams))
        assert (doc.visible, doc.warnings, doc.summary()) == (fresh.visible, fresh.warnings, fresh.summary()), k
        kept, made = drawn(doc.scene_items("side_table_1")), drawn(fresh.scene_items("side_table_1"))
        assert list(kept) == list(made), k
        for key, (kind, colour, opacity, points) in made.items():
            assert kept[key][:3] == (kind, colour, opacity) and np.allclose(kept[key][3], points, atol=1e-9), key
        warned.append("goes into sofa_1" in doc.warnings.get("side_table_1", ""))
        handed += [(item, np.array(item.mesh.points)) for item in doc.scene_items("side_table_1")]
    assert warned == [False, True, False, False, False]
    assert all(np.array_equal(item.mesh.points, points) for item, points in handed)


def test_a_drag_across_a_room_sees_at_every_step_what_the_room_cast_afresh_sees():
    """Objects dragged in straight lines across a furnished room of another seed than the benchmark's, over and
    past the other objects (a window from wall to wall, turning): at every step the visible sets, the counts
    and the dragged object's verdicts are those of the room's corner rays cast at one BVH of the whole room
    made afresh, while the dragged object's rays are cast at the BVH made at the drag's first step, moved."""
    scene = next(s for s in (generate_scene(7, k) for k in range(1000)) if len(s.objects) >= 25)
    doc = RoomDocument(scene, default_cameras(scene, 1.5, -10.0))
    history = History(doc)
    cameras = [doc.cams["answerer"], doc.cams["helper"]]
    targets = [doc.views.shared[0], doc.views.helper_only[-1], doc.views.answerer_only[0]]
    changed = 0
    for n, target in enumerate(targets):
        start = doc.objects[target].position
        ends = sorted((o for o in doc.scene.objects if o.id != target), key=lambda o: -math.dist(o.position, start))
        end = ends[0].position  # across the room, to the farthest object
        bvhs, yaws = [], []
        for k in range(1, 13):
            to = tuple(a + (b - a) * k / 12 for a, b in zip(start, end, strict=True))
            before = dict(doc.visible)
            history.push(doc.move(target, (to[0], to[1], 0.0), f"drag-{n}"))
            whole = visibility.visible_for_cameras(visibility.SceneGeometry(doc.scene), cameras)
            assert [doc.visible["answerer"], doc.visible["helper"]] == whole, (target, k)
            fresh = RoomDocument(doc.scene, dict(doc.cams))
            assert doc.summary() == fresh.summary(), (target, k)
            assert doc.inspect(target) == fresh.inspect(target), (target, k)
            changed += doc.visible != before
            bvhs.append(doc.geometry.layers[-1].intersector)
            yaws.append(doc.objects[target].yaw)
        # one BVH for the whole drag, the first step's moved, but where the object turned (a window to another wall)
        assert [a is not b for a, b in pairwise(bvhs)] == [a != b for a, b in pairwise(yaws)], target
    assert changed >= 3  # the drags changed who sees what
    history.undo()
    assert doc.visible == RoomDocument(doc.scene, dict(doc.cams)).visible


def test_the_same_edits_give_the_same_document():
    first, second = staged()[0], staged()[0]
    assert json.dumps(first.to_json(), sort_keys=True) == json.dumps(second.to_json(), sort_keys=True)
    assert first.visible == second.visible


def test_save_and_open_keep_the_room_and_the_cameras_and_the_scene_stays_a_scene(tmp_path):
    doc, history = staged()
    path = doc.save(tmp_path / "room.json")
    history.mark_saved()
    again = EDITOR.open(path)
    assert EDITOR.can_open(path) and again.to_json() == doc.to_json() and again.visible == doc.visible
    assert [o.id for o in load_scene(path).objects] == ["plant_container_1", "sofa_1"]  # scene_io reads it
    history.push(doc.remove("plant_container_1"))
    history.undo()  # the deleted object comes back in its place
    assert doc.to_json() == again.to_json() and not history.dirty
    doc.run("Export glTF")
    assert (tmp_path / "room.glb").stat().st_size > 1000


def test_opening_a_scene_without_cameras_and_a_question_instance(tmp_path):
    doc = EDITOR.open(EXAMPLE)
    assert len(doc.objects) == 22 and doc.views.shared and doc.views.answerer_only and doc.views.helper_only
    task = doc.playable()
    path = tmp_path / "task.json"
    path.write_text(json.dumps(task))
    FAMILY.tasks.validate(task)
    opened = EDITOR.open(path)
    assert EDITOR.can_open(path) and opened.cams == doc.cams and opened.visible == doc.visible


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not a readable JSON file"),
        ('{"format": "simlab.blocks.structure"}', "expected a rooms scene"),
        ("broken-object", r"objects\[0\]: field 'bbox'"),
        ("broken-camera", r"field 'editor.helper': field 'yaw'"),
        ("unknown-category", r"objects\[0\].category"),
    ],
)
def test_bad_files_name_the_file_and_the_field(tmp_path, content, message):
    doc, _ = staged()
    data = doc.to_json()
    if content == "broken-object":
        data["objects"][0]["bbox"] = [[0, 0, 0]]
    elif content == "broken-camera":
        data["editor"]["helper"]["yaw"] = "north"
    elif content == "unknown-category":
        data["objects"][0]["category"] = "piano"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data) if content.startswith(("broken", "unknown")) else content)
    with pytest.raises(EditError, match=message) as caught:
        EDITOR.open(path)
    assert str(path) in str(caught.value)
    assert EDITOR.can_open(path) == content.startswith(("broken", "unknown"))  # a scene file, whatever is inside


def test_an_empty_room_cannot_be_played_yet():
    doc = EDITOR.new({"room_type": "bedroom", "width": 4.0, "depth": 3.5})
    assert doc.summary() == "Answerer sees 0 objects, Helper 0, 0 shared" and doc.room.room_type == "bedroom"
    with pytest.raises(EditError, match="no question can be asked about this room yet"):
        doc.playable()
    with pytest.raises(EditError, match="no question can be asked"):
        doc.run("Make questions for this room")
    with pytest.raises(EditError, match="field 'width'"):
        EDITOR.new({"width": 50.0})


def test_questions_kept_and_saved_run_as_a_benchmark_from_the_command_line(tmp_path):
    doc = EDITOR.open(EXAMPLE)
    proposal = doc.run("Make questions for this room")
    ids = [item_id for item_id, _ in proposal.items]
    # the example's Answerer sees only two objects of its own: too few for three anchor distractors
    assert {i.split("-")[1] for i in ids} == {"counting", "distance", "direction", "mapping"}
    assert all(" - answer " in text for _, text in proposal.items)
    kept = [next(i for i in ids if f"-{task}-" in i) for task in ("direction", "counting", "mapping")]
    with pytest.raises(EditError, match="no proposed question"):
        proposal.save(["nope"], tmp_path / "x")
    folder = proposal.save(kept, tmp_path / "mine")
    assert [t["id"] for t in FAMILY.tasks.load(folder)] == kept
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "main.py", "run", "--world", "rooms", "--tasks", str(folder), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    assert sorted(line["task_id"] for line in lines) == sorted(kept)


def _placed(obj, rng: random.Random, near: tuple[float, float]):
    """``obj`` turned to a random yaw with its box centred at a random point within a metre of ``near``."""
    x, y = near[0] + rng.uniform(-1.0, 1.0), near[1] + rng.uniform(-1.0, 1.0)
    (lo, hi), (cx, cy, _) = obj.bbox, obj.center
    bbox = ((lo[0] - cx + x, lo[1] - cy + y, lo[2]), (hi[0] - cx + x, hi[1] - cy + y, hi[2]))
    return replace(obj, bbox=bbox, yaw=rng.choice([0.0, math.pi / 2, rng.uniform(0.0, 2 * math.pi)]))


def test_the_quick_box_test_before_the_separating_axes_never_changes_whether_two_objects_cross():
    rng = random.Random(0)
    objects = [o for k in range(4) for o in generate_scene(0, k).objects]
    verdicts = []
    for _ in range(3000):
        a, b = rng.sample(objects, 2)
        a = _placed(a, rng, (2.0, 2.0))
        b = _placed(b, rng, a.center[:2])
        height = min(a.bbox[1][2], b.bbox[1][2]) - max(a.bbox[0][2], b.bbox[0][2])
        alone = height > TOLERANCE and penetration(footprint(a), footprint(b)) > TOLERANCE
        assert _cross(a, b) == alone, (a.id, b.id)
        verdicts.append(alone)
    assert 0.1 < sum(verdicts) / len(verdicts) < 0.9  # both verdicts are tried many times


def shown(rays: list[CornerRay]) -> list[tuple]:
    """What the editor shows of corner rays: each one's corner and verdict, and what blocks it. (What an
    unblocked ray hits first shows nowhere: at a corner on the object's own edge, two BVHs of the same
    triangles may see the ray graze the edge or pass it, both unblocked.)"""
    return [(r.corner, r.in_frustum, r.blocked, r.hit_object if r.blocked else None) for r in rays]


def test_the_ray_layers_a_drag_keeps_see_what_the_whole_room_joined_sees():
    """A drag casts at kept ray layers (the room as the drag found it, its BVH built once, and one for the dragged
    object and for each thing standing on it, each BVH built at the drag's first step and moved): the visible
    sets and a selected object's corner rays (each one's verdict and what it hit first) are those of one BVH over
    the whole room joined, at every step of drags of several objects, of a camera, and of undoing a drag, in a
    furnished 30-object room; so are the warnings, their pairs judged again only for the dragged objects."""
    scene = next(s for s in (generate_scene(0, k) for k in range(1000)) if len(s.objects) >= 30)
    doc = RoomDocument(scene, default_cameras(scene, 1.5, -10.0))
    history = History(doc)
    carrier = next(o.support for o in scene.objects if o.support in doc.objects)  # something stands on it
    dragged = [doc.views.shared[0], doc.views.helper_only[0], carrier, doc.views.answerer_only[0]]
    rng = random.Random(3)
    layered = 0
    for target in dragged:
        x, y, z = doc.objects[target].position
        for _ in range(4):
            history.push(doc.move(target, (x + rng.uniform(-0.6, 0.6), y + rng.uniform(-0.6, 0.6), z), "drag"))
            layered += len(doc.geometry.layers) >= 2  # the kept layer and one per dragged object
            fresh = RoomDocument(doc.scene, dict(doc.cams))
            assert (doc.visible, doc.warnings) == (fresh.visible, fresh.warnings), target
            for selected in {target, *doc.views.shared[:3]}:
                obj = doc.objects[selected]
                assert who_sees(doc.views, doc.geometry, obj)[0] == who_sees(fresh.views, fresh.geometry, obj)[0]
                for camera in (doc.cams["answerer"], doc.cams["helper"]):
                    assert shown(corner_rays(doc.geometry, camera, obj)) == shown(
                        corner_rays(fresh.geometry, camera, obj)
                    )
        history.push(doc.move("camera:helper", (x, y, 0.0), "camera-drag"))
        fresh = RoomDocument(doc.scene, dict(doc.cams))
        assert doc.visible == fresh.visible
        kept, made = drawn(doc.scene_items(target)), drawn(fresh.scene_items(target))  # the frustum moved too
        assert list(kept) == list(made)
        assert all(np.allclose(kept[key][3], points) for key, (*_, points) in made.items())
    history.undo()
    history.undo()
    assert doc.visible == RoomDocument(doc.scene, dict(doc.cams)).visible
    assert layered >= 12  # the drags' steps cast at the kept layer, not a BVH of the whole room
