"""The Maze puzzle: the manual's torus table and button rule case by case, the mouse's moves, the layouts,
the picture read back from its pixels, the manual expert with the scripted solver, and the random solver
beside the paper's Random row."""

from __future__ import annotations

import random

import pytest

from simlab.worlds import get_family
from simlab.worlds.puzzles.family import task_for
from simlab.worlds.puzzles.maze import (
    ACTIONS,
    BACKWARD,
    CELL,
    FORWARD,
    LEFT,
    LEFT_MARGIN,
    MOUSE_GREY,
    PRESS,
    RGB,
    RIGHT,
    SIZE,
    TOP_MARGIN,
    TORUS_TO_SPHERE,
    MazePuzzle,
    path,
)
from tests.puzzles.runs import MANUAL, random_row, summaries

FAMILY = get_family("puzzles")
CORNERS = {"green": [0, 0], "blue": [0, 4], "red": [4, 0], "yellow": [4, 4]}
LOOP = [".....", ".#.#.", ".....", ".#.#.", "....."]  # a small hand-made maze with every sphere in a corner


def instance(torus: str = "red", mouse: tuple[int, int] = (2, 2), heading: str = "up", **changes) -> dict:
    return {"grid": LOOP, "mouse": list(mouse), "heading": heading, "torus": torus, "spheres": CORNERS} | changes


def run(puzzle: MazePuzzle, *actions: str) -> list[str]:
    return [puzzle.act(a).kind for a in actions]


# ---- the manual's rules ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("torus", "sphere"), [("green", "blue"), ("blue", "red"), ("red", "green"), ("yellow", "yellow")]
)
def test_the_torus_names_the_accepting_sphere_and_only_there_the_button_disarms(torus, sphere):
    assert TORUS_TO_SPHERE[torus] == sphere
    for colour, cell in CORNERS.items():
        puzzle = MazePuzzle(instance(torus, tuple(cell)), 0)
        kind = puzzle.act(PRESS).kind
        assert kind == ("solved" if colour == sphere else "mistake")
        assert puzzle.solved == (colour == sphere)


def test_pressing_on_a_plain_white_square_is_a_strike_and_the_mouse_stays():
    puzzle = MazePuzzle(instance("red", (2, 2)), 0)
    assert run(puzzle, PRESS, PRESS) == ["mistake", "mistake"]
    assert puzzle.mouse == (2, 2) and not puzzle.solved


def test_forward_and_backward_move_one_white_square_and_keep_the_heading():
    puzzle = MazePuzzle(instance(mouse=(2, 2), heading="up"), 0)
    puzzle.act(FORWARD)
    assert (puzzle.mouse, puzzle.heading) == ((1, 2), "up")
    puzzle.act(BACKWARD)
    puzzle.act(BACKWARD)
    assert (puzzle.mouse, puzzle.heading) == ((3, 2), "up")


@pytest.mark.parametrize(("mouse", "heading"), [((2, 1), "up"), ((2, 1), "down"), ((0, 0), "up"), ((0, 0), "left")])
def test_a_wall_or_the_edge_stops_the_mouse_without_a_strike(mouse, heading):
    puzzle = MazePuzzle(instance(mouse=mouse, heading=heading), 0)
    step = puzzle.act(FORWARD)
    assert step.kind == "nothing" and "wall" in step.feedback and puzzle.mouse == mouse


def test_turns_are_quarter_turns_in_place():
    puzzle = MazePuzzle(instance(heading="up"), 0)
    rights, lefts = [], []
    for _ in range(4):
        assert puzzle.act(RIGHT).kind == "nothing"
        rights.append(puzzle.heading)
    for _ in range(4):
        assert puzzle.act(LEFT).kind == "nothing"
        lefts.append(puzzle.heading)
    assert rights == ["right", "down", "left", "up"] and lefts == ["left", "down", "right", "up"]
    assert puzzle.mouse == (2, 2)


