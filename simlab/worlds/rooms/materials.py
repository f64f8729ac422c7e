"""The rooms world's materials: the colours its renders draw with, read from ``assets/materials/rooms.toml``.

The file is data, not code, so it lives with SimLab's other assets; this module checks it (every colour a
0-255 RGB triple, every name the renderers use present) and hands out :data:`MATERIALS`. Headless.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simlab.core.assets import asset_path
from simlab.core.errors import FormatError

RGB = tuple[int, int, int]

MATERIALS_FILE = "materials/rooms.toml"
PARTS = ("metal", "dark", "glass", "mirror_glass", "linen", "foliage", "water")
MAP_COLOURS = ("background", "floor", "wall", "text", "marker")
CORNERS = ("visible", "blocked", "outside")


@dataclass(frozen=True)
class RoomMaterials:
    """The colours of the rooms world, by use: ``colors`` (an object's named colour, in file order),
    ``parts`` (fixed parts such as metal and glass), ``floors`` and ``walls`` (what a generated room picks
    from), ``map`` (the top-down map) and ``corners`` (corner marks by visibility state)."""

    colors: dict[str, RGB]
    parts: dict[str, RGB]
    floors: tuple[RGB, ...]
    walls: tuple[RGB, ...]
    map: dict[str, RGB]
    corners: dict[str, RGB]


def load_materials(path: Path | None = None) -> RoomMaterials:
    """The materials in ``path`` (default: the shipped ``assets/materials/rooms.toml``); a bad file raises a
    FormatError naming the table and the entry."""
    path = path or asset_path(MATERIALS_FILE)
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise FormatError(path, "", f"a TOML file of colours ({exc})") from None
    return RoomMaterials(
        colors=_table(path, data, "colors", ()),
        parts=_table(path, data, "parts", PARTS),
        floors=_list(path, data, "shell", "floors"),
        walls=_list(path, data, "shell", "walls"),
        map=_table(path, data, "map", MAP_COLOURS),
        corners=_table(path, data, "corners", CORNERS),
    )


def _table(path: Path, data: Mapping[str, Any], name: str, required: tuple[str, ...]) -> dict[str, RGB]:
    table = data.get(name)
    if not isinstance(table, dict) or not table:
        raise FormatError(path, f"[{name}]", "a table of named colours")
    missing = [key for key in required if key not in table]
    if missing:
        raise FormatError(path, f"[{name}]", f"the colours {', '.join(missing)}")
    return {key: _rgb(path, f"{name}.{key}", value) for key, value in table.items()}


def _list(path: Path, data: Mapping[str, Any], table: str, name: str) -> tuple[RGB, ...]:
    values = data.get(table, {}).get(name) if isinstance(data.get(table), dict) else None
    if not isinstance(values, list) or not values:
        raise FormatError(path, f"{table}.{name}", "a non-empty list of colours")
    return tuple(_rgb(path, f"{table}.{name}[{k}]", value) for k, value in enumerate(values))


def _rgb(path: Path, where: str, value: Any) -> RGB:
    if (
        not isinstance(value, list)
        or len(value) != 3
        or not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255 for c in value)
    ):
        raise FormatError(path, where, "an RGB colour: three integers from 0 to 255")
    return (value[0], value[1], value[2])


MATERIALS: RoomMaterials = load_materials()
"""The shipped materials, read once on import."""
