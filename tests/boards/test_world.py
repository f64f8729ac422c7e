"""The cobot game master: rounds, DONE, the robot's statuses, code run atomically, the abort rule, the
conditions of the paper's tables, and the scripted baselines' ceilings."""

from __future__ import annotations

from collections import Counter

import pytest

from simlab.core.world import Reply
from simlab.testing import play as simlab_play
from simlab.worlds import get_family
from simlab.worlds.boards.model import Board
from simlab.worlds.boards.targets import generate_targets
from simlab.worlds.boards.world import BoardsWorld

FAMILY = get_family("boards")
TASK = generate_targets(10, seed=3)[2].to_json()  # three screws: green (2,6), red (2,7), yellow (1,6)
WRONG = "put(board, 'screw', 'blue', 1, 6)"  # where the yellow one belongs


def play(task, players: dict[str, str], **settings):
    return simlab_play(FAMILY, task, [f"{role}={spec}" for role, spec in players.items()], 0, settings)


def code(text: str) -> Reply:
    return Reply(action={"status": "code", "details": text})


def world(**settings) -> BoardsWorld:
    w = BoardsWorld(TASK, settings)
    w.reset(0)
    return w


@pytest.mark.parametrize("robot", ["oracle", "scripted"])
def test_the_oracle_programmer_with_a_good_robot_always_succeeds(robot):
    outcomes = Counter()
    for task in generate_targets(495, seed=11):
        summary = play(task.to_json(), {"programmer": "oracle", "robot": robot}).summary
        outcomes[summary["outcome"]] += 1
        assert summary["metrics"]["done_said"] == 1.0
    assert outcomes == {"success": 495}


def test_the_random_robot_almost_never_succeeds():
    summaries = [
        play(t.to_json(), {"programmer": "oracle", "robot": "random"}).summary for t in generate_targets(30, 5)
    ]
    assert sum(s["outcome"] == "success" for s in summaries) <= 1
    assert sum(s["outcome"] == "abort" for s in summaries) > 0


def test_single_agent_oracle_builds_in_one_turn():
    summary = play(TASK, {"robot": "oracle"}, agents="single", dialogue="single").summary
    assert summary["outcome"] == "success" and summary["turns"] == 1


def test_noisy_agents_make_mistakes_and_the_oracle_corrects_them():
    summaries = [
        play(t.to_json(), {"programmer": "noisy:0.5", "robot": "scripted"}).summary for t in generate_targets(20, 2)
    ]
    assert sum(s["metrics"]["corrected"] for s in summaries) > 0
    assert sum(s["outcome"] == "success" for s in summaries) > 0
    again = [
        play(t.to_json(), {"programmer": "noisy:0.5", "robot": "scripted"}).summary for t in generate_targets(20, 2)
    ]
    assert again == summaries  # seeded


def test_an_instruction_after_a_code_turn_with_a_mistake_is_a_correction_even_when_it_made_progress():
    """The paper's correction: the Programmer revises an incorrect or incomplete action. Two right screws and a
    wrong-coloured third move the board closer, yet the next instruction corrects the wrong one."""
    w = world()
    w.step(Reply(message="Build the screws."))
    events = w.step(code("put(board, 'screw', 'green', 2, 6)\nput(board, 'screw', 'red', 2, 7)\n" + WRONG))
    result = next(e for e in events if e.kind == "result")
    assert result.data["ok"] and result.data["mistakes"] == ["wrong-colour"]
    w.step(Reply(message="The screw at row 1, column 6 should be yellow."))
    assert w.summary()["metrics"]["corrections"] == 1.0


def test_an_instruction_after_a_clean_step_towards_the_target_is_no_correction():
    w = world()
    w.step(Reply(message="Put the green screw down."))
    w.step(code("put(board, 'screw', 'green', 2, 6)"))
    w.step(Reply(message="Now the red screw."))
    assert w.summary()["metrics"]["corrections"] == 0.0


def test_done_ends_the_episode_and_success_needs_an_exact_match():
    w = world()
    w.step(Reply(message="DONE"))
    assert w.finished and w.summary()["outcome"] == "failure" and w.summary()["done_said"]


def test_code_runs_atomically_and_errors_go_back_to_the_robot():
    w = world()
    w.step(Reply(message="Place a red washer at row 1, column 1."))
    events = w.step(code("put(board, 'washer', 'red', 1, 1)\nput(board, 'nut', 'red', 1, 1)"))
    result = next(e for e in events if e.kind == "result")
    assert result.data["ok"] is False and result.data["error"] == "same_colour" and result.data["line"] == 2
    assert "Error during execution of the code:\nline 2: Cannot stack same colors" in result.data["feedback"]
    assert w.board == Board() and w.agent_selection == "robot"  # nothing of it was built; the robot retries
    assert "Cannot stack same colors" in w.observe("robot").text
    w.step(code("put(board, 'washer', 'red', 1, 1)"))
    assert w.board.height(1, 1) == 1 and w.agent_selection == "programmer" and w.turn == 2


