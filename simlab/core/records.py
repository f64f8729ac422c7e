"""The typed records of SimLab's files, checked where they are read and written, and their JSON Schemas.

* :class:`EpisodeSummary`: what every world's ``summary()`` returns and every index line carries (outcome,
  score, metrics, turns, errors; the runner adds the agents, model usage and the repeat). Families may add
  fields of their own; the ones named here always mean the same thing.
* :class:`IndexLine`: one line of a run's ``index.jsonl``.
* :class:`RunRecord`: the reproducible config a run folder keeps in ``run.json`` (world, seed, every role's
  agent, every setting, the tasks themselves); :class:`RunFile` is the whole file.
* :class:`EpisodeFile`: an episode file (``episodes/ID.json``): its header, its events and its raw stream.

``python main.py schema`` prints their JSON Schemas; the published copies are in ``docs/schemas/`` (a test
keeps them equal to these models) so other tools can read our files without SimLab.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from simlab.core.errors import FormatError
from simlab.core.events import MAX_TURN

Outcome = Literal["success", "failure", "abort"]
EventKind = Literal[
    "observation", "reasoning", "message", "action", "result", "state", "score", "protocol_error", "check"
]


class RoleUsage(BaseModel):
    """Totals of model calls (from the raw stream): see :func:`simlab.core.usage.model_usage`."""

    model_config = ConfigDict(extra="forbid")

    requests: float = Field(ge=0, description="HTTP requests sent, failed attempts included")
    prompt_tokens: float = Field(ge=0)
    completion_tokens: float = Field(ge=0)
    total_tokens: float = Field(ge=0)
    calls: float = Field(0, ge=0, description="chat completions asked (a re-ask is one)")
    failed_requests: float = Field(0, ge=0, description="attempts the endpoint did not answer")
    reasks: float = Field(0, ge=0, description="calls that re-asked after an unreadable reply")
    parse_errors: float = Field(0, ge=0, description="calls whose reply the protocol could not read")
    unreadable: float = Field(0, ge=0, description="acts whose last call could not be read (give-ups)")
    truncated: float = Field(0, ge=0, description="replies cut off at the token limit")
    latency_s: float = Field(0, ge=0, description="wall time in calls, retries and their waits included")
    ttfb_s: float = Field(0, ge=0, description="time to the first byte of the answered attempts")
    cost: float | None = Field(None, ge=0, description="USD, when the agents were given prices")


class Usage(RoleUsage):
    """Totals of an episode's model calls, and per role."""

    roles: dict[str, RoleUsage] = Field(default_factory=dict)


class ReplyCounts(BaseModel):
    """How often a role acted, and how often its reply could not be read so its give-up rule acted."""

    model_config = ConfigDict(extra="forbid")

    acts: int = Field(ge=0)
    unreadable: int = Field(ge=0)


class InfrastructureFailure(BaseModel):
    """Why an episode ended when something it depends on failed (a model endpoint), not the agents."""

    model_config = ConfigDict(extra="allow")

    role: str | None = Field(None, description="the role whose agent's endpoint failed")
    endpoint: str | None = Field(None, description="the endpoint's URL, without credentials")
    status: int | None = Field(None, description="the HTTP status of the last attempt, when there was one")
    error: str = Field(description="a short reason, free of credentials")


class EpisodeSummary(BaseModel):
    """One episode's results, as its world reports them and as the index keeps them."""

    model_config = ConfigDict(extra="allow")

    world: str = Field(description="the world family")
    task_id: str = Field(description="the id of the task played")
    group: str | None = Field(None, description="the task's group: a blocks tier, a rooms question type...")
    outcome: Outcome
    score: float = Field(description="the headline number of the family (blocks: overall progress)")
    turns: int = Field(ge=0, le=MAX_TURN)
    errors: int = Field(ge=0, description="engine and protocol errors")
    metrics: dict[str, float | None] = Field(description="name -> value; None where a rate has no denominator")
    agents: dict[str, str] = Field(default_factory=dict, description="role -> agent spec")
    usage: Usage | None = None
    replies: dict[str, ReplyCounts] | None = Field(None, description="role -> acts and unreadable replies")
    repeat: int | None = Field(None, ge=0, description="which repeat of the task (set by the runner)")
    timeout: float | None = Field(None, description="seconds, when the episode was cut off by its timeout")
    stopped: bool | None = Field(None, description="true when a person stopped it in the app")
    infrastructure: InfrastructureFailure | None = Field(
        None,
        description="set when the episode was cut short (outcome abort) because a model endpoint failed, not the "
        "model; a batch run does not count it as done and --resume plays it again",
    )


