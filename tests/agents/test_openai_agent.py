"""The openai plugin agent through the real ``openai`` client against the fake server: whole blocks and rooms
episodes, retries and give-ups, the raw records, and the API key kept out of every recording and log."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from simlab.agents.resolve import make_agents, role_specs
from simlab.core.errors import ConfigError, InfrastructureError
from simlab.core.plugins import AgentSpec, discover
from simlab.core.world import Observation
from simlab.testing.openai_server import FakeOpenAIServer, FaultPlan, scripted_replies
from simlab.testing.scripts import BLOCKS_SCRIPT
from simlab.worlds import get_family
from tests.agents.live_agents import (
    BUILDER_OBS,
    DIRECTOR_OBS,
    KEY,
    KEY_ENV,
    MODEL,
    agent_settings,
    blocks_agent,
    episode_with,
)


@pytest.fixture
def blocks_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT, default=None)) as server:
        yield server


def builder(server: FakeOpenAIServer, **more: Any):
    return blocks_agent(server, "builder", **more)


# ---- whole episodes -------------------------------------------------------------------------------------
def test_a_blocks_episode_runs_through_the_real_client(blocks_server, caplog):
    caplog.set_level(logging.DEBUG)
    task = get_family("blocks").tasks.generate(1, 0)[0]
    settings = agent_settings(blocks_server, temperature=0.2, prices={"prompt": 1.0})
    episode, agents = episode_with("blocks", task, {"turns": 3}, {"director": settings, "builder": settings})

    director_requests = [r for r in blocks_server.requests if "You are director" in r["messages"][0]["content"]]
    parts = [p for r in director_requests for p in r["messages"][1]["content"] if p["type"] == "image_url"]
    assert parts and all(p["image_url"]["url"].startswith("data:image/png;base64,") for p in parts)
    assert {r["temperature"] for r in blocks_server.requests} == {0.2}

    placed = [e for e in episode.events if e.kind == "action" and e.role == "builder"]
    assert placed and placed[0].data["action"]["action"] == "place"
    assert [e for e in episode.events if e.kind == "result" and e.data.get("ok")]
    assert episode.summary["metrics"]["overall_progress"] > 0
    assert not [e for e in episode.events if e.kind == "protocol_error"]

    wall = next(p for r in episode.raw if r["role"] != "builder" for p in r["request"]["messages"][1]["content"])
    assert wall == {"type": "text", "text": wall["text"]}  # the first part is the observation's text
    refs = [
        p
        for r in episode.raw
        for m in r["request"]["messages"]
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image"
    ]
    assert refs and {p["name"] for p in refs} == {"wall", "board"} and all(len(p["sha256"]) == 64 for p in refs)
    assert all(r["usage"]["prompt_tokens"] > 0 and r["cost"] > 0 for r in episode.raw)
    assert agents["builder"].usage["requests"] == sum(r["role"] == "builder" for r in episode.raw)

    recorded = json.dumps(episode.to_json())
    assert "data:image" not in recorded and "base64" not in recorded
    assert KEY not in recorded and KEY not in caplog.text
    assert blocks_server.saw_authorization and all(a == f"Bearer {KEY}" for a in blocks_server.saw_authorization)


def test_a_rooms_episode_runs_and_the_answer_is_read():
    said = {"answerer": 0}

    def answerer(body: dict[str, Any]) -> str:
        said["answerer"] += 1
        return "How many chairs do you see?" if said["answerer"] == 1 else "Thanks, that is enough.\nEND"

    script = {
        "The conversation with the Helper is over": "(B)",
        "You are the Answerer": answerer,
        "You are the Helper": "I see two chairs by the window.",
    }
    task = get_family("rooms").tasks.generate(1, 0, groups=["counting"])[0]
    with FakeOpenAIServer(scripted_replies(script, default=None)) as server:
        settings = agent_settings(server, text_only=True)
        episode, _ = episode_with("rooms", task, {}, {"answerer": settings, "helper": settings})
        sent = server.requests

    assert not [p for r in sent for m in r["messages"] if isinstance(m["content"], list) for p in m["content"]]
    messages = [(e.role, e.data["text"]) for e in episode.events if e.kind == "message"]
    assert messages == [
        ("answerer", "How many chairs do you see?"),
        ("helper", "I see two chairs by the window."),
        ("answerer", "Thanks, that is enough."),
    ]
    ended = [e.data["state"] for e in episode.events if e.kind == "state" and e.data["state"]["phase"] == "answer"]
    assert ended == [{"phase": "answer", "ended_early": True}]
    answer = next(e for e in episode.events if e.kind == "result")
    assert answer.data["answer"] == "B" and episode.summary["metrics"]["invalid"] == 0.0
    assert KEY not in json.dumps(episode.to_json())


# ---- retries --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("fault", "error", "status"),
    [
        ("429", "RateLimitError", 429),
        ("500", "InternalServerError", 500),
        ("503", "InternalServerError", 503),
        ("drop", "APIConnectionError", None),
        ("timeout", "APITimeoutError", None),
        ("malformed", "JSONDecodeError", None),
    ],
)
def test_transient_failures_are_retried_and_recorded(fault, error, status):
    plan = FaultPlan(schedule={1: fault}, retry_after_s=0, hang_s=1.0)
    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT, default=None), faults=plan) as server:
        reply = builder(server, timeout=0.3).act(BUILDER_OBS)
    assert reply.action == {"action": "place", "block": "gs", "cell": [0, 1], "layer": 0}
    (record,) = reply.raw
    (attempt,) = record["attempts"]
    assert (attempt["error"], attempt["status"]) == (error, status)
    assert attempt["retry_after"] == (0.0 if fault == "429" else None)
    assert record["error"] is None and record["response"]["finish_reason"] == "stop"


def test_retry_after_is_honoured_and_backoff_is_seeded():
    waits: list[float] = []
    plan = FaultPlan(schedule={1: "429", 2: "500", 3: "500"}, retry_after_s=3)
    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT, default=None), faults=plan) as server:
        agent = builder(server, backoff_s=2.0)
        agent.caller.sleep = waits.append  # no real waiting
        reply = agent.act(BUILDER_OBS)
    assert reply.action is not None
    assert [a["waited_s"] for a in reply.raw[0]["attempts"]] == [round(w, 4) for w in waits]
    assert waits[0] == 3.0 and 2.0 <= waits[1] <= 4.0 and 4.0 <= waits[2] <= 8.0  # 2 * 2**n, jittered down
    again: list[float] = []
    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT, default=None), faults=plan) as server:
        agent = builder(server, backoff_s=2.0)
        agent.caller.sleep = again.append
        agent.act(BUILDER_OBS)
    assert again == waits  # the jitter follows the reset seed


def test_the_agent_gives_up_past_max_retries_or_the_wait_bound():
    """Past its retries the endpoint's failure is an infrastructure failure, not the model's reply: act raises
    InfrastructureError carrying the act's records (it used to return the protocol's give-up reply)."""
    plan = FaultPlan(schedule={n: "500" for n in range(1, 10)})
    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT, default=None), faults=plan) as server:
        with pytest.raises(InfrastructureError, match="HTTP 500 InternalServerError on 3 attempts") as caught:
            builder(server, max_retries=2).act(BUILDER_OBS)
        (record,) = caught.value.records
        assert [a["error"] for a in record["attempts"]] == ["InternalServerError"] * 3
        assert record["error"] == "InternalServerError" and record["response"] is None
        assert caught.value.role == "builder" and caught.value.status == 500
        assert caught.value.endpoint == server.base_url
        with pytest.raises(InfrastructureError) as bounded:
            builder(server, backoff_s=1.0, max_wait_s=0.1).act(BUILDER_OBS)
        (record,) = bounded.value.records
        assert len(record["attempts"]) == 1 and record["attempts"][0]["waited_s"] == 0.0


# ---- re-asks --------------------------------------------------------------------------------------------
def test_an_empty_reply_is_re_asked_once():
    plan = FaultPlan(schedule={1: "empty"})
    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT, default=None), faults=plan) as server:
        reply = builder(server).act(BUILDER_OBS)
        second = server.requests[1]["messages"]
    assert reply.action is not None and [r["call"] for r in reply.raw] == [1, 2]
    assert reply.raw[0]["parse_error"] == "no PLACE, REMOVE or CLARIFY line" and reply.raw[1]["parse_error"] is None
    assert second[-1]["role"] == "user" and "could not be read" in second[-1]["content"]


def test_unreadable_replies_give_up_per_protocol():
    """A director that could not be read twice had its raw text, private thoughts and all, made its public
    message. Now it says nothing that turn and the reply carries the problem (the episode records it)."""
    script = {
        "You are director": "<think>I secretly know red goes first.</think> I think red goes first.",
        "You are the builder": "Let me think about it.",
    }
    with FakeOpenAIServer(scripted_replies(script, default=None)) as server:
        reply = builder(server).act(BUILDER_OBS)
        factory = discover().load_agent_factory("openai")
        director = factory("D1", MODEL, {"world": "blocks", "agent": agent_settings(server)})
        director.reset(1, "D1", {})
        said = director.act(Observation("D1", 1, "Your wall", {}, {"persona": "cautious"}))
        reask = server.requests[1]["messages"]
    assert reply.action is None and len(reply.raw) == 2 and all(r["parse_error"] for r in reply.raw)
    assert [m["role"] for m in reask] == ["system", "user", "assistant", "user"]
    # nothing public is said; the private reasoning is kept as reasoning (never as the message)
    assert said.message is None and said.reasoning == "I secretly know red goes first." and len(said.raw) == 2
    assert said.problem == "no <message>...</message> block" and reply.problem == "no PLACE, REMOVE or CLARIFY line"


def test_the_request_the_server_receives_is_the_one_recorded_with_the_clients_headers(blocks_server):
    reply = builder(blocks_server, temperature=0.2).act(BUILDER_OBS)
    (record,) = reply.raw
    sent = record["request"]
    assert blocks_server.requests == [{"model": sent["model"], "messages": sent["messages"], **sent["params"]}]
    headers = {name.lower(): value for name, value in blocks_server.request_headers[0].items()}
    assert headers["content-type"] == "application/json" and headers["user-agent"].startswith("OpenAI/Python")
    assert blocks_server.saw_authorization == [f"Bearer {KEY}"]


# ---- settings -------------------------------------------------------------------------------------------
def test_settings_are_checked_and_extra_fields_are_sent(blocks_server):
    agent = builder(blocks_server, extra={"top_p": 0.5, "seed": 3}, max_tokens=50)
    agent.act(BUILDER_OBS)
    sent = blocks_server.requests[-1]
    assert (sent["model"], sent["top_p"], sent["seed"], sent["max_tokens"]) == (MODEL, 0.5, 3, 50)
    fam = get_family("blocks")
    specs = role_specs(fam, [AgentSpec.parse("builder=openai:m")])
    for bad in ({"temprature": 0.1}, {"timeout": -1}, {"text_only": "yes"}, {"extra": {"messages": []}}):
        with pytest.raises(ConfigError, match="agent builder=openai:m"):
            make_agents(fam, specs, fam.default_settings, registry=discover(), agent_settings={"builder": bad})
    with pytest.raises(ConfigError, match="name the model"):
        make_agents(fam, role_specs(fam, [AgentSpec.parse("builder=openai")]), {}, registry=discover())


def test_a_missing_key_variable_is_a_config_error(monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    factory = discover().load_agent_factory("openai")
    with pytest.raises(ConfigError, match=KEY_ENV):  # when the agent is made: before a run folder is
        factory("builder", MODEL, {"world": "blocks", "agent": {"api_key_env": KEY_ENV}})


def test_roles_it_cannot_play_are_refused():
    factory = discover().load_agent_factory("openai")
    with pytest.raises(ValueError, match=r"has no role .builder."):
        factory("builder", MODEL, {"world": "rooms", "agent": {}})


def test_a_refused_request_raises_without_retrying(blocks_server):
    from simlab.agents.openai_agent import ModelCallError

    agent = builder(blocks_server, base_url=blocks_server.base_url + "/nowhere")  # the server answers 404
    with pytest.raises(ModelCallError, match="HTTP 404") as caught:
        agent.act(BUILDER_OBS)
    assert KEY not in str(caught.value) and blocks_server.stats.requests == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I can answer now.\nEND", ("I can answer now.", True)),
        ("Thanks! [END]", ("Thanks!", True)),
        ("**END**", ("", True)),
        (
            "The end table is by the door.\nEnding words matter.",
            ("The end table is by the door.\nEnding words matter.", False),
        ),
    ],
)
def test_the_answerer_ends_the_dialogue_with_an_end_line(text, expected):
    discover().load_agent_factory("openai")  # puts the plugin folder on sys.path
    from simlab.worlds.rooms.protocol import split_end

    assert split_end(text) == expected


def test_a_rooms_answerer_on_mapping_sends_its_view_and_the_map_as_images():
    script = {
        "The conversation with the Helper is over": "yes",
        "You are the Answerer": "What do you see on your left?\nEND",
        "You are the Helper": "A sofa.",
    }
    task = get_family("rooms").tasks.generate(1, 0, groups=["mapping"])[0]
    with FakeOpenAIServer(scripted_replies(script, default=None)) as server:
        settings = agent_settings(server)
        episode, _ = episode_with("rooms", task, {}, {"answerer": settings, "helper": settings})
        sent = server.requests
    parts = [p for r in sent for m in r["messages"] if isinstance(m["content"], list) for p in m["content"]]
    urls = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    assert urls and all(u.startswith("data:image/png;base64,") for u in urls)
    first_answerer = next(r for r in sent if "You are the Answerer" in json.dumps(r["messages"][0]))
    images = [p for m in first_answerer["messages"] if isinstance(m["content"], list) for p in m["content"]]
    assert sum(p.get("type") == "image_url" for p in images) == 2  # its view and the map
    recorded = [
        p
        for r in episode.raw
        for m in r["request"]["messages"]
        for p in m.get("content") or []
        if isinstance(p, dict) and p.get("type") == "image"
    ]
    assert {p["name"] for p in recorded} >= {"view", "map"} and "base64" not in json.dumps(episode.raw)


def test_a_reply_longer_than_any_reply_is_unreadable_not_handed_on():
    huge = "<message>" + "go left " * 300_000 + "</message>"
    with FakeOpenAIServer(scripted_replies({"You are director": huge})) as server:
        said = blocks_agent(server, "D1", max_tokens=1_000_000).act(DIRECTOR_OBS)
    assert said.message is None and "2,400,019 characters long, past the 2,000,000" in (said.problem or "")


def test_a_key_of_any_shape_echoed_in_a_reply_is_never_recorded(tmp_path, monkeypatch):
    """Local servers take keys of any shape: one that is no ``sk-...`` and that a server echoes in its reply
    (content, reasoning, id) is still redacted from the recording, since it is the key in use."""
    from simlab.runner.batch import RunConfig, run

    key = "plainkey-CANARY-4711"
    monkeypatch.setenv(KEY_ENV, key)
    echoed = f"<think>my key is {key}</think>PLACE:gs:(0,1):0:CONFIRM:{key}"
    with FakeOpenAIServer(scripted_replies({"You are the builder": echoed})) as server:
        agents = ["builder=openai:" + MODEL]
        builder = {"builder": agent_settings(server, text_only=True)}
        run(RunConfig("blocks", 1, 1, agents=agents, settings={"turns": 2}, agent_settings=builder), tmp_path / "run")
    written = "".join(p.read_text("utf-8") for p in (tmp_path / "run").rglob("*") if p.is_file())
    assert key not in written and "[redacted]" in written
