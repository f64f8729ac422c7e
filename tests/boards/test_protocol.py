"""How models play the boards roles: the robot's JSON read from what models really write, the programmer's
instruction without the paper's response anchors, the prompts per condition, the scripted robot's English."""

from __future__ import annotations

import pytest

from simlab.core.family import ReplyError
from simlab.core.world import Observation
from simlab.worlds.boards.language import NotUnderstood, Step, read_steps, say
from simlab.worlds.boards.model import Placement
from simlab.worlds.boards.protocol import protocol, read_instruction, read_robot
from simlab.worlds.boards.replies import parse_robot_reply

OBS = Observation("robot", 1, "", data={"board": {"rows": 8, "cols": 8}})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"status": "code", "details": "put(board, \'nut\', \'red\', 1, 1)"}', "code"),
        ('```json\n{"status": "clarification", "details": "Which colour?"}\n```', "clarification"),
        ('[[ ## player_response ## ]]\n{"status": "Code", "details": "clear(board)"}\n[[ ## completed ## ]]', "code"),
        ('Sure! {"note": 1} and then {"status": "acknowledgement", "details": "OK"} done', "acknowledgement"),
    ],
)
def test_robot_replies_are_read_from_what_models_write(text, expected):
    assert parse_robot_reply(text)["status"] == expected
    assert read_robot(text, OBS).action["status"] == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("put(board, 'nut', 'red', 1, 1)", "no JSON object"),
        ('{"status": "run", "details": "x"}', '"status" must be one of'),
        ('{"status": "code", "details": ""}', '"details" must be a non-empty string'),
        ('{"status": "code", "details": 5}', '"details" must be a non-empty string'),
        ('{"status": "code", "details": "x"', "no JSON object"),  # cut off
    ],
)
def test_unreadable_robot_replies_are_given_up_to_the_world_with_the_reason(text, reason):
    robot = protocol("robot", OBS, {})
    with pytest.raises(ReplyError, match=reason):
        robot.parse(text, OBS)  # unreadable, as in every family: the agent's give-up counts it
    assert robot.reask is None  # not re-asked: the game master answers it, as in the paper
    action = robot.give_up(text).action
    assert action["status"] == "unreadable" and reason.split()[0] in action["error"] and action["text"] == text


def test_the_programmer_says_an_instruction_or_done():
    assert (
        read_instruction("[[ ## instruction ## ]]\nPlace a nut.\n[[ ## completed ## ]]", OBS).message == "Place a nut."
    )
    assert read_instruction("DONE.", OBS).message == "DONE"
    assert read_instruction("Done with row 1? Place a nut.", OBS).message.startswith("Done with")
    with pytest.raises(ReplyError):
        read_instruction("[[ ## instruction ## ]] [[ ## completed ## ]]", OBS)


def test_prompts_follow_the_condition():
    two = protocol("robot", OBS, {"agents": "two"}).system
    single = protocol("robot", OBS, {"agents": "single"}).system
    assert "Programmer who sees the target" in two and "clarification" in two
    assert "you see the target structure" in single and "nobody to ask" in single
    assert '{"status": "code", "details": "put(board' in two  # the doubled braces became JSON
    assert "8x8 grid" in protocol("programmer", OBS, {}).system and "DONE" in protocol("programmer", OBS, {}).system


@pytest.mark.parametrize(
    "placement",
    [
        Placement("washer", "red", 2, 3),
        Placement("bridge-h", "blue", 7, 3),
        Placement("bridge-v", "green", 5, 5),
        Placement("screw", "yellow", 8, 8),
    ],
)
def test_the_scripted_robot_reads_what_the_oracle_says(placement):
    step = Step("place", placement)
    assert read_steps(say(step)) == [step]
    removal = Step("remove", placement)
    assert read_steps(say(removal)) == [removal]


def test_the_scripted_robot_reads_the_reference_wording_and_several_sentences():
    text = (
        "These are the instructions to build bvs. Place a green bridge vertically in the 5th row, 3rd column. "
        "Place a yellow screw in the 5th row, 3rd column."
    )
    assert [s.code() for s in read_steps(text)] == [
        "put(board, 'bridge-v', 'green', 5, 3)",
        "put(board, 'screw', 'yellow', 5, 3)",
    ]


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("Place a washer at row 1, column 1.", "Which shape and colour"),
        ("Place a red bridge at row 1, column 1.", "horizontal or vertical"),
        ("Place a red washer somewhere nice.", "which row and column"),
    ],
)
def test_the_scripted_robot_asks_when_it_cannot_complete_a_step(text, question):
    with pytest.raises(NotUnderstood, match=f"(?i){question}"):
        read_steps(text)
