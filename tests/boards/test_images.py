"""The boards' top-down pictures: where each piece lands, what hides what, layer-wise targets, difference
markers, the legend, the observation pictures a model was given, and determinism."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from PIL import Image

from simlab.render.images import pixels, to_png_bytes
from simlab.worlds.boards.images import (
    CELL_PX,
    COLOUR_RGB,
    DIFF_RGB,
    LEGEND_SHAPES,
    annotated_images,
    board_image,
    cell_box,
    cell_differences,
    legend_image,
    observation_images,
    target_image,
)
from simlab.worlds.boards.model import SHAPES, Board, Placement, build, put
from simlab.worlds.boards.targets import generate_targets
from simlab.worlds.boards.world import BoardsWorld

C = CELL_PX
Box = tuple[int, int, int, int]


def _board(*placements: tuple[str, str, int, int]) -> Board:
    return build(Placement(*p) for p in placements)


def _near(a: Iterable[int], b: Iterable[int], tol: int = 12) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


def _pixels(image: Image.Image, box: Box | None = None) -> list[tuple[int, ...]]:
    return pixels(image.crop(box) if box else image)


def _count(image: Image.Image, rgb: tuple[int, int, int], box: Box | None = None, tol: int = 12) -> int:
    return sum(_near(p, rgb, tol) for p in _pixels(image, box))


def _centre(box: Box, dx: float = 0.0, dy: float = 0.0) -> tuple[int, int]:
    """The box's centre, moved by ``dx``/``dy`` cells."""
    return (round((box[0] + box[2]) / 2 + dx * C), round((box[1] + box[3]) / 2 + dy * C))


def _grid(rows: int = 8, cols: int = 8) -> Box:
    first, last = cell_box((1, 1)), cell_box((rows, cols))
    return (first[0], first[1], last[2], last[3])


