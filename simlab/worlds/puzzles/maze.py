"""The Maze puzzle (after the community module "Mouse in the Maze"): a grid of white squares and dark walls, a
grey mouse with a heading, four coloured spheres and a torus in the middle whose colour names the accepting
sphere (green -> blue, blue -> red, red -> green, yellow -> yellow). Drive the mouse to that sphere and press
the circular button; pressing it anywhere else is a strike (manual, appendix A).

Ours, where the paper is silent:
* the layout: a 9 x 9 grid whose white squares form a perfect maze (a randomised depth-first search over the
  5 x 5 squares at even rows and columns, knocking out the wall square between two of them), so there is
  exactly one path between any two squares and every sphere is reachable; the torus lies on the middle
  square (row 5, column 5), which the mouse may cross; the spheres and the mouse start on distinct squares at
  even rows and columns, never the middle one; the mouse faces up, right, down or left;
* the actions are ``Move forward``, ``Move backward`` (one square, keeping the heading), ``Turn left``,
  ``Turn right`` (a quarter turn where it stands) and ``Press the button``; all five are always legal;
  moving into a wall or off the grid does nothing and is no strike (the spec's default: the paper only
  says the mouse cannot move there);
* a move that brings the mouse closer to the goal is progress; PSR is the share of the starting path length
  covered, counting the press as one more step: 100 * (d0 - d) / (d0 + 1) for d squares left of d0 (never
  below 0), and 100 once solved (the paper's Random row, PSR 0 with SR 3, and its Human row, PSR 70 with
  SR 80, fit no progress measure that counts a solved module as 100; the random solver scores about 6 here);
* the scripted solver reads the maze out row by row ("#" wall, "." white), then the mouse, torus and spheres;
  the manual expert plans the shortest path and names every action at once (a move backward when the next
  square is behind the mouse).
"""

from __future__ import annotations

import itertools
import random
import re
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image, ImageDraw

from simlab.render.images import text_font
from simlab.worlds.puzzles.puzzle import DO, GROUNDING, REASONING, Puzzle, Step, StepKind

