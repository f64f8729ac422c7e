"""CRAFT's judges (SG, MM, PS) on recorded blocks runs: which items exist, what each context holds and never
holds, bounded contexts, and replies read the way a small model writes them."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import pytest

from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.core.judging import JudgeItem, make_record, read_verdict
from simlab.core.recording import load_run
from simlab.testing import judge_test
from simlab.worlds import get_family
from simlab.worlds.blocks.judges import HISTORY_TURNS, JUDGES, mm_items, ps_items, sg_items
from simlab.worlds.blocks.model import Move

TURNS = 12
SG, MM, PS = JUDGES


@pytest.fixture(scope="module")
def episodes(record) -> list[Episode]:
    """Two episodes of oracle directors (who write private reasoning) and a builder that mishears 40% of moves."""
    return load_run(record("builder=scripted:0.4", episodes=2, turns=TURNS)).episodes()


def said(episode: Episode, kind: str) -> list[Event]:
    return [e for e in episode.events if e.kind == kind and e.role in ("D1", "D2", "D3")]


def oracle_lines(episode: Episode, turn: int) -> list[str]:
    """The oracle moves the live world recorded in the turn's result, as the judges write moves."""
    result = next(e for e in episode.events_of_turn(turn) if e.kind == "result")
    return [Move.from_json(m).describe() for m in result.data["oracle"]]


def keys(items: list[JudgeItem]) -> list[tuple[int, str]]:
    return [(item.turn, item.subject) for item in items]


def test_the_family_declares_the_papers_three_judges_and_they_pass_the_contract_check(episodes):
    assert [j.name for j in get_family("blocks").load_judges()] == ["craft-sg", "craft-mm", "craft-ps"]
    assert [(j.runs, j.combine) for j in JUDGES] == [(3, "mean"), (3, "mean"), (2, "mean")]
    assert [q.code for q in SG.questions] == [f"SG{k}" for k in range(1, 6)]
    assert [q.code for q in MM.questions] == [f"MM{k}" for k in range(1, 8)]
    assert [q.code for q in PS.questions] == [f"PS{k}" for k in range(1, 7)]
    named = {q.code: q.label for j in JUDGES for q in j.questions}  # the names the paper gives (table 7)
    assert named["SG3"] == "Layer inference" and named["SG5"] == "Move executability"
    assert named["MM1"] == "Novel information" and named["MM5"] == "Unique perspective"
    assert (named["MM4"], named["MM6"], named["MM7"]) == (
        "Message calibration",
        "Action specificity",
        "Conflict resolution",
    )
    assert all("N/A" in q.scale.labels for q in PS.questions)
    assert not any("N/A" in q.scale.labels for q in (*SG.questions, *MM.questions))
    counts = judge_test("blocks", episodes)
    assert all(n > 0 for n in counts.values()), counts


def test_sg_rates_exactly_the_reasoning_each_director_recorded(episodes):
    for episode in episodes:
        assert keys(sg_items(episode)) == [(e.turn, e.role) for e in said(episode, "reasoning")]
    quiet = replace(
        episodes[0], events=[e for e in episodes[0].events if not (e.kind == "reasoning" and e.role == "D1")]
    )
    items = sg_items(quiet)
    assert items and all(item.subject != "D1" for item in items)
    assert keys(items) == [k for k in keys(sg_items(episodes[0])) if k[1] != "D1"]
    assert len(mm_items(quiet)) == len(mm_items(episodes[0]))  # messages still rated


def test_sg_context_holds_the_reasoning_the_view_the_board_and_the_oracle_moves_but_not_the_message(episodes):
    episode = episodes[0]
    for item in sg_items(episode):
        turn = episode.events_of_turn(item.turn)
        reasoning = next(e for e in turn if e.kind == "reasoning" and e.role == item.subject)
        seen = next(e for e in turn if e.kind == "observation" and e.role == item.subject).data["text"]
        view = seen.split("(nobody else sees it):\n")[1].split("\n\nThe current board:")[0]
        board = seen.split("The current board:\n")[1].split("\n\nConversation so far")[0]
        assert reasoning.data["text"] in item.context
        assert view in item.context and board in item.context  # what the director was shown
        assert all(line in item.context for line in oracle_lines(episode, item.turn))
        message = next(e for e in turn if e.kind == "message" and e.role == item.subject)
        assert message.data["text"] not in item.context


