"""The fast path of reading ``index.jsonl``: orjson and a structural check that certainly passes.

A run of 100,000 episodes has 100,000 index lines; parsing each with the bounded reader and validating it
with pydantic took several times as long as ``json.loads`` over the same lines. :func:`quick_summary` parses
a line with orjson and accepts it only when a plain structural check shows it passes every check of the full
path (:func:`simlab.core.recording._index_line`): the same bounds, the same fields, the same values. Anything
else (a line the check is unsure of, or one that is wrong) returns None, and the full path reads it again
and names what is wrong, so every message stays the precise one. The check is deliberately narrower than
the full path: a line it declines that the full path accepts only costs time.

What orjson and the bounded reader agree on (tests/core/test_index_lines.py holds them to it): invalid
UTF-8, lone surrogates, NaN, Infinity and numbers beyond a float's range are refused by both; floats parse to
the same values; a repeated key keeps its last value in its first place. Where they differ, integers of 20
digits or more (orjson turns those past 64 bits into floats; the reader keeps integers up to 30 digits and
refuses longer ones) and nesting (orjson allows 1,024 levels), the line is left to the full path: a run of 20
digits anywhere in it, or a value nested deeper than this check looks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from simlab.core.events import MAX_TURN
from simlab.core.records import IndexLine, ReplyCounts, RoleUsage, Usage

# orjson rather than msgspec, pyarrow or polars: it parses one line at a time into the same dicts the rest of
# SimLab reads (a bad line stays a problem of its own line, with its number), refuses what the bounded reader
# refuses (see above), and is a small, widely used wheel; measured 2-3x faster than json.loads on these lines.

MAX_INDEX_VERSION = 1
"""The ``simlab.index`` version this check accepts (recording.INDEX_VERSION; kept equal by a test)."""
OUTCOMES = frozenset(("success", "failure", "abort"))
_NUMBER = (int, float)  # exact types: bool is not a number here, pydantic may still take it (full path)
_SCALARS = (str, int, float, bool, type(None))
_METRIC_TYPES = frozenset((int, float, type(None)))
_STR_TYPE = frozenset((str,))
_INT_TYPE = frozenset((int,))
_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = b"0" * 20
"""A run of 20 digits: the shortest integer orjson may read otherwise than the bounded reader."""
_EXTRA_DEPTH = 2
"""How deeply an extra field of a family (a puzzle's ``categories``) may nest and still pass quickly."""
_ROLE_USAGE = frozenset(RoleUsage.model_fields)
_USAGE = frozenset(Usage.model_fields)
_USAGE_REQUIRED = frozenset(name for name, f in RoleUsage.model_fields.items() if f.is_required())
_REPLIES = frozenset(ReplyCounts.model_fields)


def quick_summary(raw: bytes, safe_file: Callable[[str, str], bool]) -> dict[str, Any] | None:
    """The index line ``raw`` as a dict when it certainly passes every check of the full path, else None.

    ``safe_file(episode_id, file)`` is the full path's own check of the id and its file's name."""
    if _LONG_DIGITS in raw.translate(_DIGITS):
        return None
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is not dict or not obj.keys() >= REQUIRED:
        return None
    for name, value in obj.items():
        if not FIELDS.get(name, _extra)(value):
            return None
    return obj if safe_file(obj["episode_id"], obj["file"]) else None


def _is_str(value: Any) -> bool:
    return type(value) is str


def _is_number(value: Any) -> bool:
    return type(value) in _NUMBER


def _is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


def _metrics(value: Any) -> bool:
    return type(value) is dict and set(map(type, value.values())) <= _METRIC_TYPES  # map(type): C speed


def _agents(value: Any) -> bool:
    return type(value) is dict and set(map(type, value.values())) <= _STR_TYPE


def _role_usage(value: Any, fields: frozenset[str] = _ROLE_USAGE) -> bool:
    """A RoleUsage (with ``fields``, a Usage apart from its roles): known names, numbers of at least 0."""
    if type(value) is not dict or not _USAGE_REQUIRED <= value.keys() <= fields:
        return False
    return all(
        (type(v) in _NUMBER and v >= 0) or (v is None and name == "cost")
        for name, v in value.items()
        if name != "roles"
    )


def _usage(value: Any) -> bool:
    roles = value.get("roles", {}) if type(value) is dict else None
    return _role_usage(value, _USAGE) and type(roles) is dict and all(_role_usage(usage) for usage in roles.values())


def _replies(value: Any) -> bool:
    return type(value) is dict and all(
        type(counts) is dict
        and counts.keys() == _REPLIES
        and set(map(type, counts.values())) == _INT_TYPE
        and min(counts.values()) >= 0
        for counts in value.values()
    )


def _extra(value: Any, depth: int = _EXTRA_DEPTH) -> bool:
    """A family's own field: scalars, or lists and objects of them nested at most ``depth`` levels."""
    if type(value) in _SCALARS:
        return True
    if depth == 0:
        return False
    items = value.values() if type(value) is dict else value if type(value) is list else None
    return items is not None and all(_extra(v, depth - 1) for v in items)


FIELDS: dict[str, Callable[[Any], bool]] = {
    "format": lambda v: v == "simlab.index",
    "version": lambda v: type(v) is int and 1 <= v <= MAX_INDEX_VERSION,
    "episode_id": _is_str,
    "file": _is_str,
    "world": _is_str,
    "task_id": _is_str,
    "group": _optional(_is_str),
    "outcome": lambda v: type(v) is str and v in OUTCOMES,
    "score": _is_number,
    "turns": lambda v: type(v) is int and 0 <= v <= MAX_TURN,
    "errors": _is_count,
    "metrics": _metrics,
    "agents": _agents,
    "usage": _optional(_usage),
    "replies": _optional(_replies),
    "repeat": _optional(_is_count),
    "timeout": _optional(_is_number),
    "stopped": _optional(lambda v: type(v) is bool),
    "infrastructure": lambda v: v is None,  # its own record: the full path checks one that is set
}
"""Every field of :class:`IndexLine` with a check that passes only values its pydantic model takes (a test
keeps the names equal to the model's)."""
REQUIRED = frozenset(name for name, f in IndexLine.model_fields.items() if f.is_required())
