"""The Keypad puzzle: the manual's column rule, presses, strikes and resets, the columns against the manual's
text, the picture read back from its pixels, the manual expert's ceiling with the scripted solver, and the
random solver beside the paper's Random row."""

from __future__ import annotations

import itertools
import random
import re
from statistics import mean

import pytest

from simlab.worlds import get_family
from simlab.worlds.puzzles.keypad import (
    COLUMNS,
    HIGHLIGHT,
    LIT,
    POSITIONS,
    SHAPES,
    SYMBOLS,
    UNLIT,
    KeypadPuzzle,
    button_box,
    column_of,
    light_box,
    press_order,
)
from tests.puzzles.runs import MANUAL, RANDOM, summaries

FAMILY = get_family("puzzles")
TL, TR, BL, BR = POSITIONS


def keypad(buttons: list[str]) -> KeypadPuzzle:
    return KeypadPuzzle({"buttons": buttons}, 0)


def test_the_columns_are_the_manuals_and_no_two_share_four_symbols():
    manual = KeypadPuzzle.manual()
    for k, column in enumerate(COLUMNS, start=1):
        block = manual.split(f"Column {k}, from top to bottom:")[1].split("\n\n")[0]
        assert tuple(re.findall(r"^\d\. (.+)$", block, re.MULTILINE)) == column
    assert set(re.findall(r"^- ([a-z ]+):", manual, re.MULTILINE)) == set(SYMBOLS) == set(SHAPES)
    for a, b in itertools.combinations(COLUMNS, 2):
        assert len(set(a) & set(b)) <= 3


@pytest.mark.parametrize(
    ("buttons", "order"),
    [
        # column 1: star, ring, heart, lightning, up triangle, smiley, moon
        (["moon", "star", "smiley", "heart"], [TR, BR, BL, TL]),
        # star and heart are in columns 1 and 2 in opposite orders: the other symbols decide
        (["heart", "ring", "star", "moon"], [BL, TR, TL, BR]),
        (["heart", "plus", "star", "diamond"], [BR, TL, BL, TR]),
        # column 3 and column 4 share the bullseye
        (["x mark", "bullseye", "square", "hollow star"], [TR, BR, BL, TL]),
        (["equals", "bullseye", "hexagon", "plus"], [BL, BR, TR, TL]),
    ],
)
def test_press_in_the_order_of_the_one_column(buttons, order):
    assert press_order(buttons) == order
    game = keypad(buttons)
    for k, position in enumerate(order, start=1):
        assert game.oracle() == f"Press {position}"
        assert game.act(f"Press {position}").kind == ("solved" if k == 4 else "progress")
        assert game.progress() == 25 * k
    assert game.solved


def test_a_wrong_press_is_a_strike_and_resets_the_sequence():
    game = keypad(["moon", "star", "smiley", "heart"])  # order: TR, BR, BL, TL
    assert game.act(f"Press {TR}").kind == "progress"
    assert game.act(f"Press {BR}").kind == "progress"
    step = game.act(f"Press {TL}")  # the moon is last, not next
    assert step.kind == "mistake" and "not the next" in step.feedback
    assert game.snapshot()["lit"] == [] and game.progress() == 50  # the best run is kept
    assert game.oracle() == f"Press {TR}"
    assert game.act(f"Press {TR}").kind == "progress"
    step = game.act(f"Press {TR}")  # a lit button pressed again
    assert step.kind == "mistake" and "already lit" in step.feedback
    assert game.snapshot()["lit"] == [] and not game.solved


@pytest.mark.parametrize(
    "buttons",
    [
        ["star", "ring", "heart"],
        ["star", "ring", "heart", "banana"],
        ["star", "star", "heart", "ring"],
        ["star", "diamond", "bullseye", "hexagon"],  # no column holds all four
        "star ring heart moon",
        None,
    ],
)
def test_malformed_instances_are_refused_naming_the_field(buttons):
    with pytest.raises(ValueError, match="buttons"):
        KeypadPuzzle.validate({"buttons": buttons})