def test_mm_context_holds_the_message_and_what_came_before_it_never_the_reasoning_nor_the_oracle(episodes):
    checked_later = 0
    for episode in episodes:
        thoughts = [e.data["text"] for e in said(episode, "reasoning")]
        items = mm_items(episode)
        assert keys(items) == [(e.turn, e.role) for e in said(episode, "message")]
        for item in items:
            turn = [e for e in said(episode, "message") if e.turn == item.turn]
            own = next(k for k, e in enumerate(turn) if e.role == item.subject)
            assert turn[own].data["text"] in item.context
            assert all(f"{e.role}: {e.data['text']}" in item.context for e in turn[:own])
            before = {e.data["text"] for e in turn[: own + 1]}
            later = [e.data["text"] for e in turn[own + 1 :] if e.data["text"] not in before]
            assert not any(text in item.context for text in later)
            checked_later += len(later)
            assert not any(text in item.context for text in thoughts)
            assert not any(line in item.context for line in oracle_lines(episode, item.turn))
            assert "oracle" not in item.context.lower() and "private view" not in item.context
    assert checked_later > 0  # some messages came after the rated one and were left out


def test_ps_rates_each_turn_with_director_messages_against_the_oracle_moves(episodes):
    for episode in episodes:
        thoughts = [e.data["text"] for e in said(episode, "reasoning")]
        items = ps_items(episode)
        assert keys(items) == [(t, "") for t in sorted({e.turn for e in said(episode, "message")})]
        for item in items:
            messages = [e for e in said(episode, "message") if e.turn == item.turn]
            assert all(f"{e.role}: {e.data['text']}" in item.context for e in messages)
            assert all(line in item.context for line in oracle_lines(episode, item.turn))
            assert not any(text in item.context for text in thoughts)
        assert "This is the first turn." in items[0].context
        second = next(item for item in items if item.turn == 2)
        move = next(e for e in episode.events_of_turn(1) if e.kind == "action").data["text"]
        assert f"On turn 1:\nThe builder's move: {move}" in second.context


def test_mm_shows_a_bounded_window_of_the_conversation(episodes):
    episode = episodes[0]
    late = [item for item in mm_items(episode) if item.turn > HISTORY_TURNS + 1]
    assert late, "the recording is too short to leave turns out"
    for item in late:
        first = item.turn - HISTORY_TURNS
        assert f"(turns 1 to {first - 1} left out)" in item.context
        assert f"[turn {first}] " in item.context and f"[turn {first - 1}] " not in item.context


def test_long_reasoning_is_cut_keeping_its_start_and_its_conclusion(episodes):
    episode = episodes[0]
    long = "START of my thinking. " + "I weigh each cell again. " * 4000 + "So: place the red block. END"
    events = list(episode.events)
    k = next(k for k, e in enumerate(events) if e.kind == "reasoning")
    events[k] = Event("reasoning", events[k].turn, events[k].role, {"text": long})
    item = sg_items(replace(episode, events=events))[0]
    assert "START of my thinking." in item.context and "place the red block. END" in item.context
    assert "characters left out" in item.context and len(item.context) < 15_000


def test_a_target_or_board_the_engine_cannot_read_leaves_out_sg_and_ps_but_not_mm(episodes):
    episode = episodes[0]
    broken = replace(episode, task={**episode.task, "board": {"stacks": "not a board"}})
    assert sg_items(broken) == [] and ps_items(broken) == []
    assert keys(mm_items(broken)) == keys(mm_items(episode))
    cut = [e for e in episode.events if not (e.kind == "state" and e.turn == 1)]
    cut.append(Event("state", 1, None, {"state": {"board": None, "codes": {}}}))  # an imported illegal board
    imported = replace(episode, events=sorted(cut, key=lambda e: e.turn))
    assert 2 not in {item.turn for item in sg_items(imported)}
    assert "(not recorded as a legal board)" in next(i for i in mm_items(imported) if i.turn == 2).context


