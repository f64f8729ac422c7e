"""The fake OpenAI server, driven through the real ``openai`` client: replies, faults, concurrency, recording."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import openai
import pytest

from simlab.testing.openai_server import (
    FAULT_KINDS,
    FakeOpenAIServer,
    FaultPlan,
    echo_reply,
    main,
    scripted_replies,
)

KEY = "sk-test-SECRET"
SCRIPT = {
    "You are director": "<think>plan</think><message>place the red block</message>",
    "You are the builder": "PLACE:gs:(0,1):0:CONFIRM:ok",
}


def client_for(server: FakeOpenAIServer, timeout: float = 5.0) -> openai.OpenAI:
    """The real client, no retries, pointed at the fake server."""
    return openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0, timeout=timeout)


def ask(client: openai.OpenAI, user: str = "hello", system: str = "You are the builder") -> str | None:
    """One chat completion; the assistant text."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    reply = client.chat.completions.create(model="fake-model", messages=messages)  # type: ignore[arg-type]
    return reply.choices[0].message.content


@pytest.fixture
def faulty() -> Iterator[FakeOpenAIServer]:
    """A server whose first request fails as each kind in turn: request i+1 gets FAULT_KINDS[i]."""
    plan = FaultPlan(schedule={i + 1: k for i, k in enumerate(FAULT_KINDS)}, hang_s=2.0, delay_ms=20, retry_after_s=7)
    with FakeOpenAIServer(scripted_replies(SCRIPT), faults=plan) as server:
        yield server


def fail_as(server: FakeOpenAIServer, kind: str) -> None:
    """Point the schedule's first request at ``kind`` (the fixture's plan is per request number)."""
    server.faults = FaultPlan(schedule={1: kind}, hang_s=2.0, delay_ms=20, retry_after_s=7)


def test_scripted_completion_and_usage() -> None:
    with FakeOpenAIServer(scripted_replies(SCRIPT)) as server:
        client = client_for(server)
        reply = client.chat.completions.create(
            model="fake-model",
            messages=[{"role": "system", "content": "You are director."}, {"role": "user", "content": "go"}],
        )
        assert reply.choices[0].message.content == SCRIPT["You are director"]
        assert reply.choices[0].message.role == "assistant" and reply.choices[0].finish_reason == "stop"
        assert reply.object == "chat.completion" and reply.model == "fake-model"
        assert reply.usage is not None and reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
        assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
        assert ask(client, "You are the builder: place it", system="") == SCRIPT["You are the builder"]
        assert ask(client, "nothing matches", system="plain") == "echo: nothing matches"
        assert [m.id for m in client.models.list().data] == ["fake-model"]


def test_unmatched_script_without_default_is_a_server_error() -> None:
    server = FakeOpenAIServer(scripted_replies(SCRIPT, default=None))
    with server, pytest.raises(openai.InternalServerError, match="no scripted reply"):
        ask(client_for(server), "?", system="unknown")


def test_rate_limit_carries_retry_after(faulty: FakeOpenAIServer) -> None:
    fail_as(faulty, "429")
    with pytest.raises(openai.RateLimitError) as caught:
        ask(client_for(faulty))
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "7"


@pytest.mark.parametrize("kind", ["500", "503"])
def test_server_errors(faulty: FakeOpenAIServer, kind: str) -> None:
    fail_as(faulty, kind)
    with pytest.raises(openai.InternalServerError) as caught:
        ask(client_for(faulty))
    assert caught.value.status_code == int(kind)


def test_drop_is_a_connection_error(faulty: FakeOpenAIServer) -> None:
    fail_as(faulty, "drop")
    with pytest.raises(openai.APIConnectionError) as caught:
        ask(client_for(faulty))
    assert not isinstance(caught.value, openai.APITimeoutError)


def test_hang_is_a_timeout(faulty: FakeOpenAIServer) -> None:
    fail_as(faulty, "timeout")
    with pytest.raises(openai.APITimeoutError):
        ask(client_for(faulty, timeout=0.3))


