"""What each role of the rooms world is given as data: its visible objects and, for the Answerer, the question.

One module builds these for the game master (:mod:`simlab.worlds.rooms.world`) and for the necessity filter's
single-view solver, so the filter judges questions on exactly what an Answerer would see.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from simlab.worlds.rooms.describe import describe_objects
from simlab.worlds.rooms.model import Camera, Scene
from simlab.worlds.rooms.tasks import LETTERS, YES_NO, Question, Views, map_layout

ANSWERER, HELPER = "answerer", "helper"
PALETTE: dict[str, tuple[int, int, int]] = {ANSWERER: (41, 97, 217), HELPER: (237, 125, 26)}
"""The one colour of each role: frustums and tints in 3D, agent panels, dialogue, exports."""


def view_entries(
    scene: Scene, object_ids: Iterable[str], camera: Camera, descriptions: Mapping[str, str]
) -> list[dict[str, Any]]:
    """The ``view`` field for an agent with ``camera`` seeing ``object_ids`` (the world may build it this way)."""
    out = []
    for object_id in sorted(object_ids):
        obj = scene.object(object_id)
        item: dict[str, Any] = {"id": obj.id, "category": obj.category, "color": obj.color}
        item["size_class"] = obj.size_class
        if object_id in descriptions:
            item["description"] = descriptions[object_id]
        item["camera_xyz"] = [round(v, 4) for v in camera.to_camera_frame(obj.center)]
        item["world_center"] = [round(v, 4) for v in obj.center]
        item["world_size"] = [round(hi - lo, 4) for lo, hi in zip(*obj.bbox, strict=True)]
        out.append(item)
    return out


def answerer_data(question: Question, scene: Scene, views: Views) -> dict[str, Any]:
    """The Answerer's static observation data (no dialogue fields), as the world gives it."""
    ids = sorted({*views.answerer_visible, *views.helper_visible})
    descriptions = describe_objects(scene, ids)
    data: dict[str, Any] = {
        "role": ANSWERER,
        "task": question.task,
        "view": view_entries(scene, views.answerer_visible, views.answerer, descriptions),
        "question": question.text,
        "options": list(question.options),
        "letters": list(YES_NO) if question.task == "mapping" else list(LETTERS[: len(question.options)]),
        "camera": views.answerer.to_json(),
    }
    if question.task == "mapping":
        layout = map_layout(scene, ids, views.answerer, question.map_swap)
        data["map_objects"] = [
            {"id": i, "category": scene.object(i).category, "x": layout[i][0], "y": layout[i][1]} for i in ids
        ]
    return data


# ---- the pictures in words, for models that read text only -------------------------------------------------


def _where(right: float, ahead: float, up: float | None = None) -> str:
    """``about 2.3 m ahead and 0.8 m to your left`` (a position in the agent's own frame, in words)."""
    parts = [f"about {abs(ahead):.1f} m {'ahead' if ahead >= 0 else 'behind you'}"]
    if abs(right) >= 0.1:
        parts.append(f"{abs(right):.1f} m to your {'right' if right > 0 else 'left'}")
    if up is not None and abs(up) >= 0.4:
        parts.append(f"{abs(up):.1f} m {'above' if up > 0 else 'below'} your eyes")
    return ", ".join(parts)


def view_in_words(view: Iterable[Mapping[str, Any]]) -> str:
    """What an agent's view shows, object by object, in its own frame (as the paper's descriptions put it):
    ``a small red chair: about 2.3 m ahead, 0.8 m to your left``. Nearest first."""
    items = sorted(view, key=lambda v: -v["camera_xyz"][2])
    lines = []
    for item in items:
        right, up, back = item["camera_xyz"]
        name = item.get("description") or f"{item['size_class']} {item['color']} {item['category']}"
        lines.append(f"- {name}: {_where(right, -back, up)}")
    return "You see:\n" + ("\n".join(lines) if lines else "(nothing you can name)")


def map_in_words(map_objects: Iterable[Mapping[str, Any]]) -> str:
    """The top-down map the Answerer is shown, in words: where it puts each object, from where the Answerer
    stands (the map's bottom centre, facing up)."""
    lines = [f"- {m['category']} ({m['id']}): {_where(m['x'], m['y'])}" for m in map_objects]
    return "The map puts these objects, from where you stand:\n" + "\n".join(lines)
