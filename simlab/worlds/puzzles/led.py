"""The LED puzzle (the community module "LED Encryption"): two to five stages, each with an LED whose colour
gives a multiplier and four buttons with four different letters; at each stage press a button whose letter
value (A = 0) times the multiplier, modulo 26, is the letter diagonally opposite (manual, appendix A). A correct
press moves to the next stage (new letters); a wrong press is a strike and the stage stays as it is.

Ours, where the paper is silent (the community module's behaviour where it has one):
* generation as the community module: a stage count 2-5 and a colour per stage drawn uniformly, then per stage
  one planted correct button (a random letter, its product on the opposite button, never the same letter) and
  two more letters, all four different; another button may happen to be correct too, as the manual allows;
* every stage's letters are part of the instance, so play needs no randomness;
* the actions are ``Press top left``, ``Press top right``, ``Press bottom left``, ``Press bottom right``;
* the picture numbers the LEDs 1.. under them, so a reader can find the current stage's LED;
* the manual expert names the first correct button in the order top left, top right, bottom left, bottom right.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image, ImageDraw

from simlab.render.images import mono_font, text_font
from simlab.worlds.puzzles.puzzle import DO, MEMORY, REASONING, Puzzle, Step

MULTIPLIER = {"red": 2, "green": 3, "blue": 4, "yellow": 5, "purple": 6, "orange": 7}
RGB = {
    "red": (220, 30, 30),
    "green": (30, 180, 60),
    "blue": (40, 90, 230),
    "yellow": (245, 215, 30),
    "purple": (140, 50, 190),
    "orange": (250, 135, 20),
}
BUTTONS = ("top left", "top right", "bottom left", "bottom right")  # index i is diagonally opposite 3 - i
LETTERS = string.ascii_uppercase


def value(letter: str) -> int:
    """The manual's letter value: A = 0, B = 1, ..., Z = 25."""
    return LETTERS.index(letter)


def correct_buttons(letters: Sequence[str], colour: str) -> list[int]:
    """The 0-based buttons (in :data:`BUTTONS` order) whose letter times the LED's multiplier, modulo 26, is
    the letter diagonally opposite."""
    m = MULTIPLIER[colour]
    return [i for i in range(4) if value(letters[i]) * m % 26 == value(letters[3 - i])]


def new_stage(r: random.Random, colour: str) -> list[str]:
    """Four different letters with one planted correct button, as the community module draws them."""
    correct = r.randrange(4)
    while True:
        pool = r.sample(range(26), 26)
        planted = pool[0]
        opposite = planted * MULTIPLIER[colour] % 26
        if opposite != planted:  # a letter equal to its own product cannot stand on two buttons
            break
    others = [x for x in pool[1:] if x != opposite]
    values = [0] * 4
    values[correct], values[3 - correct] = planted, opposite
    values[correct ^ 1], values[(3 - correct) ^ 1] = others[0], others[1]
    return [LETTERS[x] for x in values]


