"""Whatever body an endpoint sends, the openai agent (through the real ``openai`` client, against the local
server's ``raw_body`` fault) returns a Reply the recording can hold or raises InfrastructureError: text that is
not UTF-8 or holds lone surrogates is replaced, usage numbers that are not finite non-negative counts are
dropped and noted, and any other shape of body is a malformed attempt, retried and then an endpoint failure."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simlab.core.errors import InfrastructureError
from simlab.core.plugins import discover
from simlab.core.world import Observation, Reply
from simlab.testing.openai_server import FakeOpenAIServer, FaultPlan, scripted_replies
from simlab.testing.scripts import BLOCKS_SCRIPT

KEY_ENV, KEY = "SIMLAB_BODY_TEST_KEY", "body-test-key-7c1e9a"
MODEL = "fake-model"
GOOD = "PLACE:gs:(0,1):0:CONFIRM:ok"
PLACED = {"action": "place", "block": "gs", "cell": [0, 1], "layer": 0}
BUILDER_OBS = Observation(
    "builder", 1, "Verified candidate moves (copy one whole line to play it):\nPLACE:gs:(0,1):0\n", {}, {}
)


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT, default=None)) as fake:
        yield fake


def builder(server: FakeOpenAIServer, **more: Any):
    """A blocks builder played by ``openai:fake-model`` against ``server``, with tiny backoff."""
    factory = discover().load_agent_factory("openai")
    agent_settings = {"base_url": server.base_url, "api_key_env": KEY_ENV, "timeout": 5, "backoff_s": 0.001, **more}
    agent = factory("builder", MODEL, {"world": "blocks", "agent": agent_settings})
    agent.reset(3, "builder", {})
    return agent


def completion(content: str = '"' + GOOD + '"', usage: str = '{"prompt_tokens": 5, "completion_tokens": 2}') -> bytes:
    """A chat completion body with ``content`` and ``usage`` spliced in as raw JSON text."""
    return (
        '{"id": "c1", "object": "chat.completion", "created": 0, "model": "m", "choices": [{"index": 0, '
        f'"message": {{"role": "assistant", "content": {content}}}, "finish_reason": "stop"}}], "usage": {usage}}}'
    ).encode()


def answering(server: FakeOpenAIServer, body: bytes, times: int = 10**6, status: int = 200) -> None:
    """The next ``times`` requests get ``body``; the rest are answered by the script."""
    schedule = {server.stats.requests + k: "raw_body" for k in range(1, min(times, 50) + 1)}
    rates = {"raw_body": 1.0} if times >= 10**6 else {}
    server.faults = FaultPlan(rates=rates, schedule=schedule, raw_body=body, raw_status=status)


def strict_utf8_json(value: Any) -> bytes:
    """What a recording writes: strict JSON, encoded as strict UTF-8 (raises if it cannot be)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")


# ---- text that is data ----------------------------------------------------------------------------------
def test_a_lone_surrogate_in_a_reply_is_replaced_and_the_reply_is_read(server):
    answering(server, completion(content='"' + GOOD + ' \\ud800 and \\udfff"'))
    reply = builder(server).act(BUILDER_OBS)
    assert reply.action == PLACED
    (record,) = reply.raw
    assert record["response"]["content"] == GOOD + " \ufffd and \ufffd"
    assert any("surrogate" in note for note in record["notes"])
    strict_utf8_json(record)


def test_a_body_that_is_not_utf8_is_read_with_replacement_characters(server):
    answering(server, completion(content=f'"{GOOD} caf@@"').replace(b"@@", b"\xe9\xff"))  # Latin-1, and 0xff
    reply = builder(server).act(BUILDER_OBS)
    assert reply.action == PLACED
    (record,) = reply.raw
    assert record["response"]["content"] == f"{GOOD} caf\ufffd\ufffd"
    assert any("UTF-8" in note for note in record["notes"])
    strict_utf8_json(record)


