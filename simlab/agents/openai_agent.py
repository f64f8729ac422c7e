"""A live-model agent for any OpenAI-compatible chat API, playing any role of any world family.

The agent knows no world: each family declares, per role, its system prompt, how a reply is read, the re-ask
and the give-up rule (:class:`~simlab.core.family.ReplyProtocol`), and the agent asks the family for it at
every act. Use it as ``--agent builder=openai:gpt-4o-mini``; per-agent settings come from the run config's
agent table or ``--agent-setting ROLE.KEY=VALUE`` (``settings["agent"]``)::

    base_url      $OPENAI_BASE_URL, else "https://api.openai.com/v1"   any OpenAI-compatible endpoint
    api_key_env   "OPENAI_API_KEY"              the NAME of the environment variable holding the key
    model         (the spec's argument wins)
    temperature                                 sent when set
    max_tokens 512                              a reply's limit (without one, small models ran to 1,271)
    max_context_tokens                          the model's context: the oldest shared history is left out
                                                (said in the prompt and recorded) so a request fits
    timeout 300, max_retries 5                  seconds an attempt may take, connect, headers and body
                                                together (CPU servers take over a minute); retries after
                                                the first attempt
    backoff_s 1, max_backoff_s 30, max_wait_s 300   exponential backoff; total sleep bound per request
    send_seed true                              a request seed from the episode's (servers that honour it
                                                repeat themselves; it is recorded)
    extra {}                                    more request fields (top_p, reasoning_effort...)
    reasoning_tags ["<think>", "</think>"]      the model's inline private reasoning ([] for none): kept out
                                                of the public reply, as ``reasoning_content`` is
    text_only false                             send no images: the pictures go in words, as the world
                                                declares them, and the recording says what was sent
    stream false                                ask for the reply as server-sent events (usage in the last
                                                chunk) and read the deltas as they come; the record is the
                                                same as an unstreamed call's, with ``stream`` in its params
    prices {"prompt": USD per 1M tokens, "completion": ...}   -> a cost per call

One act is one chat request (the role's system prompt, the observation's text and its images as PNG data
URLs), retried here (the client's own retries are off) on 429 (honouring Retry-After), 408/409, 5xx,
timeouts, dropped connections and malformed bodies, with seeded jitter. A reply the protocol cannot read
is re-asked once with the protocol's correction, which names the fault (a reply cut off at the token limit
is told so; one that copies the prompt's placeholders is not read); after that, or at once when the game
answers unreadable replies itself (``reask`` None), the agent gives up as the protocol says and the reply
carries the ``problem``, which the episode records. Every request goes to ``Reply.raw`` with images by
reference (name, sha256, bytes), its time to first byte, total time (retries included) and attempts, and
never the key or headers.

``timeout`` is a deadline on the whole attempt, however the server sends its bytes: every connect, write
and read of the connection is cut to what is left of it (:class:`_DeadlineBackend`), so a server that
drips its answer a byte at a time is cut there too, and a call costs at most ``timeout x (max_retries +
1)`` plus ``max_wait_s`` of backoff. Inside an episode with a timeout the attempts are also cut at the
episode's deadline (:mod:`simlab.core.deadline`); the act then raises
:class:`~simlab.core.deadline.EpisodeTimedOut` with its records, the cut attempt's error ``EpisodeTimeout``.

The endpoint is not trusted. Its body is read here, not by the client: bytes that are not UTF-8 and lone
surrogates become U+FFFD (recordings are strict UTF-8 JSON), ``usage`` numbers that are not whole counts
(NaN, infinities, 1e400, negative or fractional numbers, integers of any length past ``MAX_COUNT``) are
dropped and noted in the record's ``notes``, an unstreamed body is read up to ``BODY_BYTES``, and a body of
any other shape than a chat completion is a malformed attempt, retried. A streamed body is read line by
line into the same content, reasoning, finish reason, id and usage; one that is not an event stream of chat
completion chunks (or that reports an error midway, or stops before its reply ends) is malformed too, and
its reading is bounded (``STREAM_BYTES``, ``STREAM_LINE_BYTES``, ``STREAM_CHARS``: past one, the rest is
not read and the notes say so). When the endpoint fails in a way that is not the model's doing (refused
connections, a timeout on every attempt, 401/403/404 or any other refusal, 5xx, 429 or malformed bodies
past the retries) ``act`` raises :class:`~simlab.core.errors.InfrastructureError` with a short reason; the
endpoint's own text in it, in the records and in the logs is scrubbed of credentials and of the key in use,
even when the endpoint echoes the Authorization header back.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import ipaddress
import json
import logging
import math
import os
import random
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai

try:  # the HTTP library under the openai client: httpx2 (and httpcore2) from openai 3 on, httpx before
    import httpcore2 as _core
    import httpx2 as _http
except ImportError:  # pragma: no cover - older clients
    import httpcore as _core  # type: ignore[no-redef]
    import httpx as _http  # type: ignore[no-redef]

from simlab.agents.endpoint import KEY_ENV, default_base_url
from simlab.agents.reasoning import DEFAULT_TAGS, Split, joined, split_reasoning
from simlab.core.deadline import Deadline, EpisodeTimedOut, episode_deadline
from simlab.core.errors import ConfigError, InfrastructureError
from simlab.core.family import ReplyError, ReplyProtocol, WorldFamily
from simlab.core.limits import MAX_RETRIES, MAX_WAIT_S, shown
from simlab.core.secrets import remember_key, scrub_text, value_is_secret
from simlab.core.seeding import stable_seed
from simlab.core.world import Observation, Reply
from simlab.render.images import data_url, to_png_bytes
from simlab.worlds import get_family

__all__ = ["AgentSettings", "ModelCallError", "OpenAIAgent", "make_agent"]

Message = dict[str, Any]
log = logging.getLogger("simlab.plugins.openai")

_NUMBER = (int, float)
SETTING_TYPES: dict[str, type | tuple[type, ...]] = {
    "model": str,
    "base_url": str,
    "api_key_env": str,
    "temperature": _NUMBER,
    "max_tokens": int,
    "timeout": _NUMBER,
    "max_retries": int,
    "backoff_s": _NUMBER,
    "max_backoff_s": _NUMBER,
    "max_wait_s": _NUMBER,
    "extra": dict,
    "text_only": bool,
    "prices": dict,
    "max_context_tokens": int,
    "send_seed": bool,
    "reasoning_tags": list,
    "stream": bool,
}
SETTING_RANGES: dict[str, tuple[float, float]] = {
    "temperature": (0.0, 2.0),  # what OpenAI-compatible endpoints take
    "max_tokens": (1, 10_000_000),  # past any model's context
    "timeout": (0.001, MAX_WAIT_S),  # 0 would cut every attempt before it starts
    "max_retries": (0, MAX_RETRIES),
    "backoff_s": (0.0, MAX_WAIT_S),
    "max_backoff_s": (0.0, MAX_WAIT_S),
    "max_wait_s": (0.0, MAX_WAIT_S),
    "max_context_tokens": (1, 100_000_000),
}
"""The range of each number setting (NaN and infinities are outside every one; simlab.core.limits says why a
wait stops at a week)."""
CHAT_PATH = "/chat/completions"
"""The chat request's path under the endpoint's base URL."""
RESERVED_EXTRA = frozenset({"model", "messages", "stream", "stream_options", "n"})
RETRIED_STATUSES = frozenset({408, 409, 429})  # and every 5xx
EPISODE_TIMEOUT = "EpisodeTimeout"
"""The error recorded for an attempt cut at the episode's deadline (see :mod:`simlab.core.deadline`)."""
USAGE_NAMES = ("prompt_tokens", "completion_tokens", "total_tokens")
MAX_COUNT = 1e12
"""The largest token count taken from ``usage``: no call comes near it, and sums of counts below it stay finite."""
DETAIL_CHARS = 300
CHARS_PER_TOKEN = 3.5
"""Characters per token assumed before a server has counted any (English runs about 4; fewer is safer)."""
CONTEXT_MARGIN = 64
"""Tokens kept free besides the reply's: chat templates add a few per message."""
STREAM_BYTES = 64 * 1024 * 1024
"""The most of a streamed body read: a 32k-token reply streams in about 6 MB of chunks."""
BODY_BYTES = 64 * 1024 * 1024
"""The most of an unstreamed body read: a 32k-token reply is about 150 kB of JSON."""
INT_DIGITS = 32
"""Digits of the longest integer a body's JSON is read with: longer ones (no count has 20) stand as
:class:`_HugeInteger` (Python's ``int`` refuses past 4,300 digits, and reading them costs)."""
REPLY_CHARS = 2_000_000
"""The longest public part of a reply read (its private reasoning aside), as the stream's bound on text: a
message, a move or a program of every family fits in a few thousand, and a world's own bounds (a boards
program's 20,000 characters, refused with feedback the robot can act on) answer what lies between; a server
sending more would hand megabytes to the partner."""
URL_CHARS = 200
"""The most of an endpoint's URL a message shows: one of 10,000 characters would bury what went wrong."""
WRITE_PIECE = 64 * 1024
"""Bytes of a request written at a time, each piece within what is left of the request's deadline."""
STREAM_LINE_BYTES = 4 * 1024 * 1024
"""The longest line (and event) of a streamed body held while it is read."""
STREAM_CHARS = 2_000_000
"""The most text (content and reasoning together) gathered from a streamed reply: far past any context."""
CONTEXT_LIMIT = re.compile(r"(?:maximum context length is|context window of|context size of)\s*(\d+)", re.IGNORECASE)
"""How OpenAI, vLLM and llama.cpp servers state their context when they refuse a prompt too long for it."""