MESSY_SG = """Sure! Here is my evaluation of the director's reasoning.

**SG1:** Yes – it spots the missing red block at (0,2).
- SG2 - yes, colour and size are right
SG3) NO | it says layer 1 but the stack at (0,2) is empty
* **SG4**: unclear, the reasoning never mentions stacking
SG5 = Yes because PLACE rl @ (0,1) layer 0 matches an oracle move

Overall the reasoning is solid."""


def test_replies_are_read_as_a_small_model_writes_them():
    verdict = read_verdict(SG, MESSY_SG)
    assert verdict.labels == {"SG1": "Yes", "SG2": "Yes", "SG3": "No", "SG4": "Unclear", "SG5": "Yes"}
    assert verdict.unreadable is None
    assert verdict.reasons["SG3"] == "it says layer 1 but the stack at (0,2) is empty"
    partial = read_verdict(SG, "SG1: Yes | right block\nSG2: No | wrong size")
    assert partial.labels == {"SG1": "Yes", "SG2": "No"} and "no answer to SG3, SG4, SG5" in str(partial.unreadable)
    prose = read_verdict(MM, "The director's message seems mostly fine to me, it is concise and useful.")
    assert prose.labels == {} and "no question answered" in str(prose.unreadable)
    mm = read_verdict(MM, "\n".join(f"MM{k}: {'Yes' if k % 2 else 'No'} | reason {k}" for k in range(1, 8)))
    assert mm.labels == {f"MM{k}": "Yes" if k % 2 else "No" for k in range(1, 8)} and mm.unreadable is None
    reply = (
        "PS1: Yes | (0,2) layer 0\nPS2: N/A | a removal\nPS3: yes\nPS4: Unclear\nPS5: no | D1 and D3 disagree\nPS6: n/a"
    )
    record = make_record(PS, "m", "e", JudgeItem(1, "", "c"), 0, "sha", reply)
    assert record.labels == {"PS1": "Yes", "PS2": "N/A", "PS3": "Yes", "PS4": "Unclear", "PS5": "No", "PS6": "N/A"}
    assert record.values == {"PS1": 1.0, "PS2": None, "PS3": 1.0, "PS4": 0.5, "PS5": 0.0, "PS6": None}


def _calls() -> Callable[[Episode], list[JudgeItem]]:
    seen: list[int] = []

    def items(episode: Episode) -> list[JudgeItem]:
        seen.append(1)
        return [JudgeItem(1, "", f"call {len(seen)}")]

    return items


@pytest.mark.parametrize(
    ("broken", "says"),
    [
        (replace(SG, items=_calls()), "items differ between two calls"),
        (replace(SG, items=lambda e: [JudgeItem(1, "D1", "a"), JudgeItem(1, "D1", "b")]), "share a (turn, subject)"),
        (replace(SG, items=lambda e: [JudgeItem(1, "", "  ")]), "empty context"),
        (replace(SG, items=lambda e: [JudgeItem(1, "", "x" * 50_000)]), "context of 50,000 characters"),
        (replace(SG, items=lambda e: [JudgeItem(e.last_turn + 1, "", "x")]), "not a turn of the episode"),
        (replace(SG, questions=(*SG.questions, SG.questions[0])), "question codes repeat"),
        (replace(SG, world="rooms"), "judges 'rooms' episodes"),
        (replace(SG, runs=0), "runs 0 times"),
    ],
)
def test_the_contract_check_names_what_a_broken_judge_does_wrong(episodes, monkeypatch, broken, says):
    monkeypatch.setattr("simlab.worlds.blocks.judges.JUDGES", (broken,))
    with pytest.raises(AssertionError, match=re.escape(says)):
        judge_test("blocks", episodes[:1])
