"""The Password puzzle (KTANE's "Passwords"): five letter positions, each with an up and a down button that
cycle through its letters, and a submit button. Exactly one word of the manual's list can be formed from the
letters the positions offer; set it and submit. One step: submitting the password solves it, submitting any
other word is a mistake (the letters stay as they are); cycling letters is never a mistake.

Ours, where the paper is silent: each position cycles through 3 letters (our reading of the manual's "each
cycle will have 3 consecutive letters": three letters that follow one another in the cycle, in any order of
the alphabet; KTANE has six), Up showing the next letter of the cycle and Down the previous one; the other two
letters of each position are drawn at random until no other listed word can be formed; the module never
starts showing the password. A careful solver remembers the letters it has seen one Up or one Down away from
each position's current letter, and says so when describing the module (the environment's feedback told it).
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from PIL import Image, ImageDraw

from simlab.render.images import draw_centred, text_font
from simlab.worlds.puzzles.puzzle import DO, GROUNDING, REASONING, Puzzle, Step

WORDS = tuple(
    "about after again below could every first found great house large learn never other place plant point "
    "right small sound spell still study their there these thing think three water where which world would "
    "write".upper().split()
)
"""The manual's 35 words."""
LENGTH, CYCLE = 5, 3
UNSEEN = "not seen yet"


def formable(letters: Sequence[Sequence[str]]) -> list[str]:
    """The listed words the positions' letters can spell."""
    return [w for w in WORDS if all(c in options for c, options in zip(w, letters, strict=True))]