class ModelCallError(InfrastructureError, RuntimeError):
    """The endpoint refused a request in a way retrying cannot fix (bad key, unknown model, bad request)."""


class MalformedResponse(ValueError):
    """A response body that is not a chat completion (its ``str`` says what is wrong with it)."""


# ---- settings -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AgentSettings:
    """The agent's own settings (see the module docstring); never holds the key, only its variable's name."""

    model: str
    base_url: str = field(default_factory=lambda: default_base_url())
    api_key_env: str = KEY_ENV
    temperature: float | None = None
    max_tokens: int | None = 512
    timeout: float = 300.0
    max_retries: int = 5
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    max_wait_s: float = 300.0
    extra: Mapping[str, Any] = field(default_factory=dict)
    text_only: bool = False
    prices: Mapping[str, float] | None = None
    max_context_tokens: int | None = None
    send_seed: bool = True
    reasoning_tags: tuple[str, ...] = DEFAULT_TAGS
    stream: bool = False

    def __post_init__(self) -> None:
        _check_base_url(self.base_url)

    @classmethod
    def from_config(cls, arg: str | None, values: Mapping[str, Any]) -> AgentSettings:
        """Checked settings from the spec's argument (the model) and the agent table; ValueError names the
        first bad entry."""
        for name, value in values.items():
            _check_setting(name, value)
        model = arg or values.get("model")
        if not model:
            raise ValueError("name the model: openai:MODEL (e.g. builder=openai:gpt-4o-mini) or agent.model")
        tags = {"reasoning_tags": tuple(values["reasoning_tags"])} if "reasoning_tags" in values else {}
        return cls(**{**dict(values), "model": model, **tags})

    def params(self) -> dict[str, Any]:
        """The request fields besides model and messages (as recorded: ``stream`` says how it was asked)."""
        params: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        streamed = {"stream": True} if self.stream else {}
        return {**{k: v for k, v in params.items() if v is not None}, **dict(self.extra), **streamed}

    def cost(self, usage: Mapping[str, int]) -> float | None:
        """USD for one call's usage, when prices are set."""
        if not self.prices:
            return None
        per_token = {k: float(self.prices.get(k, 0.0)) / 1e6 for k in ("prompt", "completion")}
        return (
            usage.get("prompt_tokens", 0) * per_token["prompt"]
            + usage.get("completion_tokens", 0) * per_token["completion"]
        )


def _check_setting(name: str, value: Any) -> None:
    expected = SETTING_TYPES.get(name)
    if expected is None:
        raise ValueError(f"unknown openai agent setting {name!r}; known: {', '.join(SETTING_TYPES)}")
    if not isinstance(value, expected) or (isinstance(value, bool) and expected is not bool):
        raise ValueError(f"agent setting {name!r}: expected {_type_name(expected)}, got {shown(value)}")
    _check_value(name, value)


def _check_value(name: str, value: Any) -> None:
    """ValueError unless ``value`` (already of the setting's type) is in its range and shape."""
    low, high = SETTING_RANGES.get(name, (0, math.inf))
    if _is_number(value) and not low <= value <= high:  # NaN too
        raise ValueError(f"agent setting {name!r}: expected a number from {low:,g} to {high:,g}, got {shown(value)}")
    if name == "reasoning_tags" and not (
        value == [] or (len(value) == 2 and all(isinstance(t, str) and t for t in value))
    ):
        raise ValueError(
            f"agent setting 'reasoning_tags': expected [opening, closing] (or [] for none), got {shown(value)}"
        )
    if name == "extra" and RESERVED_EXTRA & set(value):
        raise ValueError(f"agent setting 'extra' may not set {', '.join(sorted(RESERVED_EXTRA & set(value)))}")
    if name == "prices" and (
        set(value) - {"prompt", "completion"} or not all(_is_number(v) and 0 <= v < math.inf for v in value.values())
    ):
        raise ValueError(
            f"agent setting 'prices': expected {{prompt = USD per 1M tokens, completion = ...}}, got {shown(value)}"
        )


