"""The rooms world at a turn, as scene items for the app's 3D view and as agent-panel pictures.

The 3D scene shows the room, both agents' camera frustums and, with the visibility overlay on, every
object tinted by who sees it (Answerer only, Helper only, both) and the rays from each camera to each
box corner (green: in the frustum and unblocked, red: blocked, grey: outside the frustum). The objects
named in this turn's message are outlined in the 3D view and, for the researcher, on the agents' camera
pictures (:func:`annotated_pictures`); :func:`sent_pictures` are the pictures exactly as the agents got them.
"""

from __future__ import annotations

import json
import textwrap
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import pyvista as pv
from PIL import Image, ImageDraw

from simlab.core.episode import Episode
from simlab.render.images import text_font
from simlab.render.scene import CameraPose, SceneItem, text_label
from simlab.worlds.rooms.mentions import message_mentions
from simlab.worlds.rooms.model import Camera, RoomObject, Scene
from simlab.worlds.rooms.observations import ANSWERER, HELPER, HELPER_VIEW, PALETTE
from simlab.worlds.rooms.render import camera_pose, project, render_view, room_scene_items, topdown_map
from simlab.worlds.rooms.visibility import SceneGeometry, ViewPair, corner_rays
from simlab.worlds.rooms.world import RoomsWorld

ROLE_RGB: dict[str, tuple[float, float, float]] = {
    role: (r / 255, g / 255, b / 255) for role, (r, g, b) in PALETTE.items()
}
SHARED_RGB = (0.55, 0.2, 0.75)
RAY_RGB = {"visible": (0.1, 0.7, 0.2), "blocked": (0.85, 0.1, 0.1), "outside": (0.6, 0.6, 0.6)}
HIGHLIGHT_RGB = (1.0, 0.1, 0.7)
PANEL_SIZE = (640, 480)


_MEMO: OrderedDict[tuple[str, ...], Any] = OrderedDict()
MEMO_SIZE = 32
_T = TypeVar("_T")


def _memo(key: tuple[str, ...], make: Callable[[], _T]) -> _T:
    """A small most-recently-used cache for per-episode work (parsing, BVH, renders); keys name the episode."""
    if key in _MEMO:
        _MEMO.move_to_end(key)
        kept: _T = _MEMO[key]  # the key names what make() returns
        return kept
    value = _MEMO[key] = make()
    if len(_MEMO) > MEMO_SIZE:
        _MEMO.popitem(last=False)
    return value


def scene_and_views(episode: Episode) -> tuple[Scene, ViewPair]:
    """The episode's room and cameras (parsed once per episode)."""
    task = episode.task
    return _memo(
        ("parsed", episode.episode_id), lambda: (Scene.from_json(task["scene"]), ViewPair.from_json(task["views"]))
    )


def mentioned_at(episode: Episode, turn: int) -> list[str]:
    """Objects the messages of ``turn`` refer to, each resolved for its sender (the same resolution as the
    ``mentions`` score: an ambiguous phrase outlines its remaining candidates, a negated one nothing)."""
    scene, views = scene_and_views(episode)
    found: set[str] = set()
    for event in episode.events_of_turn(turn):
        if event.kind == "message" and event.data.get("text"):
            found.update(message_mentions(scene, views, event.role, str(event.data["text"])).objects)
    return sorted(found)


# ---- the 3D scene ----------------------------------------------------------------------------------------


def rooms_scene(episode: Episode, turn: int, overlay: bool = True, style: str = "ghost") -> list[SceneItem]:
    """Everything the 3D view draws at ``turn``; ``overlay`` switches the visibility tints and corner rays."""
    scene, views = scene_and_views(episode)
    items = list(_memo(("room", episode.episode_id), lambda: tuple(room_scene_items(scene, wall_opacity=0.35))))
    for role, camera in ((ANSWERER, views.answerer), (HELPER, views.helper)):
        items += frustum_items(role, camera)
    if overlay:
        items += tint_items(scene, views) + list(_memo(("rays", episode.episode_id), lambda: _rays(scene, views)))
    items += [outline_item(scene.object(i), f"highlight:{i}", HIGHLIGHT_RGB) for i in mentioned_at(episode, turn)]
    return items


