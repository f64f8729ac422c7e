"""The rooms 3D view's layer list and what a click on an object says: who sees it and why.

An object is seen by a camera when enough of its eight bounding-box corners are inside the camera's view and
not hidden behind something (:mod:`~simlab.worlds.rooms.visibility`). Clicking an object names it, gives the
recorded verdict for each agent with the corner counts behind it (what blocks the hidden corners), and draws
those sixteen rays in the colours the ray layer uses.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np

from simlab.core.episode import Episode
from simlab.core.family import Inspection, Layer
from simlab.render.scene import SceneItem, rgb255
from simlab.worlds.rooms.cameras import DEFAULT_VIEW_SETTINGS
from simlab.worlds.rooms.model import Camera, RoomObject
from simlab.worlds.rooms.observations import ANSWERER, HELPER, PALETTE
from simlab.worlds.rooms.scene import RAY_RGB, SHARED_RGB, _memo, line_mesh, mentioned_at, outline_item, scene_and_views
from simlab.worlds.rooms.visibility import CornerRay, SceneGeometry, ViewPair, corner_rays_from

SELECTED_RGB = (0.0, 0.0, 0.0)
ROLE_NAMES = {ANSWERER: "Answerer", HELPER: "Helper"}
_KEY_KINDS = ("object", "tint", "highlight")  # keys that name an object: "object:ID[:part]", "tint:ID"...


LAYERS: tuple[Layer, ...] = (
    Layer(
        "Who sees what",
        ("tint",),
        (
            ("Answerer only", PALETTE[ANSWERER]),
            ("Helper only", PALETTE[HELPER]),
            ("both agents", rgb255(SHARED_RGB)),
        ),
        "Each object either agent sees, tinted by who sees it; objects neither sees are untinted",
    ),
    Layer(
        "Corner rays",
        ("ray",),
        (
            ("corner seen", rgb255(RAY_RGB["visible"])),
            ("corner blocked", rgb255(RAY_RGB["blocked"])),
            ("outside the view", rgb255(RAY_RGB["outside"])),
        ),
        "From each eye to every object's eight box corners: an object is seen when enough corners are "
        "(off at first: drawn for every object they hide the room; clicking an object shows its own)",
        visible=False,
    ),
    Layer(
        "Cameras",
        ("frustum", "label"),
        (("Answerer", PALETTE[ANSWERER]), ("Helper", PALETTE[HELPER])),
        "Each agent's eye and field of view",
    ),
    Layer("Named this turn", ("highlight",), (("named in a message", (255, 26, 178)),), "Objects this turn names"),
    Layer("Walls", ("wall",), help="The room's walls (translucent); the floor always shows"),
    Layer("Objects", ("object",), help="The furniture itself"),
)
"""The rooms view's layers: the visibility overlay split into tints and rays, the cameras, the named objects,
the walls and the furniture."""


def object_id_of(key: str) -> str | None:
    """The object an item key names (``object:ID``, ``object:ID:PART``, ``tint:ID``, ``highlight:ID``)."""
    kind, _, rest = key.partition(":")
    if kind not in _KEY_KINDS or not rest:
        return None
    return rest.split(":", 1)[0]


def inspect_item(episode: Episode, turn: int, key: str) -> Inspection | None:
    """What the view says of the object ``key`` names at ``turn``: its description, each agent's recorded
    verdict with the corner counts behind it, and whether this turn's messages name it; None when ``key``
    names no object of the episode's room."""
    object_id = object_id_of(key)
    scene, views = scene_and_views(episode)
    if object_id is None or object_id not in {o.id for o in scene.objects}:
        return None
    obj = scene.object(object_id)
    geom = _memo(("geometry", episode.episode_id), lambda: SceneGeometry(scene))
    lines, items = who_sees(views, geom, obj)
    if obj.id in mentioned_at(episode, turn):
        lines.append("Named in this turn's messages")
    title = f"{obj.id}: {obj.size_class} {obj.color} {obj.category}"
    lines.append("Its own corner rays are drawn; the other objects' are hidden until the selection is cleared")
    return Inspection(title, tuple(lines), tuple(items), hides=("ray",))


def who_sees(views: ViewPair, geom: SceneGeometry, obj: RoomObject) -> tuple[list[str], list[SceneItem]]:
    """Each agent's verdict on ``obj`` in ``views`` (its visible sets) with the corner counts behind it, and
    the items that show why: ``obj`` outlined (:func:`selected_outline`) and its sixteen corner rays from the two
    eyes (:func:`corner_verdicts`). ``geom`` is the geometry of the scene holding ``obj`` (the episode's, or the
    editor's as it is now)."""
    lines, rays = corner_verdicts(views, geom, obj)
    return lines, [selected_outline(obj), *rays]


def selected_outline(obj: RoomObject) -> SceneItem:
    """The selected ``obj``'s outline: its bounding box a little larger, in black wire."""
    return replace(outline_item(obj, f"selected:{obj.id}", SELECTED_RGB), kind="selection", line_width=6.0)


def corner_verdicts(views: ViewPair, geom: SceneGeometry, obj: RoomObject) -> tuple[list[str], list[SceneItem]]:
    """:func:`who_sees` but the outline: each agent's verdict and ``obj``'s corner rays from both eyes."""
    lines: list[str] = []
    items: list[SceneItem] = []
    cameras = ((ANSWERER, views.answerer, views.answerer_visible), (HELPER, views.helper, views.helper_visible))
    both = corner_rays_from(geom, [views.answerer, views.helper], obj)
    for (role, camera, seen), rays in zip(cameras, both, strict=True):
        lines.append(_verdict(ROLE_NAMES[role], obj.id in seen, rays))
        items += _ray_items(role, camera, rays)
    return lines, items


def _verdict(name: str, seen: bool, rays: list[CornerRay]) -> str:
    """``Helper sees it: 6 of 8 corners in view and unblocked (3 needed)``, with what blocks the others."""
    free = sum(1 for r in rays if r.in_frustum and not r.blocked)
    outside = sum(1 for r in rays if not r.in_frustum)
    blockers = Counter(r.hit_object or "nothing" for r in rays if r.in_frustum and r.blocked)
    needed = int(DEFAULT_VIEW_SETTINGS["min_corners"])
    verb = "sees it" if seen else "does not see it"
    parts = [f"{name} {verb}: {free} of {len(rays)} corners in view and unblocked ({needed} needed)"]
    if not seen and free >= needed:  # the pixel filter dropped it: too few of its pixels show in the picture
        parts.append("too small or too covered in the picture (the pixel filter)")
    if outside:
        parts.append(f"{outside} outside the view")
    if blockers:
        by = ", ".join(f"{what} ({count})" for what, count in sorted(blockers.items(), key=lambda kv: (-kv[1], kv[0])))
        parts.append(f"blocked by {by}")
    return "; ".join(parts)


def _ray_items(role: str, camera: Camera, rays: list[CornerRay]) -> list[SceneItem]:
    """The selected object's corner rays from one eye, one line set per state, drawn over everything else."""
    eye = np.asarray(camera.position, dtype=float)
    items = []
    for state, rgb in RAY_RGB.items():
        segments = [(eye, np.asarray(r.corner, dtype=float)) for r in rays if r.state == state]
        if segments:
            key = f"selected:rays:{role}:{state}"
            items.append(SceneItem(key, "selection", line_mesh(segments), rgb, line_width=4.0))
    return items
