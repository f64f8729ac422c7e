"""The Who puzzle: the manual's two steps case by case, the tables against the manual's text, the picture read
back from its pixels, the manual expert's ceiling with the scripted solver, and the random solver beside the
paper's Random row."""

from __future__ import annotations

import random
import re
from statistics import mean

import pytest

from simlab.render.images import pixels
from simlab.worlds import get_family
from simlab.worlds.puzzles.who import (
    DISPLAY_BOX,
    GROUPS,
    HIGHLIGHT,
    POSITIONS,
    STEP1,
    STEP2,
    WhoPuzzle,
    button_box,
    correct_position,
)
from tests.puzzles.runs import MANUAL, RANDOM, summaries

FAMILY = get_family("puzzles")
GROUP1 = ["READY", "FIRST", "NO", "BLANK", "NOTHING", "YES"]
GROUP2 = ["YOU", "YOU ARE", "YOUR", "YOU'RE", "UR", "U"]


def puzzle(display: str, labels: list[str]) -> WhoPuzzle:
    return WhoPuzzle({"display": display, "labels": labels}, 0)


def test_the_tables_are_the_manuals():
    manual = WhoPuzzle.manual()
    step1 = dict(re.findall(r'^- "([^"]*)": (\w+ \w+)$', manual, re.MULTILINE))
    assert {("" if k == "(No Text)" else k): v.lower() for k, v in step1.items()} == STEP1
    step2 = re.findall(r'^- "([^"]*)": (.+)$', manual.split("Step 2:")[1], re.MULTILINE)
    assert {k: tuple(v.split(", ")) for k, v in step2} == STEP2
    for group in GROUPS:  # each list orders the words of its own group
        assert all(sorted(STEP2[label]) == sorted(group) for label in group)


@pytest.mark.parametrize(
    ("display", "labels", "expected"),
    [
        # "YES" -> read middle left "NO"; NO's list starts BLANK, UHHH...: BLANK is bottom left
        ("YES", ["READY", "FIRST", "NO", "YES", "BLANK", "NOTHING"], "bottom left"),
        # "UR" -> read top left "READY"; READY's list starts YES: middle right
        ("UR", ["READY", "FIRST", "NO", "YES", "BLANK", "NOTHING"], "middle right"),
        # empty -> bottom left "UR"; UR's list starts DONE (absent), U (bottom right)
        ("", GROUP2, "bottom right"),
        # "FIRST" -> top right "YOU ARE"; its list starts YOUR: middle left
        ("FIRST", GROUP2, "middle left"),
        # the label read may be the one to press: "UH HUH" is first on its own list
        ("DISPLAY", ["YOU", "YOU ARE", "YOUR", "YOU'RE", "UR", "UH HUH"], "bottom right"),
        # "BLANK" -> middle right "YES"; YES's list: OKAY, RIGHT, UHHH, MIDDLE (all absent), FIRST: top right
        ("BLANK", ["READY", "FIRST", "NO", "YES", "BLANK", "NOTHING"], "top right"),
    ],
)
def test_step_one_then_step_two(display, labels, expected):
    assert correct_position(display, labels) == expected
    assert puzzle(display, labels).oracle() == f"Press {expected}"


def test_every_display_word_reads_its_position():
    labels = GROUP1
    for display, position in STEP1.items():
        read = labels[POSITIONS.index(position)]
        first = next(w for w in STEP2[read] if w in labels)
        assert correct_position(display, labels) == POSITIONS[labels.index(first)]


def test_the_right_press_solves_and_any_other_is_a_strike_that_changes_nothing():
    game = puzzle("YES", ["READY", "FIRST", "NO", "YES", "BLANK", "NOTHING"])
    assert game.actions() == [f"Press {p}" for p in POSITIONS]
    step = game.act("Press top left")
    assert step.kind == "mistake" and "wrong" in step.feedback
    assert game.actions() == [f"Press {p}" for p in POSITIONS] and game.progress() == 0
    assert game.act("Press top left").kind == "mistake"  # the same wrong button again: another strike
    assert game.act("Press bottom left").kind == "solved" and game.solved and game.progress() == 100


@pytest.mark.parametrize(
    "instance",
    [
        {"display": "HELLO", "labels": GROUP1},
        {"display": None, "labels": GROUP1},
        {"display": "YES", "labels": GROUP1[:5]},
        {"display": "YES", "labels": ["READY"] * 6},
        {"display": "YES", "labels": ["READY", "FIRST", "NO", "BLANK", "NOTHING", "BANANA"]},
        {"display": "YES"},
    ],
)
def test_malformed_instances_are_refused_naming_the_field(instance):
    field = "display" if instance.get("display") != "YES" else "labels"
    with pytest.raises(ValueError, match=field):
        WhoPuzzle.validate(instance)