def test_three_failures_in_a_row_abort_with_their_cause():
    w = world()
    w.step(Reply(message="go"))
    w.step(Reply(action={"status": "unreadable", "text": "hm", "error": "no JSON"}))
    w.step(code("put(board, 'bridge-h', 'red', 1, 1)\nput(board, 'washer', 'red', 1, 1)"))
    assert not w.finished
    events = w.step(code("put(board, 'washer', 'red', 1, 1)\nput(board, 'bridge-h', 'blue', 1, 1)"))
    assert w.finished and any(e.kind == "protocol_error" and e.data["code"] == "aborted" for e in events)
    summary = w.summary()
    assert summary["outcome"] == "abort" and summary["abort_cause"] == "depth mismatch"
    assert summary["metrics"]["format_errors"] == 1 and summary["metrics"]["code_errors"] == 2


def test_a_valid_reply_resets_the_failure_count():
    w = world(max_failures=2)
    w.step(Reply(message="go"))
    w.step(code("import os"))
    w.step(Reply(action={"status": "clarification", "details": "Which colour?"}))
    assert not w.finished and w.agent_selection == "programmer"
    assert "Which colour?" in w.observe("programmer").text


def test_a_programmer_without_a_message_aborts_for_format():
    w = world()
    w.step(Reply(message=None))
    assert w.summary()["outcome"] == "abort" and w.summary()["abort_cause"] == "format"


def test_the_round_limit_ends_the_episode():
    w = world(rounds=2)
    for _ in range(2):
        w.step(Reply(message="Wait."))
        w.step(Reply(action={"status": "acknowledgement", "details": "OK"}))
    assert w.truncated and w.summary()["outcome"] == "failure" and w.summary()["turns"] == 2


def test_conditions_decide_what_each_role_is_given():
    text = world().observe("programmer")
    assert "Grid levels (bottom to top)" in text.text and "Differences between target grid" in text.text
    assert dict(text.images) == {}
    pictures = world(target_view="layers", state_view="image").observe("programmer")
    assert "Differences between" not in pictures.text and "The target board" not in pictures.text
    levels = max(
        Board.from_json(pictures.data["target"]).height(*c) for c in Board.from_json(pictures.data["target"]).cells()
    )
    assert sorted(pictures.images) == sorted(
        ["target", "legend", "board", *[f"target_level_{k}" for k in range(1, levels + 1)]]
    )
    assert pictures.image_texts["target"].startswith("Grid levels")
    robot = world().observe("robot")
    assert "target" not in robot.data and "The target board" not in robot.text
    single = world(agents="single").observe("robot")
    assert "The target board" in single.text and "target" in single.data


def test_a_refused_program_is_recorded_and_changes_nothing():
    w = world()
    w.step(Reply(message="go"))
    events = w.step(code("__import__('os').system('echo hi')"))
    result = next(e for e in events if e.kind == "result")
    assert result.data["ok"] is False and w.board == Board()
    assert any(e.kind == "action" and "__import__" in e.data["action"]["details"] for e in events)


def test_a_placement_against_the_target_is_a_mistake_of_its_kind():
    """As blocks flags a wrong colour, boards names what a piece put down is against the target there."""
    from simlab.worlds.boards.metrics import placement_mistakes
    from simlab.worlds.boards.model import Placement, build, placements_of

    target = build([Placement("bridge-h", "red", 1, 1), Placement("nut", "green", 3, 3)])
    empty = build([])
    assert placement_mistakes(empty, build([Placement("bridge-h", "blue", 1, 1)]), target) == ["wrong-colour"]
    assert placement_mistakes(empty, build([Placement("washer", "green", 3, 3)]), target) == ["wrong-piece"]
    assert placement_mistakes(empty, build([Placement("screw", "red", 5, 5)]), target) == ["wrong-place"]
    assert placement_mistakes(empty, build([Placement("nut", "green", 3, 3)]), target) == []  # right: none
    task = {"id": "t", "placements": [p.to_json() for p in placements_of(target)]}
    world = BoardsWorld(task, get_family("boards").check_settings({}))
    world.reset(0)
    world.step(Reply(message="Put a red bridge across (1,1) and (1,2)."))
    events = world.step(Reply(action={"status": "code", "details": "put(board, 'bridge-h', 'blue', 1, 1)"}))
    result = next(e for e in events if e.kind == "result")
    assert result.data["ok"] and result.data["mistake"] == "wrong-colour"