def test_the_mouse_may_stand_on_the_torus_and_cross_the_other_spheres():
    assert MazePuzzle(instance(), 0).act(FORWARD).kind != "mistake"  # it starts on the torus square
    puzzle = MazePuzzle(instance("green", (0, 1), "left"), 0)  # the goal is the blue sphere, top right
    assert puzzle.act(FORWARD).kind == "nothing" and puzzle.mouse == (0, 0)  # onto the green sphere: away
    run(puzzle, BACKWARD, BACKWARD, BACKWARD)
    assert puzzle.mouse == (0, 3) and puzzle.act(BACKWARD).kind == "progress" and puzzle.act(PRESS).kind == "solved"


def test_progress_counts_the_squares_covered_and_the_press():
    puzzle = MazePuzzle(instance("yellow", (2, 2), "right"), 0)  # yellow: bottom right, 4 squares away
    assert puzzle.start_distance == 4 and puzzle.progress() == 0
    assert run(puzzle, FORWARD, FORWARD) == ["progress", "progress"]
    assert puzzle.progress() == pytest.approx(100 * 2 / 5)
    run(puzzle, LEFT, LEFT, FORWARD, FORWARD, FORWARD, FORWARD)  # further away than at the start
    assert puzzle.progress() == 0
    near = MazePuzzle(instance("yellow", (4, 3), "right"), 0)
    near.act(FORWARD)
    assert near.progress() == pytest.approx(100 * 1 / 2) and near.act(PRESS).kind == "solved"
    assert near.progress() == 100


def test_the_oracle_steps_backward_when_the_way_lies_behind():
    puzzle = MazePuzzle(instance("yellow", (4, 2), "left"), 0)
    assert puzzle.oracle() == BACKWARD
    puzzle = MazePuzzle(instance("yellow", (2, 4), "left"), 0)
    assert [puzzle.oracle(), run(puzzle, puzzle.oracle())] == [LEFT, ["nothing"]]


# ---- layouts and validation --------------------------------------------------------------------------------
def test_generated_layouts_are_perfect_mazes_with_every_sphere_reachable():
    for k in range(50):
        inst = task_for("maze", k, 0, {})["instance"]
        grid = inst["grid"]
        opened = [(r, c) for r in range(SIZE) for c in range(SIZE) if grid[r][c] == "."]
        joins = sum(1 for r, c in opened for dr, dc in ((0, 1), (1, 0)) if (r + dr, c + dc) in set(opened))
        assert len(opened) == 49 and joins == len(opened) - 1  # a tree: exactly one path between two squares
        cells = [tuple(inst["mouse"]), *(tuple(v) for v in inst["spheres"].values())]
        assert len(set(cells)) == 5 and (4, 4) not in cells and all(r % 2 == 0 and c % 2 == 0 for r, c in cells)
        assert all(path(grid, cells[0], cell) for cell in cells[1:])


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"grid": ["..", "..."]}, "grid"),
        ({"grid": [".x.", "...", "..."]}, "grid"),
        ({"mouse": [1, 1]}, "mouse"),
        ({"mouse": [9, 0]}, "mouse"),
        ({"heading": "north"}, "heading"),
        ({"torus": "purple"}, "torus"),
        ({"spheres": {"green": [0, 0]}}, "spheres"),
        ({"spheres": CORNERS | {"red": [0, 0]}}, "spheres"),
        ({"spheres": CORNERS | {"blue": [1, 1]}}, "spheres.blue"),
    ],
)
def test_malformed_instances_are_refused_naming_the_field(change, field):
    with pytest.raises(ValueError, match=f"^{field}"):
        MazePuzzle.validate(instance() | change)


def test_an_unreachable_goal_is_refused():
    walled = ["..#..", "..#..", "..#..", "..#..", "..#.."]
    with pytest.raises(ValueError, match="cannot be reached"):
        MazePuzzle.validate(instance("green", (2, 0), grid=walled))


# ---- the manual expert --------------------------------------------------------------------------------------
def test_the_manual_expert_asks_for_what_it_lacks():
    assert "torus" in MazePuzzle.advise([])
    assert "row by row" in MazePuzzle.advise(["The torus in the middle of the maze is blue."])


def test_the_manual_expert_plans_from_the_newest_description():
    puzzle = MazePuzzle(instance("red", (2, 2), "up"), 0)  # red torus: the green sphere, top left
    old = puzzle.describe()
    run(puzzle, BACKWARD, BACKWARD)
    reply = MazePuzzle.advise([old, puzzle.describe()])
    assert "green sphere" in reply
    plan = [line[4:] for line in reply.splitlines() if line.startswith("Do: ")]
    assert run(puzzle, *plan)[-1] == "solved"


