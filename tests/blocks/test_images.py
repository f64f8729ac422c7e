"""Pictures of walls and boards: sizes, colours, joined dominoes, determinism."""

from __future__ import annotations

from typing import Any

import pytest
from PIL import Image

from simlab.render.images import pixels, to_png_bytes
from simlab.worlds.blocks.images import (
    COLOR_RGB,
    board_cell_box,
    board_image,
    color_name,
    wall_cell_box,
    wall_image,
)
from simlab.worlds.blocks.model import Board
from simlab.worlds.blocks.views import director_view

CELL = 96


def _target() -> Board:
    """Structure_016-like target from the CRAFT paper's Figure 7 caption."""
    codes = {
        (0, 0): ["ol", "rl", "yl"],
        (0, 1): ["ol", "rl", "rs"],
        (0, 2): ["rl", "rs", "bs"],
        (1, 0): ["rs", "yl", "yl"],
        (1, 1): ["gs"],
        (1, 2): ["rl", "ys", "rs"],
        (2, 0): ["gs", "yl", "os"],
        (2, 1): ["bs", "gs"],
        (2, 2): ["rs", "gs", "os"],
    }
    spans = [(0, (0, 0), (0, 1)), (1, (0, 0), (0, 1)), (2, (0, 0), (1, 0)), (1, (1, 0), (2, 0)), (0, (0, 2), (1, 2))]
    return Board.from_codes(codes, spans)


def _reddish(rgb: tuple[int, ...]) -> bool:
    return rgb[0] > 150 and rgb[1] < 90 and rgb[2] < 90


def _near(a: tuple[int, ...], b: tuple[int, ...], tol: int = 40) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


def _centre(box: tuple[int, int, int, int]) -> tuple[int, int]:
    return ((box[0] + box[2]) // 2, (box[1] + box[3]) // 2)


def _distinct_colours(image: Image.Image) -> int:
    return len(set(pixels(image)))


@pytest.mark.parametrize("director", ["D1", "D2", "D3"])
def test_wall_image_size_and_content(director: str) -> None:
    view = director_view(_target(), director, interior="paper").to_json()
    small, large = wall_image(view, 64), wall_image(view, CELL)
    assert large.mode == "RGB"
    assert large.height >= 3 * CELL + CELL // 2 and large.width >= 3 * CELL
    assert small.width < large.width and small.height < large.height
    assert _distinct_colours(large) > 50


def test_wall_cell_holding_red_is_red() -> None:
    view = director_view(_target(), "D3").to_json()  # D3 layer 1: small red at (0,2), the first position
    assert view["layers"][1][0] == {"color": "red", "size": 1}
    image = wall_image(view, CELL)
    assert _reddish(image.getpixel(_centre(wall_cell_box(view, 0, 1, CELL))))


def test_wall_domino_has_no_seam() -> None:
    view = director_view(_target(), "D2").to_json()  # D2 layer 0: large orange across (0,0)-(0,1)
    assert view["layers"][0][0] == view["layers"][0][1] == {"color": "orange", "size": 2}
    image = wall_image(view, CELL)
    _, y0, x1, y1 = wall_cell_box(view, 0, 0, CELL)
    for y in range(y0 + CELL // 4, y1 - CELL // 4):
        assert _near(image.getpixel((x1, y)), COLOR_RGB["orange"], 2), y
    # two separate blocks side by side (layer 2: small red, small blue) keep a gap between them
    bx0, by0, _, by1 = wall_cell_box(view, 2, 2, CELL)
    assert not any(_near(image.getpixel((bx0, y)), COLOR_RGB[c], 30) for y in range(by0, by1) for c in ("red", "blue"))


def test_wall_end_on_mark_needs_the_target() -> None:
    target = _target()
    view = director_view(target, "D1").to_json()  # D1 L0 (0,0): the orange domino seen end-on
    plain = wall_image(view, CELL)
    marked = wall_image(view, CELL, target_json=target.to_json())
    box = wall_cell_box(view, 0, 0, CELL, target_json=target.to_json())
    crop = marked.crop(box)
    assert any(_near(p, (255, 255, 255), 10) for p in pixels(crop))  # white dashes on the outline
    assert to_png_bytes(plain) != to_png_bytes(marked)


def test_wall_accepts_hand_written_json() -> None:
    view: dict[str, Any] = {
        "director": "D2",
        "wall": "far",
        "positions": [[0, 0], [0, 1], [0, 2]],
        "layers": [[{"color": "blue", "size": 1}, None, {"color": "none", "size": 1}], [None] * 3, [None] * 3],
        "interior": [{"cell": [1, 1], "color": "green", "size": 1, "layer": 0}, {"cell": [2, 1], "top": None}],
    }
    image = wall_image(view, 80)
    assert _near(image.getpixel(_centre(wall_cell_box(view, 0, 0, 80))), COLOR_RGB["blue"], 2)
    assert not _near(image.getpixel(_centre(wall_cell_box(view, 2, 0, 80))), COLOR_RGB["blue"], 60)


def test_board_image_size_and_red_cell() -> None:
    board = _target()
    image = board_image(board.to_json(), CELL)
    assert image.width >= 3 * CELL and image.height >= 3 * CELL + CELL // 2
    assert _distinct_colours(image) > 50
    x0, y0, _, y1 = board_cell_box((1, 2), CELL)  # (1,2) is topped by a small red
    assert _reddish(image.getpixel((x0 + CELL // 6, (y0 + y1) // 2)))


def test_board_joined_large_top_has_no_seam() -> None:
    board = Board.from_codes({(1, 1): ["bl"], (2, 1): ["bl"]}, [(0, (1, 1), (2, 1))])
    image = board_image(board.to_json(), CELL, target_json=board.to_json())
    x0, _, x1, y1 = board_cell_box((1, 1), CELL)
    for x in range(x0 + CELL // 4, x1 - CELL // 4):
        assert _near(image.getpixel((x, y1)), COLOR_RGB["blue"], 2), x


def test_board_target_marks_matching_cells_only() -> None:
    target = _target()
    current = Board.from_codes({(2, 1): ["bs", "gs"], (1, 1): ["rs"]}, [])
    image = board_image(current.to_json(), CELL, target_json=target.to_json())
    plain = board_image(current.to_json(), CELL)
    assert image.height > plain.height  # one more legend line
    teal = (0, 122, 110)
    assert any(_near(p, teal, 3) for p in pixels(image.crop(board_cell_box((2, 1), CELL))))
    assert not any(_near(p, teal, 3) for p in pixels(image.crop(board_cell_box((1, 1), CELL))))


def test_empty_board_renders_only_the_grid() -> None:
    image = board_image(Board().to_json(), CELL)
    for pixel in set(pixels(image)):
        assert max(pixel) - min(pixel) < 30, pixel  # greys only: no block colours, no markers


def test_same_input_same_bytes() -> None:
    target = _target()
    view = director_view(target, "D2", interior="paper").to_json()
    assert to_png_bytes(wall_image(view)) == to_png_bytes(wall_image(dict(view)))
    assert to_png_bytes(board_image(target.to_json())) == to_png_bytes(board_image(target.to_json()))
    assert to_png_bytes(wall_image(view))[:8] == b"\x89PNG\r\n\x1a\n"


def test_colours_are_distinct_and_named() -> None:
    values = list(COLOR_RGB.values())
    assert len(set(values)) == 5
    for k, a in enumerate(values):
        for b in values[k + 1 :]:
            assert sum(abs(x - y) for x, y in zip(a, b, strict=True)) > 90
    assert color_name("gs") == "green" and color_name("Orange") == "orange" and color_name("none") is None
