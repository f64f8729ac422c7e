"""Typed events: everything an episode did, in order.

An episode is an ordered list of :class:`Event`. Each has a kind, the game turn it belongs to, the role
it concerns (``None`` for the engine itself) and a JSON ``data`` payload whose keys depend on the kind:

=================  =================================================================================
kind               data
=================  =================================================================================
``observation``    ``text``, ``images`` (names of images rendered from the recorded state), ``data``
``reasoning``      ``text``: private reasoning, never shown to other roles
``message``        ``text``: a public message every role with access to the history sees
``action``         ``action``: the world's action object (a blocks move, an answer letter...)
``result``         ``ok``, ``message``, ``error`` (a stable code when not ok), ``mistake`` (why a move the
                   engine accepted works against the task: a wrong answer), world-specific extras
``state``          ``state``: the full world state after a change (small worlds snapshot it whole)
``score``          ``metrics``: name -> number after this turn
``protocol_error`` ``code``, ``message``: a reply the protocol could not use
``check``          ``code``, ``message``, ``detail``: a finding about the recording itself, made by a
                   checker rather than the game (an imported turn SimLab's engine judges otherwise);
                   no role is ever shown it
=================  =================================================================================

Model requests and responses are not events: they go to the episode's separate raw stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_TURN = 100_000
"""The highest turn an event may have: playback, plots and exports walk every turn up to the last, so a
recording claiming turn 10^9 is refused rather than followed."""

EVENT_KINDS: tuple[str, ...] = (
    "observation",
    "reasoning",
    "message",
    "action",
    "result",
    "state",
    "score",
    "protocol_error",
    "check",
)


@dataclass(frozen=True)
class Event:
    """One thing that happened. ``turn`` counts game turns from 1 (0 is set-up before the first turn)."""

    kind: str
    turn: int
    role: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in EVENT_KINDS:
            raise ValueError(f"unknown event kind {self.kind!r}; expected one of {', '.join(EVENT_KINDS)}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "turn": self.turn}
        if self.role is not None:
            out["role"] = self.role
        out["data"] = dict(self.data)
        return out

    @classmethod
    def from_json(cls, obj: Any) -> Event:
        """Inverse of :meth:`to_json`; raises ValueError saying which field is wrong."""
        if not isinstance(obj, Mapping):
            raise ValueError(f"expected an event object, got {type(obj).__name__}")
        kind = obj.get("kind")
        if kind not in EVENT_KINDS:
            raise ValueError(f"field 'kind': expected one of {', '.join(EVENT_KINDS)}, got {kind!r}")
        turn = obj.get("turn")
        if not isinstance(turn, int) or isinstance(turn, bool) or not 0 <= turn <= MAX_TURN:
            raise ValueError(f"field 'turn': expected an integer from 0 to {MAX_TURN}, got {turn!r}")
        role = obj.get("role")
        if role is not None and not isinstance(role, str):
            raise ValueError(f"field 'role': expected a string, got {role!r}")
        data = obj.get("data", {})
        if not isinstance(data, Mapping):
            raise ValueError(f"field 'data': expected an object, got {type(data).__name__}")
        return cls(kind, turn, role, dict(data))


def message(turn: int, role: str, text: str) -> Event:
    return Event("message", turn, role, {"text": text})


def reasoning(turn: int, role: str, text: str) -> Event:
    return Event("reasoning", turn, role, {"text": text})


def state(turn: int, snapshot: Mapping[str, Any]) -> Event:
    return Event("state", turn, None, {"state": dict(snapshot)})


def score(turn: int, metrics: Mapping[str, float]) -> Event:
    return Event("score", turn, None, {"metrics": dict(metrics)})


def protocol_error(turn: int, role: str | None, code: str, text: str) -> Event:
    return Event("protocol_error", turn, role, {"code": code, "message": text})


def check(turn: int, code: str, text: str, detail: Mapping[str, Any] | None = None) -> Event:
    """A checker's finding about ``turn`` of the recording (see the module table)."""
    return Event("check", turn, None, {"code": code, "message": text, "detail": dict(detail or {})})
