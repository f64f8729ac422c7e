"""The rooms world's materials come from assets/materials/rooms.toml, checked as they are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from simlab.core.assets import asset_path
from simlab.core.errors import FormatError
from simlab.worlds.rooms import catalog, generator
from simlab.worlds.rooms.materials import MATERIALS, load_materials
from simlab.worlds.rooms.model import Camera
from simlab.worlds.rooms.render import topdown_map

SHIPPED = asset_path("materials/rooms.toml").read_text("utf-8")


def test_every_colour_a_category_allows_is_a_material() -> None:
    allowed = {color for category in catalog.CATEGORIES.values() for color in category.colors}
    assert allowed <= set(MATERIALS.colors)
    assert MATERIALS.colors == catalog.COLORS and MATERIALS.parts["glass"] == catalog.GLASS


def test_generated_rooms_take_their_floor_and_walls_from_the_materials() -> None:
    scenes = [generator.generate_scene(3, k) for k in range(8)]
    assert {s.floor_rgb for s in scenes} <= set(MATERIALS.floors)
    assert {s.wall_rgb for s in scenes} <= set(MATERIALS.walls)


def test_the_map_is_drawn_in_the_materials_colours() -> None:
    scene = generator.generate_scene(3, 0)
    up = Camera((0.4, 0.4, 1.5), 0.0)  # in a corner, so the "you" marker leaves the middle free
    image = topdown_map(scene, [], up, (200, 200))
    assert image.getpixel((1, 1)) == MATERIALS.map["background"]
    assert image.getpixel((100, 100)) == MATERIALS.map["floor"]


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (("glass = [168, 202, 226]", "glass = [168, 202]"), "parts.glass"),
        (("red = [200, 38, 38]", "red = [200, 38, 300]"), "colors.red"),
        (("water = [150, 196, 222]\n", ""), r"\[parts\]: the colours water"),
        (("floors = [", "floors = 3 #"), "shell.floors"),
        (("[map]", "[map"), "TOML"),
    ],
)
def test_a_bad_materials_file_is_refused_naming_the_place(tmp_path: Path, change: tuple[str, str], where: str) -> None:
    assert change[0] in SHIPPED
    path = tmp_path / "rooms.toml"
    path.write_text(SHIPPED.replace(*change), "utf-8")
    with pytest.raises(FormatError, match=where):
        load_materials(path)


def test_the_shipped_file_reads_back_as_loaded() -> None:
    path = asset_path("materials/rooms.toml")
    assert load_materials(path) == MATERIALS