def frustum_items(role: str, camera: Camera, depth: float = 0.6) -> list[SceneItem]:
    """``role``'s eye as a wire pyramid ``depth`` metres deep and a label above it."""
    half_h = depth * np.tan(np.radians(camera.fov) / 2)
    half_w = half_h * camera.width / camera.height
    eye, f, r, u = (np.asarray(v, dtype=float) for v in (camera.position, camera.forward, camera.right, camera.up))
    corners = [eye + depth * f + sx * half_w * r + sy * half_h * u for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    segments = [(eye, c) for c in corners] + [(corners[k], corners[(k + 1) % 4]) for k in range(4)]
    rgb = ROLE_RGB[role]
    label = text_label(f"label:{role}", tuple(eye + np.array([0, 0, 0.35])), role.capitalize(), rgb)
    return [SceneItem(f"frustum:{role}", "frustum", line_mesh(segments), rgb, line_width=3.0, tooltip=role), label]


def tint_items(scene: Scene, views: ViewPair) -> list[SceneItem]:
    """Every object either agent sees as a translucent box (``tint:ID``) in the colour of who sees it."""
    groups = (
        (views.answerer_only, ROLE_RGB[ANSWERER], "seen by the Answerer only"),
        (views.helper_only, ROLE_RGB[HELPER], "seen by the Helper only"),
        (views.shared, SHARED_RGB, "seen by both"),
    )
    return [
        outline_item(scene.object(i), f"tint:{i}", rgb, opacity=0.25, solid=True, tooltip=f"{i}: {what}")
        for ids, rgb, what in groups
        for i in ids
    ]


def _rays(scene: Scene, views: ViewPair) -> tuple[SceneItem, ...]:
    """Corner rays of every object from both cameras, one line set per camera and state (built once)."""
    geom = SceneGeometry(scene)
    out = []
    for role, camera in ((ANSWERER, views.answerer), (HELPER, views.helper)):
        by_state: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {s: [] for s in RAY_RGB}
        eye = np.asarray(camera.position, dtype=float)
        for obj in scene.objects:
            for ray in corner_rays(geom, camera, obj):
                by_state[ray.state].append((eye, np.asarray(ray.corner, dtype=float)))
        for state, segments in by_state.items():
            if segments:
                opacity = 0.25 if state == "outside" else 0.8
                mesh = line_mesh(segments)
                out.append(SceneItem(f"rays:{role}:{state}", "ray", mesh, RAY_RGB[state], opacity, tooltip=""))
    return tuple(out)


def outline_item(
    obj: RoomObject,
    key: str,
    rgb: tuple[float, float, float],
    opacity: float = 1.0,
    solid: bool = False,
    tooltip: str = "",
) -> SceneItem:
    """``obj``'s bounding box, a little larger: a wire outline (kind ``highlight``) or a ``solid`` tint."""
    lo, hi = (np.asarray(v, dtype=float) for v in obj.bbox)
    pad = 0.03
    box = pv.Box(bounds=(lo[0] - pad, hi[0] + pad, lo[1] - pad, hi[1] + pad, lo[2] - pad, hi[2] + pad))
    style = "surface" if solid else "wireframe"
    kind = "tint" if solid else "highlight"
    return SceneItem(key, kind, box, rgb, opacity, style, tooltip or obj.id, line_width=4.0)


def line_mesh(segments: Sequence[tuple[np.ndarray, np.ndarray]]) -> pv.PolyData:
    """Line segments (start, end) as one PolyData."""
    points = np.array([p for seg in segments for p in seg], dtype=float)
    cells = np.hstack([[2, 2 * k, 2 * k + 1] for k in range(len(segments))])
    return pv.PolyData(points, lines=cells)


def rooms_cameras(episode: Episode) -> dict[str, CameraPose]:
    """Camera presets of the episode's room (see :func:`camera_presets`)."""
    scene, views = scene_and_views(episode)
    return camera_presets(scene, views.answerer, views.helper)


def camera_presets(scene: Scene, answerer: Camera, helper: Camera) -> dict[str, CameraPose]:
    """Camera presets: each agent's own eye, a top-down view and a free three-quarter view."""
    cx, cy = scene.width / 2, scene.depth / 2
    reach = max(scene.width, scene.depth)
    top = CameraPose(
        "top", (cx, cy, 3 * reach), (cx, cy, 0.0), (0.0, 1.0, 0.0), parallel=True, parallel_scale=reach * 0.6
    )
    free = CameraPose("free", (cx - 0.9 * reach, cy - 1.1 * reach, 1.4 * reach), (cx, cy, 0.6), (0.0, 0.0, 1.0))
    return {
        ANSWERER: camera_pose(answerer, ANSWERER),
        HELPER: camera_pose(helper, HELPER),
        "top": top,
        "free": free,
    }


# ---- agent panel pictures --------------------------------------------------------------------------------


def agent_view(episode: Episode, role: str, turn: int) -> Image.Image:
    """``role``'s camera picture (rendered once per episode) with the objects named at ``turn`` outlined."""
    scene, views = scene_and_views(episode)
    camera = views.answerer if role == ANSWERER else views.helper
    view = _memo(("view", episode.episode_id, role), lambda: render_view(scene, camera, PANEL_SIZE)).copy()
    _outline_in_view(view, scene, camera, mentioned_at(episode, turn))
    return view


def answerer_map(episode: Episode) -> Image.Image | None:
    """The top-down map the Answerer was shown (cognitive mapping only)."""
    if episode.task["question"]["task"] != "mapping":
        return None
    scene, views = scene_and_views(episode)
    ids = sorted({*views.answerer_visible, *views.helper_visible})
    return topdown_map(scene, ids, views.answerer, (480, 480), swap=episode.task["question"].get("map_swap"))


def sent_pictures(observation: Mapping[str, Any], episode: Episode, turn: int) -> dict[str, Image.Image]:
    """The pictures an observation names, as the world's own ``observe`` draws them from the recorded task
    and settings (so the same PNG a model was sent): the role's camera view, in ``both-views`` the Helper's
    too, in cognitive mapping the map; in the order the world gives them. Nothing drawn on them."""
    names = set(observation.get("images") or [])
    if not names:
        return {}
    role = str((observation.get("data") or {}).get("role", ""))

    def observed() -> Mapping[str, Any]:  # a role's pictures depend on the task and settings alone, not the turn
        return RoomsWorld(episode.task, episode.settings).observe(role).images

    settings = json.dumps(episode.settings, sort_keys=True)  # two runs may share episode ids, not image sizes
    given = _memo(("given", episode.episode_id, settings, role), observed)  # lazy: each drawn on first look
    return {name: given[name] for name in given if name in names}


def annotated_pictures(observation: Mapping[str, Any], episode: Episode, turn: int) -> dict[str, Image.Image]:
    """For the researcher, never sent: the role's camera picture with the objects named at ``turn`` outlined
    (an Answerer given both views has the Helper's too, each captioned with whose it is), the map when the
    Answerer got it in words only, and the Answerer's question card with, once answered, its answer and the
    right one."""
    data = observation.get("data") or {}
    role = data.get("role", "")
    out = {"view": agent_view(episode, role, turn)}
    if HELPER_VIEW in data:
        out["view"] = captioned(out["view"], "Answerer's own view", PALETTE[ANSWERER])
        out[HELPER_VIEW] = captioned(
            agent_view(episode, HELPER, turn), "Helper's view, given to the Answerer", PALETTE[HELPER]
        )
    if role == ANSWERER:
        found = answerer_map(episode) if "map" not in (observation.get("images") or []) else None
        if found is not None:
            out["map"] = found
        out["question"] = question_card(episode, turn)
    return out


def turn_pictures(episode: Episode, turn: int) -> dict[str, Image.Image]:
    """For exports: both agents' views with the objects named at ``turn`` outlined, and the question card."""
    return {
        "Answerer's view": agent_view(episode, ANSWERER, turn),
        "Helper's view": agent_view(episode, HELPER, turn),
        "question": question_card(episode, turn),
    }


def episode_pictures(episode: Episode) -> dict[str, Image.Image]:
    """For exports, once: the map the Answerer was shown (cognitive mapping only)."""
    found = answerer_map(episode)
    return {"the Answerer's map": found} if found is not None else {}


def captioned(image: Image.Image, caption: str, rgb: tuple[int, int, int]) -> Image.Image:
    """``image`` under a band of ``caption`` in the colour ``rgb`` (whose picture it is)."""
    size = max(12, image.width // 18)  # still legible where a panel shows the picture a third as wide
    band = size * 3 // 2
    out = Image.new("RGB", (image.width, image.height + band), "white")
    out.paste(image, (0, band))
    ImageDraw.Draw(out).text((size // 2, size // 4), caption, fill=rgb, font=text_font(size))
    return out


def _outline_in_view(image: Image.Image, scene: Scene, camera: Camera, ids: Sequence[str]) -> None:
    draw = ImageDraw.Draw(image)
    for object_id in ids:
        points = project(camera, np.array(scene.object(object_id).corners(), dtype=float), image.size)
        points = points[np.isfinite(points).all(axis=1)]
        if len(points):
            (u0, v0), (u1, v1) = points.min(axis=0), points.max(axis=0)
            rgb = tuple(int(255 * c) for c in HIGHLIGHT_RGB)
            draw.rectangle((u0, v0, u1, v1), outline=rgb, width=3)


def question_card(episode: Episode, turn: int) -> Image.Image:
    """The question, the options, and once answered the Answerer's answer and the right one."""

    question = episode.task["question"]
    letters = ["yes", "no"] if question["task"] == "mapping" else ["A", "B", "C", "D"]
    lines = [*textwrap.wrap(question["text"], 66), ""]
    lines += [f"({k}) {o}"[:70] for k, o in zip(letters, question["options"], strict=False)]
    answered = [e for e in episode.events if e.kind == "result" and e.turn <= turn]
    if answered:
        r = answered[-1].data
        lines += ["", f"Answered: {r.get('answer') or 'invalid'}   right answer: {r.get('expected')}"]
    image = Image.new("RGB", (PANEL_SIZE[0], 24 + 22 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    for k, line in enumerate(lines):
        colour = (20, 20, 20)
        if line.startswith("Answered"):
            colour = (20, 130, 40) if answered[-1].data.get("correct") else (190, 30, 30)
        draw.text((12, 12 + 22 * k), line, fill=colour, font=text_font(16))
    return image
