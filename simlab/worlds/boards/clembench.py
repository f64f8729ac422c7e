"""Read the reference game's target files (clembench ``cocoreconstruct/resources/data/en/sb_so_*.json``).

Their layout is ``{"simple": {"simple": {"2": {combo: [sample, ...]}, "3": ...}}}``; a sample names its
components in parallel lists ``shapes``, ``colors``, ``x``, ``y`` (1-based row and column of each put) on a
``rows`` x ``cols`` board. The reference builds a target by running the sample's Python; we build it from the
component list with our own rules, so a sample that the rules refuse is reported, never run.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simlab.core.errors import FormatError
from simlab.core.reading import read_json
from simlab.worlds.boards.model import Placement, whole
from simlab.worlds.boards.targets import Target

MAX_TARGETS = 100_000


def is_sb_so(data: Any) -> bool:
    """Whether ``data`` has the layout of a reference target file."""
    return isinstance(data, Mapping) and isinstance(data.get("simple"), Mapping)


def read_targets(path: Path, data: Any | None = None) -> list[Target]:
    """Every sample of a reference target file, in file order, as targets with ids ``COMBO_NNN`` (numbered
    per combination); FormatError naming the file, the sample and the field when one cannot be read."""
    data = read_json(path) if data is None else data
    if not is_sb_so(data):
        raise FormatError(path, "top level", 'expected {"simple": {"simple": {"2": {combo: [samples]}}}}')
    out: list[Target] = []
    for family_name, family in data["simple"].items():
        if not isinstance(family, Mapping):
            raise FormatError(path, f"simple.{family_name}", "expected an object of component counts")
        for count, combos in family.items():
            where = f"simple.{family_name}.{count}"
            if not isinstance(combos, Mapping):
                raise FormatError(path, where, "expected an object of combinations")
            for combo, samples in combos.items():
                if not isinstance(samples, list):
                    raise FormatError(path, f"{where}.{combo}", "expected a list of samples")
                for k, sample in enumerate(samples):
                    out.append(_target(path, f"{where}.{combo}[{k}]", f"{combo}_{k:03d}", sample))
                    if len(out) > MAX_TARGETS:
                        raise FormatError(path, where, f"at most {MAX_TARGETS} samples expected")
    return out


def _target(path: Path, where: str, target_id: str, sample: Any) -> Target:
    if not isinstance(sample, Mapping):
        raise FormatError(path, where, "expected a sample object")
    columns = [c for name in ("shapes", "colors", "x", "y") if isinstance(c := sample.get(name), list)]
    if len(columns) != 4 or len({len(c) for c in columns}) != 1:
        raise FormatError(path, where, "expected lists shapes, colors, x and y of the same length")
    try:
        placements = [
            Placement(str(s).lower(), str(c).lower(), whole(x, "x"), whole(y, "y"))
            for s, c, x, y in zip(*columns, strict=True)
        ]
        data = {
            "id": "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in target_id),
            "placements": [p.to_json() for p in placements],
            "rows": whole(sample.get("rows", 8), "rows"),
            "cols": whole(sample.get("cols", 8), "cols"),
            "source": "clembench",
        }
        return Target.from_json(data)
    except ValueError as exc:
        raise FormatError(path, where, str(exc)) from None
