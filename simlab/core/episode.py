"""An episode: its header, its ordered events, its raw model stream, and playback queries over them.

Replay is a pure function of the events: :meth:`Episode.state_at` is the latest ``state`` event at or
before a turn (Rerun's "latest at"), :meth:`Episode.events_of_turn` filters by turn. Nothing re-runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from simlab.core.events import Event

EPISODE_FORMAT = "simlab.episode"
EPISODE_VERSION = 1


@dataclass
class Episode:
    """Everything one episode did. ``task`` and ``settings`` reproduce the world; ``agents`` maps each
    role to the agent spec that played it; ``summary`` is filled when the episode finishes."""

    episode_id: str
    world: str
    seed: int
    task: dict[str, Any]
    settings: dict[str, Any] = field(default_factory=dict)
    agents: dict[str, str] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    raw: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)
    _last_turn: tuple[int, int, int] = field(default=(0, -1, 0), init=False, repr=False, compare=False)

    # ---- playback queries -------------------------------------------------------------------------
    @property
    def last_turn(self) -> int:
        """The latest turn of any event (0 without events). Kept while ``events`` is the same list, as long:
        events are frozen and a live episode only appends, and every panel asks at every step (the timeline,
        the status, the draw-ahead, the playback's bounds: a pass over the events each, several times a step)."""
        events = self.events
        if self._last_turn[:2] != (id(events), len(events)):
            self._last_turn = (id(events), len(events), max((e.turn for e in events), default=0))
        return self._last_turn[2]

    def events_of_turn(self, turn: int) -> list[Event]:
        return [e for e in self.events if e.turn == turn]

    def state_at(self, turn: int) -> dict[str, Any] | None:
        """The world state after ``turn`` (the latest state event at or before it)."""
        found: dict[str, Any] | None = _latest(self.events, "state", turn, "state")
        return found

    def metrics_at(self, turn: int) -> dict[str, float] | None:
        """The scores after ``turn`` (the latest score event at or before it)."""
        found: dict[str, float] | None = _latest(self.events, "score", turn, "metrics")
        return found

    def metric_series(self, name: str) -> list[float | None]:
        """One value per turn 0..last_turn, carried forward from the latest score event."""
        out: list[float | None] = []
        current: float | None = None
        by_turn: dict[int, float] = {}
        for e in self.events:
            if e.kind == "score" and name in e.data.get("metrics", {}):
                by_turn[e.turn] = e.data["metrics"][name]
        for t in range(self.last_turn + 1):
            current = by_turn.get(t, current)
            out.append(current)
        return out

    def messages(self) -> list[Event]:
        return [e for e in self.events if e.kind == "message"]

    # ---- serialisation ----------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": EPISODE_FORMAT,
            "version": EPISODE_VERSION,
            "episode_id": self.episode_id,
            "world": self.world,
            "seed": self.seed,
            "agents": self.agents,
            "settings": self.settings,
            "task": self.task,
            "summary": self.summary,
        }
        if self.source:
            out["source"] = self.source
        out["events"] = [e.to_json() for e in self.events]
        out["raw"] = self.raw
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Episode:
        """Build from the JSON form (already version-checked by the loader). Raises ValueError with a
        JSON path naming the first bad field."""
        for name, kind in (("episode_id", str), ("world", str), ("seed", int), ("task", dict)):
            if not isinstance(obj.get(name), kind):
                raise ValueError(f"field '{name}': expected {kind.__name__}, got {obj.get(name)!r:.60}")
        events = []
        for k, item in enumerate(_list(obj, "events")):
            try:
                events.append(Event.from_json(item))
            except ValueError as exc:
                raise ValueError(f"events[{k}]: {exc}") from None
        return cls(
            episode_id=obj["episode_id"],
            world=obj["world"],
            seed=obj["seed"],
            task=obj["task"],
            settings=dict(obj.get("settings") or {}),
            agents={str(k): str(v) for k, v in (obj.get("agents") or {}).items()},
            events=events,
            raw=list(_list(obj, "raw")),
            summary=dict(obj.get("summary") or {}),
            source=dict(obj.get("source") or {}),
        )


def _list(obj: Mapping[str, Any], name: str) -> Iterable[Any]:
    value = obj.get(name, [])
    if not isinstance(value, list):
        raise ValueError(f"field '{name}': expected a list, got {type(value).__name__}")
    return value


def _latest(events: list[Event], kind: str, turn: int, key: str) -> Any:
    found = None
    for e in events:
        if e.turn > turn:
            break
        if e.kind == kind:
            found = e.data.get(key)
    return found