def test_malformed_body_fails_to_parse(faulty: FakeOpenAIServer) -> None:
    """The installed client calls ``response.json()`` on an application/json body and lets the decode error out."""
    fail_as(faulty, "malformed")
    with pytest.raises(json.JSONDecodeError):
        ask(client_for(faulty))


@pytest.mark.parametrize("as_null", [False, True])
def test_empty_reply(as_null: bool) -> None:
    with FakeOpenAIServer(faults=FaultPlan(schedule={1: "empty"}, empty_as_null=as_null)) as server:
        assert ask(client_for(server)) == (None if as_null else "")
        assert server.stats.faulted == {"empty": 1}


def test_delay_still_answers(faulty: FakeOpenAIServer) -> None:
    fail_as(faulty, "delay")
    assert ask(client_for(faulty)) == SCRIPT["You are the builder"]
    assert faulty.stats.faulted == {"delay": 1} and faulty.stats.served == 0


def test_every_kind_in_order_then_recovery(faulty: FakeOpenAIServer) -> None:
    client = client_for(faulty, timeout=0.3)
    outcomes = []
    for _ in FAULT_KINDS:
        try:
            outcomes.append(ask(client))
        except (openai.OpenAIError, json.JSONDecodeError) as exc:
            outcomes.append(type(exc).__name__)
    assert outcomes == [
        SCRIPT["You are the builder"],
        "RateLimitError",
        "InternalServerError",
        "InternalServerError",
        "APIConnectionError",
        "APITimeoutError",
        "JSONDecodeError",
        "",
    ]
    assert ask(client) == SCRIPT["You are the builder"]
    stats = faulty.stats
    assert stats.requests == len(FAULT_KINDS) + 1 and stats.served == 1
    assert stats.faulted == dict.fromkeys(FAULT_KINDS, 1)


def test_fault_rates_are_deterministic_from_the_seed() -> None:
    plan = FaultPlan(rates={"429": 0.2, "500": 0.1, "drop": 0.1}, seed=3)
    draws = [plan.fault_for(n) for n in range(1, 2001)]
    assert draws == [FaultPlan(rates=dict(plan.rates), seed=3).fault_for(n) for n in range(1, 2001)]
    assert draws != [FaultPlan(rates=dict(plan.rates), seed=4).fault_for(n) for n in range(1, 2001)]
    assert 0.15 < draws.count("429") / len(draws) < 0.25 and draws.count(None) > len(draws) / 2
    assert set(draws) == {None, "429", "500", "drop"}
    assert set(FaultPlan.uniform(1.0, ["500", "503"]).fault_for(n) for n in range(1, 50)) == {"500", "503"}


@pytest.mark.parametrize(
    "bad", [{"rates": {"boom": 0.1}}, {"rates": {"500": 0.7, "503": 0.7}}, {"schedule": {1: "x"}}, {"hang_s": 1e6}]
)
def test_bad_plans_are_refused(bad: dict) -> None:
    with pytest.raises(ValueError):
        FaultPlan(**bad)


def test_64_concurrent_requests_overlap() -> None:
    with FakeOpenAIServer(latency_ms=100) as server:
        client = client_for(server, timeout=10)
        with ThreadPoolExecutor(max_workers=64) as pool:
            replies = list(pool.map(lambda i: ask(client, f"request {i}"), range(64)))
        assert replies == [f"echo: request {i}" for i in range(64)]
        stats = server.stats
        assert stats.requests == stats.served == 64 and stats.in_flight == 0
        assert stats.max_in_flight > 1
        seen = sorted(r["messages"][-1]["content"] for r in server.requests)
        assert seen == sorted(f"request {i}" for i in range(64))


