"""The rooms editor, headless: from one drag step of an object to everything the editor window shows again
(the visible sets, the 3D scene items and both agents' 480x360 pictures), against the baseline of building
it all afresh (a new document from the file, its items and both pictures), in the same process.

A step moves an object one of the agents sees between two spots, so each step changes what is drawn: the
document meshes only that object again, reassembles the ray-casting geometry from the kept meshes, rebuilds
that object's items and re-renders the pictures its box may show in.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path

from benchmarks import timed
from simlab.core.editing import History
from simlab.render.scene import clear_kept_actors
from simlab.worlds.rooms import visibility
from simlab.worlds.rooms.editing import EDITOR, RoomDocument
from simlab.worlds.rooms.generator import generate_scene


def room_file(folder: Path, least: int = 30) -> Path:
    """The first generated room with ``least`` objects, saved as an editor file (sampled cameras)."""
    scene = next(s for s in (generate_scene(0, k) for k in range(1000)) if len(s.objects) >= least)
    path = folder / "room.json"
    path.write_text(json.dumps(scene.to_json()), encoding="utf-8")
    EDITOR.open(path).save(path)
    return path


def _everything(doc: RoomDocument) -> None:
    """What the window redraws after an edit."""
    doc.summary()
    doc.scene_items()
    doc.pictures()


def _afresh(path: Path) -> None:
    """The baseline: the file opened as a new document and everything drawn from nothing (the off-screen
    renderer keeps no actor of an earlier drawing)."""
    clear_kept_actors()
    _everything(EDITOR.open(path))


def _dragger(doc: RoomDocument, entity: str, spots: list[tuple[float, float, float]]):
    """One drag step per call, alternating between ``spots``."""
    history, turns = History(doc), itertools.cycle(spots)

    def step() -> None:
        history.push(doc.move(entity, next(turns), gesture="drag"))
        _everything(doc)

    return step


def bench_drag(path: Path) -> None:
    """A drag step of an object both agents see, then of one only the Helper sees, then of a camera."""
    doc = EDITOR.open(path)
    _everything(doc)
    full = timed(lambda: _afresh(path), 5)
    for target in (doc.views.shared[0], doc.views.helper_only[0]):
        x, y, z = doc.objects[target].position
        renders = doc.parts.renders
        step = timed(_dragger(doc, target, [(x + 0.1, y, z), (x, y, z)]), 10)
        label = f"editor: drag {target} ({len(doc.objects)} objs)"
        print(
            f"{label:<38} {step * 1000:10.1f} ms   baseline new document + all {full * 1000:10.1f} ms   "
            f"ratio {step / full:6.2f}x ({(doc.parts.renders - renders) / 11:.1f} pictures re-rendered a step)"
        )
    camera = timed(_dragger(doc, "camera:answerer", [(1.0, 1.0, 0.0), (1.2, 1.0, 0.0)]), 10)
    label = "editor: drag the Answerer's camera"
    print(f"{label:<38} {camera * 1000:10.1f} ms   baseline new document + all {full * 1000:10.1f} ms   "
          f"ratio {camera / full:6.2f}x (1 picture re-rendered a step)")  # fmt: skip


def bench_geometry(path: Path) -> None:
    """The ray geometry of a drag step (the moved object meshed again, the kept layer and the object's own)
    against a BVH of the whole room from the kept meshes (the moved object meshed again too)."""
    doc = EDITOR.open(path)
    target = doc.views.shared[0]
    x, y, z = doc.objects[target].position
    scenes = []
    for to in ((x + 0.1, y, z), (x, y, z)):
        doc.move(target, to).redo(doc)
        scenes.append(doc.scene)
    turns, again = itertools.cycle(scenes), itertools.cycle(scenes)

    def whole() -> visibility.SceneGeometry:
        scene = next(again)
        return visibility.SceneGeometry(scene, [doc.parts.mesh(o) for o in scene.objects])

    kept = timed(lambda: doc.parts.geometry(next(turns)), 50)
    fresh = timed(whole, 50)
    print(
        f"{'editor: ray geometry of a drag step':<38} {kept * 1000:10.3f} ms   baseline the whole room's BVH "
        f"{fresh * 1000:8.3f} ms   ratio {kept / fresh:6.2f}x"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = room_file(Path(folder))
        bench_drag(path)
        bench_geometry(path)


if __name__ == "__main__":
    main()