@pytest.mark.parametrize(
    ("usage", "kept"),
    [
        ('"many"', {}),
        ("1e400", {}),
        ("[1, 2]", {}),
        ('{"prompt_tokens": "many", "completion_tokens": 2}', {"completion_tokens": 2, "total_tokens": 0}),
        ('{"prompt_tokens": 1e400, "completion_tokens": 2}', {"completion_tokens": 2, "total_tokens": 0}),
        ('{"prompt_tokens": -3, "completion_tokens": 2}', {"completion_tokens": 2, "total_tokens": 0}),
        ('{"prompt_tokens": true, "completion_tokens": 2}', {"completion_tokens": 2, "total_tokens": 0}),
        ('{"prompt_tokens": 1' + "0" * 5000 + ', "completion_tokens": 2}', {"completion_tokens": 2, "total_tokens": 0}),
        ('{"prompt_tokens": 1' + "0" * 400 + ', "completion_tokens": 2}', {"completion_tokens": 2, "total_tokens": 0}),
        ('{"prompt_tokens": 1e300, "completion_tokens": 2}', {"completion_tokens": 2, "total_tokens": 0}),
    ],
)
def test_usage_that_is_not_a_finite_count_is_ignored_and_noted(server, usage, kept):
    answering(server, completion(usage=usage), times=1)
    agent = builder(server, max_retries=1)
    reply = agent.act(BUILDER_OBS)
    assert reply.action == PLACED
    record = reply.raw[0]
    assert record["usage"] == kept and record["notes"] and "ignored" in " ".join(record["notes"])
    assert all(isinstance(v, float | int) and v < 1e300 for v in agent.usage.values())
    strict_utf8_json([record, agent.usage])


# ---- bodies of another shape ----------------------------------------------------------------------------
MALFORMED = {
    "a JSON list": b"[1, 2, 3]",
    "choices is a string": b'{"choices": "x"}',
    "choices is empty": b'{"choices": []}',
    "no choices, an error": b'{"error": {"message": "overloaded"}}',
    "a choice that is a number": b'{"choices": [7]}',
    "a message that is text": b'{"choices": [{"message": "hi"}]}',
    "content that is a number": b'{"choices": [{"message": {"content": 12}}]}',
    "a JSON string": b'"PLACE:gs:(0,1):0:CONFIRM:ok"',
    "null": b"null",
    "not JSON": b"<html>502 Bad Gateway</html>",
    "empty": b"",
    "NaN": b'{"choices": NaN}',
    "nested too deep": b"[" * 100_000 + b"]" * 100_000,
    "not UTF-8 and not JSON": b"\xff\xfe\x00garbage",
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_malformed_body_is_retried_and_the_next_answer_is_read(server, name):
    answering(server, MALFORMED[name], times=1)
    reply = builder(server, max_retries=2).act(BUILDER_OBS)
    assert reply.action == PLACED
    (record,) = reply.raw
    (attempt,) = record["attempts"]
    assert attempt["error"] in ("MalformedResponse", "JSONDecodeError") and attempt["waited_s"] > 0
    assert record["error"] is None and server.stats.requests == 2
    strict_utf8_json(record)


@pytest.mark.parametrize("name", ["a JSON list", "choices is a string", "not JSON", "not UTF-8 and not JSON"])
def test_malformed_bodies_past_the_retries_are_an_infrastructure_failure(server, name):
    answering(server, MALFORMED[name])
    with pytest.raises(InfrastructureError) as caught:
        builder(server, max_retries=2).act(BUILDER_OBS)
    failure = caught.value
    assert str(failure).startswith(f"the model endpoint at {server.base_url} failed: ")
    assert "on 3 attempts" in failure.reason and failure.role == "builder" and failure.status is None
    (record,) = failure.records
    assert len(record["attempts"]) == 3 == server.stats.requests and record["response"] is None
    strict_utf8_json(failure.to_json())


def test_a_5xx_status_with_any_body_is_retried_then_an_infrastructure_failure(server):
    answering(server, b"\xff not even text", status=502)
    with pytest.raises(InfrastructureError, match=r"HTTP 502 .* on 2 attempts") as caught:
        builder(server, max_retries=1).act(BUILDER_OBS)
    assert caught.value.status == 502 and server.stats.requests == 2


# ---- anything at all ------------------------------------------------------------------------------------
TEXT = st.text(alphabet=st.characters(categories=["Cs"]) | st.characters(), max_size=20)  # lone surrogates too
JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | TEXT | TEXT.map(lambda t: GOOD + t)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
NEAR_COMPLETIONS = st.fixed_dictionaries(
    {},
    optional={
        "id": JSON_VALUES,
        "choices": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "message": st.fixed_dictionaries({}, optional={"content": JSON_VALUES}) | JSON_VALUES,
                    "finish_reason": JSON_VALUES,
                },
            )
            | JSON_VALUES,
            max_size=2,
        )
        | JSON_VALUES,
        "usage": st.dictionaries(st.sampled_from(["prompt_tokens", "completion_tokens", "total_tokens"]), JSON_VALUES)
        | JSON_VALUES,
    },
)