SIZE = 9
MIDDLE = (SIZE // 2, SIZE // 2)
WALL, OPEN = "#", "."
TORUS_TO_SPHERE = {"green": "blue", "blue": "red", "red": "green", "yellow": "yellow"}
COLOURS = tuple(TORUS_TO_SPHERE)
HEADINGS = ("up", "right", "down", "left")  # clockwise: a right turn is the next one
STEP = {"up": (-1, 0), "right": (0, 1), "down": (1, 0), "left": (0, -1)}
FORWARD, BACKWARD, LEFT, RIGHT, PRESS = "Move forward", "Move backward", "Turn left", "Turn right", "Press the button"
ACTIONS = (FORWARD, BACKWARD, LEFT, RIGHT, PRESS)
RGB = {"green": (40, 170, 60), "blue": (40, 90, 220), "red": (215, 35, 35), "yellow": (245, 205, 20)}
WHITE, DARK, MOUSE_GREY = (246, 246, 246), (44, 46, 58), (150, 150, 150)
HIGHLIGHT = (255, 140, 0)
CELL, LEFT_MARGIN, TOP_MARGIN, PANEL = 54, 40, 40, 120  # picture layout, pixels
Cell = tuple[int, int]


# ---- the maze as a graph -----------------------------------------------------------------------------------
def carve(r: random.Random) -> list[str]:
    """A perfect maze on the squares at even rows and columns, as rows of "#" and "."."""
    cells = [[WALL] * SIZE for _ in range(SIZE)]
    start = (2 * r.randrange(SIZE // 2 + 1), 2 * r.randrange(SIZE // 2 + 1))
    cells[start[0]][start[1]] = OPEN
    stack = [start]
    while stack:
        row, col = stack[-1]
        fresh = [
            (row + 2 * dr, col + 2 * dc)
            for dr, dc in STEP.values()
            if 0 <= row + 2 * dr < SIZE and 0 <= col + 2 * dc < SIZE and cells[row + 2 * dr][col + 2 * dc] == WALL
        ]
        if not fresh:
            stack.pop()
            continue
        nr, nc = r.choice(fresh)
        cells[(row + nr) // 2][(col + nc) // 2] = cells[nr][nc] = OPEN
        stack.append((nr, nc))
    return ["".join(line) for line in cells]


def is_open(grid: Sequence[str], cell: Cell) -> bool:
    row, col = cell
    return 0 <= row < len(grid) and 0 <= col < len(grid[0]) and grid[row][col] == OPEN


def path(grid: Sequence[str], start: Cell, goal: Cell) -> list[Cell] | None:
    """The shortest path of squares from ``start`` to ``goal`` (both included); None when there is none."""
    came: dict[Cell, Cell | None] = {start: None}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        if here == goal:
            out: list[Cell] = []
            step: Cell | None = here
            while step is not None:
                out.append(step)
                step = came[step]
            return out[::-1]
        for dr, dc in STEP.values():
            there = (here[0] + dr, here[1] + dc)
            if there not in came and is_open(grid, there):
                came[there] = here
                queue.append(there)
    return None


def turned(heading: str, by: int) -> str:
    """The heading after ``by`` quarter turns clockwise."""
    return HEADINGS[(HEADINGS.index(heading) + by) % 4]


def moves_to(grid: Sequence[str], mouse: Cell, heading: str, goal: Cell) -> list[str] | None:
    """Every action from here to solved: turns and moves along the shortest path, then the press."""
    squares = path(grid, mouse, goal)
    if squares is None:
        return None
    out = []
    for here, there in itertools.pairwise(squares):
        way = next(h for h, d in STEP.items() if (here[0] + d[0], here[1] + d[1]) == there)
        if way == turned(heading, 2):
            out.append(BACKWARD)  # one step back beats two quarter turns
            continue
        if way == turned(heading, 1):
            out.append(RIGHT)
        elif way == turned(heading, -1):
            out.append(LEFT)
        heading = way
        out.append(FORWARD)
    return [*out, PRESS]


# ---- validation -------------------------------------------------------------------------------------------
def _cell(value: Any, field: str, grid: Sequence[str]) -> Cell:
    if not (isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value)):
        raise ValueError(f"{field}: [row, column] expected, got {value!r:.40}")
    cell = (value[0], value[1])
    if not is_open(grid, cell):
        raise ValueError(f"{field}: {list(cell)} is not a white square of the grid")
    return cell


def check(instance: Mapping[str, Any]) -> tuple[list[str], Cell, str, str, dict[str, Cell]]:
    """The grid, mouse, heading, torus colour and spheres of ``instance``; ValueError naming the field."""
    grid = instance.get("grid")
    if (
        not isinstance(grid, list)
        or not 3 <= len(grid) <= 15
        or any(not isinstance(row, str) or len(row) != len(grid[0]) or set(row) - {WALL, OPEN} for row in grid)
    ):
        raise ValueError(f"grid: 3-15 equal rows of '#' and '.' expected, got {grid!r:.80}")
    mouse = _cell(instance.get("mouse"), "mouse", grid)
    heading, torus = instance.get("heading"), instance.get("torus")
    if heading not in HEADINGS:
        raise ValueError(f"heading: one of {', '.join(HEADINGS)} expected, got {heading!r:.20}")
    if torus not in COLOURS:
        raise ValueError(f"torus: one of {', '.join(COLOURS)} expected, got {torus!r:.20}")
    spheres = instance.get("spheres")
    if not isinstance(spheres, Mapping) or set(spheres) != set(COLOURS):
        raise ValueError(f"spheres: the squares of {', '.join(COLOURS)} expected, got {spheres!r:.80}")
    placed = {colour: _cell(spheres[colour], f"spheres.{colour}", grid) for colour in COLOURS}
    if len(set(placed.values())) != len(placed):
        raise ValueError("spheres: two spheres share a square")
    if path(grid, mouse, placed[TORUS_TO_SPHERE[str(torus)]]) is None:
        raise ValueError("spheres: the accepting sphere cannot be reached from the mouse")
    return list(grid), mouse, str(heading), str(torus), placed


class MazePuzzle(Puzzle):
    """Drive the mouse to the sphere the torus names and press the button there."""

    name = "maze"
    title = "Maze"
    categories = (GROUNDING, REASONING)
    multi_step = True

    def __init__(self, instance: Mapping[str, Any], seed: int) -> None:
        super().__init__(instance, seed)
        self.grid, self.mouse, self.heading, self.torus, self.spheres = check(instance)
        self.goal = self.spheres[TORUS_TO_SPHERE[self.torus]]
        self.start_distance = self.distance()
        self.done = False

    @classmethod
    def generate(cls, r: random.Random, options: Mapping[str, Any]) -> dict[str, Any]:
        grid = carve(r)
        squares = [(row, col) for row in range(0, SIZE, 2) for col in range(0, SIZE, 2) if (row, col) != MIDDLE]
        *placed, mouse = r.sample(squares, len(COLOURS) + 1)
        return {
            "grid": grid,
            "mouse": list(mouse),
            "heading": r.choice(HEADINGS),
            "torus": r.choice(COLOURS),
            "spheres": {colour: list(cell) for colour, cell in zip(COLOURS, placed, strict=True)},
        }

    def distance(self) -> int:
        """Squares from the mouse to the accepting sphere along the maze."""
        return len(path(self.grid, self.mouse, self.goal) or []) - 1

    # ---- playing -----------------------------------------------------------------------------------------
    def actions(self) -> list[str]:
        return list(ACTIONS)

    def act(self, action: str) -> Step:
        if action == PRESS:
            return self._press()
        if action in (LEFT, RIGHT):
            self.heading = turned(self.heading, -1 if action == LEFT else 1)
            return Step("nothing", f"The mouse turns {action.split()[1]}; it now faces {self.heading}.")
        way = self.heading if action == FORWARD else turned(self.heading, 2)
        there = (self.mouse[0] + STEP[way][0], self.mouse[1] + STEP[way][1])
        if not is_open(self.grid, there):
            return Step("nothing", "The mouse bumps into a wall and stays where it is.")
        before, self.mouse = self.distance(), there
        where = f"row {there[0] + 1}, column {there[1] + 1}"
        kind: StepKind = "progress" if self.distance() < before else "nothing"
        return Step(kind, f"The mouse moves {action.split()[1]} to {where}.")

    def _press(self) -> Step:
        if self.mouse == self.goal:
            self.done = True
            return Step("solved", "You press the button at the accepting sphere. The module is disarmed.")
        return Step("mistake", "You press the button away from the accepting position: a strike.")

    @property
    def solved(self) -> bool:
        return self.done

    def progress(self) -> float:
        if self.done:
            return 100.0
        covered = self.start_distance - self.distance()
        return max(0.0, 100.0 * covered / (self.start_distance + 1))

    def snapshot(self) -> dict[str, Any]:
        return {
            "grid": list(self.grid),
            "mouse": list(self.mouse),
            "heading": self.heading,
            "torus": self.torus,
            "spheres": {colour: list(cell) for colour, cell in self.spheres.items()},
            "solved": self.done,
        }

    # ---- the scripted agents -----------------------------------------------------------------------------
    def oracle(self) -> str:
        plan = moves_to(self.grid, self.mouse, self.heading, self.goal)
        assert plan is not None, "validated instances always reach the goal"
        return plan[0]

    def describe(self) -> str:
        rows = "\n".join(f"row {k}: {line}" for k, line in enumerate(self.grid, start=1))
        spheres = "; ".join(f"{c} at {_at(cell)}" for c, cell in self.spheres.items())
        return (
            f"The maze has {len(self.grid)} rows and {len(self.grid[0])} columns (row 1 at the top, column 1 at "
            f"the left); row by row, '#' is a dark wall square and '.' a white square:\n{rows}\n"
            f"The mouse (grey sphere) is at {_at(self.mouse)}, facing {self.heading}. "
            f"The torus in the middle of the maze is {self.torus}. Coloured spheres: {spheres}."
        )

    @classmethod
    def advise(cls, said: Sequence[str]) -> str:
        torus = _latest(said, r"torus[^.]*? is (green|blue|red|yellow)\b")
        if torus is None:
            return "What colour is the torus in the middle of the maze?"
        target = TORUS_TO_SPHERE[torus[0]]
        intro = f"The {torus[0]} torus means the accepting position is the {target} sphere."
        known = _read_maze(said, target)
        if known is None:
            return (
                f"{intro} Read me the maze row by row ('#' wall, '.' white), where the mouse is and which way it "
                f"faces, and where the {target} sphere is (row and column)."
            )
        plan = moves_to(*known)
        if plan is None:
            return f"{intro} By your map the mouse cannot reach it; please read the maze again."
        return f"{intro} Follow this path, then press the button.\n" + "\n".join(DO + a for a in plan)

    # ---- the picture -------------------------------------------------------------------------------------
    @classmethod
    def draw(cls, snapshot: Mapping[str, Any], highlight: str | None = None) -> Image.Image:
        grid = list(snapshot["grid"])
        rows, cols = len(grid), len(grid[0])
        image = Image.new("RGB", (LEFT_MARGIN + cols * CELL + 24, TOP_MARGIN + rows * CELL + PANEL), (62, 66, 72))
        draw = ImageDraw.Draw(image)
        _draw_grid(draw, grid)
        centre = _centre((rows // 2, cols // 2))
        draw.ellipse(_box(centre, 21), outline=RGB[snapshot["torus"]], width=9)
        for colour, cell in snapshot["spheres"].items():
            _sphere(draw, _centre(tuple(cell)), 19, RGB[colour])
        mouse = tuple(snapshot["mouse"])
        _mouse(draw, _centre(mouse), str(snapshot["heading"]))
        _draw_panel(draw, image.size, rows, bool(snapshot.get("solved")), highlight)
        if highlight in (FORWARD, BACKWARD, LEFT, RIGHT):
            x, y = _centre(mouse)
            draw.rectangle(
                (x - CELL // 2 + 2, y - CELL // 2 + 2, x + CELL // 2 - 2, y + CELL // 2 - 2), outline=HIGHLIGHT, width=4
            )
        return image


def _at(cell: Cell) -> str:
    return f"row {cell[0] + 1}, column {cell[1] + 1}"


def _latest(said: Sequence[str], pattern: str) -> tuple[str, ...] | None:
    """The groups of ``pattern`` in the newest message that has it (the module changes as the mouse moves)."""
    for text in reversed(said):
        found = re.search(pattern, text, re.IGNORECASE)
        if found:
            return tuple(g.lower() for g in found.groups())
    return None


def _read_maze(said: Sequence[str], target: str) -> tuple[list[str], Cell, str, Cell] | None:
    """The grid, mouse, heading and target sphere from the newest full description, or None."""
    for text in reversed(said):
        rows = re.findall(r"row (\d+): ([#.]+)", text)
        mouse = re.search(r"mouse[^.]*? at row (\d+), column (\d+), facing (up|right|down|left)", text, re.I)
        sphere = re.search(rf"\b{target} at row (\d+), column (\d+)", text, re.I)
        if rows and mouse and sphere and [int(k) for k, _ in rows] == list(range(1, len(rows) + 1)):
            grid = [line for _, line in rows]
            if len({len(line) for line in grid}) != 1:
                continue
            at = (int(mouse.group(1)) - 1, int(mouse.group(2)) - 1)
            goal = (int(sphere.group(1)) - 1, int(sphere.group(2)) - 1)
            if is_open(grid, at) and is_open(grid, goal):
                return grid, at, mouse.group(3).lower(), goal
    return None


def _centre(cell: tuple[int, ...]) -> tuple[int, int]:
    return LEFT_MARGIN + cell[1] * CELL + CELL // 2, TOP_MARGIN + cell[0] * CELL + CELL // 2


def _box(centre: tuple[int, int], radius: int) -> tuple[int, int, int, int]:
    return centre[0] - radius, centre[1] - radius, centre[0] + radius, centre[1] + radius


def _draw_grid(draw: ImageDraw.ImageDraw, grid: Sequence[str]) -> None:
    font = text_font(20)
    for row, line in enumerate(grid):
        draw.text((LEFT_MARGIN - 8, _centre((row, 0))[1]), str(row + 1), fill=(255, 255, 255), font=font, anchor="rm")
        for col, square in enumerate(line):
            x, y = LEFT_MARGIN + col * CELL, TOP_MARGIN + row * CELL
            fill = WHITE if square == OPEN else DARK
            draw.rectangle((x, y, x + CELL - 1, y + CELL - 1), fill=fill, outline=(120, 120, 125))
    for col in range(len(grid[0])):
        draw.text((_centre((0, col))[0], TOP_MARGIN - 8), str(col + 1), fill=(255, 255, 255), font=font, anchor="mb")


def _sphere(draw: ImageDraw.ImageDraw, centre: tuple[int, int], radius: int, rgb: tuple[int, int, int]) -> None:
    draw.ellipse(_box(centre, radius), fill=rgb, outline=(20, 20, 20), width=2)
    shine = (centre[0] - radius // 3, centre[1] - radius // 3)
    draw.ellipse(_box(shine, radius // 4), fill=tuple(min(255, v + 90) for v in rgb))


def _mouse(draw: ImageDraw.ImageDraw, centre: tuple[int, int], heading: str) -> None:
    """The grey sphere with a dark nose pointing where the mouse faces."""
    dy, dx = STEP[heading]
    x, y = centre
    tip = (x + dx * 25, y + dy * 25)
    side = (-dy, dx)
    base = [(x + dx * 8 + side[0] * 9, y + dy * 8 + side[1] * 9), (x + dx * 8 - side[0] * 9, y + dy * 8 - side[1] * 9)]
    draw.ellipse(_box(centre, 16), fill=MOUSE_GREY, outline=(30, 30, 30), width=2)
    draw.polygon([tip, *base], fill=(30, 30, 30))


def _draw_panel(
    draw: ImageDraw.ImageDraw, size: tuple[int, int], rows: int, solved: bool, highlight: str | None
) -> None:
    """The circular button with the labyrinth, and what was just done."""
    top = TOP_MARGIN + rows * CELL + 14
    button = (size[0] - 70, top + 46)
    draw.ellipse(_box(button, 38), fill=(40, 160, 70) if solved else (205, 205, 200), outline=(20, 20, 20), width=3)
    for k, radius in enumerate((26, 17, 8)):  # the labyrinth: broken rings
        start = 40 + 90 * k
        draw.arc(_box(button, radius), start, start + 290, fill=(40, 40, 40), width=3)
    if highlight == PRESS:
        draw.ellipse(_box(button, 46), outline=HIGHLIGHT, width=5)
    font = text_font(20)
    draw.text((LEFT_MARGIN - 20, top + 4), "Mouse: grey sphere, its nose shows", fill=(255, 255, 255), font=font)
    draw.text((LEFT_MARGIN - 20, top + 30), "its heading. Torus: ring in the middle.", fill=(255, 255, 255), font=font)
    status = "DISARMED" if solved else (f"Last action: {highlight}" if highlight in ACTIONS else "")
    draw.text((LEFT_MARGIN - 20, top + 64), status, fill=(255, 200, 120), font=text_font(22))
