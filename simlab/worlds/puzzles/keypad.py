"""The Keypad puzzle (KTANE's "Keypad"): four buttons in a 2x2 grid, each with a symbol. Exactly one column of
the manual holds all four symbols; press the buttons in the order their symbols appear in that column, top to
bottom. A correct press lights the button; any other press (a wrong symbol, or a button already lit) is a
mistake and resets the sequence: every light goes out and the first symbol is next again. Partial progress is
the most correct presses reached in a row, out of 4.

Ours, where the paper is silent: the manual's table of symbols was an image and is lost, so the four columns
of seven symbols and their names are ours (``COLUMNS``; KTANE has six columns of seven), drawn with Pillow's
shapes so they can be named in words; any two columns share at most three symbols, so four symbols of one
column are never all in another. The reset after a mistake is the spec's: with it and a press on a lit button
counting as a mistake, the random solver's figures fit the paper's Random row (KTANE keeps lit buttons lit).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from PIL import Image, ImageDraw

from simlab.render.images import text_font
from simlab.worlds.puzzles.puzzle import DO, GROUNDING, REASONING, Puzzle, Step

POSITIONS = ("top left", "top right", "bottom left", "bottom right")

COLUMNS: tuple[tuple[str, ...], ...] = (
    ("star", "ring", "heart", "lightning", "up triangle", "smiley", "moon"),
    ("diamond", "hollow star", "up arrow", "heart", "hourglass", "star", "plus"),
    ("bullseye", "hollow star", "moon", "zigzag", "diamond", "square", "x mark"),
    ("hexagon", "smiley", "right arrow", "plus", "down triangle", "bullseye", "equals"),
)
"""The manual's columns, each top to bottom (ours: the paper's table is lost)."""

SYMBOLS = tuple(sorted({s for column in COLUMNS for s in column}))


def column_of(symbols: Sequence[str]) -> tuple[str, ...] | None:
    """The one column holding all of ``symbols``; None when none or several do."""
    holding = [column for column in COLUMNS if set(symbols) <= set(column)]
    return holding[0] if len(holding) == 1 else None


def press_order(buttons: Sequence[str]) -> list[str]:
    """The positions to press, in the order the manual says (buttons are the symbols by position)."""
    column = column_of(buttons)
    assert column is not None, "a keypad whose symbols no single column holds"
    return [POSITIONS[list(buttons).index(symbol)] for symbol in column if symbol in buttons]


class KeypadPuzzle(Puzzle):
    """Press the four symbols in their column's order."""

    name = "keypad"
    title = "Keypad"
    categories = (GROUNDING, REASONING)
    multi_step = True

    def __init__(self, instance: Mapping[str, Any], seed: int) -> None:
        super().__init__(instance, seed)
        buttons = instance.get("buttons")
        if not isinstance(buttons, list) or len(buttons) != 4 or any(s not in SYMBOLS for s in map(str, buttons)):
            raise ValueError(f"buttons: four of the manual's symbols expected, got {buttons!r:.80}")
        if len(set(buttons)) != 4 or column_of(buttons) is None:
            raise ValueError(f"buttons: four different symbols that one column alone holds expected, got {buttons!r}")
        self.buttons: list[str] = list(buttons)
        self.order = press_order(self.buttons)
        self.lit: list[str] = []
        self.best = 0

    @classmethod
    def generate(cls, r: random.Random, options: Mapping[str, Any]) -> dict[str, Any]:
        # four of one column, placed at random: any two columns share at most three symbols
        return {"buttons": r.sample(COLUMNS[r.randrange(len(COLUMNS))], 4)}

    def actions(self) -> list[str]:
        return [f"Press {position}" for position in POSITIONS]

    def act(self, action: str) -> Step:
        position = action.removeprefix("Press ")
        symbol = self.buttons[POSITIONS.index(position)]
        if position != self.order[len(self.lit)]:
            why = "it is already lit" if position in self.lit else "it is not the next symbol"
            self.lit = []
            return Step("mistake", f"You pressed the {position} button ({symbol}): {why}. A strike; all lights go out.")
        self.lit.append(position)
        self.best = max(self.best, len(self.lit))
        if len(self.lit) == len(self.order):
            return Step("solved", f"You pressed the {position} button ({symbol}). The module is disarmed.")
        return Step("progress", f"You pressed the {position} button ({symbol}). It lights up green.")

    @property
    def solved(self) -> bool:
        return len(self.lit) == len(self.order)

    def progress(self) -> float:
        return 100.0 * self.best / len(self.order)

    def snapshot(self) -> dict[str, Any]:
        return {"buttons": list(self.buttons), "lit": list(self.lit)}

    def oracle(self) -> str:
        return f"Press {self.order[len(self.lit)]}"

    def describe(self) -> str:
        shown = ", ".join(f"{p}: {s}" for p, s in zip(POSITIONS, self.buttons, strict=True))
        lit = f"Lit so far: {', '.join(self.lit)}." if self.lit else "No button is lit."
        return f"The keypad has four buttons in a 2x2 grid with these symbols: {shown}. {lit}"

    @classmethod
    def advise(cls, said: Sequence[str]) -> str:
        heard = _heard_symbols(said)
        if len(heard) < 4:
            return "Which symbol is on each of the four buttons: top left, top right, bottom left, bottom right?"
        column = column_of(list(heard.values()))
        if column is None:
            return "No single column of my manual holds those four symbols. Please look again and describe each."
        lit = _heard_lit(said)
        order = [p for symbol in column for p, s in heard.items() if s == symbol and p not in lit]
        names = ", then ".join(f"the {heard[p]} ({p})" for p in order)
        lines = "\n".join(f"{DO}Press {p}" for p in order)
        return f"Column {COLUMNS.index(column) + 1} holds them. Press {names}.\n{lines}"

    @classmethod
    def draw(cls, snapshot: Mapping[str, Any], highlight: str | None = None) -> Image.Image:
        image = Image.new("RGB", (WIDTH, HEIGHT), (62, 66, 72))
        draw = ImageDraw.Draw(image)
        lit = set(snapshot.get("lit") or [])
        for position, symbol in zip(POSITIONS, snapshot["buttons"], strict=True):
            x0, y0, x1, y1 = button_box(position)
            draw.rectangle((x0, y0, x1, y1), fill=FACE, outline=(40, 40, 40), width=3)
            draw.rectangle(light_box(position), fill=LIT if position in lit else UNLIT, outline=(20, 20, 20))
            SHAPES[symbol](draw, (x0 + x1) // 2, y0 + 112, 52)
            if highlight == f"Press {position}":
                draw.rectangle((x0 - 8, y0 - 8, x1 + 8, y1 + 8), outline=HIGHLIGHT, width=6)
        font = text_font(20)
        draw.text((24, HEIGHT - 34), "Green light: pressed correctly", (230, 230, 230), font)
        return image


WIDTH, HEIGHT = 480, 500
FACE, INK = (226, 214, 180), (25, 25, 25)
LIT, UNLIT, HIGHLIGHT = (40, 200, 60), (70, 60, 50), (255, 140, 0)


def button_box(position: str) -> tuple[int, int, int, int]:
    """Where the button at ``position`` is drawn: (x0, y0, x1, y1)."""
    row, column = divmod(POSITIONS.index(position), 2)
    x0, y0 = 40 + column * 220, 30 + row * 220
    return (x0, y0, x0 + 180, y0 + 190)


def light_box(position: str) -> tuple[int, int, int, int]:
    """The button's light, a strip at its top."""
    x0, y0, x1, _ = button_box(position)
    return (x0 + 60, y0 + 14, x1 - 60, y0 + 34)


def _heard_symbols(said: Sequence[str]) -> dict[str, str]:
    """Position -> symbol as last reported (the manual's names, longest first so "hollow star" is not "star")."""
    names = "|".join(re.escape(s) for s in sorted(SYMBOLS, key=len, reverse=True))
    heard: dict[str, str] = {}
    for text in said:
        for position in POSITIONS:
            pattern = rf"\b{position}(?: button)?(?: shows| has| is)?:? (?:an? |the )?({names})\b"
            found = re.search(pattern, text, re.IGNORECASE)
            if found:
                heard[position] = found.group(1).lower()
    return heard


def _heard_lit(said: Sequence[str]) -> set[str]:
    """The positions the solver last said are lit (none when it said none is, or nothing about lights)."""
    for text in reversed(said):
        if re.search(r"\bno button is lit\b", text, re.IGNORECASE):
            return set()
        found = re.search(r"\blit(?: so far)?: ([a-z ,]+)", text, re.IGNORECASE)
        if found:
            return {p for p in POSITIONS if p in found.group(1).lower()}
    return set()


# ---- the symbols, drawn with Pillow's shapes around a centre (x, y) within half-size s ------------------
Shape = Callable[[ImageDraw.ImageDraw, int, int, int], None]


def _star_points(x: int, y: int, s: int) -> list[tuple[float, float]]:
    radii = (s, s * 0.42)
    return [
        (x + radii[k % 2] * math.sin(k * math.pi / 5), y - radii[k % 2] * math.cos(k * math.pi / 5)) for k in range(10)
    ]


def _star(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    d.polygon(_star_points(x, y, s), fill=INK)


def _hollow_star(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    d.polygon(_star_points(x, y, s), outline=INK, width=6)


def _ring(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    d.ellipse((x - s, y - s, x + s, y + s), outline=INK, width=7)


def _bullseye(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    _ring(d, x, y, s)
    d.ellipse((x - s // 3, y - s // 3, x + s // 3, y + s // 3), fill=INK)


def _triangle(d: ImageDraw.ImageDraw, x: int, y: int, s: int, up: bool) -> None:
    tip, base = (y - s, y + s * 0.8) if up else (y + s, y - s * 0.8)
    d.polygon([(x, tip), (x - s, base), (x + s, base)], fill=INK)


def _square(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    h = int(s * 0.8)
    d.rectangle((x - h, y - h, x + h, y + h), outline=INK, width=7)


def _diamond(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    d.polygon([(x, y - s), (x + s * 0.75, y), (x, y + s), (x - s * 0.75, y)], fill=INK)


def _heart(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    r = s // 2
    d.ellipse((x - 2 * r, y - s * 0.75, x, y - s * 0.75 + 2 * r), fill=INK)
    d.ellipse((x, y - s * 0.75, x + 2 * r, y - s * 0.75 + 2 * r), fill=INK)
    d.polygon([(x - s * 0.97, y - s * 0.1), (x + s * 0.97, y - s * 0.1), (x, y + s)], fill=INK)


def _plus(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    w = s // 6
    d.rectangle((x - w, y - s * 0.85, x + w, y + s * 0.85), fill=INK)
    d.rectangle((x - s * 0.85, y - w, x + s * 0.85, y + w), fill=INK)


def _x_mark(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    h = s * 0.7
    d.line((x - h, y - h, x + h, y + h), fill=INK, width=s // 3)
    d.line((x - h, y + h, x + h, y - h), fill=INK, width=s // 3)


def _moon(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    d.ellipse((x - s, y - s, x + s, y + s), fill=INK)
    d.ellipse((x - s * 0.45, y - s * 1.05, x + s * 1.35, y + s * 0.75), fill=FACE)  # bites out the crescent


def _arrow(d: ImageDraw.ImageDraw, x: int, y: int, s: int, up: bool) -> None:
    w = s * 0.17
    if up:
        d.rectangle((x - w, y - s * 0.2, x + w, y + s), fill=INK)
        d.polygon([(x, y - s), (x - s * 0.65, y - s * 0.15), (x + s * 0.65, y - s * 0.15)], fill=INK)
    else:
        d.rectangle((x - s, y - w, x + s * 0.2, y + w), fill=INK)
        d.polygon([(x + s, y), (x + s * 0.15, y - s * 0.65), (x + s * 0.15, y + s * 0.65)], fill=INK)


def _lightning(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    bolt = [(0.25, -1), (-0.5, 0.12), (-0.05, 0.12), (-0.3, 1), (0.5, -0.18), (0.05, -0.18)]
    d.polygon([(x + a * s, y + b * s) for a, b in bolt], fill=INK)


def _hexagon(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    d.regular_polygon((x, y, s), 6, outline=INK, width=7)


def _hourglass(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    d.polygon([(x - s * 0.7, y - s), (x + s * 0.7, y - s), (x, y)], fill=INK)
    d.polygon([(x - s * 0.7, y + s), (x + s * 0.7, y + s), (x, y)], fill=INK)


def _smiley(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    d.ellipse((x - s, y - s, x + s, y + s), outline=INK, width=5)
    for dx in (-0.38, 0.38):
        e = s * 0.13
        d.ellipse((x + dx * s - e, y - s * 0.3 - e, x + dx * s + e, y - s * 0.3 + e), fill=INK)
    d.arc((x - s * 0.55, y - s * 0.5, x + s * 0.55, y + s * 0.6), 25, 155, fill=INK, width=5)


def _equals(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    d.rectangle((x - s * 0.8, y - s * 0.45, x + s * 0.8, y - s * 0.15), fill=INK)
    d.rectangle((x - s * 0.8, y + s * 0.15, x + s * 0.8, y + s * 0.45), fill=INK)


def _zigzag(d: ImageDraw.ImageDraw, x: int, y: int, s: int) -> None:
    points = [(x - s + k * s / 3.5, y + (s * 0.3 if k % 2 else -s * 0.3)) for k in range(8)]
    d.line(points, fill=INK, width=8, joint="curve")


SHAPES: dict[str, Shape] = {
    "star": _star,
    "hollow star": _hollow_star,
    "ring": _ring,
    "bullseye": _bullseye,
    "up triangle": lambda d, x, y, s: _triangle(d, x, y, s, up=True),
    "down triangle": lambda d, x, y, s: _triangle(d, x, y, s, up=False),
    "square": _square,
    "diamond": _diamond,
    "heart": _heart,
    "plus": _plus,
    "x mark": _x_mark,
    "moon": _moon,
    "up arrow": lambda d, x, y, s: _arrow(d, x, y, s, up=True),
    "right arrow": lambda d, x, y, s: _arrow(d, x, y, s, up=False),
    "lightning": _lightning,
    "hexagon": _hexagon,
    "hourglass": _hourglass,
    "smiley": _smiley,
    "equals": _equals,
    "zigzag": _zigzag,
}
"""How each symbol is drawn."""