class PasswordPuzzle(Puzzle):
    """Set the one listed word the letters can spell, then submit."""

    name = "password"
    title = "Password"
    categories = (GROUNDING, REASONING)
    multi_step = False

    def __init__(self, instance: Mapping[str, Any], seed: int) -> None:
        super().__init__(instance, seed)
        letters, start = instance.get("letters"), instance.get("start")
        if not _letters_ok(letters):
            raise ValueError(f"letters: five lists of three different capital letters expected, got {letters!r:.80}")
        if not isinstance(start, list) or len(start) != LENGTH or any(_not_index(i) for i in start):
            raise ValueError(f"start: five indices 0-2 (each position's first letter) expected, got {start!r:.60}")
        words = formable(letters)
        if len(words) != 1:
            raise ValueError(f"letters: exactly one listed word must be formable, these are: {words}")
        self.letters: list[list[str]] = [list(options) for options in letters]
        self.answer = words[0]
        self.shown = list(start)
        self.seen = [{i} for i in start]  # cycle indices the solver has seen at each position
        self.submitted: list[str] = []

    @classmethod
    def generate(cls, r: random.Random, options: Mapping[str, Any]) -> dict[str, Any]:
        answer = r.choice(WORDS)
        while True:
            letters = [_cycle(r, c) for c in answer]
            if formable(letters) == [answer]:
                break
        while True:  # a module that starts showing the password asks nothing of the players
            start = [r.randrange(CYCLE) for _ in range(LENGTH)]
            if _spelled(letters, start) != answer:
                return {"letters": letters, "start": start}

    def actions(self) -> list[str]:
        return [f"Up {k}" for k in range(1, 6)] + [f"Down {k}" for k in range(1, 6)] + ["Submit"]

    def act(self, action: str) -> Step:
        if action == "Submit":
            return self._submit()
        direction, k = action.split()
        i = int(k) - 1
        self.shown[i] = (self.shown[i] + (1 if direction == "Up" else -1)) % CYCLE
        self.seen[i].add(self.shown[i])
        return Step("nothing", f"Position {k} now shows {self.letters[i][self.shown[i]]}.")

    def _submit(self) -> Step:
        word = self.word
        self.submitted.append(word)
        if word == self.answer:
            return Step("solved", f"You submitted {word}. The module is disarmed.")
        return Step("mistake", f"You submitted {word}, which is not the password: a strike.")

    @property
    def word(self) -> str:
        """The word the positions show now."""
        return _spelled(self.letters, self.shown)

    @property
    def solved(self) -> bool:
        return self.answer in self.submitted

    def snapshot(self) -> dict[str, Any]:
        return {
            "letters": list(self.word),
            "after_up": [self._remembered(i, +1) for i in range(LENGTH)],
            "after_down": [self._remembered(i, -1) for i in range(LENGTH)],
            "solved": self.solved,
        }

    def _remembered(self, i: int, step: int) -> str:
        """The letter one press away at position ``i``, when the solver has seen it; "" when not."""
        index = (self.shown[i] + step) % CYCLE
        return self.letters[i][index] if index in self.seen[i] else ""

    def oracle(self) -> str:
        for i, wanted in enumerate(self.answer):
            if self.letters[i][self.shown[i]] != wanted:
                up = self.letters[i][(self.shown[i] + 1) % CYCLE] == wanted
                return f"{'Up' if up else 'Down'} {i + 1}"
        return "Submit"

    def describe(self) -> str:
        shot = self.snapshot()
        parts = [f"The five letters read {' '.join(shot['letters'])} (positions 1 to 5)."]
        for k, (now, up, down) in enumerate(zip(shot["letters"], shot["after_up"], shot["after_down"], strict=True)):
            parts.append(f"Position {k + 1} shows {now} (after Up: {up or UNSEEN}; after Down: {down or UNSEEN}).")
        return " ".join(parts)

    def words(self) -> str:
        """The picture shows only the five letters now; the letters cycled past are the solver's memory."""
        return f"The five letters read {' '.join(self.snapshot()['letters'])} (positions 1 to 5)."

    @classmethod
    def advise(cls, said: Sequence[str]) -> str:
        heard = _heard_positions(said)
        if len(heard) < LENGTH:
            return (
                "Tell me the letter each of the five positions shows, and for each the letters one Up and one Down "
                "press away if you have seen them."
            )
        candidates = [w for w in WORDS if all(_may_show(c, slots) for c, slots in zip(w, heard, strict=True))]
        if len(candidates) == 1:
            moves = [_move(k, c, slots) for k, (c, slots) in enumerate(zip(candidates[0], heard, strict=True), 1)]
            if None not in moves:
                lines = "\n".join(f"{DO}{m}" for m in [*moves, "Submit"] if m)
                return f"The password is {candidates[0].lower()}. Set it and submit.\n{lines}"
        explore = "\n".join(f"{DO}Up {k}" for k, slots in enumerate(heard, 1) if None in slots)
        if not explore:
            return "No single word of my list fits those letters. Please check each position again."
        return f"Press Up once at each position still hiding a letter, then tell me everything again.\n{explore}"

    @classmethod
    def draw(cls, snapshot: Mapping[str, Any], highlight: str | None = None) -> Image.Image:
        image = Image.new("RGB", (WIDTH, HEIGHT), (62, 66, 72))
        draw = ImageDraw.Draw(image)
        for k, letter in enumerate(snapshot["letters"], start=1):
            draw.rectangle(letter_box(k), fill=SCREEN, outline=(20, 40, 20), width=3)
            draw_centred(draw, letter_box(k), str(letter), text_font(64), (15, 30, 15))
            for direction in ("Up", "Down"):
                _arrow_button(draw, f"{direction} {k}", highlight)
            draw_centred(draw, (letter_box(k)[0], 300, letter_box(k)[2], 326), str(k), text_font(22), (230, 230, 230))
        draw.rectangle(SUBMIT_BOX, fill=(200, 200, 200), outline=(40, 40, 40), width=3)
        draw_centred(draw, SUBMIT_BOX, "SUBMIT", text_font(30), (20, 20, 20))
        if highlight == "Submit":
            _mark(draw, SUBMIT_BOX)
        return image


WIDTH, HEIGHT = 560, 440
SCREEN, HIGHLIGHT = (150, 200, 120), (255, 140, 0)
SUBMIT_BOX = (180, 350, 380, 410)


