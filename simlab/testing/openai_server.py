"""A local OpenAI-compatible chat server for tests and benchmarks, driven through the real ``openai`` client.

Loopback only (127.0.0.1, a free port by default), threaded (one thread per request, 64+ at once), with
scripted replies, a constant latency and deterministic fault injection::

    from simlab.testing.openai_server import FakeOpenAIServer, FaultPlan, scripted_replies

    reply = scripted_replies({"You are the builder": "PLACE:gs:(0,1):0:CONFIRM:ok"})
    with FakeOpenAIServer(reply, faults=FaultPlan(rates={"429": 0.2}, seed=1), latency_ms=200) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        ...
        assert server.stats.served > 0

Manual use: ``python -m simlab.testing.openai_server --port 8765 --latency-ms 200 --fault-rate 0.3``.

What the installed client (openai 3.x) raises for each fault kind, with ``max_retries=0``:

* ``"429"``: ``openai.RateLimitError`` (``err.response.headers["retry-after"]`` holds the seconds);
* ``"500"`` and ``"503"``: ``openai.InternalServerError`` (``err.status_code`` tells which);
* ``"drop"``: ``openai.APIConnectionError`` (the server closes the connection without a response);
* ``"timeout"``: ``openai.APITimeoutError`` (a subclass of ``APIConnectionError``) once the client timeout passes;
* ``"malformed"``: ``json.JSONDecodeError`` (a ``ValueError``) from the client's ``response.json()``: the body is
  declared ``application/json`` but is not JSON, and the client does not wrap that in an ``openai`` error (to a
  streamed request: an event stream whose one chunk is that broken JSON);
* ``"empty"``: no error, ``choices[0].message.content`` is ``""`` (or ``None`` with ``empty_as_null``; streamed,
  no content delta);
* ``"delay"``: no error, the answer comes ``delay_ms`` later.

Kinds an endpoint one does not control may answer with (:data:`HOSTILE_KINDS`; never part of a uniform plan
unless named):

* ``"raw_body"``: the plan's ``raw_body`` bytes (anything: not UTF-8, not JSON, the wrong JSON shape) sent as
  the body with status ``raw_status`` (200), the ``application/json`` content type and ``raw_headers``;
* ``"401"``, ``"403"``, ``"404"``: an OpenAI-style error body with that status (``openai.AuthenticationError``,
  ``PermissionDeniedError``, ``NotFoundError``);
* ``"drip"``: the normal answer (a completion, or an event stream to a streamed request), its headers at once
  and then its body one byte every ``drip_ms`` (a server that defeats a per-read timeout); the handler stops
  when the client hangs up or the server stops.

With ``usage_json`` every answer's ``usage`` (a streamed one's usage chunk) is that JSON text, sent as it is:
``NaN``, ``1e400`` or a 100,000-digit integer, which Python's ``json`` cannot write.

A request with ``stream: true`` is answered as OpenAI streams (``text/event-stream``): ``data:`` events of
``chat.completion.chunk`` objects, first a delta with the role, then the reasoning in ``reasoning_field``
deltas (when set and the reply opens with it), then the content about a token (four characters) a delta, a
last chunk with the ``finish_reason``, with ``stream_options.include_usage`` a usage chunk whose ``choices``
is empty, and ``data: [DONE]``; the connection is then closed (HTTP/1.0, no length). Its cuts and refusals
are an unstreamed answer's, and faults are decided, and refusals sent, before any of it is written.

With ``echo_auth`` every error body quotes the Authorization header it received, as careless servers do, so a
test can check the key never gets past the agent. ``stop_answering()`` makes the server accept requests and
never answer them (a hung endpoint; ``answer_again()`` undoes it), and ``stop()`` then ``start()`` kills it and
brings it back on the same port.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "ALL_KINDS",
    "FAULT_KINDS",
    "HOST",
    "HOSTILE_KINDS",
    "FakeOpenAIServer",
    "FaultPlan",
    "Reply",
    "ServerStats",
    "echo_reply",
    "estimate_tokens",
    "last_user_text",
    "main",
    "message_text",
    "scripted_replies",
    "system_text",
]

HOST = "127.0.0.1"
FAULT_KINDS: tuple[str, ...] = ("delay", "429", "500", "503", "drop", "timeout", "malformed", "empty")
"""The kinds a flaky but honest endpoint shows: a uniform plan spreads over these by default."""
HOSTILE_KINDS: tuple[str, ...] = ("raw_body", "401", "403", "404", "drip")
"""The kinds of an endpoint one does not control (see the module docstring); only used when named."""
ALL_KINDS: tuple[str, ...] = (*FAULT_KINDS, *HOSTILE_KINDS)
MAX_HANG_S = 60.0  # the "timeout" fault never holds a server thread longer than this
MAX_BODY_BYTES = 32 * 1024 * 1024
SECRET_HEADERS = frozenset({"authorization", "api-key"})  # never recorded in request_headers
RAW_USAGE = "\x00usage\x00"  # stands for ``usage_json`` until the answer is written
MAX_HEADER_LINE, MAX_HEADERS = 65536, 100  # as http.client reads them
MALFORMED_BODY = b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"message": '

Reply = Callable[[dict[str, Any]], str]
THINK = re.compile(r"\s*<think>(.*?)</think>", re.DOTALL)
"""A reply's leading reasoning, which ``reasoning_field`` (``reasoning_content`` or ``reasoning``) moves out of
the content, as vLLM's and llama.cpp's reasoning parsers do."""
STREAM_PIECE = 4
"""Characters of a streamed delta: about a token (see :func:`estimate_tokens`)."""


# --- replies ------------------------------------------------------------------------------------------------------


def message_text(message: Mapping[str, Any]) -> str:
    """The text of one chat message: a plain string, or the text parts of a list of content parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _messages(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    messages = body.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def last_user_text(body: Mapping[str, Any]) -> str:
    """The text of the last ``user`` message of a chat request ("" when there is none)."""
    users = [m for m in _messages(body) if m.get("role") == "user"]
    return message_text(users[-1]) if users else ""


def system_text(body: Mapping[str, Any]) -> str:
    """The text of every ``system`` (or ``developer``) message of a chat request, joined by newlines."""
    return "\n".join(message_text(m) for m in _messages(body) if m.get("role") in ("system", "developer"))


def echo_reply(body: Mapping[str, Any]) -> str:
    """The default reply: echo the last user message."""
    return f"echo: {last_user_text(body)}"


def scripted_replies(mapping: Mapping[str, str | Reply], default: Reply | None = echo_reply) -> Reply:
    """A reply that picks the first entry of ``mapping`` whose marker occurs in the last user message or the
    system prompt; the value is the reply text (or a callable given the request body). With no match, the
    ``default`` reply answers; with ``default=None`` an unmatched request is a server error (HTTP 500)."""
    entries = list(mapping.items())

    def reply(body: dict[str, Any]) -> str:
        haystack = f"{system_text(body)}\n{last_user_text(body)}"
        for marker, answer in entries:
            if marker in haystack:
                return answer(body) if callable(answer) else answer
        if default is None:
            raise LookupError(f"no scripted reply matches {last_user_text(body)[:200]!r}")
        return default(body)

    return reply


def estimate_tokens(text: str) -> int:
    """A rough token count: one token per four characters, at least one for non-empty text."""
    return math.ceil(len(text) / 4)


# --- faults -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FaultPlan:
    """Which requests fail and how, deterministic from ``seed``.

    ``schedule`` maps a request number (1 for the first chat request the server receives) to a fault kind and
    wins over ``rates``; otherwise request ``n`` draws one uniform number from a generator seeded with
    ``(seed, n)`` and falls into the kinds' rates laid end to end (rates sum to at most 1). The same plan and
    request number always give the same fault, whatever the thread interleaving.
    """

    rates: Mapping[str, float] = field(default_factory=dict)
    schedule: Mapping[int, str] = field(default_factory=dict)
    seed: int = 0
    delay_ms: float = 300.0
    retry_after_s: int = 1
    hang_s: float = 5.0
    empty_as_null: bool = False
    raw_body: bytes = b""
    raw_status: int = 200
    raw_headers: Mapping[str, str] = field(default_factory=dict)
    echo_auth: bool = False
    drip_ms: float = 1000.0

    def __post_init__(self) -> None:
        unknown = (set(self.rates) | set(self.schedule.values())) - set(ALL_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {ALL_KINDS}")
        if not isinstance(self.raw_body, bytes) or not 200 <= self.raw_status <= 599:
            raise ValueError("raw_body must be bytes and raw_status an HTTP status (200-599)")
        if any(r < 0 for r in self.rates.values()) or sum(self.rates.values()) > 1 + 1e-9:
            raise ValueError(f"fault rates must be >= 0 and sum to at most 1, got {dict(self.rates)}")
        if not 0 <= self.hang_s <= MAX_HANG_S or self.delay_ms < 0 or self.retry_after_s < 0 or self.drip_ms <= 0:
            raise ValueError(f"need 0 <= hang_s <= {MAX_HANG_S}, delay_ms >= 0, retry_after_s >= 0 and drip_ms > 0")

    @classmethod
    def uniform(cls, rate: float, kinds: Sequence[str] = FAULT_KINDS, **options: Any) -> FaultPlan:
        """A plan failing a fraction ``rate`` of the requests, spread evenly over ``kinds``."""
        return cls(rates={k: rate / len(kinds) for k in kinds} if kinds else {}, **options)

    def fault_for(self, n: int) -> str | None:
        """The fault of request number ``n`` (None: answer normally)."""
        if n in self.schedule:
            return self.schedule[n]
        if not self.rates:
            return None
        draw = random.Random(self.seed * 1_000_003 + n).random()
        edge = 0.0
        for kind in ALL_KINDS:
            edge += self.rates.get(kind, 0.0)
            if draw < edge:
                return kind
        return None


@dataclass
class ServerStats:
    """Counts of a server's chat requests: ``requests == served + sum(faulted.values())`` once all have ended
    (a "delay" counts as faulted though it is answered); ``max_in_flight`` is the peak of concurrent requests."""

    requests: int = 0
    served: int = 0
    faulted: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0
    max_in_flight: int = 0


@dataclass(frozen=True)
class _Answer:
    """A reply as a server sends it: cut to its limit, its reasoning apart (when split out), its usage."""

    content: str | None
    reasoning: str | None
    finish_reason: str
    usage: dict[str, int]


# --- the server ---------------------------------------------------------------------------------------------------


class _HTTPServer(ThreadingHTTPServer):
    """One daemon thread per connection, a deep listen backlog for bursts, quiet about clients that hang up."""

    daemon_threads = True
    request_queue_size = 256

    def __init__(self, port: int, fake: FakeOpenAIServer) -> None:
        self.fake = fake
        super().__init__((HOST, port), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Connection resets are expected (drops, client timeouts); anything else is printed as usual."""
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


class FakeOpenAIServer:
    """An OpenAI-compatible chat server on 127.0.0.1, for tests and benchmarks; see the module docstring.

    ``reply`` gives the assistant text for a request body; ``faults`` injects errors; ``latency_ms`` is added to
    every chat request. Like llama.cpp's server, a reply longer than the request's ``max_tokens`` is cut there
    (``finish_reason`` "length"), and with ``context_tokens`` a prompt that does not fit is refused with the
    OpenAI-style HTTP 400 (``context_length_exceeded``) and a reply is cut where the context ends. Use it as a
    context manager (or ``start()`` / ``stop()``); ``base_url`` is what the ``openai`` client wants.
    ``usage_json`` replaces every answer's usage with that JSON text. Recorded: request bodies (``requests``),
    request headers without credentials (``request_headers``) and the Authorization values apart
    (``saw_authorization``), so a test can check the key reached the server while recordings never hold it.
    """

    def __init__(
        self,
        reply: Reply = echo_reply,
        *,
        faults: FaultPlan | None = None,
        latency_ms: float = 0.0,
        context_tokens: int | None = None,
        models: Sequence[str] = ("fake-model",),
        port: int = 0,
        reasoning_field: str | None = None,
        usage_json: str | None = None,
    ) -> None:
        self.reply = reply
        self.usage_json = usage_json
        self.reasoning_field = reasoning_field
        self.faults = faults or FaultPlan()
        self.latency_ms = latency_ms
        self.context_tokens = context_tokens
        self.models = tuple(models)
        self._port = port
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._answering = threading.Event()
        self._answering.set()
        self._stats = ServerStats()
        self._requests: list[dict[str, Any]] = []
        self._headers: list[dict[str, str]] = []
        self._auth: list[str] = []
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle

    def start(self) -> FakeOpenAIServer:
        """Bind 127.0.0.1 and serve from a daemon thread. A server started before comes back on the port it
        had, so clients pointed at its ``base_url`` reach it again (a killed endpoint brought back)."""
        if self._httpd is not None:
            raise RuntimeError("the server is already running")
        self._stopping.clear()
        self._httpd = _HTTPServer(self._port, self)
        self._port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: wake sleeping handlers, close the listening socket, join the serving thread."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd, self._thread = None, None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop_answering(self) -> None:
        """From now on accept chat requests and never answer them (a hung endpoint): each is held until the
        server stops or ``MAX_HANG_S`` passes, then its connection is closed without a response."""
        self._answering.clear()

    def answer_again(self) -> None:
        """Undo :meth:`stop_answering` for the requests that come next."""
        self._answering.set()

    @property
    def answering(self) -> bool:
        return self._answering.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the server is stopped (or ``timeout`` seconds pass); True once stopped."""
        return self._stopping.wait(timeout)

    # what tests read

    @property
    def port(self) -> int:
        """The bound port (the free port picked by the system when constructed with ``port=0``)."""
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, the ``base_url`` of an ``openai.OpenAI`` client."""
        return f"http://{HOST}:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of the chat requests received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """The headers of each chat request, without Authorization (or api-key), in arrival order (a copy)."""
        with self._lock:
            return [dict(h) for h in self._headers]

    @property
    def saw_authorization(self) -> list[str]:
        """The Authorization header value of each chat request ("" when absent), kept apart from recordings."""
        with self._lock:
            return list(self._auth)

    @property
    def stats(self) -> ServerStats:
        """A snapshot of the request counts."""
        with self._lock:
            s = self._stats
            return ServerStats(s.requests, s.served, dict(s.faulted), s.in_flight, s.max_in_flight)

    # used by the request handler

    def admit(self, body: dict[str, Any], headers: Mapping[str, str]) -> tuple[int, str | None]:
        """Record a chat request and pick its fault; returns (request number, fault kind or None)."""
        with self._lock:
            s = self._stats
            s.requests += 1
            s.in_flight += 1
            s.max_in_flight = max(s.max_in_flight, s.in_flight)
            fault = self.faults.fault_for(s.requests) if self._answering.is_set() else "silent"
            if fault is None:
                s.served += 1
            else:
                s.faulted[fault] = s.faulted.get(fault, 0) + 1
            self._requests.append(body)
            self._headers.append({k: v for k, v in headers.items() if k.lower() not in SECRET_HEADERS})
            self._auth.append(next((v for k, v in headers.items() if k.lower() == "authorization"), ""))
            return s.requests, fault

    def leave(self) -> None:
        """A chat request has ended."""
        with self._lock:
            self._stats.in_flight -= 1

    def sleep(self, seconds: float) -> None:
        """Sleep, cut short when the server stops."""
        if seconds > 0:
            self._stopping.wait(seconds)

    def prompt_tokens(self, body: Mapping[str, Any]) -> int:
        """The (estimated) tokens of a request's messages."""
        return sum(estimate_tokens(message_text(m)) for m in _messages(body))

    def overflow(self, body: Mapping[str, Any]) -> str | None:
        """The refusal of a prompt that does not fit ``context_tokens`` (worded as OpenAI, vLLM and
        llama-cpp-python's server word it), or None."""
        prompt = self.prompt_tokens(body)
        if self.context_tokens is None or prompt < self.context_tokens:
            return None
        return (
            f"This model's maximum context length is {self.context_tokens} tokens. However, you requested {prompt} "
            f"tokens ({prompt} in the messages, None in the completion). Please reduce the length of the messages "
            "or completion."
        )

    def answer(self, body: Mapping[str, Any], content: str | None) -> _Answer:
        """``content`` as the answer to ``body``: cut at the request's ``max_tokens`` or the end of the context
        (``finish_reason`` "length"), and with ``reasoning_field`` its leading reasoning moved out."""
        prompt = self.prompt_tokens(body)
        limits = [body.get("max_tokens"), self.context_tokens - prompt if self.context_tokens else None]
        limit = min((x for x in limits if isinstance(x, int) and not isinstance(x, bool) and x > 0), default=None)
        finish = "stop"
        if content and limit is not None and estimate_tokens(content) > limit:
            content, finish = content[: limit * 4], "length"
        answer = estimate_tokens(content or "")
        usage = {"prompt_tokens": prompt, "completion_tokens": answer, "total_tokens": prompt + answer}
        if content and self.reasoning_field and (found := THINK.match(content)):
            # as a server's reasoning parser does: the thinking moves out of the content
            return _Answer(content[found.end() :].lstrip(), found.group(1), finish, usage)
        return _Answer(content, None, finish, usage)

    def _head(self, n: int, body: Mapping[str, Any], kind: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-fake-{n}",
            "object": kind,
            "created": int(time.time()),
            "model": str(body.get("model") or self.models[0]),
        }

    def completion(self, n: int, body: Mapping[str, Any], content: str | None) -> dict[str, Any]:
        """A ``chat.completion`` object answering ``body`` with ``content`` (as :meth:`answer` cuts it)."""
        answer = self.answer(body, content)
        message: dict[str, Any] = {"role": "assistant", "content": answer.content, "refusal": None}
        if answer.reasoning is not None and self.reasoning_field:
            message[self.reasoning_field] = answer.reasoning
        choice = {"index": 0, "message": message, "finish_reason": answer.finish_reason, "logprobs": None}
        return {**self._head(n, body, "chat.completion"), "choices": [choice], "usage": answer.usage}

    def chunks(self, n: int, body: Mapping[str, Any], content: str | None) -> list[dict[str, Any]]:
        """The ``chat.completion.chunk`` objects of a streamed answer to ``body`` (see the module docstring)."""
        answer = self.answer(body, content)
        head = self._head(n, body, "chat.completion.chunk")
        options = body.get("stream_options")
        with_usage = isinstance(options, dict) and options.get("include_usage") is True
        nulls = {"usage": None} if with_usage else {}  # as OpenAI's chunks say before the usage chunk

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            return {**head, "choices": [choice], **nulls}

        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": None if answer.content is None else ""}]
        if answer.reasoning is not None and self.reasoning_field:
            deltas += [{self.reasoning_field: piece} for piece in _pieces(answer.reasoning)]
        deltas += [{"content": piece} for piece in _pieces(answer.content or "")]
        out = [*(chunk(d) for d in deltas), chunk({}, answer.finish_reason)]
        if with_usage:
            out.append({**head, "choices": [], "usage": answer.usage})
        return out

    def dumps(self, answer: Mapping[str, Any]) -> str:
        """An answer (a completion or a chunk) as JSON, with ``usage_json`` in place of a usage it carries."""
        if self.usage_json is None or answer.get("usage") is None:
            return json.dumps(answer)
        return json.dumps({**answer, "usage": RAW_USAGE}).replace(json.dumps(RAW_USAGE), self.usage_json)

    def model_list(self) -> dict[str, Any]:
        """The ``GET /v1/models`` answer."""
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "simlab"} for m in self.models]
        return {"object": "list", "data": data}


def _pieces(text: str) -> list[str]:
    return [text[i : i + STREAM_PIECE] for i in range(0, len(text), STREAM_PIECE)]


def _error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class _Headers:
    """A request's headers as received (names in their own case, in order), looked up by name in any case
    (the first of a repeated one, as ``email.message.Message`` does)."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs
        self.by_name: dict[str, str] = {}
        for name, value in pairs:
            self.by_name.setdefault(name.lower(), value)

    def get(self, name: str, default: str = "") -> str:
        return self.by_name.get(name.lower(), default)

    def items(self) -> list[tuple[str, str]]:
        return list(self.pairs)


class _Handler(BaseHTTPRequestHandler):
    """The routes: ``POST /v1/chat/completions`` and ``GET /v1/models``. HTTP/1.0, one request per connection:
    no keep-alive, so a client never reuses a connection the server is about to drop or close."""

    server: _HTTPServer
    headers: _Headers  # type: ignore[assignment]  # read by parse_request below, not by the email parser
    raw_requestline: bytes
    protocol_version = "HTTP/1.0"
    timeout = 30  # bounds every socket read: a silent client cannot hold a thread forever

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests and benchmarks make thousands of requests."""

    def parse_request(self) -> bool:
        """The request line and headers, as the base class reads them but without its ``email`` parser, which
        was half the server's CPU a call (the server shares the cores of the clients it serves). A request
        this cannot read is answered 400 (431: too many or too long header lines) and False returned."""
        self.command, self.request_version, self.close_connection = None, "HTTP/1.0", True  # type: ignore[assignment]
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = self.requestline.split()
        if len(words) != 3 or not re.fullmatch(r"HTTP/1\.[01]", words[2]):
            self.send_error(HTTPStatus.BAD_REQUEST, f"Bad request line {self.requestline!r}")
            return False
        self.command, self.path, self.request_version = words
        pairs: list[tuple[str, str]] = []
        while True:
            line = self.rfile.readline(MAX_HEADER_LINE + 1)
            if line in (b"\r\n", b"\n", b""):
                break
            name, colon, value = str(line, "iso-8859-1").partition(":")
            if len(line) > MAX_HEADER_LINE or len(pairs) >= MAX_HEADERS:
                self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Too many or too long header lines")
                return False
            if not colon or not name.strip():
                self.send_error(HTTPStatus.BAD_REQUEST, f"Bad header line {line[:80]!r}")
                return False
            pairs.append((name.strip(), value.strip()))
        self.headers = _Headers(pairs)
        return True

    def do_GET(self) -> None:
        """``/v1/models`` and ``/v1/models/{id}``."""
        fake, path = self.server.fake, self.path.split("?")[0].rstrip("/")
        if path == "/v1/models":
            self._send_json(HTTPStatus.OK, fake.model_list())
        elif path.startswith("/v1/models/") and path.removeprefix("/v1/models/") in fake.models:
            self._send_json(HTTPStatus.OK, next(m for m in fake.model_list()["data"] if path.endswith(m["id"])))
        else:
            self._send_json(HTTPStatus.NOT_FOUND, self._error(f"no route GET {path}", "invalid_request_error"))

    def do_POST(self) -> None:
        """``/v1/chat/completions``: record, wait the latency, then answer or inject the planned fault."""
        fake, path = self.server.fake, self.path.split("?")[0].rstrip("/")
        if path != "/v1/chat/completions":
            self._send_json(HTTPStatus.NOT_FOUND, self._error(f"no route POST {path}", "invalid_request_error"))
            return
        body = self._read_json()
        if body is None:
            return
        n, fault = fake.admit(body, dict(self.headers.items()))
        try:
            fake.sleep(fake.latency_ms / 1000)
            self._answer(n, body, fault)
        finally:
            fake.leave()

    def _error(self, message: str, kind: str, code: str | None = None) -> dict[str, Any]:
        """An error body; with the plan's ``echo_auth`` it quotes the Authorization header received."""
        if self.server.fake.faults.echo_auth:
            auth = self.headers.get("Authorization", "")
            message = f"{message} (you sent Authorization: {auth}; your key is {auth.removeprefix('Bearer ')})"
        return _error(message, kind, code)

    def _read_json(self) -> dict[str, Any] | None:
        """The request body as a JSON object, or None after answering 400."""
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY_BYTES:
            self._send_json(HTTPStatus.BAD_REQUEST, _error("missing or oversized body", "invalid_request_error"))
            return None
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._send_json(HTTPStatus.BAD_REQUEST, _error("the body is not a JSON object", "invalid_request_error"))
            return None
        return body

    def _answer(self, n: int, body: dict[str, Any], fault: str | None) -> None:
        """Answer normally, or as the fault ``kind`` says."""
        fake, plan = self.server.fake, self.server.fake.faults
        if fault in ("drop", "timeout", "silent"):
            fake.sleep({"drop": 0.0, "timeout": plan.hang_s, "silent": MAX_HANG_S}[fault])
            self.close_connection = True  # nothing written: the client sees the connection close
        elif fault == "raw_body":
            self._send_bytes(plan.raw_status, plan.raw_body, plan.raw_headers)
        elif fault in ("401", "403", "404"):
            texts = {"401": "Incorrect API key provided", "403": "Forbidden", "404": "The model does not exist"}
            self._send_json(HTTPStatus(int(fault)), self._error(texts[fault], "invalid_request_error", fault))
        elif fault == "429":
            retry = {"Retry-After": str(plan.retry_after_s)}
            self._send_json(
                HTTPStatus.TOO_MANY_REQUESTS, self._error("Rate limit reached", "requests", "rate_limit"), retry
            )
        elif fault in ("500", "503"):
            self._send_json(HTTPStatus(int(fault)), self._error(f"injected fault {fault}", "server_error"))
        elif fault == "malformed" and body.get("stream") is True:
            self._send_events([MALFORMED_BODY.decode()])
        elif fault == "malformed":
            self._send_bytes(HTTPStatus.OK, MALFORMED_BODY)
        elif fault == "empty":
            self._send_answer(n, body, None if plan.empty_as_null else "")
        else:
            fake.sleep(plan.delay_ms / 1000 if fault == "delay" else 0)
            self._reply(n, body, drip=fault == "drip")

    def _reply(self, n: int, body: dict[str, Any], drip: bool = False) -> None:
        """The scripted answer (its body dripped with ``drip``); a reply function that raises gives HTTP 500
        with its message."""
        overflow = self.server.fake.overflow(body)
        if overflow is not None:
            error = self._error(overflow, "invalid_request_error", "context_length_exceeded")
            self._send_json(HTTPStatus.BAD_REQUEST, error)
            return
        try:
            text = self.server.fake.reply(body)
        except Exception as exc:
            self._send_json(HTTPStatus.INTERNAL_SERVER_ERROR, self._error(f"reply failed: {exc!r}", "server_error"))
            return
        self._send_answer(n, body, text, drip)

    def _send_answer(self, n: int, body: dict[str, Any], content: str | None, drip: bool = False) -> None:
        """``content`` as a completion, or as a stream of chunks when the request asks for one."""
        fake = self.server.fake
        if body.get("stream") is True:
            self._send_events([fake.dumps(chunk) for chunk in fake.chunks(n, body, content)], drip)
        else:
            self._send_bytes(HTTPStatus.OK, fake.dumps(fake.completion(n, body, content)).encode(), drip=drip)

    def _send_events(self, events: Sequence[str], drip: bool = False) -> None:
        """A ``text/event-stream`` answer: each event one ``data:`` line, then ``data: [DONE]``. No length is
        sent: over HTTP/1.0 the stream ends when the connection closes, which it does once written."""
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.close_connection = True
        lines = [f"data: {data}\n\n".encode() for data in [*events, "[DONE]"]]
        if drip:
            self._drip(b"".join(lines))
            return
        for line in lines:
            self.wfile.write(line)
            self.wfile.flush()  # event by event, as a server streaming tokens does

    def _send_json(self, status: HTTPStatus, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), headers)

    def _send_bytes(
        self, status: int, data: bytes, headers: Mapping[str, str] | None = None, drip: bool = False
    ) -> None:
        self.send_response(status)
        all_headers = {"Content-Type": "application/json", "Content-Length": str(len(data)), **(headers or {})}
        for key, value in all_headers.items():
            self.send_header(key, value)
        self.end_headers()
        if drip:
            self._drip(data)
        else:
            self.wfile.write(data)

    def _drip(self, data: bytes) -> None:
        """``data`` one byte every ``drip_ms`` (the headers are already out), until it is all written, the
        server stops or the client hangs up (the write then raises, which the server keeps quiet about)."""
        fake = self.server.fake
        for i in range(len(data)):
            self.wfile.write(data[i : i + 1])
            self.wfile.flush()
            if fake.wait(fake.faults.drip_ms / 1000):
                return


