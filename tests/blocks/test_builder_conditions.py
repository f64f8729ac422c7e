"""The builder conditions of the CRAFT reference code as the ``builder`` setting: what each shows the builder,
the tool-using builder's simulate calls (answered within the turn, bounded, recorded and counted, never
changing the board), full information, and the older ``oracle_candidates`` switch."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from simlab.agents.resolve import make_agents, role_specs
from simlab.core.errors import ConfigError
from simlab.core.family import ReplyError
from simlab.core.playback import is_failure
from simlab.core.plugins import AgentSpec
from simlab.core.seeding import rng
from simlab.core.world import Reply
from simlab.runner.episode import run_episode
from simlab.runner.fork import fork_world
from simlab.testing import play
from simlab.worlds import get_family
from simlab.worlds.blocks.agents import ScriptedBuilder
from simlab.worlds.blocks.figures import builder_turns
from simlab.worlds.blocks.generator import generate_structures
from simlab.worlds.blocks.language import describe_move
from simlab.worlds.blocks.model import CELLS, Board, Move
from simlab.worlds.blocks.oracle import oracle_moves
from simlab.worlds.blocks.protocol import TOOL_FIELDS, builder_system, protocol, read_builder_reply, reply_form
from simlab.worlds.blocks.simulation import is_simulation_event, simulate_action
from simlab.worlds.blocks.views import board_text
from simlab.worlds.blocks.world import BUILDER, DIRECTORS, BlocksSettings, BlocksWorld

FAMILY = get_family("blocks")
TASK = generate_structures(1, 0)[0].to_json()
TARGET = Board.from_json(TASK["board"])
FIRST = oracle_moves(Board(), TARGET)[0]  # a right first move
WRONG_COLOUR = replace(FIRST, block=next(c for c in "gbryo" if c != str(FIRST.block)[0]) + str(FIRST.block)[1])
WRONG_LAYER = Move.place("gs", (0, 0), 1)  # layer 1 on an empty stack
CONDITIONS = ("no_oracle", "full_information")


def at_builder(settings: dict[str, Any], message: str = "hello") -> BlocksWorld:
    """A world of ``TASK`` whose first turn's directors have spoken: the builder is to act."""
    world = BlocksWorld(TASK, settings)
    world.reset(0)
    while world.agent_selection != BUILDER:
        world.step(Reply(message=message))
    return world


def simulate(move: Move) -> Reply:
    return Reply(action=simulate_action(move))


# ---- what each condition shows ----------------------------------------------------------------------------
def test_only_the_oracle_condition_shows_candidates() -> None:
    shown = {
        c: at_builder({"builder": c}).observe(BUILDER) for c in ("oracle", "no_oracle", "tools", "full_information")
    }
    assert shown["oracle"].data["candidates"] and "Verified candidate moves" in shown["oracle"].text
    for condition in ("no_oracle", "tools", "full_information"):
        obs = shown[condition]
        assert "candidates" not in obs.data and "candidate move" not in obs.text.lower(), condition


def test_the_no_oracle_builder_gets_the_board_and_the_messages_only() -> None:
    obs = at_builder({"builder": "no_oracle"}, "put a block down").observe(BUILDER)
    assert set(obs.data) == {"board", "messages"}
    assert "put a block down" in obs.text and "SIMULATE" not in obs.text and "target" not in obs.text.lower()


def test_the_full_information_builder_sees_the_whole_target_and_nothing_else_new() -> None:
    world = at_builder({"builder": "full_information", "interior": "reference"})
    obs = world.observe(BUILDER)
    assert set(obs.data) == {"board", "messages", "target"}
    assert Board.from_json(obs.data["target"]) == TARGET
    listing = board_text(TARGET).split("\n")[1:]  # every stack, the interior nobody sees included
    assert all(line in obs.text for line in listing) and "The target structure" in obs.text
    assert any(TARGET.height(c) for c in ((1, 1), (2, 1))), "the task should have interior blocks to show"
    for director in DIRECTORS:  # the directors are given what they always are
        assert "target" not in world.observe(director).data


def test_only_the_tools_condition_offers_simulations() -> None:
    obs = at_builder({"builder": "tools", "max_simulations": 2}).observe(BUILDER)
    assert obs.data["simulations"] == [] and obs.data["simulations_left"] == 2
    assert "SIMULATE:" in obs.text and "2 of 2 simulations left" in obs.text
    assert "simulations_left" not in at_builder({"builder": "oracle"}).observe(BUILDER).data


