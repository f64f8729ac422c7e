"""The rooms object catalog: categories, colours and low-poly meshes built from boxes, prisms and blobs.

Every object is modelled in its own local frame: the footprint is centred on the origin, ``x`` spans the
width, ``y`` the depth and ``z`` runs from 0 (its support) to its height. The object's back is at
``y = -depth/2`` and its front (a sofa's seat, a door's handle side, a monitor's screen) faces ``+y``. A world
object is that local mesh turned by ``yaw`` about z and moved so the footprint centre lands on ``position``
(whose z is the support height), so an object with ``yaw = 0`` faces ``+y`` and one with yaw ``pi`` faces
``-y``. Each local mesh is fitted exactly to its ``width x depth x height`` box, which makes
:func:`compute_bbox` exact without building the mesh for the right-angle yaws the generator uses.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import trimesh

from simlab.worlds.rooms.materials import MATERIALS, PARTS
from simlab.worlds.rooms.model import ROOM_TYPES, RoomObject, Scene, Vec3

RGB = tuple[int, int, int]
Range = tuple[float, float]
SizeRange = tuple[Range, Range, Range]

COLORS: dict[str, RGB] = MATERIALS.colors
"""The named colours an object may have (``assets/materials/rooms.toml``)."""

PLACEMENTS: tuple[str, ...] = ("floor", "wall", "in_wall", "wall_hang", "surface")
COVERINGS: tuple[str, ...] = ("curtains", "blinds", "shutters")

# Fixed parts' materials, whatever an object's own colour (``[parts]`` of the materials file).
METAL, DARK, GLASS, MIRROR_GLASS, LINEN, FOLIAGE, WATER = (MATERIALS.parts[name] for name in PARTS)


@dataclass(frozen=True)
class Category:
    """One kind of object and how the generator may use it.

    ``placement`` is where it goes: ``floor`` (free standing), ``wall`` (on the floor, back to a wall),
    ``in_wall`` (doors, windows), ``wall_hang`` (hung on a wall) or ``surface`` (on another object's top).
    ``sizes`` maps each size class to ``(width, depth, height)`` ranges in metres; ``colors`` names the
    allowed :data:`COLORS`; ``rooms`` weights how often it is added per room type (absent: never);
    ``supports`` lists the categories whose tops it may stand on (a floor category's small size class only);
    ``surface`` says other objects may stand on its top; a ``flat`` object (a rug) lies under furniture;
    ``clearance`` is the free floor depth (m) it needs in front.
    """

    name: str
    placement: str
    sizes: Mapping[str, SizeRange]
    colors: tuple[str, ...]
    rooms: Mapping[str, float]
    max_per_room: int
    supports: tuple[str, ...] = ()
    surface: bool = False
    flat: bool = False
    clearance: float = 0.0


# ----------------------------------------------------------------------------------------------- mesh parts

_BOX_CORNERS = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=float)
_BOX_FACES = np.array(
    [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
     [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]],
)  # fmt: skip


def _unit_sphere(rings: int = 5, segments: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """A low-poly UV sphere of radius 1 (poles on z, equator through the x and y axes)."""
    verts = [[0.0, 0.0, -1.0]]
    for i in range(1, rings):
        phi = -math.pi / 2 + math.pi * i / rings
        for j in range(segments):
            theta = 2 * math.pi * j / segments
            verts.append([math.cos(phi) * math.cos(theta), math.cos(phi) * math.sin(theta), math.sin(phi)])
    verts.append([0.0, 0.0, 1.0])
    faces = [[0, 1 + (j + 1) % segments, 1 + j] for j in range(segments)]
    for i in range(rings - 2):
        a, b = 1 + i * segments, 1 + (i + 1) * segments
        for j in range(segments):
            k = (j + 1) % segments
            faces += [[a + j, a + k, b + k], [a + j, b + k, b + j]]
    top, last = len(verts) - 1, 1 + (rings - 2) * segments
    faces += [[top, last + j, last + (j + 1) % segments] for j in range(segments)]
    return np.array(verts), np.array(faces)


_SPHERE = _unit_sphere()


class Parts:
    """Collects coloured parts (boxes, elliptic prisms, blobs) in an object's local frame."""

    def __init__(self) -> None:
        self._verts: list[np.ndarray] = []
        self._faces: list[np.ndarray] = []
        self._colors: list[RGB] = []
        self._count: list[int] = []
        self._n = 0

    def _add(self, verts: np.ndarray, faces: np.ndarray, rgb: RGB) -> None:
        self._verts.append(verts)
        self._faces.append(faces + self._n)
        self._colors.append(rgb)
        self._count.append(len(faces))
        self._n += len(verts)

    def box(self, lo: Sequence[float], hi: Sequence[float], rgb: RGB) -> None:
        """An axis-aligned box from corner ``lo`` to corner ``hi``."""
        lo_a, hi_a = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        self._add(lo_a + _BOX_CORNERS * (hi_a - lo_a), _BOX_FACES, rgb)

    def prism(self, cx: float, cy: float, z0: float, z1: float, rx: float, ry: float, rgb: RGB, n: int = 12) -> None:
        """A vertical elliptic cylinder (``n`` sides) centred on ``(cx, cy)`` from ``z0`` to ``z1``."""
        ang = np.arange(n) * (2 * math.pi / n)
        ring = np.stack([cx + rx * np.cos(ang), cy + ry * np.sin(ang)], axis=1)
        bottom = np.column_stack([ring, np.full(n, z0)])
        top = np.column_stack([ring, np.full(n, z1)])
        verts = np.vstack([bottom, top, [[cx, cy, z0], [cx, cy, z1]]])
        j, k = np.arange(n), (np.arange(n) + 1) % n
        sides = np.concatenate([np.stack([j, k, n + k], 1), np.stack([j, n + k, n + j], 1)])
        bottom_c, top_c = np.full(n, 2 * n), np.full(n, 2 * n + 1)
        caps = np.concatenate([np.stack([bottom_c, k, j], 1), np.stack([top_c, n + j, n + k], 1)])
        self._add(verts, np.concatenate([sides, caps]), rgb)

    def blob(self, center: Sequence[float], radii: Sequence[float], rgb: RGB) -> None:
        """An ellipsoid (foliage, pillows, lamp shades)."""
        verts, faces = _SPHERE
        self._add(np.asarray(center, dtype=float) + verts * np.asarray(radii, dtype=float), faces, rgb)

    def mesh(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Vertices, faces and per-face RGBA colours of everything added so far."""
        pairs = zip(self._colors, self._count, strict=True)
        colors = np.concatenate([np.tile([*rgb, 255], (count, 1)) for rgb, count in pairs])
        return np.vstack(self._verts), np.vstack(self._faces), colors.astype(np.uint8)


def shade(rgb: RGB, factor: float) -> RGB:
    """``rgb`` darkened (factor < 1) or lightened towards white (factor > 1)."""
    if factor <= 1:
        return (int(rgb[0] * factor), int(rgb[1] * factor), int(rgb[2] * factor))
    t = min(factor - 1, 1.0)
    return (int(rgb[0] + (255 - rgb[0]) * t), int(rgb[1] + (255 - rgb[1]) * t), int(rgb[2] + (255 - rgb[2]) * t))


def _contrast(rgb: RGB) -> RGB:
    """A detail colour that stands out on ``rgb`` (dark on light bodies, light on dark ones)."""
    return shade(rgb, 0.55) if sum(rgb) > 300 else shade(rgb, 1.45)


# ------------------------------------------------------------------------------------------------- builders
# Each builder draws one category in the local frame: x in [-w/2, w/2], y in [-d/2, d/2] (front +y), z in [0, h].

Builder = Callable[[Parts, float, float, float, RGB, Mapping[str, Any]], None]


def _legs(p: Parts, w: float, d: float, z1: float, t: float, rgb: RGB, inset: float = 0.0) -> None:
    """Four square legs of side ``t`` at the corners, from the floor to ``z1``."""
    for sx in (-1, 1):
        for sy in (-1, 1):
            x, y = sx * (w / 2 - inset - t / 2), sy * (d / 2 - inset - t / 2)
            p.box((x - t / 2, y - t / 2, 0), (x + t / 2, y + t / 2, z1), rgb)


def _table(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    top = min(0.04, h * 0.1)
    p.box((-w / 2, -d / 2, h - top), (w / 2, d / 2, h), rgb)
    _legs(p, w, d, h - top, min(0.06, w * 0.1), shade(rgb, 0.75), inset=0.02)
    if h < 0.62:  # low tables (side, centre) get a lower shelf
        p.box((-w / 2 + 0.03, -d / 2 + 0.03, h * 0.22), (w / 2 - 0.03, d / 2 - 0.03, h * 0.22 + 0.02), shade(rgb, 0.85))


def _desk(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    _table(p, w, d, h, rgb, params)
    dw = min(0.42, w * 0.35)  # a drawer pedestal on the right
    p.box((w / 2 - dw, -d / 2 + 0.02, 0.02), (w / 2 - 0.02, d / 2 - 0.04, h - 0.04), shade(rgb, 0.9))
    for k in range(3):
        z = 0.02 + (h - 0.06) * (k + 0.5) / 3
        p.box((w / 2 - dw / 2 - 0.06, d / 2 - 0.04, z - 0.01), (w / 2 - dw / 2 + 0.06, d / 2 - 0.02, z + 0.01), METAL)
    p.box((-w / 2 + 0.04, -d / 2, h * 0.4), (w / 2 - dw, -d / 2 + 0.02, h - 0.04), shade(rgb, 0.8))


def _door(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    frame, trim = 0.06, shade(rgb, 0.7) if sum(rgb) > 300 else shade(rgb, 1.35)
    p.box((-w / 2, -d / 2, 0), (-w / 2 + frame, d / 2 - 0.015, h), trim)
    p.box((w / 2 - frame, -d / 2, 0), (w / 2, d / 2 - 0.015, h), trim)
    p.box((-w / 2, -d / 2, h - frame), (w / 2, d / 2 - 0.015, h), trim)
    p.box((-w / 2 + frame, -d / 2, 0), (w / 2 - frame, d / 2 - 0.03, h - frame), rgb)
    inner_w, y = w - 2 * frame, d / 2 - 0.025
    for z0, z1 in ((0.15, h * 0.45), (h * 0.52, h - frame - 0.12)):
        p.box((-inner_w / 2 + 0.1, y - 0.01, z0), (inner_w / 2 - 0.1, y, z1), shade(rgb, 0.86))
    hx = w / 2 - frame - 0.1
    p.box((hx - 0.09, d / 2 - 0.03, 0.98), (hx + 0.02, d / 2, 1.02), METAL)
    p.box((hx - 0.02, d / 2 - 0.03, 0.94), (hx + 0.02, d / 2 - 0.015, 1.06), METAL)


def _window(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    covering = str(params.get("covering", "curtains"))
    cover = COLORS.get(str(params.get("covering_color", "beige")), COLORS["beige"])
    side = w * 0.2 if covering in ("curtains", "shutters") else 0.0
    x0, x1, back = -w / 2 + side, w / 2 - side, -d / 2
    f = 0.05
    p.box((x0 + f, back, f), (x1 - f, back + 0.01, h - f), GLASS)
    _ring(p, x0, x1, back, back + 0.05, 0.0, h, f, rgb)
    p.box((-0.02, back, f), (0.02, back + 0.04, h - f), rgb)
    p.box((x0, back, h * 0.6), (x1, back + 0.04, h * 0.6 + 0.03), rgb)
    p.box((x0 - 0.02 * (side > 0), back, 0), (x1 + 0.02 * (side > 0), back + 0.08, 0.025), rgb)
    {"curtains": _curtains, "blinds": _blinds, "shutters": _shutters}.get(covering, _curtains)(p, w, d, h, cover)


def _curtains(p: Parts, w: float, d: float, h: float, rgb: RGB) -> None:
    p.box((-w / 2, d / 2 - 0.03, h - 0.03), (w / 2, d / 2, h), METAL)
    for sx in (-1, 1):
        for k in range(3):  # folds: alternating depth
            x0 = sx * (w / 2 - w * 0.2 * k / 3)
            x1 = sx * (w / 2 - w * 0.2 * (k + 1) / 3)
            y0 = d / 2 - 0.075 + (0.02 if k % 2 else 0.0)
            p.box((min(x0, x1), y0, 0), (max(x0, x1), y0 + 0.04, h - 0.03), shade(rgb, 1.0 - 0.08 * (k % 2)))


def _blinds(p: Parts, w: float, d: float, h: float, rgb: RGB) -> None:
    n = 7
    for k in range(n):
        z1 = h - k * h * 0.55 / n
        p.box((-w / 2, d / 2 - 0.04, z1 - 0.045), (w / 2, d / 2, z1), shade(rgb, 1.0 - 0.1 * (k % 2)))


def _shutters(p: Parts, w: float, d: float, h: float, rgb: RGB) -> None:
    for sx in (-1, 1):
        xa, xb = sorted((sx * w / 2, sx * (w / 2 - w * 0.2)))
        p.box((xa, -d / 2, 0), (xb, -d / 2 + 0.04, h), rgb)
        for k in range(6):
            z = h * (k + 0.5) / 6
            p.box((xa + 0.02, -d / 2 + 0.04, z - 0.02), (xb - 0.02, -d / 2 + 0.06, z + 0.02), shade(rgb, 0.8))


def _ring(p: Parts, x0: float, x1: float, y0: float, y1: float, z0: float, z1: float, t: float, rgb: RGB) -> None:
    """A rectangular frame of bars of width ``t`` in the x-z plane (window frames)."""
    p.box((x0, y0, z0), (x1, y1, z0 + t), rgb)
    p.box((x0, y0, z1 - t), (x1, y1, z1), rgb)
    p.box((x0, y0, z0 + t), (x0 + t, y1, z1 - t), rgb)
    p.box((x1 - t, y0, z0 + t), (x1, y1, z1 - t), rgb)


def _frame_xy(p: Parts, w: float, d: float, z0: float, z1: float, t: float, rgb: RGB) -> None:
    """Four bars of width ``t`` around the edge of the footprint (a tub's rim, a rug's border)."""
    p.box((-w / 2, -d / 2, z0), (w / 2, -d / 2 + t, z1), rgb)
    p.box((-w / 2, d / 2 - t, z0), (w / 2, d / 2, z1), rgb)
    p.box((-w / 2, -d / 2 + t, z0), (-w / 2 + t, d / 2 - t, z1), rgb)
    p.box((w / 2 - t, -d / 2 + t, z0), (w / 2, d / 2 - t, z1), rgb)


def _plant(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    pot_h = h * 0.38
    p.prism(0, 0, 0, pot_h, w * 0.32, d * 0.32, rgb)
    p.prism(0, 0, pot_h * 0.88, pot_h, w * 0.35, d * 0.35, shade(rgb, 0.8))
    p.blob((0, 0, pot_h + (h - pot_h) * 0.5), (w / 2, d / 2, (h - pot_h) * 0.5), FOLIAGE)
    p.blob((w * 0.1, -d * 0.05, h - (h - pot_h) * 0.3), (w * 0.3, d * 0.3, (h - pot_h) * 0.3), shade(FOLIAGE, 1.2))


def _shelf(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    t, n = 0.03, max(2, round(h / 0.38))
    for sx in (-1, 1):
        p.box((sx * w / 2 - t / 2 - sx * t / 2, -d / 2, 0), (sx * w / 2 + t / 2 - sx * t / 2, d / 2, h), rgb)
    for k in range(n + 1):
        z = 0.05 + (h - 0.05 - t) * k / n
        p.box((-w / 2 + t, -d / 2, z), (w / 2 - t, d / 2, z + t), shade(rgb, 0.92))
    if params.get("books"):
        p.box((-w / 2 + t, -d / 2, 0.05), (w / 2 - t, -d / 2 + 0.01, h), shade(rgb, 0.7))
        _books(p, w - 2 * t, d, [0.05 + t + (h - 0.05 - t) * k / n for k in range(n)], (h - 0.05) / n - t)


_BOOK_COLORS: tuple[RGB, ...] = tuple(COLORS[c] for c in ("red", "navy", "beige", "green", "maroon", "orange", "teal"))


def _books(p: Parts, w: float, d: float, levels: list[float], gap: float) -> None:
    """Runs of books (deterministic widths, heights and colours) on the given shelf levels."""
    for row, z in enumerate(levels):
        x = -w / 2 + 0.02
        for i, frac in enumerate((0.14, 0.09, 0.18)):
            bw, bh = w * frac, gap * (0.62 + 0.1 * ((row + i * 2) % 3))
            p.box((x, -d / 2 + 0.02, z), (x + bw, d * 0.3, z + bh), _BOOK_COLORS[(row * 2 + i) % len(_BOOK_COLORS)])
            x += bw + w * (0.01 if i else 0.12)


def _cabinet(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    doors = max(1, min(int(params.get("doors", round(w / 0.5))), 4))
    plinth = min(0.08, h * 0.08)
    p.box((-w / 2 + 0.02, -d / 2, 0), (w / 2 - 0.02, d / 2 - 0.04, plinth), shade(rgb, 0.6))
    p.box((-w / 2, -d / 2, plinth), (w / 2, d / 2 - 0.02, h), rgb)
    _fronts(p, w, d / 2, plinth, h, doors, rgb, params.get("split"))


def _fronts(p: Parts, w: float, y: float, z0: float, z1: float, doors: int, rgb: RGB, split: Any = None) -> None:
    """Door panels with gaps and handles on a cabinet-like front at depth ``y``."""
    line, handle_len = _contrast(rgb), min(0.18, (z1 - z0) * 0.3)
    bands = [(z0, z1)] if not split else [(z0, z0 + (z1 - z0) * float(split)), (z0 + (z1 - z0) * float(split), z1)]
    for za, zb in bands:
        for k in range(doors):
            xa, xb = -w / 2 + w * k / doors, -w / 2 + w * (k + 1) / doors
            p.box((xa + 0.01, y - 0.02, za + 0.01), (xb - 0.01, y, zb - 0.01), shade(rgb, 1.06))
            hx = xb - 0.05 if k % 2 == 0 and doors > 1 else xa + 0.05
            hz = zb - 0.1 - handle_len if split or zb - za < 1.0 else za + (zb - za) * 0.5
            p.box((hx - 0.01, y, hz), (hx + 0.01, y + 0.02, hz + handle_len), line)


def _wardrobe(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    p.box((-w / 2, -d / 2, 0), (w / 2, d / 2 - 0.04, h - 0.04), rgb)
    p.box((-w / 2, -d / 2, h - 0.04), (w / 2, d / 2, h), shade(rgb, 0.8))
    _fronts(p, w, d / 2 - 0.02, 0.06, h - 0.06, max(2, round(w / 0.5)), rgb)


def _fridge(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    p.box((-w / 2, -d / 2, 0), (w / 2, d / 2 - 0.03, h), rgb)
    _fronts(p, w, d / 2 - 0.01, 0.02, h, 1, rgb, split=0.62)
    p.box((-w / 2, d / 2 - 0.03, 0), (w / 2, d / 2 - 0.01, 0.02), DARK)


def _dishwasher(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    p.box((-w / 2, -d / 2, 0), (w / 2, d / 2 - 0.03, h), rgb)
    p.box((-w / 2 + 0.01, d / 2 - 0.03, h - 0.1), (w / 2 - 0.01, d / 2 - 0.01, h - 0.01), DARK)
    p.box((-w / 2 + 0.01, d / 2 - 0.03, 0.08), (w / 2 - 0.01, d / 2 - 0.015, h - 0.11), shade(rgb, 1.05))
    p.box((-w * 0.35, d / 2 - 0.015, h - 0.16), (w * 0.35, d / 2, h - 0.13), METAL)


def _oven(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    p.box((-w / 2, -d / 2, 0), (w / 2, d / 2 - 0.03, h - 0.01), rgb)
    p.box((-w / 2 + 0.04, d / 2 - 0.03, h * 0.15), (w / 2 - 0.04, d / 2 - 0.02, h * 0.72), DARK)
    p.box((-w / 2 + 0.01, d / 2 - 0.03, h * 0.8), (w / 2 - 0.01, d / 2 - 0.015, h - 0.03), shade(rgb, 0.7))
    for k in range(4):
        x = -w / 2 + w * (k + 1) / 5
        p.box((x - 0.018, d / 2 - 0.015, h * 0.84), (x + 0.018, d / 2, h * 0.84 + 0.036), METAL)
    p.box((-w * 0.35, d / 2 - 0.015, h * 0.74), (w * 0.35, d / 2, h * 0.76), METAL)
    for sx in (-1, 1):
        for sy in (-1, 1):
            p.prism(sx * w / 4, sy * d / 5, h - 0.01, h, min(w, d) * 0.1, min(w, d) * 0.1, DARK, n=10)


def _sofa(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    arm, seat_z, back = min(0.18, w * 0.15), h * 0.45, min(0.22, d * 0.25)
    p.box((-w / 2, -d / 2, 0), (w / 2, d / 2, 0.08), shade(rgb, 0.5))
    p.box((-w / 2, -d / 2, 0.08), (w / 2, d / 2, seat_z - 0.1), rgb)
    p.box((-w / 2, -d / 2, seat_z - 0.1), (w / 2, -d / 2 + back, h), shade(rgb, 0.9))
    for sx in (-1, 1):
        xa, xb = sorted((sx * w / 2, sx * (w / 2 - arm)))
        p.box((xa, -d / 2 + back, seat_z - 0.1), (xb, d / 2, h * 0.68), shade(rgb, 0.9))
    n = max(1, round((w - 2 * arm) / 0.6))
    inner = w - 2 * arm
    for k in range(n):
        xa = -inner / 2 + inner * k / n
        xb, yb = xa + inner / n, -d / 2 + back
        p.box((xa + 0.01, yb, seat_z - 0.1), (xb - 0.01, d / 2 - 0.02, seat_z), shade(rgb, 1.1))
        p.box((xa + 0.02, yb, seat_z), (xb - 0.02, yb + 0.12, h - 0.06), shade(rgb, 1.05))


def _chair(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    seat = 0.46 * min(1.0, h / 0.85)
    _legs(p, w, d, seat - 0.04, 0.035, shade(rgb, 0.7))
    p.box((-w / 2, -d / 2, seat - 0.04), (w / 2, d / 2, seat), rgb)
    for sx in (-1, 1):
        xa, xb = sorted((sx * w / 2, sx * (w / 2 - 0.035)))
        p.box((xa, -d / 2, seat), (xb, -d / 2 + 0.035, h * 0.8), shade(rgb, 0.7))
    p.box((-w / 2, -d / 2 + 0.004, h * 0.62), (w / 2, -d / 2 + 0.031, h), rgb)


def _lamp(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    table = h < 0.9
    shade_h = h * (0.4 if table else 0.25)
    base = DARK if not table else shade(rgb, 0.75)
    p.prism(0, 0, 0, h * 0.03 + 0.01, w * 0.32, d * 0.32, base)
    if table:
        p.blob((0, 0, h * 0.3), (w * 0.22, d * 0.22, h * 0.22), shade(rgb, 0.75))
    p.prism(0, 0, 0.02, h - shade_h * 0.5, 0.02, 0.02, METAL, n=6)
    p.prism(0, 0, h - shade_h, h, w / 2, d / 2, rgb)
    p.prism(0, 0, h - shade_h, h - shade_h + 0.005, w * 0.45, d * 0.45, (255, 244, 200))


def _monitor(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    screen_h = h * 0.7
    p.box((-w * 0.2, -d / 2, 0), (w * 0.2, d / 2, 0.015), rgb)
    p.box((-0.025, -d * 0.25, 0.015), (0.025, -d * 0.05, h * 0.5), rgb)
    p.box((-w / 2, -d * 0.05, h - screen_h), (w / 2, d * 0.1, h), rgb)
    p.box((-w / 2 + 0.015, d * 0.1, h - screen_h + 0.015), (w / 2 - 0.015, d * 0.13, h - 0.015), DARK)


def _tv(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    stand_h = min(0.5, h * 0.4)
    p.box((-w / 2, -d / 2, 0), (w / 2, d / 2, stand_h), shade(rgb, 0.7))
    _fronts(p, w, d / 2, 0.04, stand_h - 0.02, 2, shade(rgb, 0.7))
    sw = w * 0.9
    p.box((-0.06, -0.04, stand_h), (0.06, 0.0, stand_h + 0.08), DARK)
    p.box((-sw / 2, -0.03, stand_h + 0.06), (sw / 2, 0.02, h), rgb)
    p.box((-sw / 2 + 0.02, 0.02, stand_h + 0.08), (sw / 2 - 0.02, 0.03, h - 0.02), DARK)


def _bed(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    frame_h, head_t = 0.3, 0.08
    mattress = frame_h + 0.2
    p.box((-w / 2, -d / 2, 0), (w / 2, -d / 2 + head_t, h), shade(rgb, 0.65))
    p.box((-w / 2, -d / 2 + head_t, 0.05), (w / 2, d / 2, frame_h), shade(rgb, 0.65))
    _legs(p, w, d, 0.05, 0.06, DARK)
    p.box((-w / 2 + 0.03, -d / 2 + head_t, frame_h), (w / 2 - 0.03, d / 2 - 0.03, mattress), LINEN)
    blanket_y = -d / 2 + head_t + d * 0.3
    p.box((-w / 2 + 0.01, blanket_y, mattress * 0.7), (w / 2 - 0.01, d / 2 - 0.01, mattress + 0.03), rgb)
    n = 1 if w < 1.2 else 2
    for k in range(n):
        cx = -w / 2 + w * (k + 0.5) / n
        p.blob((cx, -d / 2 + head_t + 0.22, mattress + 0.06), (w / n * 0.38, 0.16, 0.07), LINEN)


def _sink(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    body = h - 0.12
    p.box((-w / 2, -d / 2, 0.08), (w / 2, d / 2 - 0.02, body), rgb)
    p.box((-w / 2 + 0.02, -d / 2, 0), (w / 2 - 0.02, d / 2 - 0.05, 0.08), shade(rgb, 0.6))
    _fronts(p, w, d / 2, 0.08, body, 2 if w > 0.7 else 1, rgb)
    p.box((-w / 2, -d / 2, body), (w / 2, d / 2, body + 0.06), LINEN)
    p.prism(0, 0.02, body + 0.06, body + 0.065, w * 0.3, d * 0.28, WATER)
    p.box((-0.015, -d / 2 + 0.03, body + 0.06), (0.015, -d / 2 + 0.06, h), METAL)
    p.box((-0.015, -d / 2 + 0.03, h - 0.025), (0.015, -d / 2 + 0.16, h), METAL)


def _toilet(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    tank_d = d * 0.28
    p.box((-w / 2, -d / 2, h * 0.5), (w / 2, -d / 2 + tank_d, h), rgb)
    p.box((-w / 2 + 0.02, -d / 2, h - 0.03), (w / 2 - 0.02, -d / 2 + tank_d + 0.01, h), shade(rgb, 0.92))
    cy = -d / 2 + tank_d + (d - tank_d) * 0.45
    p.prism(0, cy, 0, h * 0.3, w * 0.25, (d - tank_d) * 0.3, rgb)
    p.prism(0, cy, h * 0.3, h * 0.52, w / 2, (d - tank_d) * 0.45, rgb)
    p.prism(0, cy + 0.01, h * 0.52, h * 0.55, w * 0.48, (d - tank_d) * 0.47, shade(rgb, 0.9))
    p.box((-0.04, -d / 2, 0.02), (0.04, cy, h * 0.5), rgb)


def _bathtub(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    t = 0.07
    p.box((-w / 2, -d / 2, 0), (w / 2, d / 2, 0.1), rgb)
    _frame_xy(p, w, d, 0.1, h, t, rgb)
    p.box((-w / 2 + t, -d / 2 + t, 0.1), (w / 2 - t, d / 2 - t, h * 0.55), WATER)
    p.box((-w / 2 + t, -0.02, h - 0.02), (-w / 2 + t + 0.12, 0.02, h), METAL)


def _wall_art(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    frame = DARK if sum(rgb) > 200 else (226, 226, 222)
    p.box((-w / 2, -d / 2, 0), (w / 2, d / 2, h), frame)
    b = min(w, h) * 0.07
    p.box((-w / 2 + b, d / 2, b), (w / 2 - b, d / 2 + 0.001, h - b), rgb)
    p.box((-w * 0.2, d / 2 + 0.001, h * 0.3), (w * 0.15, d / 2 + 0.002, h * 0.6), _contrast(rgb))
    p.box((w * 0.05, d / 2 + 0.001, h * 0.5), (w / 2 - b * 2, d / 2 + 0.002, h - b * 2), shade(rgb, 1.3))


def _mirror(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    b = min(w, h) * 0.06
    p.box((-w / 2, -d / 2, 0), (w / 2, d / 2 - 0.005, h), rgb)
    p.box((-w / 2 + b, d / 2 - 0.005, b), (w / 2 - b, d / 2, h - b), MIRROR_GLASS)
    p.box((-w / 2 + b * 2, d / 2, h * 0.55), (-w / 2 + b * 2 + w * 0.12, d / 2 + 0.001, h - b * 2), (240, 246, 250))


def _rug(p: Parts, w: float, d: float, h: float, rgb: RGB, params: Mapping[str, Any]) -> None:
    b = min(w, d) * 0.08
    edge = _contrast(rgb)
    p.box((-w / 2 + b, -d / 2 + b, 0), (w / 2 - b, d / 2 - b, h), rgb)
    _frame_xy(p, w, d, 0.0, h, b, edge)
    p.box((-w * 0.2, -d * 0.2, h), (w * 0.2, d * 0.2, h + 0.0005), edge)


# ------------------------------------------------------------------------------------------------ the table

_ALL_ROOMS = dict.fromkeys(ROOM_TYPES, 1.0)
_WOODS = ("white", "brown", "black", "gray", "beige")
_FABRICS = ("gray", "blue", "brown", "beige", "green", "red", "navy", "teal", "olive", "maroon", "black", "white",
            "purple", "yellow", "orange", "pink")  # fmt: skip
_BRIGHT = ("white", "black", "gray", "brown", "beige", "red", "orange", "yellow", "green", "blue", "purple", "pink",
           "teal", "navy", "olive", "maroon")  # fmt: skip
_SURFACES = ("shelf", "bookshelf", "cabinet", "side table", "desk", "dining table", "centre table")


_ROOM_KEYS = dict(zip(("living", "bedroom", "bathroom", "kitchen", "dining"), ROOM_TYPES, strict=True))


def _rooms(**weights: float) -> dict[str, float]:
    """Room weights by keyword (``living``, ``bedroom``, ``bathroom``, ``kitchen``, ``dining``)."""
    return {_ROOM_KEYS[k]: v for k, v in weights.items()}


def _cat(
    name: str,
    placement: str,
    builder: Builder,
    sizes: Sequence[SizeRange],
    colors: Sequence[str],
    rooms: Mapping[str, float],
    max_per_room: int,
    **extra: Any,
) -> tuple[Category, Builder]:
    """One catalog row: ``sizes`` lists the small, medium and large ``(width, depth, height)`` ranges."""
    by_class = dict(zip(("small", "medium", "large"), sizes, strict=True))
    return Category(name, placement, by_class, tuple(colors), dict(rooms), max_per_room, **extra), builder


_POTS = ("white", "gray", "brown", "orange", "black", "blue", "beige", "teal", "red", "yellow", "pink")
_SHADES = ("white", "beige", "black", "red", "yellow", "orange", "blue", "green", "gray", "teal", "pink")
_RUGS = ("red", "blue", "beige", "gray", "green", "navy", "maroon", "teal", "brown", "pink", "purple", "olive")

# fmt: off
_TABLE: list[tuple[Category, Builder]] = [
    _cat("door", "in_wall", _door,
         (((0.75, 0.8), (0.06, 0.07), (1.95, 2.0)), ((0.8, 0.9), (0.06, 0.07), (2.0, 2.1)),
          ((0.9, 1.0), (0.06, 0.08), (2.05, 2.2))),
         _BRIGHT, _ALL_ROOMS, 2, clearance=0.9),
    _cat("window", "in_wall", _window,
         (((0.6, 0.9), (0.12, 0.14), (0.8, 1.1)), ((0.9, 1.4), (0.12, 0.14), (1.1, 1.4)),
          ((1.4, 2.2), (0.12, 0.14), (1.3, 1.6))),
         ("white", "black", "brown", "gray"), _ALL_ROOMS, 3),
    _cat("plant container", "floor", _plant,
         (((0.16, 0.26), (0.16, 0.26), (0.22, 0.4)), ((0.3, 0.45), (0.3, 0.45), (0.6, 1.0)),
          ((0.45, 0.7), (0.45, 0.7), (1.0, 1.6))),
         _POTS, _rooms(living=3, bedroom=2, bathroom=1.5, kitchen=2, dining=3), 5, supports=_SURFACES),
    _cat("shelf", "wall", _shelf,
         (((0.5, 0.8), (0.25, 0.32), (0.7, 1.0)), ((0.8, 1.2), (0.28, 0.36), (1.0, 1.5)),
          ((1.0, 1.5), (0.3, 0.4), (1.5, 1.9))),
         (*_WOODS, "navy", "teal"), _rooms(living=1.5, bedroom=1, bathroom=1, kitchen=1.2, dining=1.2), 3,
         surface=True),
    _cat("bookshelf", "wall", _shelf,
         (((0.6, 0.8), (0.28, 0.34), (0.9, 1.2)), ((0.8, 1.1), (0.3, 0.36), (1.2, 1.7)),
          ((1.1, 1.6), (0.32, 0.4), (1.7, 2.1))),
         _WOODS, _rooms(living=1.5, bedroom=1, dining=0.5), 2, surface=True),
    _cat("cabinet", "wall", _cabinet,
         (((0.4, 0.6), (0.38, 0.5), (0.5, 0.8)), ((0.6, 1.0), (0.4, 0.55), (0.8, 1.0)),
          ((1.0, 1.6), (0.45, 0.6), (0.9, 1.2))),
         _BRIGHT, _rooms(living=1.5, bedroom=1.5, bathroom=1.5, kitchen=4, dining=2), 4, surface=True, clearance=0.5),
    _cat("lamp", "floor", _lamp,
         (((0.2, 0.3), (0.2, 0.3), (0.38, 0.55)), ((0.3, 0.4), (0.3, 0.4), (1.3, 1.6)),
          ((0.4, 0.5), (0.4, 0.5), (1.6, 1.85))),
         _SHADES, _rooms(living=2, bedroom=2, dining=0.6), 3, supports=("side table", "desk", "cabinet")),
    _cat("desk", "wall", _desk,
         (((0.8, 1.0), (0.5, 0.6), (0.72, 0.76)), ((1.0, 1.4), (0.6, 0.7), (0.72, 0.76)),
          ((1.4, 1.8), (0.7, 0.8), (0.72, 0.78))),
         _WOODS, _rooms(living=0.8, bedroom=1.2), 2, surface=True),
    _cat("monitor", "surface", _monitor,
         (((0.4, 0.5), (0.16, 0.2), (0.35, 0.42)), ((0.5, 0.62), (0.18, 0.22), (0.42, 0.5)),
          ((0.62, 0.8), (0.2, 0.25), (0.5, 0.6))),
         ("black", "white", "gray"), _rooms(living=0.3, bedroom=0.3), 3, supports=("desk",)),
    _cat("sofa", "wall", _sofa,
         (((1.3, 1.6), (0.8, 0.9), (0.75, 0.85)), ((1.7, 2.1), (0.85, 0.95), (0.8, 0.9)),
          ((2.1, 2.6), (0.9, 1.0), (0.8, 0.95))),
         _FABRICS, _rooms(living=1.5), 2, clearance=0.4),
    _cat("armchair", "floor", _sofa,
         (((0.7, 0.78), (0.72, 0.8), (0.75, 0.85)), ((0.78, 0.88), (0.8, 0.88), (0.8, 0.9)),
          ((0.88, 1.0), (0.86, 0.95), (0.85, 1.0))),
         _FABRICS, _rooms(living=1.5, bedroom=0.5), 2, clearance=0.3),
    _cat("side table", "floor", _table,
         (((0.35, 0.45), (0.35, 0.45), (0.45, 0.55)), ((0.45, 0.55), (0.4, 0.5), (0.5, 0.6)),
          ((0.55, 0.65), (0.45, 0.55), (0.55, 0.6))),
         _WOODS, _rooms(living=1.2, bedroom=0.6), 3, surface=True),
    _cat("centre table", "floor", _table,
         (((0.6, 0.8), (0.4, 0.5), (0.35, 0.42)), ((0.8, 1.1), (0.5, 0.6), (0.38, 0.45)),
          ((1.1, 1.4), (0.6, 0.75), (0.4, 0.48))),
         _WOODS, _rooms(living=0.4), 1, surface=True),
    _cat("TV", "wall", _tv,
         (((0.8, 1.0), (0.35, 0.4), (0.9, 1.05)), ((1.0, 1.3), (0.38, 0.45), (1.05, 1.2)),
          ((1.3, 1.8), (0.4, 0.5), (1.15, 1.4))),
         ("black", "gray", "white", "brown"), _rooms(living=1.5, bedroom=0.5), 1, clearance=0.5),
    _cat("bed", "wall", _bed,
         (((0.9, 1.0), (1.95, 2.05), (0.9, 1.1)), ((1.35, 1.6), (2.0, 2.1), (1.0, 1.2)),
          ((1.7, 1.9), (2.05, 2.2), (1.05, 1.3))),
         _FABRICS, _rooms(bedroom=0.3), 2, clearance=0.4),
    _cat("sink", "wall", _sink,
         (((0.45, 0.6), (0.4, 0.48), (0.8, 0.88)), ((0.6, 0.9), (0.45, 0.55), (0.85, 0.92)),
          ((0.9, 1.2), (0.5, 0.6), (0.88, 0.95))),
         ("white", "gray", "beige", "black", "blue", "teal", "brown", "navy"), _rooms(bathroom=0.5, kitchen=0.6), 2,
         clearance=0.5),
    _cat("toilet", "wall", _toilet,
         (((0.36, 0.4), (0.6, 0.66), (0.7, 0.78)), ((0.38, 0.42), (0.65, 0.7), (0.75, 0.82)),
          ((0.4, 0.45), (0.68, 0.75), (0.78, 0.85))),
         ("white", "beige", "black", "gray"), _rooms(bathroom=0.5), 1, clearance=0.5),
    _cat("bathtub", "wall", _bathtub,
         (((1.4, 1.55), (0.7, 0.75), (0.5, 0.56)), ((1.55, 1.7), (0.74, 0.8), (0.52, 0.58)),
          ((1.7, 1.85), (0.78, 0.88), (0.55, 0.62))),
         ("white", "beige", "gray", "blue", "pink", "teal"), _rooms(bathroom=0.8), 1),
    _cat("oven", "wall", _oven,
         (((0.5, 0.58), (0.55, 0.6), (0.85, 0.9)), ((0.58, 0.68), (0.58, 0.62), (0.86, 0.92)),
          ((0.7, 0.9), (0.6, 0.65), (0.88, 0.95))),
         ("white", "black", "gray", "red"), _rooms(kitchen=1.2), 1, clearance=0.7),
    _cat("dishwasher", "wall", _dishwasher,
         (((0.44, 0.46), (0.55, 0.6), (0.82, 0.86)), ((0.58, 0.6), (0.56, 0.6), (0.82, 0.86)),
          ((0.6, 0.62), (0.58, 0.62), (0.84, 0.88))),
         ("white", "gray", "black"), _rooms(kitchen=1), 1, clearance=0.6),
    _cat("fridge", "wall", _fridge,
         (((0.55, 0.6), (0.6, 0.65), (1.4, 1.6)), ((0.6, 0.7), (0.64, 0.7), (1.7, 1.85)),
          ((0.8, 0.95), (0.68, 0.75), (1.8, 1.95))),
         ("white", "gray", "black", "red", "blue", "beige", "teal"), _rooms(kitchen=1.5), 1, clearance=0.7),
    _cat("wall art", "wall_hang", _wall_art,
         (((0.3, 0.5), (0.03, 0.04), (0.3, 0.5)), ((0.5, 0.8), (0.03, 0.04), (0.4, 0.7)),
          ((0.8, 1.3), (0.03, 0.05), (0.6, 0.9))),
         _BRIGHT, _rooms(living=2, bedroom=1.3, bathroom=0.4, kitchen=0.8, dining=2), 4),
    _cat("dining table", "floor", _table,
         (((0.8, 1.0), (0.75, 0.9), (0.72, 0.76)), ((1.2, 1.6), (0.8, 0.9), (0.72, 0.76)),
          ((1.6, 2.1), (0.9, 1.05), (0.73, 0.78))),
         _WOODS, _rooms(kitchen=0.6, dining=0.4, living=0.15), 1, surface=True),
    _cat("chair", "floor", _chair,
         (((0.4, 0.45), (0.42, 0.48), (0.8, 0.88)), ((0.45, 0.5), (0.46, 0.52), (0.85, 0.95)),
          ((0.5, 0.55), (0.5, 0.56), (0.9, 1.02))),
         _FABRICS, _rooms(living=0.3, bedroom=0.3, kitchen=0.3, dining=0.5), 8),
    _cat("rug", "floor", _rug,
         (((1.2, 1.6), (0.8, 1.1), (0.008, 0.012)), ((1.6, 2.2), (1.1, 1.6), (0.008, 0.012)),
          ((2.2, 3.0), (1.6, 2.2), (0.01, 0.014))),
         _RUGS, _rooms(living=1, bedroom=1, dining=0.8), 1, flat=True),
    _cat("mirror", "wall_hang", _mirror,
         (((0.35, 0.5), (0.03, 0.04), (0.5, 0.7)), ((0.5, 0.8), (0.03, 0.04), (0.6, 0.9)),
          ((0.8, 1.1), (0.03, 0.05), (0.8, 1.1))),
         ("black", "white", "brown", "gray", "yellow"), _rooms(bathroom=0.8, bedroom=0.5, living=0.3), 2),
    _cat("wardrobe", "wall", _wardrobe,
         (((0.8, 1.0), (0.55, 0.6), (1.8, 1.95)), ((1.0, 1.5), (0.55, 0.62), (1.9, 2.1)),
          ((1.5, 2.0), (0.58, 0.65), (2.0, 2.25))),
         _BRIGHT, _rooms(bedroom=1.2), 2, clearance=0.6),
]
# fmt: on

CATEGORIES: dict[str, Category] = {c.name: c for c, _ in _TABLE}
_BUILDERS: dict[str, Builder] = {c.name: b for c, b in _TABLE}
_BOOKS = {"bookshelf": {"books": True}}


# ---------------------------------------------------------------------------------------------- public API


def local_mesh(
    category: str, size: Sequence[float], rgb: RGB, params: Mapping[str, Any] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertices, faces and face colours of ``category`` in its local frame, fitted exactly to ``size``."""
    try:
        builder = _BUILDERS[category]
    except KeyError:
        raise ValueError(f"unknown category {category!r}") from None
    w, d, h = (float(s) for s in size)
    parts = Parts()
    builder(parts, w, d, h, rgb, {**_BOOKS.get(category, {}), **(params or {})})
    verts, faces, colors = parts.mesh()
    lo, hi = verts.min(axis=0), verts.max(axis=0)
    target_lo, target = np.array([-w / 2, -d / 2, 0.0]), np.array([w, d, h])
    verts = target_lo + (verts - lo) * (target / np.maximum(hi - lo, 1e-9))
    return verts, faces, colors


def _to_world(verts: np.ndarray, position: Sequence[float], yaw: float, support_z: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    x, y = verts[:, 0], verts[:, 1]
    return np.column_stack([c * x - s * y + position[0], s * x + c * y + position[1], verts[:, 2] + support_z])


def compute_bbox(
    category: str,
    size: Sequence[float],
    position: Sequence[float],
    yaw: float,
    support_z: float,
    params: Mapping[str, Any] | None = None,
) -> tuple[Vec3, Vec3]:
    """The world AABB ``(min, max)`` of an object (exact: the mesh's bounds). ``position`` gives the footprint
    centre (x, y); ``support_z`` the height it rests on. Right-angle yaws need no mesh."""
    w, d, h = (float(v) for v in size)
    c, s = math.cos(yaw), math.sin(yaw)
    if abs(math.sin(2 * yaw)) < 1e-9:
        ex, ey = abs(c) * w / 2 + abs(s) * d / 2, abs(s) * w / 2 + abs(c) * d / 2
        lo = (position[0] - ex, position[1] - ey, support_z)
        return lo, (position[0] + ex, position[1] + ey, support_z + h)
    verts = _to_world(local_mesh(category, size, (0, 0, 0), params)[0], position, yaw, support_z)
    mn, mx = verts.min(axis=0), verts.max(axis=0)
    return (float(mn[0]), float(mn[1]), float(mn[2])), (float(mx[0]), float(mx[1]), float(mx[2]))


def object_mesh(obj: RoomObject) -> trimesh.Trimesh:
    """``obj``'s mesh in world coordinates with per-face colours; its bounds equal ``obj.bbox``."""
    verts, faces, colors = local_mesh(obj.category, obj.size, obj.rgb, obj.params)
    world = _to_world(verts, obj.position, obj.yaw, obj.position[2])
    return trimesh.Trimesh(world, faces, face_colors=colors, process=False)


def _colored_box(lo: Sequence[float], hi: Sequence[float], rgb: RGB) -> trimesh.Trimesh:
    parts = Parts()
    parts.box(lo, hi, rgb)
    verts, faces, colors = parts.mesh()
    return trimesh.Trimesh(verts, faces, face_colors=colors, process=False)


def room_shell(scene: Scene, thickness: float = 0.1) -> list[tuple[str, trimesh.Trimesh, RGB]]:
    """The room's floor, four walls (thin boxes just outside the floor rectangle) and, if the scene has one,
    its ceiling, as ``(name, mesh, rgb)``."""
    w, d, h, t = scene.width, scene.depth, scene.height, thickness
    boxes = [
        ("floor", (-t, -t, -t), (w + t, d + t, 0.0), scene.floor_rgb),
        ("wall_south", (-t, -t, 0.0), (w + t, 0.0, h), scene.wall_rgb),
        ("wall_east", (w, -t, 0.0), (w + t, d + t, h), scene.wall_rgb),
        ("wall_north", (-t, d, 0.0), (w + t, d + t, h), scene.wall_rgb),
        ("wall_west", (-t, -t, 0.0), (0.0, d + t, h), scene.wall_rgb),
    ]
    if scene.ceiling:
        boxes.append(("ceiling", (-t, -t, h), (w + t, d + t, h + t), scene.wall_rgb))
    return [(name, _colored_box(lo, hi, rgb), rgb) for name, lo, hi, rgb in boxes]
