"""Target boards like the paper's test set: one object of 2-5 components, seeded, valid under the rules.

An object is a named combination of components (``w`` washer, ``n`` nut, ``s`` screw, ``bh``/``bv`` bridges:
"bvnbhns" is bridge-v, nut, bridge-h, nut, screw) placed at an anchor (x, y), each component at an offset of 0
or 1 row and column from it, as in the reference's data. A target is its list of placements, built on an empty
board by the rules, so every target is valid and buildable by construction. The paper's 495 test boards hold
30 / 102 / 219 / 144 objects of 2 / 3 / 4 / 5 components; :func:`component_counts` spreads any number of
targets in those proportions, and every prefix of a run keeps them as closely as whole numbers allow.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Any

from simlab.core.seeding import rng
from simlab.core.writing import write_atomic
from simlab.worlds.boards.model import COLOURS, COLS, ROWS, Board, BoardError, Placement, build, put, whole

TOKENS = {"w": "washer", "n": "nut", "s": "screw", "bh": "bridge-h", "bv": "bridge-v"}
TOKEN_OF = {shape: token for token, shape in TOKENS.items()}
PAPER_COUNTS = {2: 30, 3: 102, 4: 219, 5: 144}
"""Objects per component count in the paper's 495 test boards."""
GROUPS = tuple(str(k) for k in PAPER_COUNTS)
TRIES = 200  # objects drawn before giving up on one (a valid one is found within a few in practice)


@dataclass(frozen=True)
class Target:
    """One task: an object of ``len(placements)`` components to build on a ``rows`` x ``cols`` board."""

    id: str
    placements: tuple[Placement, ...]
    rows: int = ROWS
    cols: int = COLS
    source: str = "generated"

    @property
    def components(self) -> int:
        return len(self.placements)

    @property
    def combo(self) -> str:
        """The object's name, e.g. ``bvnbhns``."""
        return "".join(TOKEN_OF[p.shape] for p in self.placements)

    def board(self) -> Board:
        """The target board (BoardError if the placements break a rule)."""
        return build(self.placements, self.rows, self.cols)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "combo": self.combo,
            "components": self.components,
            "rows": self.rows,
            "cols": self.cols,
            "source": self.source,
            "placements": [p.to_json() for p in self.placements],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Target:
        """A target from its JSON; ValueError naming the field when it is malformed or breaks a rule."""
        try:
            placements = tuple(Placement.from_json(p) for p in data["placements"])
            size = whole(data.get("rows", ROWS), "rows"), whole(data.get("cols", COLS), "cols")
            target = cls(str(data["id"]), placements, *size, source=str(data.get("source", "generated")))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"target: {type(exc).__name__}: {exc} (expected id and placements)") from None
        if not placements:
            raise ValueError(f"target {target.id}: placements: at least one component expected")
        if not 2 <= target.rows <= 20 or not 2 <= target.cols <= 20:
            raise ValueError(f"target {target.id}: rows/cols: 2..20 expected, got {target.rows}x{target.cols}")
        try:
            target.board()
        except BoardError as exc:
            raise ValueError(f"target {target.id}: placements cannot be built: {exc.message}") from None
        return target


def component_counts(n: int, weights: Mapping[int, int] = PAPER_COUNTS) -> list[int]:
    """The component count of each of ``n`` targets in the proportions of ``weights`` (the paper's by
    default), interleaved by smooth weighted round robin: 495 targets have exactly 30 / 102 / 219 / 144 and
    every prefix is as close to the proportions as whole numbers allow."""
    total = sum(weights.values())
    credit = dict.fromkeys(weights, 0)
    out = []
    for _ in range(n):
        for k, weight in weights.items():
            credit[k] += weight
        pick = max(credit, key=lambda k: (credit[k], -k))
        credit[pick] -= total
        out.append(pick)
    return out


def generate_target(seed: int, index: int, components: int, rows: int = ROWS, cols: int = COLS) -> Target:
    """Target ``index`` of a run with ``seed``: an object of ``components`` pieces at a random anchor."""
    random = rng(seed, "boards-target", index)
    for _ in range(TRIES):
        placements = _draw_object(random, components, rows, cols)
        if placements is not None:
            return Target(f"board_{index:04d}", tuple(placements), rows, cols)
    raise RuntimeError(f"no valid {components}-component object found in {TRIES} tries")  # never seen


def _draw_object(random: Random, components: int, rows: int, cols: int) -> list[Placement] | None:
    """Components drawn one by one at offsets 0/1 from a random anchor (on a cell already built on more often
    than not), each re-drawn until the rules take it; None when one cannot be placed at all."""
    board = Board(rows, cols)
    x, y = random.randint(1, rows - 2), random.randint(1, cols - 2)
    cells = [(x + dx, y + dy) for dx in (0, 1) for dy in (0, 1)]
    out = []
    for _ in range(components):
        for _attempt in range(30):
            shape = random.choice(list(TOKENS.values()))
            colour = random.choice(COLOURS)
            # cells already built on are likelier, so objects stack like the paper's rather than lie flat
            px, py = random.choices(cells, weights=[1 + 2 * board.height(*c) for c in cells])[0]
            try:
                out.append(put(board, shape, colour, px, py))
                break
            except BoardError:
                continue
        else:
            return None
    return out


def generate_targets(n: int, seed: int, groups: Sequence[str] = ()) -> list[Target]:
    """``n`` targets in the paper's proportions; with ``groups`` (component counts as strings) only those,
    in their proportions to one another."""
    weights = {int(g): PAPER_COUNTS[int(g)] for g in groups} if groups else PAPER_COUNTS
    return [generate_target(seed, index, k) for index, k in enumerate(component_counts(n, weights))]


# ---- files -----------------------------------------------------------------------------------------------
TARGETS_FILE = "targets.json"
TARGETS_FORMAT = "simlab.boards.targets"
TARGETS_VERSION = 1


def save_targets(targets: Sequence[Target], out_dir: Path, **meta: Any) -> Path:
    """``out_dir/targets.json``: ``{"targets": [...], **meta}``."""
    return write_atomic(
        out_dir, TARGETS_FILE, json.dumps({**meta, "targets": [t.to_json() for t in targets]}, indent=1)
    )
