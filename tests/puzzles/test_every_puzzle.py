"""What every COMMA puzzle must do, checked on each of the ten: the oracle expert with the scripted solver
solves all 100 evaluation instances, instances are seeded and valid, actions are exact names, a mistake is
counted, the picture is drawn from the snapshot alone, the manual is there, and private values stay out of
the module's words."""

from __future__ import annotations

import copy
import random

import pytest
from PIL import Image

from simlab.render.images import pixels
from simlab.testing import play
from simlab.worlds import get_family
from simlab.worlds.puzzles.family import task_for
from simlab.worlds.puzzles.puzzle import PUZZLES, puzzle_class

FAMILY = get_family("puzzles")
INSTANCES = 100


def tasks(name: str, n: int = INSTANCES, seed: int = 0) -> list[dict]:
    return [task_for(name, k, seed, {}) for k in range(n)]


@pytest.mark.parametrize("name", PUZZLES)
def test_the_oracle_expert_and_the_scripted_solver_solve_every_instance(name):
    failed = []
    for task in tasks(name):
        summary = play(FAMILY, task, ["solver=scripted", "expert=oracle"], 0, {}).summary
        if summary["outcome"] != "success" or summary["metrics"]["mistakes"] != 0:
            failed.append(task["id"])
    assert failed == []


@pytest.mark.parametrize("name", PUZZLES)
def test_instances_are_seeded_and_valid(name):
    kind = puzzle_class(name)
    assert tasks(name, 10) == tasks(name, 10)
    assert kind.generate(random.Random(5), {}) == kind.generate(random.Random(5), {})  # only r decides
    assert tasks(name, 10, seed=1) != tasks(name, 10)
    for task in tasks(name, 20):
        kind.validate(task["instance"])
    with pytest.raises(ValueError):
        kind.validate({"nonsense": 1})


@pytest.mark.parametrize("name", PUZZLES)
def test_the_oracle_plays_legal_actions_and_progress_reaches_100(name):
    kind = puzzle_class(name)
    for task in tasks(name, 20):
        puzzle = kind(task["instance"], 7)
        assert puzzle.progress() < 100 and not puzzle.solved
        for _ in range(200):
            if puzzle.solved:
                break
            action = puzzle.oracle()
            assert action in puzzle.actions()
            assert puzzle.act(action).kind in ("progress", "solved", "nothing")
        assert puzzle.solved and puzzle.progress() == 100


@pytest.mark.parametrize("name", PUZZLES)
def test_some_action_on_the_way_is_a_mistake(name):
    """Along the oracle's path (a module may start where no action can be wrong, like the ATM's menu), some
    legal action is a strike: the random solver can make the paper's mistakes."""
    kind = puzzle_class(name)
    for task in tasks(name, 10):
        puzzle = kind(task["instance"], 3)
        for _ in range(200):
            if any(copy.deepcopy(puzzle).act(a).kind == "mistake" for a in puzzle.actions()):
                return
            if puzzle.solved:
                break
            puzzle.act(puzzle.oracle())
    pytest.fail(f"no action of {name} is ever a mistake along the oracle's path")


@pytest.mark.parametrize("name", PUZZLES)
def test_the_picture_comes_from_the_snapshot_and_is_deterministic(name):
    kind = puzzle_class(name)
    puzzle = kind(tasks(name, 1)[0]["instance"], 0)
    first = kind.draw(puzzle.snapshot())
    assert isinstance(first, Image.Image) and min(first.size) >= 200
    assert first.tobytes() == kind.draw(puzzle.snapshot()).tobytes()
    assert len(set(pixels(first.convert("L")))) > 2  # not blank


@pytest.mark.parametrize("name", PUZZLES)
def test_the_manual_and_the_words_of_the_module(name):
    kind = puzzle_class(name)
    assert len(kind.manual()) > 100
    for task in tasks(name, 20):
        puzzle = kind(task["instance"], 0)
        words = puzzle.describe()
        assert words
        for label, value in puzzle.private().items():
            assert str(value) not in words, f"{name}: the module's words reveal {label}"