def _as_json(value: Any) -> bytes:
    return json.dumps(value).encode("utf-8", errors="surrogatepass")  # NaN, Infinity and surrogates included


BODIES = (
    st.binary(max_size=64)
    | JSON_VALUES.map(_as_json)
    | NEAR_COMPLETIONS.map(_as_json)
    | st.tuples(NEAR_COMPLETIONS.map(_as_json), st.binary(max_size=4)).map(lambda p: p[0][:-1] + p[1] + b"}")
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=BODIES)
def test_any_body_gives_a_reply_or_an_infrastructure_failure(server, body):
    answering(server, body)
    agent = builder(server, max_retries=0)
    try:
        reply = agent.act(BUILDER_OBS)
    except InfrastructureError as exc:
        records: tuple[dict[str, Any], ...] = exc.records
        strict_utf8_json(exc.to_json())
        assert str(exc).startswith("the model endpoint at ")
    else:
        assert isinstance(reply, Reply)
        records = reply.raw
        strict_utf8_json([reply.message, reply.reasoning, reply.action])
    strict_utf8_json(list(records))
    strict_utf8_json(agent.usage)
    assert KEY not in json.dumps(list(records))


@pytest.mark.parametrize("retry_after", ["inf", "nan", "-5", "soon", "1e9"])
def test_a_retry_after_that_is_not_a_sane_number_never_hangs_or_breaks_the_record(server, retry_after):
    """A 429 whose Retry-After is not a finite non-negative number is backed off as usual; one past the wait
    bound ends the retries at once (an infrastructure failure) instead of sleeping for it."""
    server.faults = FaultPlan(
        rates={"raw_body": 1.0}, raw_body=b"{}", raw_status=429, raw_headers={"Retry-After": retry_after}
    )
    waits: list[float] = []
    agent = builder(server, max_retries=2, max_wait_s=60)
    agent.caller.sleep = waits.append
    with pytest.raises(InfrastructureError, match="HTTP 429") as caught:
        agent.act(BUILDER_OBS)
    (record,) = caught.value.records
    strict_utf8_json(record)
    if retry_after == "1e9":
        assert waits == [] and record["attempts"][0]["retry_after"] == 1e9 and len(record["attempts"]) == 1
    else:
        assert len(waits) == 2 and all(0 <= w < 1 for w in waits)
        assert [a["retry_after"] for a in record["attempts"]] == [None] * 3


def test_endpoint_text_in_a_failure_is_one_line_without_terminal_escapes(server):
    """The reason is printed on a terminal: escapes, newlines and the key in use are not passed through."""
    message = f"\u001b[2J\u001b]0;owned\u0007 bad key {KEY}\nsecond line \u009b31m" + "x" * 1000
    body = json.dumps({"error": {"message": message}}).encode()
    server.faults = FaultPlan(rates={"raw_body": 1.0}, raw_body=body, raw_status=401)
    with pytest.raises(InfrastructureError) as caught:
        builder(server).act(BUILDER_OBS)
    text = str(caught.value)
    assert text.startswith(f"the model endpoint at {server.base_url} failed: HTTP 401 AuthenticationError: ")
    assert "bad key [redacted] second line" in text and KEY not in text
    assert not any(ord(c) < 32 or 127 <= ord(c) < 160 for c in text) and len(text) < 500
    assert caught.value.records[0]["attempts"][0]["detail"] in text