# ---- settings ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("given", "builder"),
    [
        ({}, "oracle"),
        ({"oracle_candidates": False}, "no_oracle"),  # configs and recordings made before `builder`
        ({"oracle_candidates": True}, "oracle"),
        ({"builder": "tools"}, "tools"),
        ({"builder": "full_information"}, "full_information"),
        ({"builder": "no_oracle", "oracle_candidates": False}, "no_oracle"),
    ],
)
def test_builder_and_the_older_switch_agree(given: dict[str, Any], builder: str) -> None:
    settings = BlocksSettings.checked(given)
    assert (settings["builder"], settings["oracle_candidates"]) == (builder, None)  # one setting holds it
    assert BlocksSettings.checked(settings) == settings  # a recording's settings load back as they are


@pytest.mark.parametrize("builder", ["no_oracle", "tools", "full_information"])
def test_a_full_settings_dict_with_another_builder_is_taken(builder: str) -> None:
    """A form or a fork edits the whole checked dict: changing builder alone must not meet the old switch."""
    settings = {**BlocksSettings.checked({}), "builder": builder}
    assert BlocksSettings.checked(settings)["builder"] == builder


@pytest.mark.parametrize(
    "given",
    [
        {"builder": "tools", "oracle_candidates": True},
        {"builder": "full_information", "oracle_candidates": True},
        {"builder": "oracle", "oracle_candidates": False},
    ],
)
def test_contradicting_builder_settings_are_refused_naming_builder(given: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match=r"setting 'builder'.*oracle_candidates is (true|false)"):
        BlocksSettings.checked(given)


def test_a_recording_made_before_the_builder_setting_plays_its_condition() -> None:
    old = {**BlocksSettings.checked({}), "oracle_candidates": False}  # as recordings then held it
    old.pop("builder")
    assert "candidates" not in at_builder(old).observe(BUILDER).data


# ---- the tools condition: simulate calls ----------------------------------------------------------------
def test_a_simulate_call_is_answered_in_the_same_turn_and_changes_nothing() -> None:
    world = at_builder({"builder": "tools"})
    board, history, turn = world.board.copy(), list(world.history), world.turn
    events = world.step(simulate(FIRST))
    assert [e.kind for e in events] == ["action", "result"] and all(map(is_simulation_event, events))
    answer = events[1].data
    assert answer["simulation"] is True and answer["would"]["ok"] is True and not is_failure(answer)
    assert Board.from_json(answer["board"]) != board and world.board == board  # what it would be, not what is
    assert (world.turn, world.agent_selection, world.history) == (turn, BUILDER, history)
    obs = world.observe(BUILDER)
    assert obs.data["simulations_left"] == 2 and obs.data["simulations"] == [answer]
    assert answer["message"] in obs.text
    played = world.step(Reply(action=FIRST.to_json()))
    assert world.turn == turn + 1 and world.board != board
    assert next(e for e in played if e.kind == "result").data["ok"] is True
    assert world.summary()["metrics"]["simulate_calls"] == 1


def test_an_illegal_simulated_move_says_why_and_is_no_engine_error() -> None:
    world = at_builder({"builder": "tools"})
    answer = world.step(simulate(WRONG_LAYER))[1].data
    assert answer["would"] == {"ok": False, "message": answer["would"]["message"], "error": "wrong_layer"}
    assert "FAIL (wrong_layer)" in answer["message"] and "layer 0" in answer["message"]
    assert not is_failure(answer) and "board" not in answer and world.board == Board()
    assert world.summary()["errors"] == 0


def test_the_reference_feedback_judges_the_simulated_move_against_the_target() -> None:
    right = at_builder({"builder": "tools"}).step(simulate(FIRST))[1].data
    missed = at_builder({"builder": "tools"}).step(simulate(WRONG_COLOUR))[1].data
    assert right["feedback"]["structure_placement"] is True and right["feedback"]["side_placement"] is True
    assert right["feedback"]["blocks_correct"] == (2 if FIRST.span_to else 1)
    assert missed["feedback"]["structure_placement"] is False and missed["feedback"]["side_placement"] is False
    assert missed["feedback"]["blocks_correct"] == 0 and missed["would"]["ok"] is True
    assert right["feedback"]["overall_progress"] > missed["feedback"]["overall_progress"]
    assert right["feedback"]["blocks_total"] == sum(TARGET.height(c) for c in CELLS)
    assert "right for the target there: yes" in right["message"]
    assert "right for the target there: no" in missed["message"]


def test_engine_feedback_tells_nothing_of_the_target() -> None:
    world = at_builder({"builder": "tools", "simulate_feedback": "engine"})
    answer = world.step(simulate(FIRST))[1].data
    assert "feedback" not in answer and "target" not in answer["message"].lower() and answer["would"]["ok"]
    assert "target" not in builder_system(world.settings).split("dry-run")[1].lower()