class IndexLine(EpisodeSummary):
    """A line of ``index.jsonl``: the summary of one finished episode and where its file is."""

    format: Literal["simlab.index"]
    version: int = Field(ge=1)
    episode_id: str
    file: str = Field(description="the episode file, relative to the run folder")


class RunRecord(BaseModel):
    """What reproduces a run: ``run.json``'s ``config``. Importers add where the run came from
    (``imported_from``); other extra fields are kept as they are."""

    model_config = ConfigDict(extra="allow")

    world: str
    seed: int
    repeats: int = Field(ge=1)
    agents: dict[str, str] = Field(description="role -> agent spec")
    settings: dict[str, Any] = Field(description="every world setting, defaults included")
    agent_settings: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="role -> the agent's own settings (never keys)"
    )
    tasks: list[dict[str, Any]] = Field(description="the tasks played, in plan order")
    imported_from: dict[str, Any] | None = Field(None, description="the tool and file an imported run came from")


class RunFile(BaseModel):
    """``run.json``."""

    format: Literal["simlab.run"]
    version: int = Field(ge=1)
    config: RunRecord
    runtime: dict[str, Any] | None = Field(None, description="how the run was last played: concurrency, timeout")


class EventRecord(BaseModel):
    """One event (see :mod:`simlab.core.events` for the data of each kind)."""

    model_config = ConfigDict(extra="forbid")

    kind: EventKind
    turn: int = Field(ge=0, le=MAX_TURN)
    role: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)


class EpisodeFile(BaseModel):
    """An episode file."""

    format: Literal["simlab.episode"]
    version: int = Field(ge=1)
    episode_id: str
    world: str
    seed: int
    agents: dict[str, str] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    task: dict[str, Any]
    summary: EpisodeSummary | None = Field(None, description="null or {} until the episode has finished")
    source: dict[str, Any] = Field(default_factory=dict, description="where it came from (a fork, an import)")
    events: list[EventRecord]
    raw: list[dict[str, Any]] = Field(default_factory=list, description="model requests and responses")

    @field_validator("summary", mode="before")
    @classmethod
    def _unfinished(cls, value: Any) -> Any:
        return None if value == {} else value  # an episode recorded before its end has an empty summary


SCHEMAS: dict[str, type[BaseModel]] = {
    "episode": EpisodeFile,
    "index-line": IndexLine,
    "run": RunFile,
    "summary": EpisodeSummary,
}
"""Name -> model of every file format SimLab publishes a JSON Schema for."""


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of ``name`` (one of :data:`SCHEMAS`), as published in ``docs/schemas/NAME.schema.json``."""
    schema = SCHEMAS[name].model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"simlab/{name}.schema.json", **schema}


def checked(model: type[BaseModel], obj: Any, path: object, where: str = "") -> BaseModel:
    """``obj`` read as ``model``; FormatError naming the file, the place and the first field that is wrong."""
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        place = " ".join(p for p in (where, f"field '{field}'" if field else "") if p)
        raise FormatError(str(path), place, f"{error['msg']} (got {_short(error.get('input'))})") from None


def check_summary(summary: Mapping[str, Any], who: str) -> None:
    """Raise ValueError naming the field when a world's summary does not follow :class:`EpisodeSummary`."""
    try:
        EpisodeSummary.model_validate(dict(summary))
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        raise ValueError(f"{who}: summary field '{field}': {error['msg']}") from None


def _short(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
