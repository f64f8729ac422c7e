"""What each role of the rooms world is given as data: its visible objects and, for the Answerer, the question.

One module builds these for the game master (:mod:`simlab.worlds.rooms.world`) and for the necessity filter's
single-view solver, so the filter judges questions on exactly what an Answerer would see.

The ``condition`` setting says what the Answerer is given (Cosmic section 5.1, fig. 6 right): the
``dialogue`` with the Helper (the benchmark), ``both-views`` (one agent given both egocentric views at once,
answering with no dialogue: the paper's single-agent condition) or ``answerer-alone`` (its own view only, no
dialogue: the single-view baseline played by any agent).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from simlab.worlds.rooms.describe import describe_objects
from simlab.worlds.rooms.model import Camera, Scene
from simlab.worlds.rooms.tasks import LETTERS, YES_NO, Question, Views, map_layout

ANSWERER, HELPER = "answerer", "helper"
PALETTE: dict[str, tuple[int, int, int]] = {ANSWERER: (41, 97, 217), HELPER: (237, 125, 26)}
"""The one colour of each role: frustums and tints in 3D, agent panels, dialogue, exports."""

Condition = Literal["dialogue", "both-views", "answerer-alone"]
"""The values of the ``condition`` setting (see the module docstring)."""
CONDITIONS: tuple[Condition, ...] = get_args(Condition)
DIALOGUE, BOTH_VIEWS, ANSWERER_ALONE = CONDITIONS
HELPER_VIEW = "helper_view"
"""The name of the Helper's picture and of its objects' entries in a ``both-views`` Answerer's observation."""


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


def helper_view_entries(scene: Scene, views: Views) -> list[dict[str, Any]]:
    """The Helper's visible objects as a ``both-views`` Answerer is given them (``data["helper_view"]``): the
    entries of :func:`view_entries` in the Helper's camera frame, described as in :func:`answerer_data`, without
    ids. An id would say which objects the two views share, which is for the agent to work out (the dialogue's
    oracle Helper never sends ids either)."""
    ids = sorted({*views.answerer_visible, *views.helper_visible})
    entries = view_entries(scene, views.helper_visible, views.helper, describe_objects(scene, ids))
    return [{k: v for k, v in entry.items() if k != "id"} for entry in entries]


# ---- the pictures in words, for models that read text only -------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """Whose position a view in words is told from: the heading, then ``behind {you}``, ``to {your} left``
    and ``above {your} eyes`` for each object."""

    heading: str
    you: str
    your: str


OWN_FRAME = Frame("You see:", "you", "your")
"""An agent's own view: ``about 2.3 m ahead, 0.8 m to your left``."""
HELPER_FRAME = Frame(
    "From the Helper's position, facing the way the Helper looks, one sees:", "the Helper", "the Helper's"
)
"""The Helper's view given to a ``both-views`` Answerer: ``about 2.3 m ahead, 0.8 m to the Helper's left``."""


def _where(right: float, ahead: float, up: float | None = None, frame: Frame = OWN_FRAME) -> str:
    """``about 2.3 m ahead and 0.8 m to your left`` (a position in the frame of ``frame``, in words)."""
    parts = [f"about {abs(ahead):.1f} m {'ahead' if ahead >= 0 else f'behind {frame.you}'}"]
    if abs(right) >= 0.1:
        parts.append(f"{abs(right):.1f} m to {frame.your} {'right' if right > 0 else 'left'}")
    if up is not None and abs(up) >= 0.4:
        parts.append(f"{abs(up):.1f} m {'above' if up > 0 else 'below'} {frame.your} eyes")
    return ", ".join(parts)


def view_in_words(view: Iterable[Mapping[str, Any]], frame: Frame = OWN_FRAME) -> str:
    """What a view shows, object by object, in the frame of the agent who sees it (as the paper's descriptions
    put it): ``a small red chair: about 2.3 m ahead, 0.8 m to your left``. Nearest first. ``frame`` says whose
    view it is (:data:`HELPER_FRAME`: the Helper's, given to another agent)."""
    items = sorted(view, key=lambda v: -v["camera_xyz"][2])
    lines = []
    for item in items:
        right, up, back = item["camera_xyz"]
        name = item.get("description") or f"{item['size_class']} {item['color']} {item['category']}"
        lines.append(f"- {name}: {_where(right, -back, up, frame)}")
    return f"{frame.heading}\n" + ("\n".join(lines) if lines else "(nothing you can name)")


def map_in_words(map_objects: Iterable[Mapping[str, Any]]) -> str:
    """The top-down map the Answerer is shown, in words: where it puts each object, from where the Answerer
    stands (the map's bottom centre, facing up)."""
    lines = [f"- {m['category']} ({m['id']}): {_where(m['x'], m['y'])}" for m in map_objects]
    return "The map puts these objects, from where you stand:\n" + "\n".join(lines)