def test_simulations_are_bounded_per_turn_and_one_past_the_bound_ends_the_turn() -> None:
    world = at_builder({"builder": "tools", "max_simulations": 2})
    for _ in range(2):
        world.step(simulate(FIRST))
    obs = world.observe(BUILDER)
    assert obs.data["simulations_left"] == 0 and "No simulations left" in obs.text
    with pytest.raises(ReplyError, match="no simulations are left"):  # a model is re-asked for its move
        protocol(BUILDER, obs, world.settings).parse(f"SIMULATE:{FIRST.reply_line()}", obs)
    events = world.step(simulate(FIRST))  # a scripted agent or a person: the turn ends without a move
    refused = next(e for e in events if e.kind == "protocol_error")
    assert refused.data["code"] == "simulate_refused" and "2 simulate calls" in refused.data["message"]
    assert world.turn == 2 and world.board == Board()
    assert next(e for e in events if e.kind == "result").data["error"] == "not_a_move"
    assert world.summary()["metrics"]["simulate_calls"] == 2
    world.step(Reply(message="x"))  # the next turn starts with a full budget
    while world.agent_selection != BUILDER:
        world.step(Reply(message="x"))
    assert world.observe(BUILDER).data["simulations_left"] == 2


def test_simulate_outside_the_tools_condition_is_refused() -> None:
    world = at_builder({"builder": "oracle"})
    obs = world.observe(BUILDER)
    with pytest.raises(ReplyError, match="not offered"):
        protocol(BUILDER, obs, world.settings).parse(f"SIMULATE:{FIRST.reply_line()}", obs)
    events = world.step(simulate(FIRST))
    assert next(e for e in events if e.kind == "protocol_error").data["code"] == "simulate_refused"
    assert world.turn == 2 and "simulate_calls" not in world.summary()["metrics"]


def test_an_unreadable_simulate_call_is_answered_as_not_a_move() -> None:
    world = at_builder({"builder": "tools"})
    events = world.step(Reply(action={"action": "simulate", "move": "clarify"}))
    assert events[1].data["would"]["error"] == "not_a_move" and world.turn == 1
    assert world.observe(BUILDER).data["simulations_left"] == 2


# ---- reading a model's reply ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("SIMULATE:PLACE:bl:(1,0):0:(2,0)", simulate_action(Move.place("bl", (1, 0), 0, (2, 0)))),
        ("**simulate: REMOVE:(0,2):1**", simulate_action(Move.remove((0, 2), 1))),
        ("Let me simulate first.\nPLACE:gs:(0,1):0:CONFIRM:D1", Move.place("gs", (0, 1), 0).to_json()),
        ("PLACE:gs:(0,1):0:CONFIRM:D1\nSIMULATE:PLACE:bs:(0,1):0", Move.place("gs", (0, 1), 0).to_json()),
    ],
)
def test_a_simulate_line_is_read_before_any_later_move(text: str, expected: dict[str, Any]) -> None:
    assert read_builder_reply(text) == expected


def test_simulating_a_clarification_is_unreadable() -> None:
    with pytest.raises(ReplyError, match="not a CLARIFY"):
        read_builder_reply("SIMULATE:CLARIFY:which block?")


def test_each_condition_has_its_own_builder_prompt() -> None:
    prompts = {c: builder_system(BlocksSettings.checked({"builder": c})) for c in ("oracle", "no_oracle", "tools")}
    prompts["full_information"] = builder_system(BlocksSettings.checked({"builder": "full_information"}))
    assert all(p.startswith("You are the builder in CRAFT") for p in prompts.values())
    assert "When verified candidate moves are listed" in prompts["oracle"]
    assert all("verified candidate" not in p for c, p in prompts.items() if c != "oracle")
    assert "SIMULATE:" in prompts["tools"] and "You have 3 simulations per turn" in prompts["tools"]
    assert "cannot see" not in prompts["full_information"] and "cannot see" in prompts["no_oracle"]


def test_a_persons_form_can_simulate_while_simulations_are_left() -> None:
    world = at_builder({"builder": "tools", "max_simulations": 1})
    form = reply_form(BUILDER, world.observe(BUILDER))
    assert form.fields == TOOL_FIELDS
    values = {"action": "simulate", "move": "remove", "block": "gs", "cell": [0, 0], "layer": 0}
    answer = world.step(form.reply(values=values))[1].data
    assert answer["move"] == Move.remove((0, 0), 0).to_json() and answer["would"]["error"] == "empty_stack"
    assert "simulate" not in reply_form(BUILDER, world.observe(BUILDER)).fields[0].choices


# ---- scripted builders ------------------------------------------------------------------------------------
def told_wrong_then_right(condition: str) -> BlocksWorld:
    """Turn 1 of ``condition`` where one director asks for the wrong colour, then another for the right move."""
    world = BlocksWorld(TASK, {"builder": condition, "speakers": [2, 2]})
    world.reset(0)
    texts = iter([describe_move(WRONG_COLOUR, rng(0)), describe_move(FIRST, rng(1))])
    while world.agent_selection != BUILDER:
        world.step(Reply(message=next(texts)))
    return world


