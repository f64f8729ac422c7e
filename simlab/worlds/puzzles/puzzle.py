"""What one COMMA puzzle is: the contract every puzzle module fills, and the registry of the ten.

A puzzle module (``simlab/worlds/puzzles/NAME.py``) defines one :class:`Puzzle` subclass: how an instance is
generated from a seeded ``random.Random``, the legal actions by exact name, what each action does (progress,
a mistake, solved; exactly as the manual says), the partial progress 0-100, a JSON snapshot of what the module
shows now, the picture of that snapshot, the exact next correct action (for the oracle expert), what a careful
solver says it sees (for the scripted solver) and how an expert holding only the manual answers such
descriptions (the manual-reading expert). The manual the expert gets is ``prompts/manuals/NAME.txt``.

The game master (``world.py``) knows nothing of any one puzzle: it asks this contract.
"""

from __future__ import annotations

import importlib
import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, ClassVar, Literal

from PIL import Image

StepKind = Literal["progress", "mistake", "solved", "nothing"]

MEMORY, GROUNDING, REASONING, PRIVATE = "memory", "grounding", "multi-step reasoning", "private information"
CATEGORIES = (MEMORY, GROUNDING, REASONING, PRIVATE)
"""The paper's capability categories (section 3.2); a puzzle is in one or two."""


@dataclass(frozen=True)
class Step:
    """What one action did: ``kind`` progress (a correct step), mistake (a strike), solved (the module is
    disarmed), or nothing (a legal action that changes nothing that counts, e.g. turning the maze's mouse);
    ``feedback`` is the environment's words to the solver."""

    kind: StepKind
    feedback: str


class Puzzle(ABC):
    """One puzzle instance being played. Subclasses set the class attributes and implement the methods.

    ``instance`` is the generated JSON (private values included); ``seed`` drives any randomness while
    playing (a module that resets with new colours after a mistake), so an episode replays exactly.
    """

    name: ClassVar[str]
    """The puzzle's id: wire, who, keypad, memory, led, password, color, maze, atm, telehealth."""
    title: ClassVar[str]
    """How the paper names it: "Wire", "Who", "LED"..."""
    categories: ClassVar[tuple[str, ...]]
    multi_step: ClassVar[bool]
    """Multi-step puzzles report partial progress; single-step ones report PSR = SR."""

    def __init__(self, instance: Mapping[str, Any], seed: int) -> None:
        self.instance = dict(instance)
        self.random = random.Random(seed)

    # ---- generation -----------------------------------------------------------------------------------
    @classmethod
    @abstractmethod
    def generate(cls, r: random.Random, options: Mapping[str, Any]) -> dict[str, Any]:
        """A new instance (JSON), every choice drawn from ``r``; it must have exactly one solution path the
        manual determines (or, where the manual allows several correct actions, at least one). ``options``
        are the family's generate options (``telehealth_data``: where the real photos are)."""

    @classmethod
    def validate(cls, instance: Mapping[str, Any]) -> None:
        """ValueError naming the field when ``instance`` is not one this puzzle can play."""
        cls(instance, 0).snapshot()

    # ---- playing ----------------------------------------------------------------------------------------
    @abstractmethod
    def actions(self) -> list[str]:
        """The legal actions now, by exact name (the solver's reply must match one exactly)."""

    @abstractmethod
    def act(self, action: str) -> Step:
        """Do ``action`` (one of :meth:`actions`) and say what it did."""

    @property
    @abstractmethod
    def solved(self) -> bool:
        """Whether the module is disarmed."""

    def progress(self) -> float:
        """Partial progress 0-100 (the paper's PSR for this episode); 100 when solved. Single-step puzzles
        keep this default (0 until solved); multi-step ones say how far the solver got."""
        return 100.0 if self.solved else 0.0

    @abstractmethod
    def snapshot(self) -> dict[str, Any]:
        """What the module shows now, as JSON: enough to draw it (:meth:`draw`) and to describe it."""

    @classmethod
    @abstractmethod
    def draw(cls, snapshot: Mapping[str, Any], highlight: str | None = None) -> Image.Image:
        """The module as the solver sees it; ``highlight`` names an action just taken (drawn marked)."""

    def solver_note(self) -> str:
        """Private facts the solver is told in words (the ATM's PIN); "" for most puzzles."""
        return ""

    def private(self) -> dict[str, str]:
        """Values the solver must not reveal (name -> value as shown); {} for puzzles without private data."""
        return {}

    # ---- the scripted agents ----------------------------------------------------------------------------
    @abstractmethod
    def oracle(self) -> str:
        """The next correct action (for the oracle expert, which knows the instance)."""

    @abstractmethod
    def describe(self) -> str:
        """What a careful solver tells the expert it sees now (and remembers), in plain English, without private
        values: the scripted solver's words (``observation.data["description"]``)."""

    def words(self) -> str:
        """What the module's picture shows now, in words: a text-only model gets this instead of the picture.
        By default :meth:`describe`; a puzzle whose careful description adds what the solver remembers (the
        letters it has cycled past) overrides it, since the picture does not show that."""
        return self.describe()

    @classmethod
    @abstractmethod
    def advise(cls, said: Sequence[str]) -> str:
        """The manual-reading expert's reply to everything the solver said so far (oldest first), from the
        manual's rules alone: an instruction naming the exact action(s) as ``Do: ACTION`` lines, or a question
        when the descriptions do not determine it."""

    @classmethod
    def solver_steps(cls, line: str, note: str) -> list[str]:
        """The actions a solver makes of one ``Do:`` line given what only it knows (``note``: the private facts
        of :meth:`solver_note`): the ATM's "Enter your PIN" becomes the PIN's key presses. By default the
        line is itself an action."""
        return [line]

    @classmethod
    def manual(cls) -> str:
        """The manual text the expert receives (the paper's appendix A; ours where marked)."""
        return resources.files(__package__).joinpath("prompts", "manuals", f"{cls.name}.txt").read_text("utf-8").strip()


DO = "Do: "
"""How the scripted experts name an exact action, one per line, and how the scripted solver finds them."""

PUZZLES: dict[str, str] = {
    "atm": "simlab.worlds.puzzles.atm:AtmPuzzle",
    "telehealth": "simlab.worlds.puzzles.telehealth:TelehealthPuzzle",
    "color": "simlab.worlds.puzzles.color:ColorPuzzle",
    "keypad": "simlab.worlds.puzzles.keypad:KeypadPuzzle",
    "led": "simlab.worlds.puzzles.led:LedPuzzle",
    "maze": "simlab.worlds.puzzles.maze:MazePuzzle",
    "memory": "simlab.worlds.puzzles.memory:MemoryPuzzle",
    "password": "simlab.worlds.puzzles.password:PasswordPuzzle",
    "who": "simlab.worlds.puzzles.who:WhoPuzzle",
    "wire": "simlab.worlds.puzzles.wire:WirePuzzle",
}
"""The ten puzzles in the paper's order of appendix B: name -> ``module:class``."""


def puzzle_class(name: str) -> type[Puzzle]:
    """The puzzle called ``name``; ValueError listing the known ones."""
    if name not in PUZZLES:
        raise ValueError(f"unknown puzzle {name!r}; known: {', '.join(PUZZLES)}")
    module, _, attribute = PUZZLES[name].partition(":")
    found: type[Puzzle] = getattr(importlib.import_module(module), attribute)
    assert issubclass(found, Puzzle) and found.name == name, f"{PUZZLES[name]} is not the {name} puzzle"
    return found
