"""The Memory puzzle (KTANE's "Memory"): a display showing 1-4 above four buttons labelled with 1-4 in some
order; five stages, each asking for one button by a rule of the manual (appendix A) that may refer to the
position or the label pressed in an earlier stage. A wrong press is a strike and resets the module to stage 1
with a new display and new labels (drawn from the puzzle's own seeded ``random``, so an episode replays).

Ours, where the paper is silent:
* the buttons are named by position, left to right: the actions are ``Press position 1`` .. ``Press position 4``
  (every button is always an action, so the random solver can make the paper's mistakes);
* all five stages (display and labels) are drawn at generation, as KTANE does; a reset draws five new ones;
* PSR is the most stages ever completed in one run, over 5 (the paper's Random row, 15, fits only this reading:
  "highest stage reached" counting the starting stage would give at least 20);
* the scripted solver tells the expert what it pressed earlier in the run (a careful solver remembers); the
  manual expert also works it out from the earlier descriptions when a description leaves it out.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from PIL import Image, ImageDraw

from simlab.render.images import mono_font, text_font
from simlab.worlds.puzzles.puzzle import DO, MEMORY, REASONING, Puzzle, Step

STAGES = 5
LABELS = (1, 2, 3, 4)
ORDINALS = ("first", "second", "third", "fourth")

# The manual, rule by rule: RULES[stage][display] = (what, value). "position"/"label" name a fixed position or
# label; "position of"/"label of" name the position or label pressed in an earlier stage.
RULES: dict[int, dict[int, tuple[str, int]]] = {
    1: {1: ("position", 2), 2: ("position", 2), 3: ("position", 3), 4: ("position", 4)},
    2: {1: ("label", 4), 2: ("position of", 1), 3: ("position", 1), 4: ("position of", 1)},
    3: {1: ("label of", 2), 2: ("label of", 1), 3: ("position", 3), 4: ("label", 4)},
    4: {1: ("position of", 1), 2: ("position", 1), 3: ("position of", 2), 4: ("position of", 2)},
    5: {1: ("label of", 1), 2: ("label of", 2), 3: ("label of", 4), 4: ("label of", 3)},
}


class Press(NamedTuple):
    """One press of a run: the button's position (1-4, left to right) and its label."""

    position: int
    label: int


def needed_stage(stage: int, display: int) -> int | None:
    """The earlier stage whose press the rule for ``stage`` and ``display`` refers to (None: no earlier one)."""
    what, value = RULES[stage][display]
    return value if what.endswith(" of") else None


def correct_position(stage: int, display: int, labels: Sequence[int], earlier: Mapping[int, Press]) -> int:
    """The 1-based position the manual says to press; ``earlier`` maps earlier stages to their presses."""
    what, value = RULES[stage][display]
    if what == "position":
        return value
    if what == "label":
        return list(labels).index(value) + 1
    if what == "position of":
        return earlier[value].position
    return list(labels).index(earlier[value].label) + 1


def new_stages(r: random.Random) -> list[dict[str, Any]]:
    """Five stages of a display (1-4) and four labels (a permutation of 1-4), as KTANE draws them."""
    return [{"display": r.randint(1, 4), "labels": r.sample(LABELS, 4)} for _ in range(STAGES)]


def check_stages(stages: Any) -> list[dict[str, Any]]:
    """``stages`` as five display/labels pairs; ValueError naming the field otherwise."""
    if not isinstance(stages, list) or len(stages) != STAGES:
        raise ValueError(f"stages: a list of {STAGES} stages expected, got {stages!r:.80}")
    for k, stage in enumerate(stages):
        display = stage.get("display") if isinstance(stage, Mapping) else None
        if isinstance(display, bool) or display not in LABELS:  # True == 1 in Python: not a display
            raise ValueError(f"stages[{k}].display: 1-4 expected, got {stage!r:.60}")
        labels = stage.get("labels")
        if not isinstance(labels, list) or sorted(labels) != list(LABELS) or any(isinstance(x, bool) for x in labels):
            raise ValueError(f"stages[{k}].labels: a permutation of 1, 2, 3, 4 expected, got {labels!r:.60}")
    return [{"display": int(s["display"]), "labels": [int(x) for x in s["labels"]]} for s in stages]