def test_generated_keypads_are_four_symbols_of_one_column_and_every_column_occurs():
    columns = set()
    for k in range(200):
        buttons = KeypadPuzzle.generate(random.Random(k), {})["buttons"]
        assert len(set(buttons)) == 4 and column_of(buttons) is not None
        columns.add(column_of(buttons))
    assert columns == set(COLUMNS)


def test_the_expert_names_the_four_presses_or_the_rest_of_them():
    game = keypad(["moon", "star", "smiley", "heart"])
    words = game.describe()
    assert "top left: moon" in words and "No button is lit" in words
    assert KeypadPuzzle.advise([words]).splitlines()[1:] == [f"Do: Press {p}" for p in (TR, BR, BL, TL)]
    game.act(f"Press {TR}")
    assert "Lit so far: top right" in game.describe()
    assert KeypadPuzzle.advise([game.describe()]).splitlines()[1:] == [f"Do: Press {p}" for p in (BR, BL, TL)]


def test_the_expert_asks_when_the_symbols_do_not_determine_a_column():
    assert "Do:" not in KeypadPuzzle.advise(["top left: moon, top right: star"])
    odd = "top left: star, top right: diamond, bottom left: bullseye, bottom right: hexagon"
    assert "No single column" in KeypadPuzzle.advise([odd])
    # "hollow star" is not read as "star" (no column holds a star, a bullseye and a zigzag)
    said = "top left shows a hollow star, top right a bullseye, bottom left: moon, bottom right: zigzag"
    assert KeypadPuzzle.advise([said]).startswith("Column 3")


def test_the_picture_shows_each_symbol_the_lights_and_the_press():
    image = KeypadPuzzle.draw({"buttons": ["moon", "star", "smiley", "heart"], "lit": [TR]}, f"Press {BL}")
    assert min(image.size) >= 400
    for position in POSITIONS:
        x0, y0, x1, y1 = light_box(position)
        assert image.getpixel(((x0 + x1) // 2, (y0 + y1) // 2)) == (LIT if position == TR else UNLIT)
        bx0, by0, _, by1 = button_box(position)
        assert (image.getpixel((bx0 - 5, (by0 + by1) // 2)) == HIGHLIGHT) == (position == BL)
    # every symbol is drawn differently, and the same at any position
    crops = set()
    for symbol in SYMBOLS:
        here = KeypadPuzzle.draw({"buttons": [symbol, "star", "star", "star"], "lit": []})
        there = KeypadPuzzle.draw({"buttons": ["ring", "ring", "ring", symbol], "lit": []})
        crop = here.crop(button_box(TL)).tobytes()
        assert crop == there.crop(button_box(BR)).tobytes()
        crops.add(crop)
    assert len(crops) == len(SYMBOLS)


def test_the_manual_expert_and_the_scripted_solver_solve_every_instance_in_two_turns():
    runs = summaries("keypad", MANUAL)
    assert all(s["outcome"] == "success" and s["errors"] == 0 for s in runs)
    assert {s["metrics"]["acl_taken"] for s in runs} == {2.0}


def test_the_random_solver_is_near_the_papers_random_row():
    # paper, Random: SR 1 +- 1.0, PSR 18 +- 2.1, mistakes 2.97 +- 0.0, ACL 2.88 +- 0.1;
    # ours measured SR 1, PSR 18, mistakes 2.99, ACL 2.97
    runs = summaries("keypad", RANDOM)
    assert mean(s["metrics"]["sr"] for s in runs) <= 6
    assert 10 <= mean(s["metrics"]["psr"] for s in runs) <= 28
    assert mean(s["metrics"]["mistakes"] for s in runs) >= 2.8
    assert 2.5 <= mean(s["metrics"]["acl"] for s in runs) <= 3.5
