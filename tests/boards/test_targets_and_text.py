"""Target boards (the generator, the paper's proportions, the reference's sb_so files) and the exact text
renderings (layered listing, difference grid)."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from simlab.core.errors import FormatError
from simlab.worlds import get_family
from simlab.worlds.boards.clembench import read_targets
from simlab.worlds.boards.metrics import failure_types, progress
from simlab.worlds.boards.model import Board, Placement, build
from simlab.worlds.boards.targets import PAPER_COUNTS, Target, component_counts, generate_targets
from simlab.worlds.boards.text import difference_grid, listing


def board_of(*calls: tuple[str, str, int, int]) -> Board:
    return build([Placement(*c) for c in calls])


def test_listing_is_exactly_the_reference_shape():
    board = board_of(("washer", "yellow", 7, 3), ("nut", "green", 7, 4), ("bridge-h", "blue", 7, 3))
    assert listing(board) == (
        "Grid levels (bottom to top):\n"
        "Level 1:\n"
        "\trow: 7, col: 3: {'shapes': ['washer'], 'colors': ['yellow']}\n"
        "\trow: 7, col: 4: {'shapes': ['nut'], 'colors': ['green']}\n"
        "Level 2:\n"
        "\trow: 7, col: 3: {'shapes': ['bridge-h-left'], 'colors': ['blue']}\n"
        "\trow: 7, col: 4: {'shapes': ['bridge-h-right'], 'colors': ['blue']}"
    )
    assert listing(Board()) == "Empty: no pieces on the board."  # the reference prints None


def test_difference_grid_marks_identical_expected_missing_and_extra():
    target = board_of(("washer", "yellow", 7, 3), ("nut", "green", 7, 4), ("bridge-h", "blue", 7, 3))
    current = board_of(("washer", "yellow", 7, 3), ("washer", "red", 7, 4), ("nut", "red", 1, 1))
    assert difference_grid(target, current) == (
        "Differences between target grid and player's grid (bottom to top):\n"
        "Level 1:\n"
        "\trow: 1, col: 1:\n"
        "\t\t- Extra: {'shapes': ['nut'], 'colors': ['red']}\n"
        "\trow: 7, col: 3: Identical\n"
        "\trow: 7, col: 4:\n"
        "\t\t- Expected: {'shapes': ['nut'], 'colors': ['green']}\n"
        "\t\t- Current Status: {'shapes': ['washer'], 'colors': ['red']}\n"
        "Level 2:\n"
        "\trow: 7, col: 3:\n"
        "\t\t- Missing: {'shapes': ['bridge-h-left'], 'colors': ['blue']}\n"
        "\trow: 7, col: 4:\n"
        "\t\t- Missing: {'shapes': ['bridge-h-right'], 'colors': ['blue']}"
    )


def test_495_targets_have_the_papers_proportions_and_are_valid_and_seeded():
    targets = generate_targets(495, seed=7)
    assert Counter(t.components for t in targets) == PAPER_COUNTS
    for t in targets:
        assert Target.from_json(t.to_json()) == t  # valid under the rules and round-trips
        assert len(t.board().cells()) >= 1
    assert [t.to_json() for t in generate_targets(20, seed=7)] == [t.to_json() for t in targets[:20]]
    assert generate_targets(20, seed=8)[0].to_json() != targets[0].to_json()


def test_every_prefix_keeps_the_proportions_closely():
    counts = component_counts(495)
    for n in (10, 50, 100, 250):
        seen = Counter(counts[:n])
        for k, weight in PAPER_COUNTS.items():
            assert abs(seen[k] - n * weight / 495) < 1.5


def test_groups_restrict_the_component_counts():
    targets = generate_targets(12, seed=0, groups=("2", "5"))
    assert {t.components for t in targets} == {2, 5}


SB_SO = {
    "simple": {
        "simple": {
            "2": {
                "bvs": [
                    {
                        "combo_name": "bvs",
                        "shapes": ["bridge-v", "screw"],
                        "colors": ["green", "yellow"],
                        "x": [5, 5],
                        "y": [3, 3],
                        "rows": 8,
                        "cols": 8,
                    }
                ]
            },
            "5": {
                "bvbvbhns": [
                    {
                        "combo_name": "bvbvbhns",
                        "shapes": ["bridge-v", "bridge-v", "bridge-h", "nut", "screw"],
                        "colors": ["yellow", "yellow", "blue", "red", "yellow"],
                        "x": [7, 7, 7, 7, 7],
                        "y": [6, 7, 6, 6, 6],
                        "rows": 8,
                        "cols": 8,
                    }
                ]
            },
        }
    }
}


def test_reference_target_files_are_read_and_play(tmp_path):
    path = tmp_path / "sb_so_test.json"
    path.write_text(json.dumps(SB_SO))
    targets = read_targets(path)
    assert [t.id for t in targets] == ["bvs_000", "bvbvbhns_000"]
    assert [t.combo for t in targets] == ["bvs", "bvbvbhns"]
    assert listing(targets[1].board()).count("bridge-v-top") == 2
    assert get_family("boards").tasks.load(path) == [t.to_json() for t in targets]


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda s: s["simple"]["simple"]["2"]["bvs"][0].update(x=[5]), "simple.simple.2.bvs[0]"),
        (lambda s: s["simple"]["simple"]["2"]["bvs"][0].update(colors=["green", "green"]), "simple.simple.2.bvs[0]"),
        (lambda s: s["simple"]["simple"]["2"]["bvs"][0].update(x=[5, "5"]), "simple.simple.2.bvs[0]"),
        (lambda s: s["simple"]["simple"].update({"3": []}), "simple.simple.3"),
    ],
)
def test_bad_reference_files_name_the_sample(tmp_path, change, where):
    data = json.loads(json.dumps(SB_SO))
    change(data)
    path = tmp_path / "sb_so_bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(FormatError, match=re.escape(f"sb_so_bad.json, {where}")):
        read_targets(path)


def test_failure_types_and_progress():
    target = board_of(("washer", "red", 2, 2), ("nut", "blue", 2, 2), ("screw", "green", 5, 5))
    assert not any(failure_types(target.copy(), target).values())
    assert progress(target.copy(), target)["match"] == 1.0
    swapped = board_of(("nut", "blue", 2, 2), ("washer", "red", 2, 2), ("screw", "green", 5, 5))
    assert failure_types(swapped, target)["order"]
    moved = board_of(("washer", "red", 2, 2), ("nut", "blue", 2, 2), ("screw", "green", 5, 6))
    assert failure_types(moved, target) == {
        "location": True,
        "extra": False,
        "missing": False,
        "colour": False,
        "order": False,
    }
    recoloured = board_of(("washer", "red", 2, 2), ("nut", "yellow", 2, 2), ("screw", "green", 5, 5))
    flags = failure_types(recoloured, target)
    assert flags["colour"] and flags["extra"] and flags["missing"] and not flags["location"]
    short = board_of(("washer", "red", 2, 2), ("nut", "blue", 2, 2))
    assert failure_types(short, target)["missing"] and not failure_types(short, target)["extra"]
    assert progress(short, target)["correct_pieces"] == pytest.approx(2 / 3)