class MemoryPuzzle(Puzzle):
    """Five stages of one press each; a wrong press starts over with new stages."""

    name = "memory"
    title = "Memory"
    categories = (MEMORY, REASONING)
    multi_step = True

    def __init__(self, instance: Mapping[str, Any], seed: int) -> None:
        super().__init__(instance, seed)
        self.stages = check_stages(instance.get("stages"))
        self.pressed: list[Press] = []  # the presses of this run (since the start or the last reset)
        self.best = 0  # the most stages completed in any run

    @classmethod
    def generate(cls, r: random.Random, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"stages": new_stages(r)}

    # ---- playing ----------------------------------------------------------------------------------------
    @property
    def stage(self) -> int:
        """The stage being played, 1-5 (6 once solved)."""
        return len(self.pressed) + 1

    def _now(self) -> dict[str, Any]:
        return self.stages[min(self.stage, STAGES) - 1]

    def _correct(self) -> int:
        now = self._now()
        earlier = dict(enumerate(self.pressed, start=1))
        return correct_position(self.stage, now["display"], now["labels"], earlier)

    def actions(self) -> list[str]:
        return [f"Press position {k}" for k in range(1, 5)]

    def act(self, action: str) -> Step:
        position = int(action.rsplit(" ", 1)[1])
        label = self._now()["labels"][position - 1]
        if position != self._correct():
            self.stages, self.pressed = new_stages(self.random), []
            return Step(
                "mistake",
                f"You pressed position {position} (label {label}): wrong, a strike. "
                "The module resets to stage 1 with a new display and new labels.",
            )
        self.pressed.append(Press(position, label))
        self.best = max(self.best, len(self.pressed))
        if self.solved:
            return Step("solved", f"You pressed position {position} (label {label}). The module is disarmed.")
        return Step("progress", f"You pressed position {position} (label {label}): correct. Stage {self.stage} begins.")

    @property
    def solved(self) -> bool:
        return len(self.pressed) >= STAGES

    def progress(self) -> float:
        return 100.0 * self.best / STAGES

    def snapshot(self) -> dict[str, Any]:
        now = self._now()
        return {
            "stage": min(self.stage, STAGES),
            "completed": len(self.pressed),
            "display": now["display"],
            "labels": list(now["labels"]),
            "pressed": [p._asdict() for p in self.pressed],
        }

    # ---- the scripted agents ----------------------------------------------------------------------------
    def oracle(self) -> str:
        return f"Press position {self._correct()}"

    def words(self) -> str:
        if self.solved:
            return "The module is disarmed: all five stage lights are on."
        now = self._now()
        labels = ", ".join(str(x) for x in now["labels"])
        return (
            f"Stage {self.stage} of 5. The display shows {now['display']}. "
            f"The four buttons from left to right (positions 1 to 4) are labelled {labels}."
        )

    def describe(self) -> str:
        # what the picture shows, and what a careful solver remembers of this run (the picture does not show it)
        if self.solved:
            return self.words()
        if not self.pressed:
            return f"{self.words()} I have pressed nothing yet in this run."
        done = "; ".join(f"stage {k} position {p.position} (label {p.label})" for k, p in enumerate(self.pressed, 1))
        return f"{self.words()} Earlier in this run I pressed: {done}."

    @classmethod
    def advise(cls, said: Sequence[str]) -> str:
        views = [read_description(text) for text in said]
        if not views or views[-1] is None:
            return (
                "Tell me the stage (1-5), the number on the display, and the labels of the four buttons from "
                "left to right."
            )
        stage, display, labels, earlier = views[-1]
        earlier = {**recalled(views), **earlier}
        needed = needed_stage(stage, display)
        if needed is not None and needed not in earlier:
            return f"Which button did you press in stage {needed}: its position and its label?"
        position = correct_position(stage, display, labels, earlier)
        label = labels[position - 1]
        return (
            f"Stage {stage}, display {display}: {rule_words(stage, display)}. That is the button in position "
            f"{position}, labelled {label}. Remember it.\n{DO}Press position {position}"
        )

    @classmethod
    def draw(cls, snapshot: Mapping[str, Any], highlight: str | None = None) -> Image.Image:
        image = Image.new("RGB", (560, 440), (62, 66, 72))
        draw = ImageDraw.Draw(image)
        _draw_display(draw, int(snapshot["display"]))
        _draw_stage_lights(draw, int(snapshot["stage"]), int(snapshot.get("completed", 0)))
        for k, label in enumerate(snapshot["labels"], start=1):
            _draw_button(draw, k, int(label), highlight == f"Press position {k}")
        return image


# ---- the manual expert's reading ---------------------------------------------------------------------------
Description = tuple[int, int, list[int], dict[int, Press]]