def letter_box(k: int) -> tuple[int, int, int, int]:
    """Where position ``k``'s (1-5) letter is drawn."""
    x = 80 + (k - 1) * 100
    return (x - 40, 110, x + 40, 210)


def button_box(action: str) -> tuple[int, int, int, int]:
    """Where the button of ``action`` ("Up k", "Down k" or "Submit") is drawn."""
    if action == "Submit":
        return SUBMIT_BOX
    direction, k = action.split()
    x0, _, x1, _ = letter_box(int(k))
    y0 = 40 if direction == "Up" else 230
    return (x0 + 4, y0, x1 - 4, y0 + 56)


def _arrow_button(draw: ImageDraw.ImageDraw, action: str, highlight: str | None) -> None:
    x0, y0, x1, y1 = box = button_box(action)
    draw.rectangle(box, fill=(200, 200, 200), outline=(40, 40, 40), width=3)
    cx = (x0 + x1) / 2
    tip, base = (y0 + 12, y1 - 12) if action.startswith("Up") else (y1 - 12, y0 + 12)
    draw.polygon([(cx, tip), (cx - 20, base), (cx + 20, base)], fill=(20, 20, 20))
    if highlight == action:
        _mark(draw, box)


def _mark(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int]) -> None:
    draw.rectangle((box[0] - 6, box[1] - 6, box[2] + 6, box[3] + 6), outline=HIGHLIGHT, width=5)


def _letters_ok(letters: object) -> TypeGuard[list[list[str]]]:
    if not isinstance(letters, list) or len(letters) != LENGTH:
        return False
    return all(
        isinstance(options, list)
        and len(options) == CYCLE
        and all(isinstance(c, str) and len(c) == 1 and c in string.ascii_uppercase for c in options)
        and len(set(options)) == CYCLE
        for options in letters
    )


def _not_index(i: Any) -> bool:
    return type(i) is not int or not 0 <= i < CYCLE  # JSON's true and 1.0 are not indices


def _cycle(r: random.Random, wanted: str) -> list[str]:
    """Three letters in cycle order, one of them ``wanted``."""
    letters = [wanted, *r.sample([c for c in string.ascii_uppercase if c != wanted], CYCLE - 1)]
    r.shuffle(letters)
    return letters


def _spelled(letters: Sequence[Sequence[str]], shown: Sequence[int]) -> str:
    return "".join(options[i] for options, i in zip(letters, shown, strict=True))


Slots = tuple[str, str | None, str | None]
"""What the solver said of one position: the letter now, one Up away, one Down away (None: not seen)."""


def _may_show(c: str, slots: Slots) -> bool:
    """Whether the position could show ``c``: a letter seen there, or a slot not seen yet."""
    return c in slots or None in slots


def _move(k: int, c: str, slots: Slots) -> str | None:
    """The press that sets position ``k`` to ``c`` ("" for none); None when it is not known yet."""
    now, up, down = slots
    if c == now:
        return ""
    if c in (up, down):
        return f"{'Up' if c == up else 'Down'} {k}"
    if (up is None) != (down is None):  # the one slot not seen holds ``c``
        return f"{'Up' if up is None else 'Down'} {k}"
    return None


def _heard_positions(said: Sequence[str]) -> list[Slots]:
    """Each position's letters as the solver last described them ([] when it has not described all five)."""
    found: dict[int, Slots] = {}
    pattern = r"Position ([1-5]) shows ([A-Z]) \(after Up: ([A-Z]|not seen yet); after Down: ([A-Z]|not seen yet)\)"
    for text in said:
        for k, now, up, down in re.findall(pattern, text, re.IGNORECASE):
            found[int(k)] = (now.upper(), _letter(up), _letter(down))
    return [found[k] for k in range(1, LENGTH + 1)] if len(found) == LENGTH else []


def _letter(text: str) -> str | None:
    return None if text.lower() == UNSEEN else text.upper()
