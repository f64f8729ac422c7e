"""The Color puzzle (the community module "Colored Squares"): a 4x4 grid of red, blue, green, yellow and magenta
squares; press the right group of squares, stage after stage, until all sixteen are white. The first group is the
colour with the fewest squares (ties: the manual's list order); each next group comes from the manual's table, by
the number of white squares and the group pressed before: a colour, or "Row"/"Column", all non-white squares of
the topmost row / leftmost column that has any (appendix A; the paper's table, not the community module's, whose
rows 12-15 differ).

As the community module does: pressed squares turn white and stay white; when a group is done every non-white
square takes a new random colour, and when the next group is a colour one of them is given that colour so the
group exists; pressing anything but the current group is a strike and resets the module with a new grid. The new
colours come from the puzzle's own seeded ``random``, so an episode replays and a deep copy plays the same.

Ours, where the paper is silent:
* an action presses a whole group: ``Press red squares`` .. ``Press magenta squares`` (the colours on the grid),
  ``Press topmost row`` and ``Press leftmost column`` (its non-white squares); it is right when it presses exactly
  the current group's squares. The paper says the solver must "press all the squares of that color" (appendix B),
  and its Random row fits only group presses: over the 100 instances the random solver gets PSR 6.1 and ACL
  2.55 with group presses (the paper: 6 +- 1.0 and 2.58 +- 0.1), PSR 1.6 and ACL 2.33 with the community
  module's sixteen single squares (1.8-2.0 and 2.3 over 4,000 grids, with or without its no-tie rule);
* the grid is drawn as the community module draws it: each colour at least once, the other squares uniformly;
  unlike it, a tie for the fewest squares is kept (the paper's manual breaks ties by its list order);
* PSR is the most squares ever white at once, over 16;
* the manual expert names every press it can already know: the group it is asked about, and after it any Row and
  Column groups the table gives next (their squares depend only on which squares are white); a colour group
  needs the new colours, so the solver describes the grid again.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image, ImageDraw

from simlab.render.images import text_font
from simlab.worlds.puzzles.puzzle import DO, MEMORY, REASONING, Puzzle, Step

COLOURS = ("red", "blue", "green", "yellow", "magenta")
"""The colours in the manual's list order (its tie-break and the table's first five columns)."""
WHITE, ROW, COLUMN = "white", "row", "column"
GROUPS = (*COLOURS, ROW, COLUMN)
"""The table's columns: the previously pressed group."""
RGB = {
    "red": (225, 30, 30),
    "blue": (40, 80, 235),
    "green": (30, 190, 60),
    "yellow": (245, 220, 30),
    "magenta": (230, 40, 230),
    "white": (255, 255, 255),
}
R, B, G, Y, M = COLOURS
TABLE: dict[int, tuple[str, ...]] = {
    1: (B, COLUMN, R, Y, ROW, G, M),
    2: (ROW, G, B, M, R, COLUMN, Y),
    3: (Y, M, G, ROW, B, R, COLUMN),
    4: (B, G, Y, COLUMN, R, ROW, M),
    5: (Y, ROW, B, M, COLUMN, R, G),
    6: (M, R, Y, G, COLUMN, B, ROW),
    7: (G, ROW, COLUMN, B, M, Y, R),
    8: (M, R, G, B, Y, COLUMN, ROW),
    9: (COLUMN, Y, R, G, ROW, M, B),
    10: (G, COLUMN, ROW, R, M, B, Y),
    11: (R, Y, ROW, COLUMN, G, M, B),
    12: (COLUMN, ROW, COLUMN, ROW, ROW, COLUMN, ROW),
    13: (ROW, COLUMN, ROW, COLUMN, ROW, COLUMN, COLUMN),
    14: (COLUMN, COLUMN, ROW, ROW, COLUMN, ROW, COLUMN),
    15: (ROW, ROW, COLUMN, ROW, COLUMN, COLUMN, ROW),
}
"""The manual's table: white squares -> the next group, by the previously pressed group (:data:`GROUPS`)."""


def next_group(whites: int, previous: str) -> str:
    """The group the table names after ``previous`` with ``whites`` white squares (1-15)."""
    return TABLE[whites][GROUPS.index(previous)]


def fewest(grid: Sequence[str]) -> str:
    """The colour with the fewest squares among those on the grid; a tie goes to the first in the list."""
    counts = {c: grid.count(c) for c in COLOURS if c in grid}
    return min(counts, key=lambda c: (counts[c], COLOURS.index(c)))


