"""The blocks game master: conformance, turn protocol, what each role sees, recorded results and scores."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from simlab.core.world import Observation, Reply
from simlab.testing import check_world, play
from simlab.worlds import get_family
from simlab.worlds.blocks.generator import generate_structures
from simlab.worlds.blocks.model import Board, Move
from simlab.worlds.blocks.world import BUILDER, DIRECTORS, BlocksWorld, persona

FAMILY = get_family("blocks")
TASK = generate_structures(1, 0)[0].to_json()


def test_blocks_world_passes_the_conformance_suite() -> None:
    check_world("blocks", agents=["director=oracle", "builder=scripted"], n_tasks=2)


def test_conformance_suite_with_random_builder_and_reference_interior() -> None:
    check_world("blocks", agents=["builder=random"], n_tasks=1, settings={"interior": "reference", "turns": 6})


class Scripted:
    """Replies from a list per role, so a test decides every move."""

    def __init__(self, replies: dict[str, list[Reply]]) -> None:
        self.replies = replies
        self.seen: list[Observation] = []

    def act(self, obs: Observation) -> Reply:
        self.seen.append(obs)
        queue = self.replies.get(obs.role) or [Reply(message="ok")]
        return queue.pop(0) if len(queue) > 1 else queue[0]


def drive(world: BlocksWorld, agent: Scripted, steps: int) -> list[Any]:
    events = world.reset(5)
    for _ in range(steps):
        if world.finished:
            break
        events += world.step(agent.act(world.observe(world.agent_selection)))
    return events


def test_each_turn_has_one_to_three_distinct_directors_then_the_builder() -> None:
    world = BlocksWorld(TASK, {"turns": 200})
    world.reset(11)
    counts = []
    for _ in range(200):
        queue = list(world._queue)
        assert queue[-1] == BUILDER and len(set(queue[:-1])) == len(queue) - 1
        assert set(queue[:-1]) <= set(DIRECTORS) and 1 <= len(queue) - 1 <= 3
        counts.append(len(queue) - 1)
        while world.agent_selection != BUILDER:
            world.step(Reply(message="hello", reasoning="thinking"))
        world.step(Reply(action={"action": "clarify", "text": "?"}, message="?"))
    assert 1.8 < statistics.mean(counts) < 2.2  # about two on average, as in the paper


def test_rejected_move_is_recorded_with_its_error_code_and_changes_nothing() -> None:
    world = BlocksWorld(TASK)
    bad = Move.place("gs", (0, 0), 2).to_json()  # layer 2 on an empty stack
    agent = Scripted({BUILDER: [Reply(action=bad)]})
    events = drive(world, agent, 4)
    result = next(e for e in events if e.kind == "result")
    assert result.data["ok"] is False and result.data["error"] == "wrong_layer"
    assert result.data["taxonomy"] == "engine-layer"
    assert not [e for e in events if e.kind == "state" and e.turn > 0]
    assert world.board == Board()
    engine = [h["text"] for h in world.history if h["role"] == "engine"]
    assert engine and engine[0].startswith("FAILED:") and "layer 0" in engine[0]


def test_unparseable_builder_reply_is_a_protocol_error_not_a_crash() -> None:
    world = BlocksWorld(TASK)
    agent = Scripted({BUILDER: [Reply(action={"action": "jump", "cell": "x"})]})
    events = drive(world, agent, 4)
    errors = [e for e in events if e.kind == "protocol_error"]
    assert errors and errors[0].data["code"] == "bad_move" and "action" in errors[0].data["message"]
    assert next(e for e in events if e.kind == "result").data["error"] == "not_a_move"


def test_builder_sees_only_this_turns_messages_and_directors_see_history() -> None:
    world = BlocksWorld(TASK)
    world.reset(3)
    said = []
    for turn in (1, 2):
        while world.agent_selection != BUILDER:
            role = world.agent_selection
            obs = world.observe(role)
            assert all(f"{line}\n" in obs.text for line in said)  # the whole shared history so far
            assert all(line not in obs.to_event().data["text"] for line in said[: len(said) - len(world._said)])
            said.append(f"turn {turn} from {role}")
            world.step(Reply(message=said[-1], reasoning="private"))
        builder = world.observe(BUILDER)
        assert [m["text"] for m in builder.data["messages"]] == [s for s in said if s.startswith(f"turn {turn}")]
        assert "private" not in builder.text and "candidates" in builder.data
        world.step(Reply(action={"action": "clarify", "text": "which?"}, message="which?"))


def test_history_is_cut_to_the_last_forty_once_over_fifty() -> None:
    world = BlocksWorld(TASK)
    world.reset(0)
    world.history = [{"turn": 1, "role": "D1", "text": str(k)} for k in range(51)]
    obs = world.observe(world.agent_selection)
    shown = [
        line.split(": ", 1)[1] for line in obs.text.split("Conversation so far:\n")[1].split("\n\n")[0].split("\n")
    ]
    assert shown == [str(k) for k in range(11, 51)] and obs.data["history_size"] == 40


def test_candidates_are_hidden_when_the_setting_is_off() -> None:
    world = BlocksWorld(TASK, {"oracle_candidates": False})
    world.reset(0)
    while world.agent_selection != BUILDER:
        world.step(Reply(message="hi"))
    obs = world.observe(BUILDER)
    assert "candidates" not in obs.data and "candidate" not in obs.text.lower()


def test_personas_are_stable_and_vary_across_structures() -> None:
    assert persona("structure_000", 0, "D1") == persona("structure_000", 0, "D1")
    names = {persona(f"structure_{k:03d}", run, d) for k in range(20) for run in range(3) for d in DIRECTORS}
    assert len(names) == 5


def test_episode_replays_board_and_scores_at_every_turn() -> None:
    episode = play(FAMILY, TASK, ["director=oracle", "builder=oracle"], 0, None)
    board = Board()
    for event in (e for e in episode.events if e.kind == "action"):
        board.apply(Move.from_json(event.data["action"]))
        assert Board.from_json(episode.state_at(event.turn)["board"]) == board
    assert episode.summary["outcome"] == "success"
    assert episode.metrics_at(episode.last_turn)["overall_progress"] == 1.0
    series = episode.metric_series("completion")
    assert series[0] == 0.0 and series[-1] == 1.0 and series == sorted(series)


@pytest.mark.parametrize("builder", ["scripted", "oracle"])
def test_oracle_directors_get_everything_reachable_built(builder: str) -> None:
    for task in FAMILY.tasks.generate(4, 7):
        episode = play(FAMILY, task, ["director=oracle", f"builder={builder}"], 0, {"turns": 60})
        assert episode.summary["metrics"]["completion_reachable"] == 1.0, task["id"]


def test_start_board_setting_starts_from_a_partial_board() -> None:
    partial = Board()
    partial.apply(Move.place("rs", (2, 2), 0))
    world = BlocksWorld(TASK, {"start_board": partial.to_json()})
    events = world.reset(0)
    assert events[0].data["state"]["board"] == partial.to_json()


def test_oracle_builder_completes_all_100_structures_from_seed_0_within_40_turns() -> None:
    agents = ["director=silent", "builder=oracle"]
    for task in FAMILY.tasks.generate(100, 0):
        episode = play(FAMILY, task, agents, 0, {"turns": 40})
        summary = episode.summary
        assert summary["outcome"] == "success", task["id"]
        assert summary["turns"] <= 40 and summary["metrics"]["overall_progress"] == 1.0
        at_20 = episode.metric_series("overall_progress")[min(20, episode.last_turn)]
        assert summary["metrics"]["overall_progress_t20"] == at_20


def test_baselines_are_ordered_oracle_above_scripted_far_above_random() -> None:
    tasks = FAMILY.tasks.generate(12, 0)

    def mean_progress(builder: str) -> float:
        runs = [play(FAMILY, t, ["director=oracle", f"builder={builder}"], 0, {"turns": 40}) for t in tasks]
        return statistics.mean(r.summary["metrics"]["overall_progress"] for r in runs)

    oracle, scripted, random = mean_progress("oracle"), mean_progress("scripted"), mean_progress("random")
    # at the domino density of CRAFT's published structures the scripted builder reaches 0.88 here
    assert oracle == 1.0 and scripted > 0.8 and random < 0.3 and scripted - random > 0.55
