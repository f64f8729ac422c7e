"""The COMMA game master, on the Wire puzzle: a turn is the solver's output, messages go to the expert whose
reply ends the turn, actions are matched by exact name and run in order, strikes and turns end the episode,
both conversation-length readings, leak detection, and what each role is shown."""

from __future__ import annotations

import pytest

from simlab.core.world import Observation, Reply
from simlab.worlds.puzzles.family import task_for
from simlab.worlds.puzzles.leaks import digits_of, revealed
from simlab.worlds.puzzles.protocol import read_solver
from simlab.worlds.puzzles.wire import WirePuzzle, correct_wire
from simlab.worlds.puzzles.world import PuzzlesWorld

TASK = {
    "id": "wire_x",
    "puzzle": "wire",
    "index": 0,
    "instance": {"wires": ["red", "blue", "yellow"], "serial": "AB12C4"},
}
RIGHT = f"Cut wire {correct_wire(['red', 'blue', 'yellow'], 'AB12C4')}"
WRONG = ["Cut wire 1", "Cut wire 2"]


def world(**settings) -> PuzzlesWorld:
    w = PuzzlesWorld(TASK, settings)
    w.reset(0)
    return w


def acts(*names: str) -> Reply:
    return Reply(action={"actions": list(names)})


def test_a_message_goes_to_the_expert_whose_reply_ends_the_turn():
    w = world()
    w.step(Reply(message="I see three wires."))
    assert w.agent_selection == "expert" and w.turn == 1
    expert = w.observe("expert")
    assert "I see three wires." in expert.text and "3 Wires:" in expert.text  # the dialogue and the manual
    assert expert.images == {} and "Cut wire" not in expert.text.split("Conversation so far")[1]
    w.step(Reply(message="Cut the last wire."))
    assert w.agent_selection == "solver" and w.turn == 2


def test_solving_ends_the_episode_and_both_conversation_lengths_are_recorded():
    w = world()
    w.step(Reply(message="Three wires: red, blue, yellow."))
    w.step(Reply(message="Cut the last wire."))
    w.step(acts(RIGHT))
    summary = w.summary()
    assert w.done and summary["outcome"] == "success" and summary["metrics"]["sr"] == 100
    assert summary["metrics"]["acl_before_solving"] == 1 and summary["metrics"]["acl_taken"] == 2
    assert summary["metrics"]["acl"] == 1 and summary["categories"] == ["grounding"]


def test_three_strikes_end_it_and_the_length_counts_turns_before_the_last_strike():
    w = world(acl="taken")
    for name in (WRONG[0], WRONG[1], WRONG[0]):
        w.step(acts(name))
    summary = w.summary()
    assert w.done and summary["outcome"] == "failure" and summary["metrics"]["mistakes"] == 3
    assert summary["metrics"]["acl_before_solving"] == 2 and summary["metrics"]["acl"] == 10  # taken: 10 if failed


def test_a_mistake_stops_an_action_list_unless_the_setting_says_go_on():
    w = world()
    events = w.step(acts(WRONG[0], RIGHT))
    assert not w.puzzle.solved and [e.data["kind"] for e in events if e.kind == "result"] == ["mistake"]
    w = world(after_mistake="continue")
    w.step(acts(WRONG[0], RIGHT))
    assert w.puzzle.solved and w.summary()["metrics"]["mistakes"] == 1


def test_the_turn_limit_ends_it():
    w = world(turns=2)
    for _ in range(2):
        w.step(Reply(message="Hello?"))
        w.step(Reply(message="Describe it."))
    assert w.truncated and w.summary()["turns"] == 2 and w.summary()["metrics"]["acl"] == 2


def test_the_solver_sees_the_picture_the_actions_and_the_feedback_the_expert_does_not():
    w = world()
    w.step(acts(WRONG[0]))
    solver = w.observe("solver")
    assert "Possible actions" in solver.text and "a strike" in solver.text
    assert set(solver.images) == {"module"} and solver.image_texts["module"].startswith("I see 3 wires")
    assert solver.images["module"].size[0] >= 400
    assert w.observe("expert").data["privileged"]["plan"] == [RIGHT]


@pytest.mark.parametrize(
    ("text", "actions"),
    [
        ("Cut wire 2", ["Cut wire 2"]),
        ("  Cut wire 1\n\nCut wire 3 ", ["Cut wire 1", "Cut wire 3"]),
        ("Cut wire 2.", None),  # exact names only: a full stop makes it a message
        ("cut wire 2", None),
        ("Cut wire 2\nthen tell me", None),
        ("Cut wire 9", None),
    ],
)
def test_solver_replies_are_actions_only_when_every_line_is_an_exact_legal_name(text, actions):
    observation = Observation("solver", 1, "", data={"actions": ["Cut wire 1", "Cut wire 2", "Cut wire 3"]})
    reply = read_solver(text, observation)
    assert (reply.action or {}).get("actions") == actions
    assert (reply.message is None) == (actions is not None)


def test_leaks_are_found_through_spelling_spacing_and_currency():
    private = {"PIN": "4821", "balance": "$1,350"}
    assert revealed(["my pin is four eight two one"], private) == ["PIN"]
    assert revealed(["It's 4 8 2 1."], private) == ["PIN"]
    assert revealed(["I have 1350 dollars"], private) == ["balance"]
    assert revealed(["about $1,350.00 left"], private) == ["balance"]
    assert revealed(["The screen asks for a PIN and shows my balance."], private) == []
    assert revealed(["my account 148210"], private) == []  # digits inside a longer number are not the PIN
    assert digits_of("one-two three") == "123"
    assert revealed(["I need $20, $50 and $10"], {"PIN": "2050"}) == []  # a list of amounts is no PIN
    assert revealed(["it shows 1287"], {"balance": "$1,287.00"}) == ["balance"]  # the value is normalised too


def test_every_wire_instance_is_valid_and_the_scripted_pair_agree_with_the_rules():
    for k in range(50):
        task = task_for("wire", k, 0, {})
        puzzle = WirePuzzle(task["instance"], 0)
        advice = WirePuzzle.advise([puzzle.describe()])
        assert advice.endswith(puzzle.oracle())


def test_a_message_that_reveals_private_data_is_marked_when_it_is_said(monkeypatch):
    w = world()
    monkeypatch.setattr(w.puzzle, "private", lambda: {"PIN": "4821"})
    events = w.step(Reply(message="My PIN is four eight two one, what now?"))
    leak = [e for e in events if e.kind == "protocol_error"]
    assert [e.data["code"] for e in leak] == ["private_leak"] and "PIN" in leak[0].data["message"]
    assert next(e for e in events if e.kind == "score").data["metrics"]["leaks"] == 1
    w.step(Reply(message="Cut the last wire."))
    assert not [e for e in w.step(Reply(message="It is 4821 again.")) if e.kind == "protocol_error"]  # once
    assert w.summary()["leaked"] == ["PIN"] and w.summary()["metrics"]["leak"] == 100