@functools.lru_cache(maxsize=256)  # every agent of every episode checks the same few URLs
def _check_base_url(url: str) -> None:
    """ValueError naming the setting unless the client can send requests to ``url``: parsed by the client's
    own HTTP library (which the client would otherwise fail in, as an internal error), http or https, a host."""
    try:
        parsed = _http.URL(url)
        usable = parsed.scheme in ("http", "https") and bool(parsed.host) and 0 < (parsed.port or 80) < 65536
    except (_http.InvalidURL, ValueError, TypeError):
        usable = False
    if not usable:
        raise ValueError(
            f"agent setting 'base_url' (given, or from $OPENAI_BASE_URL): expected an http:// or https:// URL "
            f"with a host, e.g. http://127.0.0.1:8000/v1, got {url!r:.80}"
        )


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBER) and not isinstance(value, bool)


def _type_name(expected: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", bool: "true or false", dict: "a table"}
    return names[expected] if isinstance(expected, type) else "a number"


# ---- images ---------------------------------------------------------------------------------------------
def image_parts(images: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Chat content parts for the images (PNG data URLs) and their recorded stand-ins (name, sha256, bytes)."""
    wire: list[dict[str, Any]] = []
    recorded: list[dict[str, Any]] = []
    for name in images:
        png = to_png_bytes(images[name])
        wire.append({"type": "image_url", "image_url": {"url": data_url(png)}})
        recorded.append({"type": "image", "name": name, "sha256": hashlib.sha256(png).hexdigest(), "bytes": len(png)})
    return wire, recorded


# ---- one request with retries ---------------------------------------------------------------------------
@dataclass
class Completion:
    """One chat request's outcome after retries: the text (None when it failed) and what to record;
    ``failure`` is what ended it unanswered: the endpoint's failure, or the episode's deadline."""

    content: str | None = None
    response: dict[str, Any] | None = None
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0  # the answered attempt, request to last byte
    ttfb_s: float = 0.0  # the answered attempt, request to first byte (a server's queue shows here)
    total_s: float = 0.0  # the whole call: failed attempts and the waits between them included
    attempts: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    failure: InfrastructureError | EpisodeTimedOut | None = None


class ChatCaller:
    """Sends chat requests through the ``openai`` client with its own retry loop (the client's is off) and
    reads the bodies itself (see the module docstring)."""

    def __init__(self, settings: AgentSettings, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self.sleep = sleep
        self.rng = random.Random(0)
        self._client: openai.OpenAI | None = None

    @property
    def endpoint(self) -> str:
        """The endpoint's URL as it may be shown: no user, password, query or fragment."""
        return public_url(self.settings.base_url)

    def connect(self) -> None:
        """Make the client once; the key is read from the environment here and kept only by the client."""
        if self._client is not None:
            return
        name = self.settings.api_key_env
        if value_is_secret(name) or not name.isidentifier():  # the key itself, given where its variable's name goes
            raise ConfigError(
                "api_key_env (--api-key-env) takes the NAME of the variable that holds the key, e.g. OPENAI_API_KEY; "
                "what was given is not a variable name (not shown: it may be the key itself)"
            )
        key = os.environ.get(name)
        if not key:
            raise ConfigError(
                f"environment variable {name} is not set; it must hold the API key for "
                f"{self.endpoint} (choose another variable with api_key_env)"
            )
        remember_key(key)  # an endpoint may echo it in a reply, which is recorded
        self._client = shared_client(key, self.settings.base_url, self.settings.timeout)

    def scrub(self, text: str) -> str:
        """Endpoint text made safe to show, log and record: credentials and the key in use redacted, control
        characters and lone surrogates replaced, one line of at most ``DETAIL_CHARS`` characters."""
        key = getattr(self._client, "api_key", None)
        flat = " ".join(_CONTROL.sub(" ", clean_text(text)).split())
        safe = scrub_text(flat, [key] if isinstance(key, str) else [])
        return safe if len(safe) <= DETAIL_CHARS else safe[: DETAIL_CHARS - 3] + "..."

    def complete(self, messages: list[dict[str, Any]], seed: int | None = None) -> Completion:
        """One request (with ``seed`` when given), retried on transient failures. The endpoint's failures are
        not raised but returned in ``failure`` (with every attempt recorded), so the caller can record them
        before raising. ``total_s`` covers every attempt and wait."""
        began = time.perf_counter()
        out = self._complete(messages, seed)
        out.total_s = round(time.perf_counter() - began, 4)
        return out

    def _complete(self, messages: list[dict[str, Any]], seed: int | None) -> Completion:
        self.connect()
        out, waited = Completion(), 0.0
        episode = episode_deadline()
        for attempt in range(self.settings.max_retries + 1):
            start, end = time.perf_counter(), self._attempt_end(episode)
            try:
                reading, ttfb = self._create(messages, seed, end)
                out.ttfb_s = round(ttfb, 4)
                return self._read(reading, time.perf_counter() - start, out)
            except openai.APIStatusError as exc:
                failure = self._status_failure(exc)
            except openai.APITimeoutError:
                failure = self._timeout_failure(episode, end)
            except openai.APIError as exc:  # connection refused or dropped
                failure = {"error": type(exc).__name__, "status": None, "retry_after": None}
            except (MalformedResponse, json.JSONDecodeError) as exc:
                name = "JSONDecodeError" if isinstance(exc, json.JSONDecodeError) else "MalformedResponse"
                failure = {"error": name, "status": None, "retry_after": None, "detail": self.scrub(str(exc))}
            except Exception as exc:  # the client failed in a way it does not wrap: not worth retrying
                failure = {"error": type(exc).__name__, "status": None, "retry_after": None, "final": True}
                failure["detail"] = self.scrub(str(exc))
            if failure.pop("final", False):
                failure["waited_s"] = 0.0
                out.attempts.append(failure)
                return self._failed(out, refused=True)
            delay = self._delay(attempt, failure.get("retry_after"))
            last = attempt == self.settings.max_retries or waited + delay > self.settings.max_wait_s
            if episode is not None:  # never wait past the episode's end: the next attempt is then cut at once
                delay = max(0.0, min(delay, episode.left()))
            failure["waited_s"] = 0.0 if last else round(delay, 4)
            out.attempts.append(failure)
            if failure["error"] == EPISODE_TIMEOUT:
                return self._episode_over(out)
            if last:
                break
            log.warning(
                "%s failed (%s %s); retry %d of %d in %.2f s",
                self.settings.model,
                failure["error"],
                failure["status"] or "",
                attempt + 1,
                self.settings.max_retries,
                delay,
            )
            self.sleep(delay)
            waited += delay
        return self._failed(out, refused=False)

    def _attempt_end(self, episode: Deadline | None) -> float:
        """When the attempt starting now must be over (monotonic): ``timeout`` from now, or the episode's end
        when that comes first."""
        end = time.monotonic() + self.settings.timeout
        return end if episode is None else min(end, episode.at)

    def _create(self, messages: list[dict[str, Any]], seed: int | None, end: float) -> tuple[Reading, float]:
        """One chat request's answer, read (:func:`read_completion`, or :func:`read_stream` with ``stream``),
        and the seconds to its first byte; every network operation of it ends by ``end`` (monotonic). The
        client raises for statuses and transport errors; the response is taken unread so the first byte can
        be timed, a stream read as it comes and a body's size bounded.

        The request is the client's custom ``post`` of the body we build (``extra`` over it, as ``extra_body``
        would): ``chat.completions.create`` walks every message against its parameter types first, which cost
        more CPU than the rest of a call, and a batch's concurrent episodes share one interpreter lock."""
        assert self._client is not None
        s = self.settings
        body = {"model": s.model, "messages": messages, **self._params(seed), **dict(s.extra)}
        token = _REQUEST_END.set(end)
        start = time.perf_counter()
        try:
            response = self._client.post(CHAT_PATH, cast_to=_http.Response, body=body, stream=True)
            with contextlib.closing(response):
                ttfb = time.perf_counter() - start
                try:
                    chunks = response.iter_bytes()
                    return (read_stream(chunks) if s.stream else read_completion(read_body(chunks))), ttfb
                except _http.TimeoutException as exc:  # the client wraps this only before the body
                    raise openai.APITimeoutError(request=response.request) from exc
                except _http.TransportError as exc:  # the connection broke while the body was read
                    raise openai.APIConnectionError(request=response.request) from exc
        finally:
            _REQUEST_END.reset(token)

    def _params(self, seed: int | None) -> dict[str, Any]:
        """The request's sampling fields, its seed and, with ``stream``, the streaming options."""
        s = self.settings
        params: dict[str, Any] = {
            k: v for k, v in (("temperature", s.temperature), ("max_tokens", s.max_tokens)) if v is not None
        }
        if seed is not None:
            params["seed"] = seed
        if s.stream:  # usage comes in a last chunk only when asked for
            params.update(stream=True, stream_options={"include_usage": True})
        return params

    def _timeout_failure(self, episode: Deadline | None, end: float) -> dict[str, Any]:
        """What to record of an attempt cut at its deadline ``end``: the request's own, or the episode's when
        that came first."""
        if episode is not None and end >= episode.at:
            detail = f"the episode's timeout of {episode.seconds:g} s passed during the request"
            return {"error": EPISODE_TIMEOUT, "status": None, "retry_after": None, "detail": detail}
        detail = f"no complete answer within the {self.settings.timeout:g} s timeout (connect, headers and body)"
        return {"error": "APITimeoutError", "status": None, "retry_after": None, "detail": detail}

    def _episode_over(self, out: Completion) -> Completion:
        """``out`` ended by the episode's deadline (its last attempt says so)."""
        out.error = EPISODE_TIMEOUT
        out.failure = EpisodeTimedOut(out.attempts[-1]["detail"])
        log.info("%s: %s", self.settings.model, out.failure)
        return out

    def _status_failure(self, exc: openai.APIStatusError) -> dict[str, Any]:
        """What to record of an HTTP error status; ``final`` when retrying cannot help (401, 403, 404...)."""
        status = exc.status_code
        retried = status in RETRIED_STATUSES or status >= 500
        return {
            "error": type(exc).__name__,
            "status": status,
            "retry_after": _retry_after(exc.response.headers) if retried else None,
            "detail": self.scrub(re.sub(r"^Error code: \d+ ?-? ?", "", str(getattr(exc, "message", "") or ""))),
            **({} if retried else {"final": True}),
        }

    def _failed(self, out: Completion, refused: bool) -> Completion:
        """``out`` with the failure that ended it: the last attempt's error, said once in one short line."""
        last = out.attempts[-1]
        out.error = last["error"]
        names = {"MalformedResponse": "malformed response body", "JSONDecodeError": "response body is not JSON"}
        what = names.get(last["error"], last["error"])
        if last["status"] is not None:
            what = f"HTTP {last['status']} {what}"
        if not refused:
            what += f" on {len(out.attempts)} attempt{'s' if len(out.attempts) != 1 else ''}"
        if last.get("detail"):
            what += f": {last['detail']}"
        out.failure = (
            ModelCallError(what, self.endpoint, last["status"])
            if refused
            else InfrastructureError(what, self.endpoint, last["status"])
        )
        log.info("%s: %s", self.settings.model, out.failure)  # raised to the caller, who reports it
        return out

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Retry-After when the server gave one, otherwise exponential backoff with seeded jitter."""
        if retry_after is not None:
            return retry_after
        ceiling = min(self.settings.max_backoff_s, self.settings.backoff_s * 2.0**attempt)
        return ceiling * (0.5 + 0.5 * self.rng.random())

    def _read(self, reading: Reading, latency: float, out: Completion) -> Completion:
        """``out`` with a body's reading (content, recorded response, usage, notes) and the call's latency."""
        content, response, usage, notes = reading
        out.content, out.response, out.usage, out.notes = content, response, usage, notes
        out.latency_s = round(latency, 4)
        return out


# ---- reading an untrusted body --------------------------------------------------------------------------
_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # C0 and C1 controls: terminal escapes among them


def clean_text(text: str) -> str:
    """``text`` that encodes as UTF-8: lone surrogates (and any other unencodable code point) become U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


Reading = tuple[str, dict[str, Any], dict[str, int], list[str]]
"""What reading an answer gives: (content, recorded response, usage, notes)."""


def read_body(chunks: Iterable[bytes]) -> bytes:
    """An unstreamed body's bytes, read as they come; MalformedResponse past ``BODY_BYTES`` (the rest is left
    unread)."""
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) > BODY_BYTES:
            raise MalformedResponse(f"the body passed {BODY_BYTES:,} bytes: the rest was not read")
    return bytes(body)


def read_completion(body: bytes) -> Reading:
    """(content, recorded response, usage, notes) of a chat completion body, whatever bytes it holds.

    Raises JSONDecodeError when the body is not JSON and MalformedResponse when it is JSON of another shape;
    text is cleaned (:func:`clean_text`); ``usage`` keeps only whole counts, the rest are noted.
    """
    notes: list[str] = []
    obj = _json_object(_decoded(body, "the body", notes), "the body")
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices:
        why = f"'choices' is {'an empty list' if choices == [] else _kind(choices)}, not a non-empty list"
        raise MalformedResponse(why + _says(obj))
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise MalformedResponse("'choices[0].message' is not an object")
    content = _content(message.get("content"), "choices[0].message.content", notes)
    response = _recorded(content, _reasoning(message), choice.get("finish_reason"), obj.get("id"), notes)
    return content, response, _usage(obj.get("usage"), notes), notes


def read_stream(chunks: Iterable[bytes]) -> Reading:
    """What :func:`read_completion` gives, from a streamed body (server-sent events of chat completion chunks)
    read from ``chunks`` (its bytes, split anywhere) as they come.

    The content and the reasoning (``reasoning_content`` or ``reasoning``) are the deltas' text joined; the
    finish reason, id and usage come from the chunks that carry them. Raises MalformedResponse for a stream
    without a chunk with a choice, an event that is not a JSON object, ``choices`` of another shape, an error
    event, or a stream that ends with neither a finish reason nor ``[DONE]`` (a cut connection). Reading stops
    past ``STREAM_BYTES`` read, a line of ``STREAM_LINE_BYTES`` or ``STREAM_CHARS`` of text (noted).
    """
    stream = _Stream()
    for data in stream.events(chunks):
        if data.strip() == "[DONE]":
            stream.done = True
            break
        if not stream.take(data):
            break
    return stream.result()


class _Stream:
    """One streamed answer being read: the event stream's lines and the chunks' parts gathered so far."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.chars = 0
        self.chunks = 0  # chunks with a choice
        self.events_read = 0
        self.finish: Any = None
        self.id: Any = None
        self.usage: Any = None
        self.first_line: str | None = None
        self.done = False  # [DONE] was read
        self.cut = False  # a bound was reached: the rest was not read

    def _stop(self, why: str) -> None:
        self.cut = True
        self.notes.append(f"{why}: the rest of the stream was not read")

    def lines(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """The body's lines (LF or CRLF ended; the last one may be unended), within the byte bounds. Only a
        chunk's own bytes are searched for line ends, so a line arriving in many pieces costs no rescans."""
        pending, read = bytearray(), 0
        for chunk in chunks:
            read += len(chunk)
            if read > STREAM_BYTES:
                self._stop(f"the stream passed {STREAM_BYTES:,} bytes")
                return
            *ended, rest = chunk.split(b"\n")
            if ended:
                ended[0] = bytes(pending) + ended[0]
                pending = bytearray()
                yield from (line.removesuffix(b"\r") for line in ended)
            pending += rest
            if len(pending) > STREAM_LINE_BYTES:
                self._stop(f"a line of the stream passed {STREAM_LINE_BYTES:,} bytes")
                return
        if pending:
            yield bytes(pending).removesuffix(b"\r")

    def events(self, chunks: Iterable[bytes]) -> Iterator[str]:
        """The data of each event: its ``data:`` lines joined, dispatched at a blank line (or the body's end).
        Comments (``:``) and other fields (``event``, ``id``, ``retry``) are passed over."""
        data: list[str] = []
        size = 0
        for raw in self.lines(chunks):
            line = _decoded(raw, "the stream", self.notes)
            if self.first_line is None and line.strip():
                self.first_line = line
            name, _, value = line.partition(":")
            if line == "" and data:
                self.events_read += 1
                yield "\n".join(data)
                data, size = [], 0
            elif name == "data":
                data.append(value.removeprefix(" "))
                size += len(value)
                if size > STREAM_LINE_BYTES:
                    self._stop(f"an event of the stream passed {STREAM_LINE_BYTES:,} bytes")
                    return
        if data and not self.cut:
            self.events_read += 1
            yield "\n".join(data)

    def take(self, data: str) -> bool:
        """Read one event's chunk; False once the text bound is reached (reading stops)."""
        try:
            obj = _json_object(data, f"event {self.events_read} of the stream")
        except json.JSONDecodeError:
            raise MalformedResponse(f"event {self.events_read} of the stream is not JSON") from None
        if obj.get("error") is not None:
            raise MalformedResponse(f"event {self.events_read} of the stream is an error" + _says(obj))
        choices = obj.get("choices")
        if not isinstance(choices, list):
            raise MalformedResponse(f"a chunk's 'choices' is {_kind(choices)}, not a list")
        if obj.get("usage") is not None:  # the last chunk's, once asked for (others may say null)
            self.usage = obj["usage"]
        if self.id is None:
            self.id = obj.get("id")
        if not choices:
            return True
        choice = choices[0]
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if not isinstance(choice, dict) or not isinstance(delta, dict | None):
            raise MalformedResponse("a chunk's 'choices[0].delta' is not an object")
        self.chunks += 1
        if choice.get("finish_reason") is not None:
            self.finish = choice["finish_reason"]
        delta = delta or {}
        content = _content(delta.get("content"), "choices[0].delta.content", self.notes)
        return self._gather(self.content, content) and self._gather(self.reasoning, _reasoning(delta))

    def _gather(self, parts: list[str], text: str) -> bool:
        """Keep ``text`` within ``STREAM_CHARS`` of text in all; False once the bound is reached."""
        room = STREAM_CHARS - self.chars
        parts.append(text[:room])
        self.chars += min(len(text), room)
        if len(text) > room:
            self._stop(f"the streamed text passed {STREAM_CHARS:,} characters")
            return False
        return True

    def result(self) -> Reading:
        """The reading of what was gathered; MalformedResponse when it is no chat completion."""
        if not self.chunks:
            json_body = self.first_line is not None and self.first_line.lstrip().startswith("{")
            hint = " (the body is JSON, not an event stream: does the server stream?)" if json_body else ""
            raise MalformedResponse("the stream holds no chat completion chunk with a choice" + hint)
        if not (self.done or self.cut):
            if self.finish is None:
                raise MalformedResponse("the stream ended before the reply did (no finish_reason, no [DONE])")
            self.notes.append("the stream ended without 'data: [DONE]'")
        content = "".join(self.content)
        response = _recorded(content, "".join(self.reasoning), self.finish, self.id, self.notes)
        usage = _usage(self.usage, self.notes)
        return content, response, usage, list(dict.fromkeys(self.notes))  # a fault in every chunk, said once


def _decoded(data: bytes, what: str, notes: list[str]) -> str:
    """``data`` as text: bytes that are not UTF-8 become U+FFFD (noted); a byte order mark is dropped."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        notes.append(f"{what} was not valid UTF-8; undecodable bytes were replaced by U+FFFD")
        return data.decode("utf-8-sig", errors="replace")


def _json_object(text: str, what: str) -> dict[str, Any]:
    """``text`` read as a JSON object; JSONDecodeError when it is not JSON, MalformedResponse otherwise.
    ``NaN`` and ``Infinity`` are read as floats and integers past ``INT_DIGITS`` as :class:`_HugeInteger`:
    numbers are only read as ``usage`` counts, which drops (and notes) them there."""
    try:
        obj = json.loads(text, parse_int=_integer)
    except json.JSONDecodeError:
        raise
    except RecursionError:  # nesting too deep
        raise MalformedResponse("unreadable JSON (nested too deep)") from None
    if not isinstance(obj, dict):
        raise MalformedResponse(f"{what} is {_kind(obj)}, not a JSON object")
    return obj


def _says(obj: dict[str, Any]) -> str:
    """What an error object in ``obj`` says, as a parenthesis to a fault's reason ("" when nothing)."""
    error = obj.get("error")
    said = error.get("message") if isinstance(error, dict) else error
    return f" (the body says: {said})" if isinstance(said, str) and said else ""


def _reasoning(part: dict[str, Any]) -> str:
    """The reasoning a server split out of a message or delta (``reasoning_content`` or ``reasoning``)."""
    reasoning = part.get("reasoning_content") or part.get("reasoning")
    return clean_text(reasoning) if isinstance(reasoning, str) else ""


def _recorded(content: str, reasoning: str, finish: Any, ident: Any, notes: list[str]) -> dict[str, Any]:
    """The recorded response: content, finish reason, id, and the reasoning when there is any."""
    response: dict[str, Any] = {
        "content": content,
        "finish_reason": _optional_text(finish, "finish_reason", notes),
        "id": _optional_text(ident, "id", notes),
    }
    if reasoning.strip():
        response["reasoning"] = reasoning
    return response


@dataclass(frozen=True)
class _HugeInteger:
    """A JSON integer of more than ``INT_DIGITS`` digits, kept unread: its sign and its number of digits."""

    negative: bool
    digits: int

    def __str__(self) -> str:
        return f"a {'negative ' if self.negative else ''}{self.digits:,}-digit integer"


def _integer(text: str) -> int | _HugeInteger:
    """A JSON integer token read, or left as :class:`_HugeInteger` when it is too long to be a count."""
    digits = len(text.lstrip("-"))
    return int(text) if digits <= INT_DIGITS else _HugeInteger(text.startswith("-"), digits)


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _content(value: Any, where: str, notes: list[str]) -> str:
    """The text at ``where`` (a message's or a delta's content): a string, null (""), or the text parts of a
    list of content parts; cleaned, and lone surrogates noted."""
    text: Any = None
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    elif isinstance(value, list) and all(isinstance(p, dict) for p in value):
        texts = [p.get("text") for p in value if p.get("type") in ("text", "output_text")]
        text = "".join(texts) if all(isinstance(t, str) for t in texts) else None
    if not isinstance(text, str):
        raise MalformedResponse(f"'{where}' is {_kind(value)}, not text")
    if _SURROGATE.search(text):
        notes.append("the content held lone surrogates; they were replaced by U+FFFD")
    return clean_text(text)


def _optional_text(value: Any, name: str, notes: list[str]) -> str | None:
    if value is None or isinstance(value, str):
        return None if value is None else clean_text(value)[:DETAIL_CHARS]
    notes.append(f"'{name}' ignored: {_kind(value)}, not a string")
    return None


def _usage(value: Any, notes: list[str]) -> dict[str, int]:
    """Token counts that are whole numbers from 0 to ``MAX_COUNT`` (a whole float counts); anything else
    (NaN, infinities, negative or fractional numbers, huge integers, text) is noted and left out."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        notes.append(f"'usage' ignored: {_shown(value)} is not an object")
        return {}
    usage: dict[str, int] = {}
    for name in USAGE_NAMES:
        count = value.get(name)
        if count is None:
            usage[name] = 0
        elif _is_count(count):
            usage[name] = int(count)
        else:
            notes.append(f"'usage.{name}' ignored: {_shown(count)} is not a whole count from 0 to {MAX_COUNT:,.0f}")
    return usage


def _is_count(value: Any) -> bool:
    """Whether ``value`` is a whole number from 0 to ``MAX_COUNT`` (NaN fails every comparison)."""
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return _is_number(value) and whole and 0 <= value <= MAX_COUNT


def _shown(value: Any) -> str:
    """A short, strict-JSON-safe rendering of a value the endpoint sent."""
    if isinstance(value, float | int | _HugeInteger) and not isinstance(value, bool):
        text = repr(value) if isinstance(value, float) else str(value)
    else:
        text = json.dumps(value, ensure_ascii=True, default=str) if not isinstance(value, str) else repr(value)
    text = clean_text(text)
    return text if len(text) <= 60 else text[:57] + "..."


def public_url(url: str) -> str:
    """``url`` without user, password, query or fragment (and scrubbed), as it may appear in messages: at most
    ``URL_CHARS`` characters."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        if parts.port is not None:
            netloc += f":{parts.port}"
        shown = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:
        shown = "(an unreadable URL)"
    safe = scrub_text(_CONTROL.sub("", clean_text(shown)))
    return safe if len(safe) <= URL_CHARS else safe[: URL_CHARS - 3] + "..."


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (a number of seconds); None when absent, a date or
    not a finite non-negative number."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        try:
            seconds = float(value) / scale if value is not None else None
        except ValueError:
            seconds = None
        if seconds is not None and math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


# ---- the agent ------------------------------------------------------------------------------------------
class OpenAIAgent:
    """One role played by a model behind an OpenAI-compatible chat endpoint.

    ``usage`` holds the agent's running totals over its lifetime (prompt, completion and total tokens,
    requests, cost when prices are set); each ``Reply.raw`` entry carries its own call's usage.
    """

    def __init__(
        self, role: str, family: WorldFamily, settings: AgentSettings, world_settings: Mapping[str, Any] | None = None
    ) -> None:
        if role not in family.roles:  # fail at construction for a role this agent cannot play
            raise ValueError(f"world {family.name!r} has no role {role!r}")
        self.role, self.family, self.settings = role, family, settings
        self.text_only = settings.text_only  # read by the episode driver: what the model is given is recorded
        self.world_settings = dict(world_settings or {})
        self.caller = ChatCaller(settings)
        self.seed = 0
        self.calls = 0
        self.chars_per_token = CHARS_PER_TOKEN
        self.context_tokens = settings.max_context_tokens  # lowered when a server says its context is shorter
        self.usage: dict[str, float] = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "requests": 0}
        if settings.prices:
            self.usage["cost"] = 0.0

    def reset(self, seed: int, role: str, task: Mapping[str, Any]) -> None:
        """A new episode: the retry jitter and request seeds follow ``seed``; the task is not read (a
        participant's view only)."""
        self.role, self.seed, self.calls = role, seed, 0
        self.caller.rng = random.Random(seed)
        self.caller.connect()

    def act(self, observation: Observation) -> Reply:
        """Ask the model, re-ask once when the reply cannot be read, then give up as the protocol says.

        Raises InfrastructureError (its ``records`` hold this act's raw records) when the endpoint fails."""
        protocol = self.family.protocol(observation.role, observation, self.world_settings)
        fitted, left_out = self._fit(protocol.system, observation)
        wire, recorded = self._messages(protocol.system, fitted)
        records: list[dict[str, Any]] = []
        text, public, reason, call = "", "", "", 1
        split, completion = Split("", ""), Completion()
        while call <= 2:
            seed = self._next_seed()
            completion = self.caller.complete(wire, seed)
            record = self._record(recorded, completion, call, seed, left_out)
            records.append(record)
            if completion.failure is not None:
                if call == 1 and self._learn_context(completion, record) and left_out < len(observation.history):
                    fitted, left_out = self._fit(protocol.system, observation)  # ask again, fitted to it
                    wire, recorded = self._messages(protocol.system, fitted)
                    continue
                failure = completion.failure  # the endpoint failed: not the model's doing
                failure.role, failure.records = self.role, tuple(records)
                raise failure
            text = completion.content or ""
            self._calibrate(wire, completion)
            split = split_reasoning(text, self.settings.reasoning_tags)
            public = split.public
            try:
                if split.unclosed:  # a copy of the instructions says more than the tag it left open
                    _refuse_echo(protocol, text)
                    closing = self.settings.reasoning_tags[1]
                    raise ReplyError(f"the private reasoning was never closed ({closing} missing): nothing to read")
                reply = self._read(protocol, public, fitted)
            except ReplyError as exc:
                reason = self._fault(str(exc), completion)
            else:
                given = (completion.response or {}).get("reasoning")
                reasoning = joined(given, split.reasoning, reply.reasoning)
                return Reply(reply.message, reasoning, reply.action, tuple(records))
            record["parse_error"] = reason
            if protocol.reask is None:  # the game answers an unreadable reply itself
                break
            correction = protocol.reask.replace("{reason}", reason)
            fitted, left_out = self._fit(protocol.system, observation, len(text) + len(correction))
            wire, recorded = self._messages(protocol.system, fitted)
            wire, recorded = _reasked(wire, text, correction), _reasked(recorded, text, correction)
            call += 1
        fallback = protocol.give_up(public)  # the public part only: private reasoning never becomes a message
        reasoning = joined((completion.response or {}).get("reasoning"), split.reasoning, fallback.reasoning)
        return Reply(fallback.message, reasoning, fallback.action, tuple(records), problem=reason)

    def _read(self, protocol: ReplyProtocol, text: str, observation: Observation) -> Reply:
        """The protocol's reading of ``text``; ReplyError when it is longer than any reply (``REPLY_CHARS``),
        copies a placeholder or cannot be read."""
        if len(text) > REPLY_CHARS:
            raise ReplyError(f"the reply is {len(text):,} characters long, past the {REPLY_CHARS:,} any reply needs")
        _refuse_echo(protocol, text)
        try:
            return protocol.parse(text, observation)
        except ReplyError:
            raise
        except Exception as exc:  # the family's parser choked on model text: still an unreadable reply
            log.warning("%s: the %s parser failed on a reply: %r", self.family.name, self.role, exc)
            raise ReplyError(f"the reply could not be read ({type(exc).__name__})") from None

    def _fault(self, reason: str, completion: Completion) -> str:
        """What was wrong with a reply, said so the re-ask can fix it: a cut-off reply is told to be shorter."""
        if (completion.response or {}).get("finish_reason") == "length":
            limit = f" of {self.settings.max_tokens} tokens" if self.settings.max_tokens else ""
            cut = f"your reply was cut off at the length limit{limit} before it was complete"
            return f"{cut} ({reason}); answer much shorter"
        return reason

    def _learn_context(self, completion: Completion, record: dict[str, Any]) -> bool:
        """Whether a refused request told a context shorter than the one assumed; it becomes the limit the
        history is fitted to (noted in the record)."""
        last = completion.attempts[-1] if completion.attempts else {}
        found = CONTEXT_LIMIT.search(str(last.get("detail") or "")) if last.get("status") == 400 else None
        limit = int(found.group(1)) if found else None
        if limit is None or (self.context_tokens is not None and limit >= self.context_tokens):
            return False
        self.context_tokens = limit
        record["notes"].append(f"the server's context is {limit} tokens: the oldest history is left out to fit")
        return True

    def _next_seed(self) -> int | None:
        """The request seed of the next call (from the episode's, so a rerun asks the same), or None."""
        self.calls += 1
        return stable_seed("request", self.seed, self.role, self.calls) % 2**31 if self.settings.send_seed else None

    def _fit(self, system: str, observation: Observation, more_chars: int = 0) -> tuple[Observation, int]:
        """``observation`` with the oldest shared history left out until the request (and ``more_chars`` of a
        re-ask's exchange) fits ``max_context_tokens`` with room for the reply; how many entries were left
        out. The task and the observation itself are never cut: a request still too long is sent as it is."""
        limit = self.context_tokens
        if limit is None or not observation.history:
            return observation, 0
        budget = limit - (self.settings.max_tokens or 0) - CONTEXT_MARGIN - more_chars / self.chars_per_token
        keep = len(observation.history)
        fitted = observation
        while keep > 0 and self._tokens(system, fitted) > budget:
            keep -= 1
            fitted = observation.with_history(keep)
        return fitted, len(observation.history) - keep

    def _tokens(self, system: str, observation: Observation) -> float:
        text = system + observation.text + (observation.words_for_images() if self.settings.text_only else "")
        return len(text) / self.chars_per_token

    def _calibrate(self, wire: list[Message], completion: Completion) -> None:
        """Learn the model's characters per token from what the server counted (never fewer assumed)."""
        tokens = completion.usage.get("prompt_tokens", 0)
        chars = sum(len(json.dumps(m.get("content"), ensure_ascii=False)) for m in wire)
        if tokens > 0:
            self.chars_per_token = min(self.chars_per_token, max(1.0, chars / tokens))

    def _messages(self, system_prompt: str, observation: Observation) -> tuple[list[Message], list[Message]]:
        """The chat messages to send and their recorded form (images by reference). A text-only model gets
        the pictures in words; a model shown pictures is told which are attached."""
        system = {"role": "system", "content": system_prompt}
        images = {} if self.settings.text_only else observation.images
        if not images:
            user = {"role": "user", "content": observation.text + observation.words_for_images()}
            return [system, user], [system, user]
        wire_images, recorded_images = image_parts(images)
        names = ", ".join(images)
        text = {"type": "text", "text": f"{observation.text}\n\n(Attached, in this order: {names}.)"}
        wire = {"role": "user", "content": [text, *wire_images]}
        recorded = {"role": "user", "content": [text, *recorded_images]}
        return [system, wire], [system, recorded]

    def _record(
        self, messages: list[Message], completion: Completion, call: int, seed: int | None, left_out: int
    ) -> dict[str, Any]:
        """The raw-stream entry of one request, and the running totals."""
        cost = self.settings.cost(completion.usage) if completion.usage else None
        for name, value in completion.usage.items():
            self.usage[name] = self.usage.get(name, 0) + value
        self.usage["requests"] += len(completion.attempts) + (completion.response is not None)
        if cost is not None:
            self.usage["cost"] = self.usage.get("cost", 0.0) + cost
        params = {**self.settings.params(), **({"seed": seed} if seed is not None else {})}
        record = {
            "call": call,
            "request": {"model": self.settings.model, "messages": messages, "params": params},
            "response": completion.response,
            "usage": dict(completion.usage),
            "latency_s": completion.latency_s,
            "ttfb_s": completion.ttfb_s,
            "total_s": completion.total_s,
            "attempts": completion.attempts,
            "cost": cost,
            "error": completion.error,
            "parse_error": None,
            "notes": list(completion.notes),
        }
        if left_out:
            record["history_left_out"] = left_out
        return record


def _refuse_echo(protocol: ReplyProtocol, text: str) -> None:
    """ReplyError when ``text`` copies one of the protocol's placeholders instead of answering."""
    folded = " ".join(text.lower().split())
    copied = next((e for e in protocol.echoes if " ".join(e.lower().split()) in folded), None)
    if copied is not None:
        raise ReplyError(f"the reply copies the instructions' placeholder {copied!r} instead of answering")


def _reasked(messages: list[dict[str, Any]], answer: str, correction: str) -> list[dict[str, Any]]:
    """The conversation with the unreadable answer and the correction appended."""
    said = [{"role": "assistant", "content": answer}] if answer.strip() else []
    return [*messages, *said, {"role": "user", "content": correction}]


def make_agent(role: str, arg: str | None, settings: Mapping[str, Any]) -> OpenAIAgent:
    """The factory: ``openai:MODEL`` for ``role`` of the world ``settings["world"]`` (any registered family);
    the agent's own settings are ``settings["agent"]``, the rest are the world's. ValueError says what is
    wrong; ConfigError when the key's variable is not set (said before a run folder is made)."""
    agent_settings = AgentSettings.from_config(arg, settings.get("agent") or {})
    world_settings = {k: v for k, v in settings.items() if k not in ("world", "agent")}
    agent = OpenAIAgent(role, get_family(str(settings.get("world", ""))), agent_settings, world_settings)
    agent.caller.connect()
    return agent


# ---- the request deadline, in every network operation -----------------------------------------------------
_REQUEST_END: ContextVar[float | None] = ContextVar("simlab_request_end", default=None)
"""When the request this thread is making must be over (monotonic); None outside a request."""


def _within(timeout: float | None, expired: type[Exception]) -> float | None:
    """``timeout`` (one network operation's) cut to what is left of this thread's request; ``expired`` raised
    once nothing is left."""
    end = _REQUEST_END.get()
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise expired("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(_core.NetworkStream):
    """A connection whose every read, write and TLS handshake ends by the deadline of the request the thread
    using it is making: a server that drips its answer can stretch a per-read timeout without end, not this."""

    def __init__(self, stream: _core.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _within(timeout, _core.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        for start in range(0, len(buffer), WRITE_PIECE):  # a server reading slowly cannot stretch one write
            self._stream.write(buffer[start : start + WRITE_PIECE], _within(timeout, _core.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> _core.NetworkStream:
        tls = self._stream.start_tls(ssl_context, server_hostname, _within(timeout, _core.ConnectTimeout))
        return _DeadlineStream(tls)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


def _resolve(host: str, port: int, timeout: float | None) -> list[str]:
    """The addresses of ``host`` (itself when it is one), looked up within ``timeout``: the system's resolver
    takes no timeout, so it runs in a daemon thread left to finish on its own when the deadline passes first."""
    try:
        ipaddress.ip_address(host.strip("[]"))
        return [host.strip("[]")]
    except ValueError:
        pass
    found: list[list[str]] = []
    failed: list[Exception] = []

    def look_up() -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            found.append(list(dict.fromkeys(str(info[4][0]) for info in infos)))
        except (OSError, ValueError) as exc:  # ValueError: a name IDNA cannot encode (a label past 63 bytes)
            failed.append(exc)

    thread = threading.Thread(target=look_up, name=f"resolve {host}", daemon=True)
    thread.start()
    thread.join(timeout)
    if found:
        return found[0]
    if failed:
        raise _core.ConnectError(f"{host!r} could not be resolved: {failed[0]}")
    raise _core.ConnectTimeout(f"looking up {host!r} took longer than the request's deadline")


class _DeadlineBackend(_core.NetworkBackend):
    """The HTTP library's network backend with every connection it makes a :class:`_DeadlineStream`: the name
    lookup and the connect within the deadline too."""

    def __init__(self, backend: _core.NetworkBackend) -> None:
        self._backend = backend

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> _core.NetworkStream:
        failure: Exception = _core.ConnectError(f"{host!r} resolves to no address")
        for address in _resolve(host, port, _within(timeout, _core.ConnectTimeout)):
            try:  # each address in the resolver's order, as the system's own connect would
                bounded = _within(timeout, _core.ConnectTimeout)
                stream = self._backend.connect_tcp(address, port, bounded, local_address, socket_options)
            except _core.ConnectError as exc:
                failure = exc
                continue
            return _DeadlineStream(stream)
        raise failure

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> _core.NetworkStream:
        bounded = _within(timeout, _core.ConnectTimeout)
        return _DeadlineStream(self._backend.connect_unix_socket(path, bounded, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def deadline_http_client() -> _http.Client:
    """The HTTP client the openai client would make (its limits, redirects, proxies from the environment),
    with every connection pool's network backend a :class:`_DeadlineBackend`. RuntimeError when the HTTP
    library has none to wrap: a client without request deadlines is never used."""
    http = openai.DefaultHttpxClient()
    for transport in (http._transport, *http._mounts.values()):
        if transport is None:  # a pattern mounted to bypass proxies: the default transport serves it
            continue
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if not isinstance(backend, _core.NetworkBackend):
            raise RuntimeError(f"{type(transport).__name__} has no network backend to bound request deadlines with")
        pool._network_backend = _DeadlineBackend(backend)  # type: ignore[union-attr]
    return http


_CLIENTS: dict[tuple[str, str, float], openai.OpenAI] = {}
_CLIENTS_LOCK = threading.Lock()


def _forget_clients() -> None:
    """In a forked child (a batch's worker process): its own clients from the first call. The parent's hold
    connections the parent uses too (two processes on one socket mix their requests), and the lock may have
    been held by a parent thread at the fork."""
    global _CLIENTS_LOCK
    _CLIENTS.clear()
    _CLIENTS_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_forget_clients)


def shared_client(key: str, base_url: str, timeout: float) -> openai.OpenAI:
    """One client per endpoint, key and timeout, shared by every agent and thread: the client is thread-safe,
    and making one costs 30-40 ms (it loads the certificate bundle), more than a local model call. Its HTTP
    client holds requests to their deadlines (:func:`deadline_http_client`). The key stays inside the client;
    the cache is keyed by a digest of it, never the key itself."""
    digest = hashlib.sha256(key.encode()).hexdigest()
    with _CLIENTS_LOCK:
        client = _CLIENTS.get((digest, base_url, timeout))
        if client is None:
            http = deadline_http_client()
            client = openai.OpenAI(api_key=key, base_url=base_url, timeout=timeout, max_retries=0, http_client=http)
            _CLIENTS[(digest, base_url, timeout)] = client
        return client
