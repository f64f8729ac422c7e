"""The Wire puzzle (KTANE's "Wires"): 3-6 coloured wires and a serial number; cut the one wire the manual's
rules name. One step: the right cut solves it, any other cut is a mistake (and the wire stays cut)."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image, ImageDraw

from simlab.render.images import mono_font, text_font
from simlab.worlds.puzzles.puzzle import DO, GROUNDING, Puzzle, Step

COLOURS = ("red", "white", "blue", "yellow", "black")
RGB = {
    "red": (200, 30, 30),
    "white": (245, 245, 245),
    "blue": (30, 80, 200),
    "yellow": (240, 200, 20),
    "black": (20, 20, 20),
}
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")
SERIAL_CHARACTERS = "ABCDEFGHJKLMNPQRSTUVWXZ0123456789"
"""As in KTANE, no I, O or Y: they read as 1, 0 and V."""


def correct_wire(colours: Sequence[str], serial: str) -> int:
    """The 1-based wire the manual says to cut (appendix A, case by case)."""
    n, odd = len(colours), int(serial[-1]) % 2 == 1
    count = {c: sum(1 for w in colours if w == c) for c in COLOURS}
    last = colours[-1]

    def last_of(colour: str) -> int:
        return max(k for k, c in enumerate(colours, start=1) if c == colour)

    if n == 3:
        if count["red"] == 0:
            return 2
        if last == "white":
            return 3
        return last_of("blue") if count["blue"] > 1 else 3
    if n == 4:
        if count["red"] > 1 and odd:
            return last_of("red")
        if last == "yellow" and count["red"] == 0:
            return 1
        if count["blue"] == 1:
            return 1
        return 4 if count["yellow"] > 1 else 2
    if n == 5:
        if last == "black" and odd:
            return 4
        if count["red"] == 1 and count["yellow"] > 1:
            return 1
        return 2 if count["black"] == 0 else 1
    if count["yellow"] == 0 and odd:
        return 3
    if count["yellow"] == 1 and count["white"] > 1:
        return 4
    return 6 if count["red"] == 0 else 4


class WirePuzzle(Puzzle):
    """Cut the one correct wire."""

    name = "wire"
    title = "Wire"
    categories = (GROUNDING,)
    multi_step = False

    def __init__(self, instance: Mapping[str, Any], seed: int) -> None:
        super().__init__(instance, seed)
        colours, serial = instance.get("wires"), instance.get("serial")
        if not isinstance(colours, list) or not 3 <= len(colours) <= 6 or any(c not in COLOURS for c in colours):
            raise ValueError(f"wires: 3-6 of {', '.join(COLOURS)} expected, got {colours!r:.80}")
        if not isinstance(serial, str) or not re.fullmatch(rf"[{SERIAL_CHARACTERS}]{{5}}[0-9]", serial):
            raise ValueError(f"serial: six letters or digits ending in a digit expected, got {serial!r:.40}")
        self.wires, self.serial = list(colours), serial
        self.cut: list[int] = []

    @classmethod
    def generate(cls, r: random.Random, options: Mapping[str, Any]) -> dict[str, Any]:
        n = r.randint(3, 6)
        serial = "".join(r.choice(SERIAL_CHARACTERS) for _ in range(5)) + str(r.randint(0, 9))
        return {"wires": [r.choice(COLOURS) for _ in range(n)], "serial": serial}

    def actions(self) -> list[str]:
        # a cut wire stays an action (cutting it again is a mistake): the paper's Random row fits only this
        return [f"Cut wire {k}" for k in range(1, len(self.wires) + 1)]

    def act(self, action: str) -> Step:
        k = int(action.rsplit(" ", 1)[1])
        if k in self.cut:
            return Step("mistake", f"Wire {k} is already cut: a strike.")
        self.cut.append(k)
        if k == correct_wire(self.wires, self.serial):
            return Step("solved", f"You cut wire {k}. The module is disarmed.")
        return Step("mistake", f"You cut wire {k}. That was the wrong wire: a strike.")

    @property
    def solved(self) -> bool:
        return correct_wire(self.wires, self.serial) in self.cut

    def snapshot(self) -> dict[str, Any]:
        return {"wires": list(self.wires), "serial": self.serial, "cut": list(self.cut)}

    def oracle(self) -> str:
        return f"Cut wire {correct_wire(self.wires, self.serial)}"

    def describe(self) -> str:
        listed = ", ".join(f"{ORDINALS[k]} {c}" for k, c in enumerate(self.wires))
        return f"I see {len(self.wires)} wires, from the top: {listed}. The serial number is {self.serial}."

    @classmethod
    def advise(cls, said: Sequence[str]) -> str:
        for text in reversed(said):
            colours = re.findall(r"\b(?:first|second|third|fourth|fifth|sixth) (red|white|blue|yellow|black)\b", text)
            serial = re.search(r"serial number is ([0-9A-Z]{5}[0-9])", text)
            if 3 <= len(colours) <= 6 and serial:
                k = correct_wire(colours, serial.group(1))
                return f"Cut the {ORDINALS[k - 1]} wire.\n{DO}Cut wire {k}"
        return "How many wires are there, what colour is each from the top, and what is the serial number?"

    @classmethod
    def draw(cls, snapshot: Mapping[str, Any], highlight: str | None = None) -> Image.Image:
        wires, cut = list(snapshot["wires"]), set(snapshot.get("cut") or [])
        width, row = 560, 64
        image = Image.new("RGB", (width, 110 + row * len(wires)), (62, 66, 72))
        draw = ImageDraw.Draw(image)
        draw.rectangle((16, 16, width - 16, 70), fill=(30, 30, 30))
        draw.text((32, 26), f"SERIAL NUMBER  {snapshot['serial']}", fill=(255, 255, 255), font=mono_font(28))
        for k, colour in enumerate(wires, start=1):
            y = 70 + row * k - row // 2 + 8
            draw.text((24, y - 14), str(k), fill=(255, 255, 255), font=text_font(26))
            draw.ellipse((60, y - 10, 80, y + 10), fill=(150, 150, 150))
            draw.ellipse((width - 60, y - 10, width - 40, y + 10), fill=(150, 150, 150))
            outline = (120, 120, 120) if colour in ("white", "black") else (0, 0, 0)
            segments = [(80, width // 2 - 14), (width // 2 + 14, width - 60)] if k in cut else [(80, width - 60)]
            for x0, x1 in segments:
                draw.rectangle((x0, y - 9, x1, y + 9), fill=RGB[colour], outline=outline, width=2)
            if highlight == f"Cut wire {k}":
                draw.rectangle((52, y - 22, width - 32, y + 22), outline=(255, 140, 0), width=4)
        return image