def test_the_manual_expert_and_the_scripted_solver_solve_every_instance_in_two_turns():
    runs = summaries("maze", MANUAL)
    assert all(s["outcome"] == "success" and s["metrics"]["mistakes"] == 0 for s in runs)
    assert {s["metrics"]["acl_taken"] for s in runs} == {2.0}


# ---- the picture ---------------------------------------------------------------------------------------------
def centre(cell) -> tuple[int, int]:
    return LEFT_MARGIN + cell[1] * CELL + CELL // 2, TOP_MARGIN + cell[0] * CELL + CELL // 2


def close(pixel, rgb, tolerance: int = 30) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, rgb, strict=True))


def test_the_picture_shows_walls_spheres_torus_and_mouse_where_they_are():
    for k in range(5):
        puzzle = MazePuzzle(task_for("maze", k, 0, {})["instance"], 0)
        image = MazePuzzle.draw(puzzle.snapshot())
        assert image.width >= 400
        for r, line in enumerate(puzzle.grid):
            for c, square in enumerate(line):
                x, y = centre((r, c))
                corner = image.getpixel((x - CELL // 2 + 4, y - CELL // 2 + 4))  # no piece reaches a corner
                assert sum(corner) < 200 if square == "#" else sum(corner) > 700
        for colour, cell in puzzle.spheres.items():
            x, y = centre(cell)
            assert close(image.getpixel((x + 6, y + 6)), RGB[colour])
        x, y = centre((4, 4))
        assert close(image.getpixel((x + 17, y)), RGB[puzzle.torus])  # on the ring
        assert close(image.getpixel(centre(puzzle.mouse)), MOUSE_GREY, 10)


@pytest.mark.parametrize(
    ("heading", "offset"), [("up", (0, -20)), ("right", (20, 0)), ("down", (0, 20)), ("left", (-20, 0))]
)
def test_the_mouse_nose_shows_its_heading(heading, offset):
    image = MazePuzzle.draw(MazePuzzle(instance(mouse=(2, 0), heading=heading), 0).snapshot())
    x, y = centre((2, 0))
    assert sum(image.getpixel((x + offset[0], y + offset[1]))) < 150  # the dark nose
    assert sum(image.getpixel((x - offset[0], y - offset[1]))) > 300  # not behind


def test_the_action_just_taken_is_highlighted():
    snapshot = MazePuzzle(instance(), 0).snapshot()
    plain, pressed = MazePuzzle.draw(snapshot), MazePuzzle.draw(snapshot, PRESS)
    moved = MazePuzzle.draw(snapshot, FORWARD)
    assert plain.tobytes() != pressed.tobytes() and plain.tobytes() != moved.tobytes()
    x, y = centre((2, 2))
    assert close(moved.getpixel((x - CELL // 2 + 3, y)), (255, 140, 0)) and not close(
        plain.getpixel((x - CELL // 2 + 3, y)), (255, 140, 0)
    )


# ---- the random solver beside the paper's Random row ------------------------------------------------------
def test_the_random_solver_is_near_the_papers_random_row():
    """Paper (tables 1-4): SR 3 ± 1.7, PSR 0 ± 0.0, mistakes 1.96 ± 0.1, ACL 8.59 ± 0.2. Measured here: SR 2,
    PSR 6.4, mistakes 1.82, ACL 8.74 (the paper's PSR of 0 is below its own SR of 3; see maze.py)."""
    mean = random_row("maze")
    assert mean["sr"] <= 10 and mean["psr"] <= 20
    assert 1.5 <= mean["mistakes"] <= 2.3 and 8.0 <= mean["acl"] <= 9.5


def test_every_action_is_always_legal():
    puzzle = MazePuzzle(instance(), 0)
    assert puzzle.actions() == list(ACTIONS) == [FORWARD, BACKWARD, LEFT, RIGHT, PRESS]


def test_generation_uses_only_its_random_source():
    assert MazePuzzle.generate(random.Random(3), {}) == MazePuzzle.generate(random.Random(3), {"telehealth_data": "x"})
