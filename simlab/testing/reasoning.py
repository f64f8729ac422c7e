"""The conformance check of private reasoning and unreadable replies, which every family inherits.

Every role of the family is played by the real model agent against the local fake endpoint, answering as
reasoning models do: a ``<think>`` block holding a marker unique to the role (``THOUGHT-`` and a digest of its
system prompt), then a public part that is a plain sentence, a letter, ``yes``, or nothing; now and then the
reasoning is never closed (cut off at the token limit) and stays so when re-asked. Once with the reasoning
inline and once split out by the server (``reasoning_content``), :func:`reasoning_test` checks that:

* no event but a ``reasoning`` event, no summary field and no request sent to any model holds a marker (the
  model's own re-ask aside): no public message, action, observation, metric or leak count;
* every act of a role left exactly one ``reasoning`` event of that role (nothing the model thought is lost);
* the unreadable replies are one number per role, however the game answers them: the ``unreadable_reply``
  protocol errors, ``summary.replies[role].unreadable``, ``summary.usage.roles[role].unreadable``, the acts
  whose last call could not be read, and the report's give-ups.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from simlab.agents.openai_agent import AgentSettings, OpenAIAgent
from simlab.analysis.report import role_stats
from simlab.core.episode import Episode
from simlab.core.family import WorldFamily
from simlab.core.usage import unreadable_acts
from simlab.runner.episode import UNREADABLE, run_episode
from simlab.testing.openai_server import FakeOpenAIServer, message_text, system_text

__all__ = ["MARKER", "reasoning_test", "thinking_reply"]

MARKER = "THOUGHT-"
"""What every private thought of :func:`thinking_reply` holds, followed by its role's digest."""
PUBLIC_PARTS = ("The red one is on the left, next to the window.", "A", "yes", "")
UNCLOSED_EVERY = 5
"""Every fifth request (the fourth, ninth...) leaves its reasoning open."""
KEY_ENV = "SIMLAB_REASONING_CHECK_KEY"


def thinking_reply() -> Callable[[dict[str, Any]], str]:
    """A fake endpoint's reply function that thinks aloud (see the module docstring); requests are counted
    in the order they come, so one episode's replies are the same every time."""
    counter, lock = itertools.count(), threading.Lock()

    def reply(body: dict[str, Any]) -> str:
        with lock:
            n = next(counter)
        thought = f"<think>{marker(system_text(body))}: my private plan is to say nothing of this"
        reasked_open = any(
            m.get("role") == "assistant" and "</think>" not in message_text(m) for m in body.get("messages") or []
        )
        if reasked_open or n % UNCLOSED_EVERY == UNCLOSED_EVERY - 1:
            return thought + " and then the token limit came"
        return f"{thought}</think>{PUBLIC_PARTS[n % len(PUBLIC_PARTS)]}"

    return reply


def marker(system: str) -> str:
    """The private marker of the role whose system prompt is ``system``."""
    return MARKER + hashlib.sha256(system.encode()).hexdigest()[:10]


def reasoning_test(
    fam: WorldFamily, task: Mapping[str, Any], settings: Mapping[str, Any] | None = None
) -> list[Episode]:
    """Play ``task`` with every role a thinking model, reasoning inline and then split out by the server, and
    check the episodes (see the module docstring); returns them."""
    played = []
    for field in (None, "reasoning_content"):
        with FakeOpenAIServer(thinking_reply(), reasoning_field=field) as server, _key():
            episode = _play(fam, task, settings or {}, server.base_url)
        where = f"{fam.name} (reasoning {'in ' + field if field else 'inline'})"
        _check_private(episode, where)
        _check_unreadable(episode, where)
        played.append(episode)
    return played


@contextlib.contextmanager
def _key() -> Iterator[None]:
    """A dummy key in the environment while the check plays (the fake endpoint takes any)."""
    before = os.environ.get(KEY_ENV)
    os.environ[KEY_ENV] = "sk-reasoning-check"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(KEY_ENV, None)
        else:
            os.environ[KEY_ENV] = before


def _play(fam: WorldFamily, task: Mapping[str, Any], settings: Mapping[str, Any], base_url: str) -> Episode:
    world_settings = fam.check_settings(settings)
    agent = AgentSettings("fake-model", base_url, KEY_ENV, timeout=10, max_retries=1, backoff_s=0.001, text_only=True)
    agents = {role: OpenAIAgent(role, fam, agent, world_settings) for role in fam.roles}
    specs = dict.fromkeys(fam.roles, "openai:fake-model")
    return run_episode(fam.world(task, world_settings), agents, f"{task.get('id', 'task')}-reasoning", 0, specs)


def _check_private(episode: Episode, where: str) -> None:
    acts: dict[str, int] = {}
    thoughts: dict[str, int] = {}
    for event in episode.events:
        text = json.dumps(event.data, ensure_ascii=False)
        if event.kind == "observation" and event.role:
            acts[event.role] = acts.get(event.role, 0) + 1
        if event.kind == "reasoning" and event.role:
            thoughts[event.role] = thoughts.get(event.role, 0) + 1
        elif MARKER in text:
            raise AssertionError(
                f"{where}: a {event.kind} event of {event.role} at turn {event.turn} holds a model's private "
                f"reasoning: {text[:200]}"
            )
    assert MARKER not in json.dumps(episode.summary), f"{where}: the summary holds a model's private reasoning"
    assert thoughts == acts, f"{where}: acts per role {acts}, but reasoning events per role {thoughts}"
    for record in episode.raw:
        sent = [m for m in record["request"]["messages"] if m.get("role") != "assistant"]
        assert MARKER not in json.dumps(sent), (
            f"{where}: the request of {record.get('role')} at turn {record.get('turn')} shows it private reasoning"
        )


def _check_unreadable(episode: Episode, where: str) -> None:
    summary = episode.summary
    table = role_stats([summary])
    usage = (summary.get("usage") or {}).get("roles") or {}
    for role, counts in (summary.get("replies") or {}).items():
        errors = sum(
            e.kind == "protocol_error" and e.role == role and e.data.get("code") == UNREADABLE for e in episode.events
        )
        raw = [r for r in episode.raw if r.get("role") == role]
        seen = {
            "unreadable_reply errors": errors,
            "summary.replies": counts["unreadable"],
            "summary.usage": int(usage.get(role, {}).get("unreadable", 0)),
            "acts whose last call could not be read": unreadable_acts(raw),
            "the report's give-ups": int(table[role]["unreadable"]),
        }
        assert len(set(seen.values())) == 1, f"{where}: {role}'s unreadable replies are counted differently: {seen}"