def check(instance: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The LED colours and the letters of each stage; ValueError naming the field otherwise."""
    leds, stages = instance.get("leds"), instance.get("letters")
    if not isinstance(leds, list) or not 2 <= len(leds) <= 5 or any(c not in MULTIPLIER for c in leds):
        raise ValueError(f"leds: 2-5 of {', '.join(MULTIPLIER)} expected, got {leds!r:.80}")
    if not isinstance(stages, list) or len(stages) != len(leds):
        raise ValueError(f"letters: one list of four letters per LED expected, got {stages!r:.80}")
    for k, letters in enumerate(stages):
        if not isinstance(letters, list) or len(letters) != 4 or len(set(letters)) != 4:
            raise ValueError(f"letters[{k}]: four different letters expected, got {letters!r:.60}")
        if any(not isinstance(x, str) or x not in LETTERS or len(x) != 1 for x in letters):
            raise ValueError(f"letters[{k}]: capital letters A-Z expected, got {letters!r:.60}")
        if not correct_buttons(letters, leds[k]):
            raise ValueError(f"letters[{k}]: no button is correct with the {leds[k]} LED")
    return list(leds), [list(x) for x in stages]


class LedPuzzle(Puzzle):
    """Press one correct button per stage."""

    name = "led"
    title = "LED"
    categories = (MEMORY, REASONING)
    multi_step = True

    def __init__(self, instance: Mapping[str, Any], seed: int) -> None:
        super().__init__(instance, seed)
        self.leds, self.letters = check(instance)
        self.done = 0  # stages solved

    @classmethod
    def generate(cls, r: random.Random, options: Mapping[str, Any]) -> dict[str, Any]:
        leds = [r.choice(list(MULTIPLIER)) for _ in range(r.randint(2, 5))]
        return {"leds": leds, "letters": [new_stage(r, colour) for colour in leds]}

    # ---- playing ----------------------------------------------------------------------------------------
    def _stage(self) -> int:
        """The 0-based stage shown now (the last one once solved)."""
        return min(self.done, len(self.leds) - 1)

    def actions(self) -> list[str]:
        return [f"Press {b}" for b in BUTTONS]

    def act(self, action: str) -> Step:
        button = BUTTONS.index(action.removeprefix("Press "))
        k = self._stage()
        letter = self.letters[k][button]
        if button not in correct_buttons(self.letters[k], self.leds[k]):
            return Step("mistake", f"You pressed the {BUTTONS[button]} button ({letter}): wrong, a strike.")
        self.done += 1
        if self.solved:
            return Step("solved", f"You pressed the {BUTTONS[button]} button ({letter}). The module is disarmed.")
        return Step(
            "progress",
            f"You pressed the {BUTTONS[button]} button ({letter}): correct. Stage {self.done + 1} begins "
            "with new letters.",
        )

    @property
    def solved(self) -> bool:
        return self.done >= len(self.leds)

    def progress(self) -> float:
        return 100.0 * self.done / len(self.leds)

    def snapshot(self) -> dict[str, Any]:
        return {
            "leds": list(self.leds),
            "stage": self._stage() + 1,
            "done": self.done,
            "letters": list(self.letters[self._stage()]),
        }

    # ---- the scripted agents ----------------------------------------------------------------------------
    def oracle(self) -> str:
        k = self._stage()
        return f"Press {BUTTONS[correct_buttons(self.letters[k], self.leds[k])[0]]}"

    def describe(self) -> str:
        if self.solved:
            return "The module is disarmed."
        k = self._stage()
        buttons = ", ".join(f"{b} {x}" for b, x in zip(BUTTONS, self.letters[k], strict=True))
        return (
            f"The number at the top left shows stage {k + 1}; there are {len(self.leds)} LEDs, from left to "
            f"right: {', '.join(self.leds)}. The LED of stage {k + 1} is {self.leds[k]}. "
            f"The buttons: {buttons}."
        )

    @classmethod
    def advise(cls, said: Sequence[str]) -> str:
        seen = read_description(said[-1]) if said else None
        if seen is None:
            return (
                "Which stage does the number at the top left show, what colour is that stage's LED, and which "
                "letter is on each button (top left, top right, bottom left, bottom right)?"
            )
        colour, letters = seen
        m = MULTIPLIER[colour]
        good = correct_buttons(letters, colour)
        if not good:
            return "No button fits the rule with those letters: please read the LED colour and the letters again."
        i = good[0]
        a, b = letters[i], letters[3 - i]
        return (
            f"{colour.capitalize()} means multiply by {m}. {a} is {value(a)}, times {m} is {value(a) * m}, "
            f"modulo 26 is {value(a) * m % 26}, which is {b} on the opposite button. Press the {BUTTONS[i]} "
            f"button.\n{DO}Press {BUTTONS[i]}"
        )

    @classmethod
    def draw(cls, snapshot: Mapping[str, Any], highlight: str | None = None) -> Image.Image:
        image = Image.new("RGB", (560, 560), (62, 66, 72))
        draw = ImageDraw.Draw(image)
        _draw_top(draw, list(snapshot["leds"]), int(snapshot["stage"]))
        for i, letter in enumerate(snapshot["letters"]):
            _draw_button(draw, i, str(letter), highlight == f"Press {BUTTONS[i]}")
        return image


def read_description(text: str) -> tuple[str, list[str]] | None:
    """(the current stage's LED colour, the four letters in :data:`BUTTONS` order) from a description."""
    colour = re.search(r"LED of stage \d is (\w+)", text, re.IGNORECASE)
    found = [re.search(rf"\b{b} ([A-Z])\b", text) for b in BUTTONS]
    if not colour or colour.group(1).lower() not in MULTIPLIER or not all(found):
        return None
    letters = [m.group(1) for m in found if m]
    return (colour.group(1).lower(), letters) if len(set(letters)) == 4 else None


# ---- the picture -----------------------------------------------------------------------------------------
LED_Y, LED_R = 70, 26
BUTTON_SIZE, BUTTON_LEFT, BUTTON_TOP, BUTTON_GAP = 180, 90, 170, 20


def led_centre(k: int, n: int) -> tuple[int, int]:
    """The centre of the LED of 0-based stage ``k`` of ``n``, spread over the space right of the number."""
    left, right = 170, 530
    return left + (right - left) * (2 * k + 1) // (2 * n), LED_Y


def button_box(i: int) -> tuple[int, int, int, int]:
    """The box of the 0-based button ``i`` (top left, top right, bottom left, bottom right)."""
    x = BUTTON_LEFT + (i % 2) * (BUTTON_SIZE + BUTTON_GAP)
    y = BUTTON_TOP + (i // 2) * (BUTTON_SIZE + BUTTON_GAP)
    return x, y, x + BUTTON_SIZE, y + BUTTON_SIZE


def _draw_top(draw: ImageDraw.ImageDraw, leds: list[str], stage: int) -> None:
    draw.rectangle((16, 16, 544, 140), fill=(30, 30, 30))
    draw.rectangle((28, 28, 128, 128), fill=(10, 10, 10), outline=(120, 120, 120), width=2)
    draw.text((78, 78), str(stage), fill=(255, 255, 255), font=mono_font(72), anchor="mm")
    for k, colour in enumerate(leds):
        x, y = led_centre(k, len(leds))
        draw.ellipse((x - LED_R, y - LED_R, x + LED_R, y + LED_R), fill=RGB[colour], outline=(0, 0, 0), width=2)
        draw.text((x, y + LED_R + 16), str(k + 1), fill=(200, 200, 200), font=text_font(20), anchor="mm")


def _draw_button(draw: ImageDraw.ImageDraw, i: int, letter: str, marked: bool) -> None:
    box = button_box(i)
    if marked:
        draw.rectangle((box[0] - 8, box[1] - 8, box[2] + 8, box[3] + 8), outline=(255, 140, 0), width=6)
    draw.rectangle(box, fill=(214, 200, 160), outline=(20, 20, 20), width=3)
    centre = ((box[0] + box[2]) // 2, (box[1] + box[3]) // 2)
    draw.text(centre, letter, fill=(20, 20, 20), font=mono_font(96), anchor="mm")
