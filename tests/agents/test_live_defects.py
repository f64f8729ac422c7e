"""What a real model showed (issue 10), each reproduced against the fake server through the real client with
the replies real small models gave (``tests/fixtures/live_model_replies.json``): private text never becomes a
public message and every unreadable reply is counted; re-asks name the fault and template echoes are not
replies; a text-only model reads its pictures in words; the history is fitted to the model's context; calls
record their seed, first byte, total time and attempts; the report and the transcript show them per role."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from simlab.analysis.report import role_stats
from simlab.cli import main
from simlab.core.errors import InfrastructureError
from simlab.core.recording import load_episode
from simlab.core.usage import model_usage
from simlab.core.world import Observation
from simlab.runner.batch import RunConfig, run
from simlab.runner.episode import UNREADABLE
from simlab.testing.openai_server import FakeOpenAIServer, FaultPlan, last_user_text, scripted_replies
from simlab.testing.scripts import BLOCKS_SCRIPT, builder_says
from simlab.worlds import get_family
from tests.agents.live_agents import (
    BUILDER_OBS,
    DIRECTOR_OBS,
    KEY_ENV,
    MODEL,
    agent_settings,
    blocks_agent,
    episode_with,
)

FIXTURES = json.loads((Path(__file__).parents[1] / "fixtures" / "live_model_replies.json").read_text("utf-8"))
REPLIES = FIXTURES["replies"]
PRIVATE = re.compile(r"</?think>|</?message>", re.IGNORECASE)


def real_reply(role: str, finish: str, accepted: bool, contains: str = "") -> str:
    """The first reply a real model gave as ``role`` (D = any director) that ended with ``finish``."""
    return next(
        r["content"]
        for r in REPLIES
        if r["world"] == "blocks"
        and r["role"].startswith(role)
        and r["finish_reason"] == finish
        and (r["our_parse_error"] is None) == accepted
        and contains in r["content"]
    )


BLOCKS_TASK = get_family("blocks").tasks.generate(1, 0)[0]


# ---- private text and give-ups --------------------------------------------------------------------------
def test_an_unreadable_director_says_nothing_and_every_give_up_is_counted():
    """55 of 99 director acts posted their raw text, <think> block included, to every other agent."""
    thinking = real_reply("D", "length", accepted=False, contains="<think>")
    with FakeOpenAIServer(scripted_replies({"You are director": thinking, "You are the builder": builder_says})) as s:
        settings = agent_settings(s, text_only=True)
        episode, _ = episode_with("blocks", BLOCKS_TASK, {"turns": 3}, {"director": settings, "builder": settings})

    private = thinking.split("<think>", 1)[1][:60]
    public = [e.data["text"] for e in episode.events if e.kind == "message"]
    assert not [t for t in public if PRIVATE.search(t) or private in t]
    gave_up = Counter(e.role for e in episode.events if e.kind == "protocol_error" and e.data["code"] == UNREADABLE)
    replies = episode.summary["replies"]
    assert gave_up and all(replies[role]["unreadable"] == n == replies[role]["acts"] for role, n in gave_up.items())
    assert replies["builder"] == {"acts": 3, "unreadable": 0}
    stats = role_stats([episode.summary])
    assert {role: stats[role]["give_up_rate"] for role in gave_up} == dict.fromkeys(gave_up, 1.0)
    assert stats["builder"]["give_up_rate"] == 0.0


# ---- re-asks --------------------------------------------------------------------------------------------
def test_a_reply_cut_off_at_max_tokens_is_told_so_and_counted_as_cut_off():
    """A reply cut at max_tokens was told "no <message> block", so the model wrote the same again."""
    long_think = real_reply("D", "length", accepted=False, contains="<think>")
    with FakeOpenAIServer(scripted_replies({"You are director": long_think})) as server:
        said = blocks_agent(server, "D1", max_tokens=32).act(DIRECTOR_OBS)
        reask = last_user_text(server.requests[1])
    assert [r["response"]["finish_reason"] for r in said.raw] == ["length", "length"]
    assert "cut off at the length limit of 32 tokens" in reask and "answer much shorter" in reask
    assert said.message is None and "cut off" in (said.problem or "")
    assert model_usage([{"role": "D1", **r} for r in said.raw])["truncated"] == 2


@pytest.mark.parametrize(
    "text",
    [
        real_reply("D", "stop", accepted=True, contains="<message>your public message to the builder"),
        "Your reply could not be read (no <message>...</message> block). Reply again as your private reasoning, "
        "then a message of <think>your public message to the other directors.",  # the correction, copied
        "<think>your private reasoning</think>\n<message>one instruction for the builder</message>",
    ],
)
def test_template_echoes_and_the_correction_itself_are_not_director_replies(text):
    with FakeOpenAIServer(scripted_replies({"You are director": text})) as server:
        said = blocks_agent(server, "D1").act(DIRECTOR_OBS)
    assert said.message is None and "placeholder" in (said.problem or "")
    assert all("placeholder" in r["parse_error"] for r in said.raw)


@pytest.mark.parametrize("text", ["CLARIFY:question", "PLACE:block_code:position:CONFIRM:reasoning"])
def test_template_echoes_are_not_builder_moves(text):
    with FakeOpenAIServer(scripted_replies({"You are the builder": text})) as server:
        reply = blocks_agent(server).act(BUILDER_OBS)
    assert reply.action is None and reply.problem is not None and len(reply.raw) == 2


# ---- text-only models -----------------------------------------------------------------------------------
ROOMS_SCRIPT = {
    "The conversation with the Helper is over": "(B)",
    "You are the Answerer": "What is on your left?\nEND",
    "You are the Helper": "A sofa.",
}


def rooms_episode(text_only: bool):
    task = get_family("rooms").tasks.generate(1, 0, groups=["mapping"])[0]
    with FakeOpenAIServer(scripted_replies(ROOMS_SCRIPT, default=None)) as server:
        settings = agent_settings(server, text_only=text_only)
        episode, _ = episode_with("rooms", task, {}, {"answerer": settings, "helper": settings})
        return episode, server.requests


def test_a_text_only_rooms_model_reads_its_view_in_words_and_the_recording_says_what_it_got():
    """The prompt said "Your view is the attached image." and nothing was attached nor put into words."""
    episode, sent = rooms_episode(text_only=True)
    users = [m["content"] for r in sent for m in r["messages"] if m["role"] == "user"]
    assert users and all(isinstance(u, str) and "attach" not in u.lower() for u in users)
    first = users[0]
    words = first.split("What your pictures show, in words:", 1)
    assert len(words) == 2 and "[view]" in words[1] and len(words[1]) > 100
    observations = [e for e in episode.events if e.kind == "observation" and e.role in ("answerer", "helper")]
    assert observations and all(e.data["images"] == [] for e in observations)
    assert observations[0].data["text"] == first  # what the model was given, as it was given


def test_a_rooms_model_shown_pictures_is_told_which_are_attached_and_gets_no_words():
    episode, sent = rooms_episode(text_only=False)
    first = next(m["content"] for r in sent for m in r["messages"] if m["role"] == "user")
    text = first[0]["text"]
    assert "(Attached, in this order: view, map.)" in text and "in words" not in text
    assert next(e for e in episode.events if e.kind == "observation").data["images"]


def test_rooms_sends_the_role_introduction_and_the_task_once():
    _, sent = rooms_episode(text_only=True)
    for request in sent:
        system, user = (m["content"] for m in request["messages"][:2])
        repeated = [p for p in system.split("\n") if len(p) > 40 and p in user]
        assert not repeated, repeated


# ---- context ----------------------------------------------------------------------------------------------
TALKATIVE = (
    "<think>My wall shows it.</think>\n<message>"
    + "Put the large red block along the bottom of my wall, then the small blue one above its left end. " * 5
    + "</message>"
)
WAITING_BUILDER = "CLARIFY:Which block should I place first, and where exactly?"


def twenty_turns(server: FakeOpenAIServer, **more: Any):
    settings = agent_settings(server, text_only=True, **more)
    return episode_with("blocks", BLOCKS_TASK, {"turns": 20}, {"director": settings, "builder": settings})[0]


def test_a_20_turn_episode_fits_a_4k_context_with_max_context_tokens():
    """Director prompts reached 3,061 tokens after 4 turns; at 20 turns a 4k server refused them (HTTP 400)."""
    script = {"You are director": TALKATIVE, "You are the builder": WAITING_BUILDER}
    with FakeOpenAIServer(scripted_replies(script), context_tokens=4096) as server:
        episode = twenty_turns(server, max_context_tokens=4096)
        refused = server.stats.faulted
        sent = server.requests
    assert episode.summary["turns"] == 20 and episode.summary["outcome"] != "abort" and not refused
    trimmed = [r for r in episode.raw if r.get("history_left_out")]
    assert trimmed and all(r["usage"]["prompt_tokens"] < 4096 for r in episode.raw)
    prompts = [r["request"]["messages"][1]["content"] for r in trimmed]
    assert all("left out to fit the model's context" in p and "Your private view of the target" in p for p in prompts)
    assert max(len(json.dumps(r["messages"])) for r in sent) < 4 * 4096


def test_a_server_that_states_its_context_is_fitted_from_then_on():
    """Without max_context_tokens the 400 ended the run, and --resume hit it again."""
    script = {"You are director": TALKATIVE, "You are the builder": WAITING_BUILDER}
    with FakeOpenAIServer(scripted_replies(script), context_tokens=4096) as server:
        episode = twenty_turns(server)
    assert episode.summary["turns"] == 20 and episode.summary["outcome"] != "abort"
    refused = [r for r in episode.raw if r["error"]]
    assert refused and all(r["attempts"][-1]["status"] == 400 for r in refused)
    assert Counter(r["role"] for r in refused) == dict.fromkeys({r["role"] for r in refused}, 1)  # once per agent
    assert all(any("context is 4096 tokens" in n for n in r["notes"]) for r in refused)


def test_a_prompt_too_long_even_without_history_ends_the_episode_as_an_endpoint_failure():
    long_task = Observation("D1", 1, "x" * 400, {}, {"persona": "cautious"})
    server = FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT), context_tokens=50)
    with server, pytest.raises(InfrastructureError, match="maximum context length is 50 tokens"):
        blocks_agent(server, "D1").act(long_task)


# ---- what a call records ----------------------------------------------------------------------------------
def test_a_call_records_first_byte_total_time_and_attempts_apart():
    """A failed call recorded 0.0 s; requests counted answered calls (9 sent, 3 counted)."""
    plan = FaultPlan(schedule={1: "500"})
    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT), faults=plan, latency_ms=50) as server:
        reply = blocks_agent(server).act(BUILDER_OBS)
    (record,) = reply.raw
    assert [a["status"] for a in record["attempts"]] == [500]
    assert record["total_s"] > record["latency_s"] >= record["ttfb_s"] > 0.04
    usage = model_usage([{"role": "builder", **record}])
    assert (usage["requests"], usage["failed_requests"], usage["calls"]) == (2, 1, 1)


def test_a_call_that_fails_every_attempt_records_the_time_it_took():
    plan = FaultPlan(schedule=dict.fromkeys(range(1, 4), "500"))
    server = FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT), faults=plan, latency_ms=30)
    with server, pytest.raises(InfrastructureError) as failed:
        blocks_agent(server, max_retries=2).act(BUILDER_OBS)
    (record,) = failed.value.records
    assert len(record["attempts"]) == 3 and record["total_s"] >= 0.09 and record["response"] is None


def test_requests_carry_a_seed_from_the_episode_and_the_recording_keeps_it():
    def seeds(send_seed: bool) -> tuple[list[Any], list[Any]]:
        with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT)) as server:
            settings = agent_settings(server, text_only=True, send_seed=send_seed)
            episode, _ = episode_with("blocks", BLOCKS_TASK, {"turns": 2}, {"director": settings, "builder": settings})
            return [r.get("seed") for r in server.requests], [r["request"]["params"].get("seed") for r in episode.raw]

    sent, recorded = seeds(True)
    assert sent == recorded and None not in sent and len(set(sent)) == len(sent)
    assert seeds(True)[0] == sent  # the same episode asks with the same seeds
    assert seeds(False) == ([None] * len(sent), [None] * len(sent))


# ---- report and transcript ----------------------------------------------------------------------------------
def test_the_report_and_the_transcript_show_give_ups_calls_and_latency_per_role(tmp_path, monkeypatch, capsys):
    thinking = real_reply("D", "length", accepted=False, contains="<think>")
    script = {"You are director": thinking, "You are the builder": builder_says}
    with FakeOpenAIServer(scripted_replies(script), latency_ms=5) as server:
        settings = {"base_url": server.base_url, "api_key_env": KEY_ENV, "text_only": True, "backoff_s": 0.001}
        config = RunConfig(
            "blocks",
            episodes=1,
            agents=[f"director=openai:{MODEL}", f"builder=openai:{MODEL}"],
            settings={"turns": 2},
            agent_settings={"director": settings, "builder": settings},
        )
        run(config, tmp_path / "r")
    capsys.readouterr()
    assert main(["report", str(tmp_path / "r")]) == 0
    report = capsys.readouterr().out
    episode_file = next((tmp_path / "r" / "episodes").glob("*.json"))
    episode = load_episode(episode_file)
    stats = role_stats([episode.summary])
    directors = [role for role in stats if role.startswith("D") and stats[role]["acts"]]
    rows = {line.split()[0]: line.split() for line in report.splitlines() if line.split()[:1] in ([r] for r in stats)}
    assert "give-ups" in report and "first byte s" in report and directors
    for role in directors:
        acts, unreadable = int(stats[role]["acts"]), int(stats[role]["unreadable"])
        assert rows[role][1:4] == [str(acts), str(unreadable), "1.000"]

    html_file = tmp_path / "t.html"
    assert main(["replay", str(episode_file), "--export", "html", "--out", str(html_file)]) == 0
    html = html_file.read_text("utf-8")
    assert html.count("<li class=call>") == len(episode.raw) > 0
    assert "<table class=roles>" in html and html.count("could not be read") >= sum(
        bool(r["parse_error"]) for r in episode.raw
    )
