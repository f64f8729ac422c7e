"""Structure generation (appendix B.3): heights, tiling, tiers, buildability and files."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from simlab.core.errors import FormatError
from simlab.worlds.blocks.family import REFERENCE_DOMINOES
from simlab.worlds.blocks.generator import (
    INDEX_FILE,
    OPTIONAL_CELLS,
    REQUIRED_CELLS,
    TIER_SHARES,
    Structure,
    build_order,
    generate_structure,
    generate_structures,
    load_structures,
    save_structures,
    tier_of,
)
from simlab.worlds.blocks.model import Board

STRUCTURES = generate_structures(100, 0)


def test_ids_and_determinism() -> None:
    assert [s.id for s in STRUCTURES[:3]] == ["structure_000", "structure_001", "structure_002"]
    assert generate_structures(100, 0) == STRUCTURES
    assert generate_structure(0, 42) == STRUCTURES[42]
    assert generate_structures(5, 1) != STRUCTURES[:5]


def test_heights() -> None:
    interior = Counter()
    for s in STRUCTURES:
        assert all(s.board.height(c) == 3 for c in REQUIRED_CELLS)
        for cell in OPTIONAL_CELLS:
            assert s.board.height(cell) in (0, 1, 2)
            interior[s.board.height(cell)] += 1
    assert set(interior) == {0, 1, 2}


def test_totals_and_tiers() -> None:
    totals = [s.board.block_count() for s in STRUCTURES]
    assert min(totals) >= 21 and max(totals) <= 25
    for s, total in zip(STRUCTURES, totals, strict=True):
        assert total == 21 + sum(s.board.height(c) for c in OPTIONAL_CELLS)
        assert s.tier == tier_of(total)
    assert set(Counter(s.tier for s in STRUCTURES)) == {"simple", "medium", "complex"}


@pytest.mark.parametrize(
    ("count", "tier"), [(21, "simple"), (22, "simple"), (23, "medium"), (24, "medium"), (25, "complex")]
)
def test_tier_of(count: int, tier: str) -> None:
    assert tier_of(count) == tier


def test_tiling_uses_dominoes_and_avoids_most_repeats() -> None:
    large = sum(p.large for s in STRUCTURES for p in s.board.pieces())
    assert large > 100  # roughly a third of the cells pair up
    repeats = sum(
        s.board.codes(c)[k] == s.board.codes(c)[k + 1] for s in STRUCTURES for c in REQUIRED_CELLS for k in range(2)
    )
    assert repeats < 0.05 * 100 * len(REQUIRED_CELLS) * 2


def test_every_structure_builds_layer_by_layer() -> None:
    for s in STRUCTURES:
        board = Board()
        moves = build_order(s)
        assert [m.layer for m in moves] == sorted(m.layer for m in moves)
        for move in moves:
            result = board.apply(move)
            assert result.ok, (s.id, move.describe(), result.message)
        assert board == s.board


def test_json_round_trip() -> None:
    s = STRUCTURES[7]
    data = json.loads(json.dumps(s.to_json()))
    assert data["blocks"] == s.board.block_count() and data["id"] == s.id
    assert Structure.from_json(data) == s


def test_save_and_load(tmp_path: Path) -> None:
    index = save_structures(STRUCTURES[:4], tmp_path, seed=0)
    meta = json.loads(index.read_text())
    assert meta == {
        "format": "simlab.blocks.structures",
        "version": 1,
        "seed": 0,
        "structures": [s.id for s in STRUCTURES[:4]],
    }
    assert load_structures(tmp_path) == STRUCTURES[:4]
    assert load_structures(index) == STRUCTURES[:4]
    assert load_structures(tmp_path / "structure_002.json") == [STRUCTURES[2]]
    (tmp_path / INDEX_FILE).unlink()
    assert load_structures(tmp_path) == STRUCTURES[:4]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"id": 3}, "'id'"),
        ({"blocks": 99}, "'blocks'"),
        ({"tier": "complex"}, "'tier'"),
        ({"board": {"stacks": {"0,0": ["zz"]}}}, "'board'"),
    ],
)
def test_load_names_file_and_field(tmp_path: Path, change: dict, message: str) -> None:
    path = tmp_path / "structure_000.json"
    header = {"format": "simlab.blocks.structure", "version": 1}
    path.write_text(json.dumps({**header, **STRUCTURES[0].to_json(), **change}))
    with pytest.raises(FormatError, match=message) as info:
        load_structures(path)
    assert "structure_000.json" in str(info.value)


def test_load_missing_and_broken_files(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="not found"):
        load_structures(tmp_path / "nope.json")
    (tmp_path / "structure_000.json").write_text("{")
    with pytest.raises(FormatError, match="line 1 column 2"):
        load_structures(tmp_path)
    (tmp_path / INDEX_FILE).write_text(
        json.dumps({"format": "simlab.blocks.structures", "version": 1, "structures": ["x"]})
    )
    with pytest.raises(FormatError, match=r"x\.json"):
        load_structures(tmp_path)
    (tmp_path / INDEX_FILE).write_text(json.dumps({"format": "simlab.blocks.structures", "version": 9}))
    with pytest.raises(FormatError, match="newer"):
        load_structures(tmp_path)


def test_generation_is_identical_across_processes_with_different_hash_seeds() -> None:
    code = (
        "import hashlib, json; from simlab.worlds.blocks.generator import generate_structures; "
        "print(hashlib.sha256(json.dumps([s.to_json() for s in generate_structures(100, 0)]).encode()).hexdigest())"
    )
    root = Path(__file__).resolve().parents[2]
    digests = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=root,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("0", "12345")
    }
    here = hashlib.sha256(json.dumps([s.to_json() for s in generate_structures(100, 0)]).encode()).hexdigest()
    assert digests == {here}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generated_structures_lay_dominoes_and_tiers_as_crafts_published_set(seed):
    """CRAFT's published 100 hold 11.7 large-block cells per structure (sd 2.9) and 29 / 52 / 19 simple /
    medium / complex: 100 generated ones agree within three standard errors of a sample of 100."""
    structures = generate_structures(100, seed)
    cells = [2 * sum(p.large for p in s.board.pieces()) for s in structures]
    assert abs(sum(cells) / len(cells) - REFERENCE_DOMINOES) <= 3 * 2.9 / 10
    for tier, share in TIER_SHARES.items():
        p = share / 100
        assert abs(sum(s.tier == tier for s in structures) / 100 - p) <= 3 * (p * (1 - p) / 100) ** 0.5, tier