def test_a_red_washer_colours_its_own_cell_and_no_other():
    image = target_image(_board(("washer", "red", 2, 3)).to_json())
    box = cell_box((2, 3))
    assert _near(image.getpixel(_centre(box)), COLOUR_RGB["red"])
    inside = _count(image, COLOUR_RGB["red"], box, tol=40)
    assert inside > 0.3 * C * C  # a diamond through the edge midpoints covers half the cell
    assert _count(image, COLOUR_RGB["red"], tol=40) == inside
    # the diamond's corners stay white: it touches the edge midpoints only
    assert _near(image.getpixel((box[0] + C // 8, box[3] - C // 8)), (255, 255, 255), 3)


def test_row_1_is_at_the_top_and_column_1_at_the_left():
    image = target_image(_board(("nut", "blue", 1, 1), ("screw", "green", 8, 8)).to_json())
    top_left, bottom_right = cell_box((1, 1)), cell_box((8, 8))
    assert top_left[0] < bottom_right[0] and top_left[1] < bottom_right[1]
    assert _near(image.getpixel(_centre(top_left)), COLOUR_RGB["blue"])
    assert _near(image.getpixel(_centre(bottom_right)), COLOUR_RGB["green"])
    grid = _grid()
    assert top_left[:2] == grid[:2] and bottom_right[2:] == grid[2:]


def test_a_higher_piece_hides_a_lower_one_at_the_cell_centre():
    image = target_image(_board(("nut", "blue", 4, 4), ("screw", "yellow", 4, 4)).to_json())
    box = cell_box((4, 4))
    assert _near(image.getpixel(_centre(box)), COLOUR_RGB["yellow"])
    assert _near(image.getpixel(_centre(box, 0.36, 0.0)), COLOUR_RGB["blue"])  # the nut outside the screw head


def test_a_horizontal_bridge_is_one_rectangle_over_both_cells():
    image = target_image(_board(("bridge-h", "red", 5, 2)).to_json())
    left, right = cell_box((5, 2)), cell_box((5, 3))
    red = COLOUR_RGB["red"]
    for point in (_centre(left), _centre(right), (left[2], _centre(left)[1])):  # no seam on the shared edge
        assert _near(image.getpixel(point), red), point
    assert not _near(image.getpixel(_centre(left, 0.0, -0.4)), red, 60)  # 0.6 cell high, not a full cell
    assert not _near(image.getpixel(_centre(left, -0.45, 0.0)), red, 60)  # 1.6 cells long, not two
    assert not _count(image, red, cell_box((6, 2)), tol=40)


def test_a_vertical_bridge_spans_two_rows():
    image = target_image(_board(("bridge-v", "green", 2, 7)).to_json())
    top, bottom = cell_box((2, 7)), cell_box((3, 7))
    for point in (_centre(top), _centre(bottom), (_centre(top)[0], top[3])):
        assert _near(image.getpixel(point), COLOUR_RGB["green"]), point


def test_layer_wise_targets_show_levels_1_to_k_only():
    target = _board(("nut", "blue", 4, 4), ("washer", "red", 4, 4), ("screw", "green", 4, 4))
    centre = _centre(cell_box((4, 4)))
    level_1, level_2, full = (target_image(target.to_json(), k) for k in (1, 2, None))
    assert _near(level_1.getpixel(centre), COLOUR_RGB["blue"])
    assert not _count(level_1, COLOUR_RGB["red"], tol=40) and not _count(level_1, COLOUR_RGB["green"], tol=40)
    assert _near(level_2.getpixel(centre), COLOUR_RGB["red"])  # the washer's middle covers the nut's
    assert not _count(level_2, COLOUR_RGB["green"], tol=40)
    assert _near(full.getpixel(centre), COLOUR_RGB["green"])
    assert to_png_bytes(target_image(target.to_json(), 3)) != to_png_bytes(full)  # titled "levels 1 to 3 (all)"


def _badge(cell: tuple[int, int]) -> Box:
    """Where the stack-height tag sits: the cell's top-left corner."""
    x0, y0, _, _ = cell_box(cell)
    return (x0 + 2, y0 + 2, x0 + 20, y0 + 20)


def test_the_stack_badge_is_drawn_in_occupied_cells_only():
    image = target_image(_board(("nut", "blue", 4, 4)).to_json())
    assert _count(image, (34, 38, 44), _badge((4, 4)), tol=40) > 10  # the digit and the tag's outline
    assert _count(image, (255, 255, 255), _badge((4, 5)), tol=3) > 0.8 * 18 * 18


def test_an_empty_board_is_only_the_grid():
    image = board_image(Board().to_json())
    assert image.size == target_image(Board().to_json()).size
    for pixel in set(_pixels(image)):
        assert max(pixel) - min(pixel) < 30, pixel  # greys only: no piece colours, no markers


def test_sizes_are_legible_for_a_model_and_scale_with_the_cell():
    board = generate_targets(4, 0)[3].board().to_json()
    image = target_image(board)
    assert image.mode == "RGB" and 540 <= image.width <= 600 and 580 <= image.height <= 660
    assert _grid()[2] - _grid()[0] == 8 * C
    bigger = target_image(board, cell_px=96)
    assert bigger.width > image.width and bigger.height > image.height


def test_a_board_of_another_size_is_drawn_whole():
    board = Board(rows=5, cols=10)
    put(board, "washer", "yellow", 5, 10)
    image = board_image(board.to_json())
    box = cell_box((5, 10), rows=5, cols=10)
    assert box[2] <= image.width and box[3] <= image.height
    assert _near(image.getpixel(_centre(box)), COLOUR_RGB["yellow"])


def test_the_same_board_gives_the_same_bytes():
    board = generate_targets(5, 0)[3].board().to_json()
    current = _board(("nut", "red", 1, 1)).to_json()
    assert to_png_bytes(target_image(board)) == to_png_bytes(target_image(dict(board)))
    assert to_png_bytes(board_image(current, target_json=board)) == to_png_bytes(
        board_image(current, target_json=board)
    )
    assert to_png_bytes(legend_image()) == to_png_bytes(legend_image())


# ---- differences ----------------------------------------------------------------------------------------


def _marked() -> tuple[Image.Image, dict]:
    """Target: nut (2,2), bridge (4,4)-(4,5), screw on a washer at (6,6). Board: the nut right, the bridge
    missing, a nut where the washer goes (wrong) and an extra washer at (8,1)."""
    target = _board(("nut", "green", 2, 2), ("bridge-h", "red", 4, 4), ("washer", "blue", 6, 6))
    put(target, "screw", "red", 6, 6)
    board = _board(("nut", "green", 2, 2), ("nut", "blue", 6, 6), ("washer", "yellow", 8, 1))
    kinds = cell_differences(board, target)
    return board_image(board.to_json(), target_json=target.to_json()), kinds


def test_cells_that_differ_are_classified_like_the_difference_grid():
    _, kinds = _marked()
    assert kinds == {(4, 4): "missing", (4, 5): "missing", (6, 6): "wrong", (8, 1): "extra"}


@pytest.mark.parametrize(("cell", "kind"), [((4, 4), "missing"), ((6, 6), "wrong"), ((8, 1), "extra")])
def test_each_kind_of_difference_has_its_own_marker(cell, kind):
    image, _ = _marked()
    box = cell_box(cell, marked=True)
    assert _count(image, DIFF_RGB[kind], box, tol=6) > 2 * C  # a frame around the cell and a corner tag
    for other in set(DIFF_RGB) - {kind}:
        assert _count(image, DIFF_RGB[other], box, tol=6) < C // 4, other


def test_a_cell_that_matches_the_target_is_not_marked():
    image, _ = _marked()
    box = cell_box((2, 2), marked=True)
    assert not any(_count(image, rgb, box, tol=6) for rgb in DIFF_RGB.values())
    assert _near(image.getpixel(_centre(box)), COLOUR_RGB["green"])


def test_the_marked_board_has_a_key_and_the_plain_one_none():
    board = _board(("washer", "yellow", 8, 1)).to_json()
    plain, marked = board_image(board), board_image(board, target_json=_board(("nut", "red", 3, 3)).to_json())
    assert marked.height > plain.height and marked.width == plain.width
    below = (0, plain.height, marked.width, marked.height)
    for rgb in DIFF_RGB.values():
        assert _count(marked, rgb, below, tol=20) > 20  # a sample of every marker in the key
    assert cell_box((1, 1), marked=True) == cell_box((1, 1))


# ---- legend and observations ----------------------------------------------------------------------------


def test_the_legend_draws_every_shape_and_colour():
    assert {shape for shape, _, _ in LEGEND_SHAPES} == set(SHAPES)
    image = legend_image()
    assert image.width >= 8 * C and 3 * C <= image.height <= 8 * C
    assert len(set(_pixels(image))) > 50
    for name, rgb in COLOUR_RGB.items():
        assert _count(image, rgb, tol=6) > 200, name  # each swatch


def test_the_four_colours_are_far_apart_and_yellow_is_not_orange():
    values = list(COLOUR_RGB.values())
    for k, a in enumerate(values):
        for b in values[k + 1 :]:
            assert sum(abs(x - y) for x, y in zip(a, b, strict=True)) > 150
    red, green, _ = COLOUR_RGB["yellow"]
    assert red > 200 and green > 170  # orange would have green near 120


@pytest.mark.parametrize(("target_view", "state_view"), [("layers", "image"), ("image", "text"), ("text", "image")])
def test_observation_pictures_are_rebuilt_from_the_recording_exactly(target_view, state_view):
    task = generate_targets(5, 0)[3].to_json()
    world = BoardsWorld(task, {"target_view": target_view, "state_view": state_view})
    world.reset(0)
    world.board = _board(("nut", "yellow", 2, 2))  # something on the robot's board
    observation = world.observe("programmer")
    event = observation.to_event()
    pictures = observation_images(event.data)
    assert set(pictures) == set(event.data["images"]) == set(observation.images)
    for name, picture in pictures.items():
        assert to_png_bytes(picture) == to_png_bytes(observation.images[name]), name


def test_a_text_only_observation_sent_no_picture_and_annotated_draws_the_board_and_target_it_recorded():
    data = {"board": _board(("nut", "red", 1, 1)).to_json(), "instruction": "go"}
    assert observation_images({"images": [], "data": data}) == {}
    assert set(annotated_images({"images": [], "data": data})) == {"board"}
    data["target"] = data["board"]
    assert observation_images({"data": data}) == {}
    assert set(annotated_images({"data": data})) == {"board", "target"}
    assert set(annotated_images({"images": ["legend", "target_level_1"], "data": data})) == {"board"}
    assert annotated_images({"images": ["board", "legend", "target"], "data": data}) == {}
    assert observation_images({"images": ["target_level_2"], "data": {}}) == {}