def scripted_builder() -> ScriptedBuilder:
    builder = ScriptedBuilder(BUILDER)
    builder.reset(1, BUILDER, {})  # not privileged: it gets no target from the task
    return builder


def test_the_scripted_builder_simulates_what_it_heard_then_plays_the_best() -> None:
    world, builder = told_wrong_then_right("tools"), scripted_builder()
    replies = []
    while world.turn == 1:
        reply = builder.act(world.observe(BUILDER))
        replies.append(reply.action)
        world.step(reply)
    assert replies == [simulate_action(WRONG_COLOUR), simulate_action(FIRST), FIRST.to_json()]
    assert world.summary()["metrics"]["simulate_calls"] == 2


def test_the_scripted_builder_never_plays_a_remove_its_simulation_calls_wrong() -> None:
    built = Board()
    built.apply(FIRST)
    assert FIRST.cell is not None
    undo = Move.remove(FIRST.cell, 0, FIRST.span_to)
    replies = {}
    for feedback in ("reference", "engine"):
        settings = {
            "builder": "tools",
            "speakers": [1, 1],
            "start_board": built.to_json(),
            "simulate_feedback": feedback,
        }
        world = BlocksWorld(TASK, settings)
        world.reset(0)
        world.step(Reply(message=describe_move(undo, rng(0))))
        builder = scripted_builder()
        while world.turn == 1:
            reply = builder.act(world.observe(BUILDER))
            world.step(reply)
        replies[feedback] = reply.action
    assert replies["reference"] is not None and replies["reference"]["action"] == "clarify"
    assert replies["engine"] == undo.to_json()  # nothing told it the block was right: it does as asked


def test_the_scripted_builder_uses_the_target_it_is_shown() -> None:
    chosen = {c: scripted_builder().act(told_wrong_then_right(c).observe(BUILDER)).action for c in CONDITIONS}
    assert chosen["no_oracle"] == WRONG_COLOUR.to_json()  # no way to tell: the first instruction
    assert chosen["full_information"] == FIRST.to_json()  # the target says which is right


def tools_episode(turns: int = 12) -> Any:
    return play(FAMILY, TASK, ["director=oracle", "builder=scripted:0.3"], 0, {"builder": "tools", "turns": turns})


def test_a_tools_episode_records_and_counts_every_simulate_call() -> None:
    episode = tools_episode()
    calls = [e for e in episode.events if e.kind == "action" and is_simulation_event(e)]
    answers = [e for e in episode.events if e.kind == "result" and is_simulation_event(e)]
    assert calls and len(calls) == len(answers) == episode.summary["metrics"]["simulate_calls"]
    per_turn: dict[int, int] = {}
    for call in calls:
        per_turn[call.turn] = per_turn.get(call.turn, 0) + 1
    assert max(per_turn.values()) <= 3
    board = Board()  # only the played moves change the board
    for event in episode.events:
        if event.kind == "action" and not is_simulation_event(event) and event.data["action"]["action"] != "clarify":
            board.apply(Move.from_json(event.data["action"]))
            assert Board.from_json(episode.state_at(event.turn)["board"]) == board
    assert len(builder_turns(episode)) == episode.summary["turns"]  # a simulation is no builder turn
    assert episode.summary["replies"]["builder"]["acts"] == episode.summary["turns"] + len(calls)


def test_a_tools_episode_forks_through_its_simulations() -> None:
    episode = tools_episode()
    turn = max(e.turn for e in episode.events if is_simulation_event(e))
    world, events = fork_world(episode, turn)
    replayed = [e.to_json() for e in events if e.kind != "observation"]
    recorded = [e.to_json() for e in episode.events if e.kind != "observation"][: len(replayed)]
    assert replayed == recorded and any(is_simulation_event(e) for e in events)
    calls = sum(1 for e in events if e.kind == "action" and is_simulation_event(e))
    assert isinstance(world, BlocksWorld) and world.simulate_calls == calls


def test_the_oracle_builder_builds_under_every_condition() -> None:
    for condition in ("no_oracle", "tools", "full_information"):
        settings = FAMILY.check_settings({"builder": condition, "turns": 60})
        specs = role_specs(FAMILY, [AgentSpec.parse(a) for a in ("director=oracle", "builder=oracle")])
        agents = make_agents(FAMILY, specs, settings)
        episode = run_episode(FAMILY.world(TASK, settings), agents, "x", 0)
        assert episode.summary["outcome"] == "success", condition
        assert json.dumps(episode.summary)  # a plain JSON summary
