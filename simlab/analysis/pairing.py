"""Which episodes of two runs played the same task: the one test ``report`` and the app pair episodes by.

Two episodes are a pair when they have the same ``(task_id, repeat)`` and that id names the same task in both
runs. Generated ids such as ``structure_000`` name other structures under another seed, so the ids alone
would pair a structure with a different one: the tasks each ``run.json`` records are compared (as digests of
their canonical JSON). A run that does not record its tasks is taken at its word. Episodes with the same task
id and repeat whose tasks differ are never paired: :func:`pair_by_task` returns them apart, so that every
view can say so rather than compare them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from simlab.analysis.report import as_int

TaskKey = tuple[str, int | None]
A = TypeVar("A")
B = TypeVar("B")
TASKS_DIFFER = "the tasks differ: not compared"
"""What every view says of two episodes with the same task id and repeat that hold different tasks."""


@dataclass(frozen=True)
class Pairing(Generic[A, B]):
    """Items of two runs with the same ``(task_id, repeat)``: ``pairs`` hold the same task, ``differing`` do
    not (the id names another task in the other run) and are not compared."""

    pairs: list[tuple[A, B]]
    differing: list[tuple[A, B]]


def task_key(summary: Mapping[str, Any]) -> TaskKey | None:
    """``(task_id, repeat)`` of an episode's summary, what pairs it with another run's; None without a task id."""
    task = summary.get("task_id")
    return None if task is None else (str(task), as_int(summary.get("repeat")))


def recorded_tasks(config: Mapping[str, Any]) -> dict[str, str]:
    """The tasks a run's config (``run.json``) records, by id, as digests of their canonical JSON (sorted keys):
    equal digest, equal task. Empty when the run does not record its tasks."""
    tasks = config.get("tasks")
    if not isinstance(tasks, list):
        return {}
    return {
        str(task["id"]): hashlib.sha256(json.dumps(task, sort_keys=True).encode("utf-8")).hexdigest()
        for task in tasks
        if isinstance(task, Mapping) and "id" in task
    }


def same_task(task_id: str, mine: Mapping[str, str], theirs: Mapping[str, str]) -> bool:
    """Whether ``task_id`` names the same task in two runs whose :func:`recorded_tasks` are ``mine`` and
    ``theirs`` (yes when either does not record it: a run that does not say is taken at its word)."""
    a, b = mine.get(task_id), theirs.get(task_id)
    return a is None or b is None or a == b


def pair_by_task(
    mine: Iterable[tuple[TaskKey | None, A]],
    my_tasks: Mapping[str, str],
    theirs: Iterable[tuple[TaskKey | None, B]],
    their_tasks: Mapping[str, str],
) -> Pairing[A, B]:
    """Pair items (each with its :func:`task_key`) of two runs by task: the first item of each key on either
    side, in the order given (items without a task id are never paired), in ``mine``'s order."""
    firsts: dict[TaskKey, B] = {}
    for their_key, their_item in theirs:
        if their_key is not None:
            firsts.setdefault(their_key, their_item)
    pairs: list[tuple[A, B]] = []
    differing: list[tuple[A, B]] = []
    seen: set[TaskKey] = set()
    for key, item in mine:
        if key is None or key in seen or key not in firsts:
            continue
        seen.add(key)
        same = same_task(key[0], my_tasks, their_tasks)
        (pairs if same else differing).append((item, firsts[key]))
    return Pairing(pairs, differing)