def members(grid: Sequence[str], group: str) -> list[int]:
    """The 0-based squares (row-major) of ``group`` on ``grid``: a colour's squares, or the non-white squares
    of the topmost row / leftmost column holding any."""
    if group in COLOURS:
        return [i for i, c in enumerate(grid) if c == group]
    lines = [[4 * a + b for b in range(4)] if group == ROW else [4 * b + a for b in range(4)] for a in range(4)]
    for line in lines:
        coloured = [i for i in line if grid[i] != WHITE]
        if coloured:
            return coloured
    return []


def new_grid(r: random.Random) -> list[str]:
    """Sixteen colours, each of the five at least once, as the community module draws them."""
    grid = list(COLOURS) + [r.choice(COLOURS) for _ in range(16 - len(COLOURS))]
    r.shuffle(grid)
    return grid


def press(group: str) -> str:
    """The action pressing ``group``."""
    return {ROW: "Press topmost row", COLUMN: "Press leftmost column"}.get(group, f"Press {group} squares")


PRESSES = {press(g): g for g in GROUPS}


def place(i: int) -> str:
    """Where 0-based square ``i`` is, in words."""
    return f"row {i // 4 + 1} column {i % 4 + 1}"


def group_words(group: str) -> str:
    return {ROW: "the topmost row with coloured squares", COLUMN: "the leftmost column with coloured squares"}.get(
        group, f"all the {group} squares"
    )


