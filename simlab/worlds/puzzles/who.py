"""The Who puzzle (KTANE's "Who's on First"): a display word and six labelled buttons in three rows of two.
The display names a button whose label to read (the manual's step 1); that label's list names the button to
press: the first word of the list that is on a button (step 2). One step: the right press solves it, any other
press is a mistake (the module stays as it is).

Ours, where the paper is silent: one stage only (KTANE plays three; the paper calls Who single-step); the six
labels are distinct words of one of the step 2 lists' two 14-word groups, as in KTANE; the display is any of
the step 1 table's 28 entries, "(No Text)" being an empty display; a strike changes nothing on the module and
every button stays an action (the paper's Random row fits only this: 1 - (5/6)^3 = 42% success).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image, ImageDraw

from simlab.render.images import draw_centred, text_font
from simlab.worlds.puzzles.puzzle import DO, GROUNDING, Puzzle, Step

POSITIONS = ("top left", "top right", "middle left", "middle right", "bottom left", "bottom right")

STEP1: dict[str, str] = {
    "YES": "middle left",
    "FIRST": "top right",
    "DISPLAY": "bottom right",
    "OKAY": "top right",
    "SAYS": "bottom right",
    "NOTHING": "middle left",
    "": "bottom left",  # the manual's "(No Text)": an empty display
    "BLANK": "middle right",
    "NO": "bottom right",
    "LED": "middle left",
    "LEAD": "bottom right",
    "READ": "middle right",
    "RED": "middle right",
    "REED": "bottom left",
    "LEED": "bottom left",
    "HOLD ON": "bottom right",
    "YOU": "middle right",
    "YOU ARE": "bottom right",
    "YOUR": "middle right",
    "YOU'RE": "middle right",
    "UR": "top left",
    "THERE": "bottom right",
    "THEY'RE": "bottom left",
    "THEIR": "middle right",
    "THEY ARE": "middle left",
    "SEE": "bottom right",
    "C": "top right",
    "CEE": "bottom right",
}
"""Step 1: the display -> the button whose label to read."""


def _lists(text: str) -> dict[str, tuple[str, ...]]:
    rows = (line.split(":", 1) for line in text.strip().splitlines())
    return {key.strip(): tuple(w.strip() for w in words.split(",")) for key, words in rows}


STEP2 = _lists("""
READY: YES, OKAY, WHAT, MIDDLE, LEFT, PRESS, RIGHT, BLANK, READY, NO, FIRST, UHHH, NOTHING, WAIT
FIRST: LEFT, OKAY, YES, MIDDLE, NO, RIGHT, NOTHING, UHHH, WAIT, READY, BLANK, WHAT, PRESS, FIRST
NO: BLANK, UHHH, WAIT, FIRST, WHAT, READY, RIGHT, YES, NOTHING, LEFT, PRESS, OKAY, NO, MIDDLE
BLANK: WAIT, RIGHT, OKAY, MIDDLE, BLANK, PRESS, READY, NOTHING, NO, WHAT, LEFT, UHHH, YES, FIRST
NOTHING: UHHH, RIGHT, OKAY, MIDDLE, YES, BLANK, NO, PRESS, LEFT, WHAT, WAIT, FIRST, NOTHING, READY
YES: OKAY, RIGHT, UHHH, MIDDLE, FIRST, WHAT, PRESS, READY, NOTHING, YES, LEFT, BLANK, NO, WAIT
WHAT: UHHH, WHAT, LEFT, NOTHING, READY, BLANK, MIDDLE, NO, OKAY, FIRST, WAIT, YES, PRESS, RIGHT
UHHH: READY, NOTHING, LEFT, WHAT, OKAY, YES, RIGHT, NO, PRESS, BLANK, UHHH, MIDDLE, WAIT, FIRST
LEFT: RIGHT, LEFT, FIRST, NO, MIDDLE, YES, BLANK, WHAT, UHHH, WAIT, PRESS, READY, OKAY, NOTHING
RIGHT: YES, NOTHING, READY, PRESS, NO, WAIT, WHAT, RIGHT, MIDDLE, LEFT, UHHH, BLANK, OKAY, FIRST
MIDDLE: BLANK, READY, OKAY, WHAT, NOTHING, PRESS, NO, WAIT, LEFT, MIDDLE, RIGHT, FIRST, UHHH, YES
OKAY: MIDDLE, NO, FIRST, YES, UHHH, NOTHING, WAIT, OKAY, LEFT, READY, BLANK, PRESS, WHAT, RIGHT
WAIT: UHHH, NO, BLANK, OKAY, YES, LEFT, FIRST, PRESS, WHAT, WAIT, NOTHING, READY, RIGHT, MIDDLE
PRESS: RIGHT, MIDDLE, YES, READY, PRESS, OKAY, NOTHING, UHHH, BLANK, LEFT, FIRST, WHAT, NO, WAIT
YOU: SURE, YOU ARE, YOUR, YOU'RE, NEXT, UH HUH, UR, HOLD, WHAT?, YOU, UH UH, LIKE, DONE, U
YOU ARE: YOUR, NEXT, LIKE, UH HUH, WHAT?, DONE, UH UH, HOLD, YOU, U, YOU'RE, SURE, UR, YOU ARE
YOUR: UH UH, YOU ARE, UH HUH, YOUR, NEXT, UR, SURE, U, YOU'RE, YOU, WHAT?, HOLD, LIKE, DONE
YOU'RE: YOU, YOU'RE, UR, NEXT, UH UH, YOU ARE, U, YOUR, WHAT?, UH HUH, SURE, DONE, LIKE, HOLD
UR: DONE, U, UR, UH HUH, WHAT?, SURE, YOUR, HOLD, YOU'RE, LIKE, NEXT, UH UH, YOU ARE, YOU
U: UH HUH, SURE, NEXT, WHAT?, YOU'RE, UR, UH UH, DONE, U, YOU, LIKE, HOLD, YOU ARE, YOUR
UH HUH: UH HUH, YOUR, YOU ARE, YOU, DONE, HOLD, UH UH, NEXT, SURE, LIKE, YOU'RE, UR, U, WHAT?
UH UH: UR, U, YOU ARE, YOU'RE, NEXT, UH UH, DONE, YOU, UH HUH, LIKE, YOUR, SURE, HOLD, WHAT?
WHAT?: YOU, HOLD, YOU'RE, YOUR, U, DONE, UH UH, LIKE, YOU ARE, UH HUH, UR, NEXT, WHAT?, SURE
DONE: SURE, UH HUH, NEXT, WHAT?, YOUR, UR, YOU'RE, HOLD, LIKE, YOU, U, YOU ARE, UH UH, DONE
NEXT: WHAT?, UH HUH, UH UH, YOUR, HOLD, SURE, NEXT, LIKE, DONE, YOU ARE, UR, YOU'RE, U, YOU
HOLD: YOU ARE, U, DONE, UH UH, YOU, UR, SURE, WHAT?, YOU'RE, NEXT, HOLD, UH HUH, YOUR, LIKE
SURE: YOU ARE, DONE, LIKE, YOU'RE, YOU, HOLD, UH HUH, UR, SURE, U, WHAT?, NEXT, YOUR, UH UH
LIKE: YOU'RE, NEXT, U, UR, HOLD, DONE, UH UH, WHAT?, UH HUH, YOU, LIKE, SURE, YOU ARE, YOUR
""")
"""Step 2: a label -> the words to look for on the buttons, first match pressed (appendix A, verbatim)."""

GROUPS = (tuple(STEP2)[:14], tuple(STEP2)[14:])
"""The two 14-word groups of labels: each step 2 list names only words of its own group."""


def correct_position(display: str, labels: Sequence[str]) -> str:
    """The button to press: step 1 names the label to read, step 2 the first of its list on a button."""
    read = labels[POSITIONS.index(STEP1[display])]
    first = next(word for word in STEP2[read] if word in labels)  # the list holds ``read`` itself
    return POSITIONS[list(labels).index(first)]


WIDTH, HEIGHT = 520, 440
DISPLAY_BOX = (40, 24, WIDTH - 40, 104)
HIGHLIGHT = (255, 140, 0)


def button_box(position: str) -> tuple[int, int, int, int]:
    """Where the button at ``position`` is drawn: (x0, y0, x1, y1)."""
    row, column = divmod(POSITIONS.index(position), 2)
    x0, y0 = 50 + column * 230, 140 + row * 100
    return (x0, y0, x0 + 190, y0 + 70)


class WhoPuzzle(Puzzle):
    """Press the one button the two steps of the manual name."""

    name = "who"
    title = "Who"
    categories = (GROUNDING,)
    multi_step = False

    def __init__(self, instance: Mapping[str, Any], seed: int) -> None:
        super().__init__(instance, seed)
        display, labels = instance.get("display"), instance.get("labels")
        if not isinstance(display, str) or display not in STEP1:
            raise ValueError(f"display: one of the manual's step 1 words or '' expected, got {display!r:.40}")
        if not isinstance(labels, list) or len(labels) != 6 or len(set(map(str, labels))) != 6:
            raise ValueError(f"labels: six different button labels expected, got {labels!r:.80}")
        if any(not isinstance(label, str) or label not in STEP2 for label in labels):
            raise ValueError(f"labels: each must be a word of the manual's step 2 lists, got {labels!r:.80}")
        self.display, self.labels = display, list(labels)
        self.answer = correct_position(display, self.labels)
        self.pressed: list[str] = []

    @classmethod
    def generate(cls, r: random.Random, options: Mapping[str, Any]) -> dict[str, Any]:
        display = r.choice(sorted(STEP1))
        return {"display": display, "labels": r.sample(r.choice(GROUPS), 6)}

    def actions(self) -> list[str]:
        return [f"Press {position}" for position in POSITIONS]

    def act(self, action: str) -> Step:
        position = action.removeprefix("Press ")
        self.pressed.append(position)
        label = self.labels[POSITIONS.index(position)]
        if position == self.answer:
            return Step("solved", f'You pressed the {position} button ("{label}"). The module is disarmed.')
        return Step("mistake", f'You pressed the {position} button ("{label}"). That was the wrong button: a strike.')

    @property
    def solved(self) -> bool:
        return self.answer in self.pressed

    def snapshot(self) -> dict[str, Any]:
        return {"display": self.display, "labels": list(self.labels), "solved": self.solved}

    def oracle(self) -> str:
        return f"Press {self.answer}"

    def describe(self) -> str:
        shown = f'The display reads "{self.display}".' if self.display else "The display is empty: it shows no text."
        buttons = ", ".join(f'{p} "{label}"' for p, label in zip(POSITIONS, self.labels, strict=True))
        return f"{shown} The six buttons, in three rows of two, are labelled: {buttons}."

    @classmethod
    def advise(cls, said: Sequence[str]) -> str:
        display = _heard_display(said)
        labels = _heard_labels(said)
        if display is None:
            return (
                "What does the display say (or is it empty)? And what are the labels of the six buttons: top left, "
                "top right, middle left, middle right, bottom left, bottom right?"
            )
        read = STEP1[display]
        if read not in labels:
            return f"Read me the label on the {read} button, and the labels of all six buttons by position."
        if len(labels) < 6:
            return "I need the labels of all six buttons, by position, to find which one to press."
        target = next(p for word in STEP2[labels[read]] for p, label in labels.items() if label == word)
        return f'The {read} button says "{labels[read]}": press the {target} button.\n{DO}Press {target}'

    @classmethod
    def draw(cls, snapshot: Mapping[str, Any], highlight: str | None = None) -> Image.Image:
        image = Image.new("RGB", (WIDTH, HEIGHT), (62, 66, 72))
        draw = ImageDraw.Draw(image)
        draw.rectangle(DISPLAY_BOX, fill=(20, 28, 24), outline=(140, 140, 140), width=3)
        draw_centred(draw, DISPLAY_BOX, str(snapshot["display"]), text_font(40), (120, 255, 150))
        for position, label in zip(POSITIONS, snapshot["labels"], strict=True):
            box = button_box(position)
            draw.rectangle(box, fill=(226, 214, 180), outline=(40, 40, 40), width=3)
            draw_centred(draw, box, str(label), text_font(30), (20, 20, 20))
            if highlight == f"Press {position}":
                x0, y0, x1, y1 = box
                draw.rectangle((x0 - 8, y0 - 8, x1 + 8, y1 + 8), outline=HIGHLIGHT, width=6)
        return image


def _heard_display(said: Sequence[str]) -> str | None:
    """The display the solver last reported: a step 1 word, '' for an empty one, None when not said."""
    for text in reversed(said):
        if re.search(r"display (?:is empty|shows no text|has no text)", text, re.IGNORECASE):
            return ""
        found = re.search(r'display (?:reads|says|shows)[: ]*"([^"]*)"', text, re.IGNORECASE)
        word = " ".join(found.group(1).upper().split()) if found else None
        word = "" if word == "(NO TEXT)" else word  # the manual's own name for an empty display
        if word in STEP1:
            return word
    return None


def _heard_labels(said: Sequence[str]) -> dict[str, str]:
    """Position -> label as last reported (labels of the step 2 lists only)."""
    labels: dict[str, str] = {}
    for text in said:
        for position in POSITIONS:
            found = re.search(rf'\b{position}(?: button)?(?: is| reads| says|:)? "([^"]*)"', text, re.IGNORECASE)
            label = " ".join(found.group(1).upper().split()) if found else ""
            if label in STEP2:
                labels[position] = label
    return labels