def test_requests_recorded_and_key_sent_but_never_recorded() -> None:
    with FakeOpenAIServer() as server:
        ask(client_for(server), "record me")
        (body,) = server.requests
        assert body["model"] == "fake-model" and body["messages"][-1] == {"role": "user", "content": "record me"}
        assert server.saw_authorization == [f"Bearer {KEY}"]
        (headers,) = server.request_headers
        assert "authorization" not in {k.lower() for k in headers}
        assert KEY not in json.dumps([server.requests, server.request_headers])
        assert headers.get("Content-Type", headers.get("content-type")) == "application/json"


def test_loopback_only_and_stops_cleanly() -> None:
    server = FakeOpenAIServer(echo_reply)
    with server:
        assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
        assert server.port > 0
    with pytest.raises(RuntimeError):
        _ = server.base_url
    with server:  # restartable
        assert ask(client_for(server), "again") == "echo: again"


def test_command_line_serves_for_a_while(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--port", "0", "--duration-s", "0.05", "--fault-rate", "0.3", "--latency-ms", "10"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("http://127.0.0.1:") and "ServerStats(" in out


# ---- an endpoint one does not control -----------------------------------------------------------------------
@pytest.mark.parametrize("body", [b"[1, 2]", b"\xff\xfe not UTF-8", b'{"choices": "x"}', b""])
def test_raw_body_sends_any_bytes(body: bytes) -> None:
    with FakeOpenAIServer(faults=FaultPlan(schedule={1: "raw_body"}, raw_body=body)) as server:
        client = client_for(server)
        raw = client.chat.completions.with_raw_response.create(
            model="fake-model", messages=[{"role": "user", "content": "hi"}]
        )
        assert raw.http_response.content == body and raw.http_response.status_code == 200
        assert ask(client, "then") == "echo: then"
        assert server.stats.faulted == {"raw_body": 1}


@pytest.mark.parametrize(
    ("kind", "error"),
    [("401", openai.AuthenticationError), ("403", openai.PermissionDeniedError), ("404", openai.NotFoundError)],
)
def test_refusals_and_an_error_body_that_echoes_the_key(kind: str, error: type[Exception]) -> None:
    with FakeOpenAIServer(faults=FaultPlan(rates={kind: 1.0}, echo_auth=True)) as server:
        with pytest.raises(error) as caught:
            ask(client_for(server))
        assert caught.value.status_code == int(kind)  # type: ignore[attr-defined]
        assert f"Authorization: Bearer {KEY}" in str(caught.value) and f"your key is {KEY}" in str(caught.value)
    with FakeOpenAIServer(faults=FaultPlan(rates={kind: 1.0})) as server, pytest.raises(error) as caught:
        ask(client_for(server))
    assert KEY not in str(caught.value)  # echoing is opt-in


def test_a_raw_body_with_an_error_status() -> None:
    plan = FaultPlan(rates={"raw_body": 1.0}, raw_body=b"<html>bad gateway</html>", raw_status=502)
    with FakeOpenAIServer(faults=plan) as server, pytest.raises(openai.InternalServerError) as caught:
        ask(client_for(server))
    assert caught.value.status_code == 502


@pytest.mark.parametrize("bad", [{"raw_body": "text"}, {"raw_status": 99}, {"raw_status": 600}])
def test_bad_raw_body_plans_are_refused(bad: dict) -> None:
    with pytest.raises(ValueError):
        FaultPlan(**bad)


def test_a_server_that_stops_answering_holds_requests_until_told_again() -> None:
    with FakeOpenAIServer() as server:
        server.stop_answering()
        assert not server.answering
        with pytest.raises(openai.APITimeoutError):
            ask(client_for(server, timeout=0.3))
        server.answer_again()
        assert ask(client_for(server)) == "echo: hello"
        assert server.stats.faulted == {"silent": 1} and server.stats.requests == 2


def test_a_stopped_server_refuses_connections_and_comes_back_on_its_port() -> None:
    server = FakeOpenAIServer().start()
    try:
        client, port = client_for(server), server.port
        server.stop()
        with pytest.raises(openai.APIConnectionError):
            ask(client)
        server.start()
        assert server.port == port and ask(client) == "echo: hello"
    finally:
        server.stop()