class ColorPuzzle(Puzzle):
    """Whiten the grid group by group."""

    name = "color"
    title = "Color"
    categories = (MEMORY, REASONING)
    multi_step = True

    def __init__(self, instance: Mapping[str, Any], seed: int) -> None:
        super().__init__(instance, seed)
        grid = instance.get("grid")
        if not isinstance(grid, list) or len(grid) != 16 or any(c not in COLOURS for c in grid):
            raise ValueError(f"grid: 16 squares of {', '.join(COLOURS)} (row by row) expected, got {grid!r:.80}")
        self._start(list(grid))
        self.best = 0  # the most white squares at any time
        self.last: list[int] = []  # the squares the last action turned white (for the picture)

    def _start(self, grid: list[str]) -> None:
        """The first stage on ``grid`` (at the start and after a reset)."""
        self.grid = grid
        self.previous: str | None = None  # the group done last
        self.current = fewest(grid)

    @classmethod
    def generate(cls, r: random.Random, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"grid": new_grid(r)}

    # ---- playing ----------------------------------------------------------------------------------------
    def actions(self) -> list[str]:
        return [press(c) for c in COLOURS if c in self.grid] + [press(ROW), press(COLUMN)]

    def act(self, action: str) -> Step:
        squares = members(self.grid, PRESSES[action])
        where = ", ".join(place(i) for i in squares)
        if squares != members(self.grid, self.current):  # the same squares are the same presses
            self._start(new_grid(self.random))
            self.last = []
            return Step(
                "mistake",
                f"You pressed {where}: not the current group, a strike. The module resets with new colours and no "
                "white squares.",
            )
        for i in squares:
            self.grid[i] = WHITE
        self.last, self.best = squares, max(self.best, self.grid.count(WHITE))
        if self.solved:
            return Step("solved", f"You pressed {where}: all sixteen squares are white. The module is disarmed.")
        self._next_stage()
        return Step("progress", f"You pressed {where}: they turn white. The other squares change colour.")

    def _next_stage(self) -> None:
        """The table's next group; the non-white squares take new colours (the named colour at least once)."""
        self.previous, self.current = self.current, next_group(self.grid.count(WHITE), self.current)
        coloured = [i for i, c in enumerate(self.grid) if c != WHITE]
        for i in coloured:
            self.grid[i] = self.random.choice(COLOURS)
        if self.current in COLOURS:
            self.grid[self.random.choice(coloured)] = self.current

    @property
    def solved(self) -> bool:
        return self.grid.count(WHITE) == 16

    def progress(self) -> float:
        return 100.0 * self.best / 16

    def snapshot(self) -> dict[str, Any]:
        return {"grid": list(self.grid), "previous": self.previous, "last": list(self.last)}

    # ---- the scripted agents ----------------------------------------------------------------------------
    def oracle(self) -> str:
        return press(self.current)

    def words(self) -> str:
        if self.solved:
            return "All sixteen squares are white: the module is disarmed."
        rows = "; ".join(f"row {a + 1}: {', '.join(self.grid[4 * a : 4 * a + 4])}" for a in range(4))
        whites = self.grid.count(WHITE)
        return f"The grid, row by row from the top, each row left to right: {rows}. {whites} squares are white."

    def describe(self) -> str:
        # what the picture shows, and the group pressed last, which the solver remembers (the table needs it)
        if self.solved:
            return self.words()
        if self.previous is None:
            return f"{self.words()} I have not pressed any group yet."
        return f"{self.words()} The last group I pressed was: {self.previous}."

    @classmethod
    def advise(cls, said: Sequence[str]) -> str:
        seen = read_description(said[-1]) if said else None
        if seen is None:
            return (
                "Tell me the colour of every square, row by row from the top and left to right in each row, and "
                "which group you pressed last (or that you have not pressed one)."
            )
        grid, previous = seen
        whites = grid.count(WHITE)
        if previous is None:
            return plan_words(grid, fewest(grid))
        if whites not in TABLE:
            return "The table needs 1 to 15 white squares: how many squares are white now?"
        return plan_words(grid, next_group(whites, previous))

    @classmethod
    def draw(cls, snapshot: Mapping[str, Any], highlight: str | None = None) -> Image.Image:
        image = Image.new("RGB", (GRID_LEFT + 4 * CELL + 24, GRID_TOP + 4 * CELL + 70), (62, 66, 72))
        draw = ImageDraw.Draw(image)
        _draw_labels(draw)
        marked = set(snapshot.get("last") or []) if highlight else set()
        for i, colour in enumerate(snapshot["grid"]):
            x0, y0, x1, y1 = cell_box(i)
            if i in marked:
                draw.rectangle((x0 - 7, y0 - 7, x1 + 7, y1 + 7), outline=(255, 140, 0), width=6)
            draw.rectangle((x0, y0, x1, y1), fill=RGB[colour], outline=(20, 20, 20), width=2)
        if highlight:
            words = f"You pressed: {highlight.removeprefix('Press ')}"
            draw.text((image.width // 2, image.height - 34), words, fill=(255, 140, 0), font=text_font(24), anchor="mm")
        return image


def plan_words(grid: Sequence[str], current: str) -> str:
    """The press of ``current`` and of every Row/Column group the table names right after it, in words and as
    ``Do:`` lines; the colour group that follows needs a new description."""
    grid, lines, steps = list(grid), [], []
    group = current
    while True:
        squares = members(grid, group)
        if not squares:
            return f"There are no {group} squares in what you described: please read the grid again."
        steps.append(f"press {group_words(group)} ({', '.join(place(i) for i in squares)})")
        lines.append(DO + press(group))
        for i in squares:
            grid[i] = WHITE
        whites = grid.count(WHITE)
        if whites == 16:
            ending = "That makes all squares white."
            break
        group = next_group(whites, group)
        if group in COLOURS:
            ending = f"Then the squares change colour: press all the {group} squares next; tell me the new grid."
            break
    return f"{'; then '.join(steps).capitalize()}. {ending}\n" + "\n".join(lines)


def read_description(text: str) -> tuple[list[str], str | None] | None:
    """(the grid, the group pressed last or None) from a solver's description; None when it is not one."""
    grid: list[str] = []
    for a in range(1, 5):
        row = re.search(rf"\brow {a}: ((?:\w+, ){{3}}\w+)", text, re.IGNORECASE)
        if not row:
            return None
        grid += [c.strip().lower() for c in row.group(1).split(",")]
    if any(c not in (*COLOURS, WHITE) for c in grid) or grid.count(WHITE) == 16:
        return None
    last = re.search(r"last group I pressed was: (\w+)", text, re.IGNORECASE)
    if last and last.group(1).lower() in GROUPS:
        return grid, last.group(1).lower()
    if re.search(r"not pressed any group", text, re.IGNORECASE):
        return grid, None
    return None


def _draw_labels(draw: ImageDraw.ImageDraw) -> None:
    """Row numbers on the left, column numbers on top."""
    light = (230, 230, 230)
    for k in range(4):
        centre = GRID_LEFT + k * CELL + CELL // 2
        draw.text((centre, GRID_TOP - 26), f"column {k + 1}", fill=light, font=text_font(20), anchor="mm")
        middle = GRID_TOP + k * CELL + CELL // 2
        draw.text((GRID_LEFT - 34, middle), str(k + 1), fill=light, font=text_font(26), anchor="mm")
    draw.text((GRID_LEFT - 34, GRID_TOP - 26), "row", fill=light, font=text_font(20), anchor="mm")


# ---- the picture -----------------------------------------------------------------------------------------
CELL, GAP, GRID_LEFT, GRID_TOP = 110, 16, 80, 64


def cell_box(i: int) -> tuple[int, int, int, int]:
    """The painted box of 0-based square ``i`` (row-major)."""
    x = GRID_LEFT + (i % 4) * CELL + GAP // 2
    y = GRID_TOP + (i // 4) * CELL + GAP // 2
    return x, y, x + CELL - GAP, y + CELL - GAP