def read_description(text: str) -> Description | None:
    """(stage, display, labels, presses it states) from a solver's description; None when it is not one."""
    stage = re.search(r"\bstage ([1-5]) of 5\b", text, re.IGNORECASE)
    display = re.search(r"display shows ([1-4])\b", text, re.IGNORECASE)
    labels = re.search(r"labell?ed ([1-4]), ([1-4]), ([1-4]),? (?:and )?([1-4])\b", text, re.IGNORECASE)
    if not (stage and display and labels) or sorted(labels.groups()) != ["1", "2", "3", "4"]:
        return None
    stated = re.findall(r"\bstage ([1-5]) position ([1-4]) \(label ([1-4])\)", text, re.IGNORECASE)
    presses = {int(s): Press(int(p), int(lab)) for s, p, lab in stated}
    return int(stage.group(1)), int(display.group(1)), [int(x) for x in labels.groups()], presses


def recalled(views: Sequence[Description | None]) -> dict[int, Press]:
    """The presses of the current run worked out from the descriptions of its earlier stages: the latest run
    of consecutive stages 1, 2, .. ending at the last description (the expert's own memory of the talk)."""
    chain: list[Description] = []
    for view in reversed(views):
        if view is None:
            continue
        if not chain or view[0] == chain[-1][0] - 1:
            chain.append(view)
        if chain[-1][0] == 1:
            break
    if not chain or chain[-1][0] != 1:
        return {}
    presses: dict[int, Press] = {}
    for stage, display, labels, _ in reversed(chain[1:]):
        position = correct_position(stage, display, labels, presses)
        presses[stage] = Press(position, labels[position - 1])
    return presses


def rule_words(stage: int, display: int) -> str:
    """The manual's rule for ``stage`` and ``display``, in its words."""
    what, value = RULES[stage][display]
    if what == "position":
        return f"press the button in the {ORDINALS[value - 1]} position"
    if what == "label":
        return f'press the button labeled "{value}"'
    if what == "position of":
        return f"press the button in the same position as you pressed in stage {value}"
    return f"press the button with the same label you pressed in stage {value}"


# ---- the picture -----------------------------------------------------------------------------------------
BUTTON_W, BUTTON_GAP, BUTTON_TOP = 96, 16, 250


def _draw_display(draw: ImageDraw.ImageDraw, display: int) -> None:
    draw.rectangle((24, 24, 440, 210), fill=(30, 30, 30))
    draw.rectangle((120, 50, 344, 186), fill=(24, 70, 40), outline=(10, 10, 10), width=4)
    draw.text((232, 118), str(display), fill=(210, 255, 210), font=mono_font(96), anchor="mm")
    draw.text((32, 30), "DISPLAY", fill=(200, 200, 200), font=text_font(20))


def _draw_stage_lights(draw: ImageDraw.ImageDraw, stage: int, completed: int) -> None:
    """Five lights, bottom to top, lit green for the stages completed; the current stage named in words."""
    draw.rectangle((456, 24, 536, 210), fill=(30, 30, 30))
    for k in range(1, STAGES + 1):
        y = 210 - k * 34 + 6
        lit = k <= completed
        draw.rectangle((472, y, 520, y + 22), fill=(40, 210, 70) if lit else (70, 70, 70), outline=(0, 0, 0))
    words = "DISARMED" if completed >= STAGES else f"STAGE {stage} OF 5"
    draw.text((280, 410), words, fill=(255, 255, 255), font=text_font(26), anchor="mm")


def _draw_button(draw: ImageDraw.ImageDraw, position: int, label: int, marked: bool) -> None:
    x0 = 64 + (position - 1) * (BUTTON_W + BUTTON_GAP)
    box = (x0, BUTTON_TOP, x0 + BUTTON_W, BUTTON_TOP + 110)
    if marked:
        draw.rectangle((box[0] - 8, box[1] - 8, box[2] + 8, box[3] + 8), outline=(255, 140, 0), width=6)
    draw.rectangle(box, fill=(214, 200, 160), outline=(20, 20, 20), width=3)
    draw.text(((box[0] + box[2]) // 2, BUTTON_TOP + 55), str(label), fill=(20, 20, 20), font=mono_font(64), anchor="mm")
    draw.text(
        ((box[0] + box[2]) // 2, BUTTON_TOP + 130),
        f"position {position}",
        fill=(190, 190, 190),
        font=text_font(20),
        anchor="mm",
    )