# --- manual use ---------------------------------------------------------------------------------------------------


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="A local OpenAI-compatible chat server (127.0.0.1 only).")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--fault-rate", type=float, default=0.0, help="fraction of requests that fail")
    parser.add_argument("--fault-kinds", default=",".join(FAULT_KINDS), help="comma-separated, spread evenly")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hang-s", type=float, default=30.0, help="how long a 'timeout' fault holds the request")
    parser.add_argument("--models", default="fake-model", help="comma-separated model names")
    parser.add_argument("--duration-s", type=float, default=None, help="stop after this long (default: Ctrl-C)")
    parser.add_argument("--context-tokens", type=int, default=None, help="refuse prompts that do not fit (HTTP 400)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until Ctrl-C (or ``--duration-s``), printing the base URL and, at the end, the stats."""
    args = _parse_args(argv)
    kinds = [k for k in args.fault_kinds.split(",") if k]
    plan = FaultPlan.uniform(args.fault_rate, kinds, seed=args.seed, hang_s=args.hang_s)
    server = FakeOpenAIServer(
        faults=plan,
        latency_ms=args.latency_ms,
        context_tokens=args.context_tokens,
        models=[m for m in args.models.split(",") if m],
        port=args.port,
    )
    with server:
        print(server.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.wait(args.duration_s)
        print(server.stats, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
