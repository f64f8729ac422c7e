"""Streamed replies (the agent setting ``stream``): the server-sent events reader on hand-made bodies, split
anywhere and hostile, and whole runs through the CLI against the local server, where a reasoning model's
private reasoning, streamed inline or in its own deltas, reaches reasoning events only, and a streamed run
records what an unstreamed one does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simlab.agents.openai_agent import (
    STREAM_BYTES,
    STREAM_CHARS,
    STREAM_LINE_BYTES,
    MalformedResponse,
    read_completion,
    read_stream,
)
from simlab.core.recording import load_run
from simlab.testing.openai_server import FakeOpenAIServer, FaultPlan, scripted_replies
from simlab.testing.scripts import BLOCKS_SCRIPT
from tests.agents.live_agents import BUILDER_OBS, blocks_agent

ROOT = Path(__file__).resolve().parents[2]
SECRET = "SECRET-5519"
PLACED = {"action": "place", "block": "gs", "cell": [0, 1], "layer": 0}


def sse(*events: Any, done: bool = True, newline: str = "\n") -> bytes:
    """A streamed body: each event (a chunk object, or text taken as it is) one ``data:`` line."""
    lines = [f"data: {e if isinstance(e, str) else json.dumps(e)}{newline}{newline}" for e in events]
    return ("".join(lines) + (f"data: [DONE]{newline}{newline}" if done else "")).encode()


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **more: Any) -> dict[str, Any]:
    """A ``chat.completion.chunk`` with one choice."""
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {"id": "chatcmpl-s1", "object": "chat.completion.chunk", "choices": [choice], **more}


USAGE = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
USAGE_CHUNK = {"id": "chatcmpl-s1", "object": "chat.completion.chunk", "choices": [], "usage": USAGE}


def strict_utf8_json(value: Any) -> bytes:
    """What a recording writes: strict JSON, encoded as strict UTF-8 (raises if it cannot be)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")


def bytewise(body: bytes) -> Iterator[bytes]:
    """The body one byte at a time: every line, event and UTF-8 character split across reads."""
    return (body[i : i + 1] for i in range(len(body)))


# ---- the reader on hand-made bodies ---------------------------------------------------------------------
@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_deltas_are_assembled_into_what_an_unstreamed_body_gives(field, newline):
    body = sse(
        chunk({"role": "assistant", "content": ""}, usage=None),
        chunk({field: "first I "}),
        chunk({field: "plan ✓"}),
        chunk({"content": "héllo "}),
        chunk({"content": None}),
        chunk({"content": "😀 world"}),
        chunk({}, "stop"),
        USAGE_CHUNK,
        newline=newline,
    )
    streamed = read_stream(bytewise(body))
    message = {"role": "assistant", "content": "héllo 😀 world", field: "first I plan ✓"}
    unstreamed = {"id": "chatcmpl-s1", "choices": [{"message": message, "finish_reason": "stop"}], "usage": USAGE}
    assert streamed == read_completion(json.dumps(unstreamed).encode())
    assert streamed == ("héllo 😀 world", {**streamed[1], "reasoning": "first I plan ✓"}, USAGE, [])


def test_comments_other_fields_and_multi_line_data_are_read_as_the_spec_says():
    text = (
        ": keep-alive\n\nevent: message\nid: 7\nretry: 1000\n"
        'data: {"choices": [{"delta":\ndata:  {"content": "A"}, "finish_reason": "stop"}]}\n\n'
        ":\n\ndata:[DONE]\n\n"
    )
    content, response, usage, notes = read_stream([text.encode()])
    assert (content, response["finish_reason"], usage, notes) == ("A", "stop", {}, [])


def test_a_stream_without_done_but_finished_is_read_and_noted():
    content, response, _usage, notes = read_stream([sse(chunk({"content": "A"}, "length"), done=False)])
    assert (content, response["finish_reason"]) == ("A", "length")
    assert notes == ["the stream ended without 'data: [DONE]'"]