def test_generated_labels_are_six_of_one_group_and_every_display_occurs():
    displays = set()
    for k in range(300):
        instance = WhoPuzzle.generate(random.Random(k), {})
        displays.add(instance["display"])
        assert len(set(instance["labels"])) == 6
        assert any(set(instance["labels"]) <= set(group) for group in GROUPS)
    assert displays == set(STEP1)


def test_the_words_name_the_display_and_each_label_and_the_expert_reads_them():
    game = puzzle("", ["YOU'RE", "WHAT?", "UH HUH", "UH UH", "YOU ARE", "HOLD"])
    words = game.describe()
    assert "empty" in words and 'middle left "UH HUH"' in words
    assert WhoPuzzle.advise([words]).endswith("Do: Press middle left")
    named = puzzle("BLANK", GROUP1)
    assert 'The display reads "BLANK"' in named.describe()
    assert WhoPuzzle.advise([named.describe()]).endswith("Do: Press middle right")  # BLANK is first on its list


def test_the_expert_asks_for_what_it_still_needs():
    assert "display" in WhoPuzzle.advise([])
    asked = WhoPuzzle.advise(['The display reads "YES".'])
    assert "middle left" in asked and "Do:" not in asked
    partial = WhoPuzzle.advise(['The display reads "YES". The middle left button says "NO".'])
    assert "all six" in partial and "Do:" not in partial
    # the manual's own "(No Text)" is the empty display
    said = 'The display reads "(No Text)". top left "YOU" top right "YOU ARE" middle left "YOUR" middle right '
    said += '"YOU\'RE" bottom left "UR" bottom right "U"'
    assert WhoPuzzle.advise([said]).endswith("Do: Press bottom right")  # UR's list starts DONE, U


def _ink(image, box) -> set:
    return set(pixels(image.crop(box)))


def test_the_picture_shows_the_display_the_labels_and_the_press():
    labels = ["YOU'RE", "WHAT?", "UH HUH", "UH UH", "YOU ARE", "HOLD"]
    empty = WhoPuzzle.draw(puzzle("", labels).snapshot())
    shown = WhoPuzzle.draw(puzzle("YOU", labels).snapshot())
    assert min(empty.size) >= 400
    inside = (DISPLAY_BOX[0] + 4, DISPLAY_BOX[1] + 4, DISPLAY_BOX[2] - 4, DISPLAY_BOX[3] - 4)
    assert len(_ink(empty, inside)) == 1  # nothing written
    assert len(_ink(shown, DISPLAY_BOX)) > 10  # the display's word is drawn
    # a label looks the same at any position, and different labels look different
    moved = WhoPuzzle.draw(puzzle("YOU", labels[::-1]).snapshot())
    assert shown.crop(button_box("top left")).tobytes() == moved.crop(button_box("bottom right")).tobytes()
    crops = {shown.crop(button_box(p)).tobytes() for p in POSITIONS}
    assert len(crops) == 6
    marked = WhoPuzzle.draw(puzzle("YOU", labels).snapshot(), "Press middle right")
    x0, y0, _, y1 = button_box("middle right")
    assert marked.getpixel((x0 - 5, (y0 + y1) // 2)) == HIGHLIGHT
    assert shown.getpixel((x0 - 5, (y0 + y1) // 2)) != HIGHLIGHT
    assert marked.getpixel((button_box("top left")[0] - 5, 175)) != HIGHLIGHT


def test_the_manual_expert_and_the_scripted_solver_solve_every_instance_in_two_turns():
    runs = summaries("who", MANUAL)
    assert all(s["outcome"] == "success" and s["errors"] == 0 for s in runs)
    assert {s["metrics"]["acl_taken"] for s in runs} == {2.0}


def test_the_random_solver_is_near_the_papers_random_row():
    # paper, Random: SR = PSR 44 +- 5.0, mistakes 2.02 +- 0.1, ACL 1.46 +- 0.1; ours measured 42, 2.09, 1.51
    runs = summaries("who", RANDOM)
    assert 30 <= mean(s["metrics"]["sr"] for s in runs) <= 58
    assert mean(s["metrics"]["psr"] for s in runs) == mean(s["metrics"]["sr"] for s in runs)
    assert 1.7 <= mean(s["metrics"]["mistakes"] for s in runs) <= 2.4
    assert 1.1 <= mean(s["metrics"]["acl"] for s in runs) <= 1.8