def test_bad_usage_ids_and_text_are_cleaned_and_noted_once():
    bad = {"id": 7, "choices": [{"delta": {"content": "x\ud800"}, "finish_reason": None}], "usage": None}
    body = sse(*[bad] * 3, chunk({}, "stop"), {"choices": [], "usage": {"prompt_tokens": -1}}).replace(b"x", b"\xff")
    content, response, usage, notes = read_stream([body])
    assert content == "\ufffd\ufffd" * 3 and response["id"] is None
    assert usage == {"completion_tokens": 0, "total_tokens": 0}
    assert len(notes) == len(set(notes)) == 4, notes  # not UTF-8, surrogates, the id, usage: each said once
    strict_utf8_json([content, response, usage, notes])


MALFORMED = {
    "empty": b"",
    "a JSON completion, not a stream": json.dumps({"choices": [{"message": {"content": "A"}}]}).encode(),
    "HTML": b"<html>502 Bad Gateway</html>",
    "only [DONE]": sse(),
    "an event that is not JSON": sse("{'choices': []}"),
    "an event that is a list": sse([1, 2]),
    "NaN": sse('{"choices": NaN}'),
    "no choices": sse({"id": "x", "object": "chat.completion.chunk"}),
    "choices is a string": sse({"choices": "A"}),
    "a choice that is a number": sse({"choices": [7]}),
    "a delta that is text": sse({"choices": [{"delta": "A"}]}),
    "content that is a number": sse(chunk({"content": 12})),
    "only a usage chunk": sse(USAGE_CHUNK),
    "an error event midway": sse(chunk({"content": "A"}), {"error": {"message": "overloaded"}}, chunk({}, "stop")),
    "cut off mid-chunk": sse(chunk({"content": "A"}), done=False)[:-10],
    "cut off between chunks": sse(chunk({"content": "A"}), done=False),
    "nested too deep": b"data: " + b"[" * 100_000 + b"]" * 100_000 + b"\n\n",
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_body_that_is_no_stream_of_chat_chunks_is_malformed(name):
    with pytest.raises(MalformedResponse) as caught:
        read_stream(bytewise(MALFORMED[name]) if len(MALFORMED[name]) < 4096 else [MALFORMED[name]])
    if name == "an error event midway":
        assert "overloaded" in str(caught.value)
    if name == "a JSON completion, not a stream":
        assert "not an event stream" in str(caught.value)


class Endless:
    """An endless body made of ``piece`` repeated, counting the bytes it was asked for."""

    def __init__(self, head: bytes, piece: bytes) -> None:
        self.head, self.piece, self.given = head, piece, 0

    def __iter__(self) -> Iterator[bytes]:
        yield self.head
        self.given += len(self.head)
        while True:
            yield self.piece
            self.given += len(self.piece)


def test_endless_text_is_cut_at_the_text_bound():
    body = Endless(sse(chunk({"role": "assistant"}), done=False), sse(chunk({"content": "x" * 9999}), done=False))
    content, response, _usage, notes = read_stream(body)
    assert len(content) == STREAM_CHARS and response["finish_reason"] is None
    assert notes == [f"the streamed text passed {STREAM_CHARS:,} characters: the rest of the stream was not read"]
    assert body.given < STREAM_CHARS * 1.1  # reading stopped there


def test_an_endless_stream_of_empty_chunks_is_cut_at_the_byte_bound():
    padded = sse(chunk({"content": ""}, padding="." * 65000), done=False)  # chunks that hold no text
    body = Endless(sse(chunk({"content": "A"}), done=False), padded)
    content, _response, _usage, notes = read_stream(body)
    assert content == "A" and body.given <= STREAM_BYTES
    assert notes == [f"the stream passed {STREAM_BYTES:,} bytes: the rest of the stream was not read"]


@pytest.mark.parametrize("piece", [b"data: " + b"x" * 65536, b"x" * 65536, b": " + b"x" * 65536])
def test_an_endless_line_is_cut_at_the_line_bound_and_never_held_whole(piece):
    """A line that never ends (data, an unknown field, a comment) is dropped at ``STREAM_LINE_BYTES``: what
    came before it is still read, and reading stops."""
    body = Endless(sse(chunk({"content": "A"}, "stop"), done=False), piece)
    content, _response, _usage, notes = read_stream(body)
    assert content == "A" and body.given <= STREAM_LINE_BYTES * 1.1
    assert notes == [f"a line of the stream passed {STREAM_LINE_BYTES:,} bytes: the rest of the stream was not read"]


def test_an_event_of_many_data_lines_is_bounded_too():
    body = Endless(b"", b"data: " + b"x" * 65530 + b"\n")
    with pytest.raises(MalformedResponse, match="no chat completion chunk"):
        read_stream(body)
    assert body.given <= STREAM_LINE_BYTES * 1.1


EVENTS = st.one_of(
    st.sampled_from(["[DONE]", "{}", '{"choices": []}', '{"choices": [{"delta": {}, "finish_reason": "stop"}]}']),
    st.builds(lambda d: json.dumps({"choices": [{"delta": d}]}), st.dictionaries(st.text(max_size=8), st.text())),
    st.text(max_size=30),
)


@settings(max_examples=200, deadline=None)
@given(events=st.lists(EVENTS, max_size=6), garbage=st.binary(max_size=16), cut=st.integers(0, 400))
def test_any_stream_gives_a_reading_the_recording_can_hold_or_is_malformed(events, garbage, cut):
    body = (sse(*events, done=False) + garbage)[:cut] if cut < 400 else sse(*events) + garbage
    try:
        reading = read_stream([body])
    except MalformedResponse:
        return
    strict_utf8_json(list(reading))


# ---- whole runs through the CLI -------------------------------------------------------------------------
def thinking(body: dict[str, Any]) -> str:
    """Every role of the rooms world, answered as a reasoning model answers: think, then a letter."""
    return f"<think>{SECRET}: the partner must not read this</think>A"


def rooms_run(out: Path, server: FakeOpenAIServer, stream: bool) -> Path:
    """Three rooms episodes through the CLI, both roles played by ``openai:fake-model`` against ``server``."""
    args = ["run", "--world", "rooms", "--episodes", "3", "--seed", "4", "--out", str(out)]
    for role in ("answerer", "helper"):
        for key, value in (("base_url", server.base_url), ("api_key_env", "SIMLAB_STREAM_KEY"), ("stream", stream)):
            args += ["--agent-setting", f"{role}.{key}={json.dumps(value) if key == 'stream' else value}"]
        args += ["--agent", f"{role}=openai:fake-model"]
    env = {**os.environ, "SIMLAB_STREAM_KEY": "sk-stream"}
    done = subprocess.run([sys.executable, "main.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("field", [None, "reasoning_content"])
def test_a_streamed_thinking_model_s_reasoning_reaches_reasoning_events_only(tmp_path, field):
    with FakeOpenAIServer(thinking, reasoning_field=field) as server:
        out = rooms_run(tmp_path / "run", server, stream=True)
        asked = server.requests
    assert asked and all(r["stream"] is True and r["stream_options"] == {"include_usage": True} for r in asked)
    assert SECRET not in (out / "index.jsonl").read_text()
    kinds_with_secret, reasoning_events = set(), 0
    for episode in load_run(out).episodes():
        for event in episode.events:
            said = SECRET in json.dumps(event.data)
            kinds_with_secret |= {event.kind} if said else set()
            reasoning_events += event.kind == "reasoning" and said
        assert SECRET not in json.dumps(episode.summary)
        for record in episode.raw:
            assert record["request"]["params"]["stream"] is True
            assert record["usage"]["completion_tokens"] > 0 and record["response"]["finish_reason"] == "stop"
            assert record["response"]["content"] == ("A" if field else thinking({}))
            assert record["response"].get("reasoning", SECRET).startswith(SECRET)
    assert kinds_with_secret == {"reasoning"} and reasoning_events >= 6  # every message and every answer


def untimed(value: Any) -> Any:
    """``value`` without the seconds its model calls took (``*_s`` keys at any depth): no two runs take the
    same, and all else a run records follows from its seed."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if not k.endswith("_s")}
    return value


def test_a_streamed_run_records_what_an_unstreamed_run_does(tmp_path):
    runs = {}
    for stream in (False, True):
        with FakeOpenAIServer(thinking, reasoning_field="reasoning_content") as server:
            runs[stream] = load_run(rooms_run(tmp_path / f"stream-{stream}", server, stream)).episodes()
    assert len(runs[False]) == len(runs[True]) == 3
    for plain, streamed in zip(runs[False], runs[True], strict=True):
        assert [e.to_json() for e in streamed.events] == [e.to_json() for e in plain.events]
        assert untimed(streamed.summary) == untimed(plain.summary)
        assert [set(r) for r in streamed.raw] == [set(r) for r in plain.raw]
        for a, b in zip(plain.raw, streamed.raw, strict=True):
            assert {**b["request"]["params"], "stream": None} == {**a["request"]["params"], "stream": None}
            assert (b["usage"], {**b["response"], "id": None}) == (a["usage"], {**a["response"], "id": None})


# ---- retries --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("fault", "error", "status"),
    [
        ("429", "RateLimitError", 429),
        ("503", "InternalServerError", 503),
        ("drop", "APIConnectionError", None),
        ("timeout", "APITimeoutError", None),
        ("malformed", "MalformedResponse", None),
        ("raw_body", "MalformedResponse", None),
    ],
)
def test_a_streamed_request_answered_with_a_fault_is_retried(fault, error, status):
    cut = sse(chunk({"role": "assistant"}), chunk({"content": "PLACE"}), done=False)  # a connection cut midway
    plan = FaultPlan(schedule={1: fault}, retry_after_s=0, hang_s=1.0, raw_body=cut)
    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT, default=None), faults=plan) as server:
        reply = blocks_agent(server, stream=True, timeout=0.3).act(BUILDER_OBS)
        assert [r["stream"] for r in server.requests] == [True, True]
    assert reply.action == PLACED
    (record,) = reply.raw
    (attempt,) = record["attempts"]
    assert (attempt["error"], attempt["status"]) == (error, status)
    assert record["error"] is None and record["response"]["finish_reason"] == "stop" and record["usage"]


class _Stalling(BaseHTTPRequestHandler):
    """The first request's stream stalls after its first chunk; later ones are answered whole."""

    protocol_version = "HTTP/1.0"
    answered = 0
    lock = threading.Lock()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        """A stream, stalled or whole."""
        self.rfile.read(int(self.headers["Content-Length"]))
        with self.lock:
            type(self).answered += 1
            first = type(self).answered == 1
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(sse(chunk({"role": "assistant"}), done=False))
        self.wfile.flush()
        if first:
            time.sleep(1.5)  # past the client's timeout: the body stalls midway
        self.wfile.write(sse(chunk({"content": "PLACE:gs:(0,1):0:CONFIRM:ok"}, "stop"), USAGE_CHUNK))


def test_a_stream_that_stalls_midway_is_a_timeout_and_retried():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Stalling)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        endpoint = SimpleNamespace(base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1")
        reply = blocks_agent(endpoint, stream=True, timeout=0.5).act(BUILDER_OBS)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert reply.action == PLACED
    (record,) = reply.raw
    assert [a["error"] for a in record["attempts"]] == ["APITimeoutError"] and record["usage"] == USAGE
