"""The fast path of reading index lines (orjson and a structural check) against the full path (the bounded
reader and pydantic): a line the fast path accepts is one the full path accepts, as the very same value; the
lines it declines are read and named by the full path, so load_run says the same of every line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from simlab.core import index_lines, recording
from simlab.core.errors import FormatError
from simlab.core.index_lines import FIELDS, REQUIRED, quick_summary
from simlab.core.records import IndexLine
from simlab.runner.demo import DEMO_RUN
from simlab.testing.fuzz import mutations

INDEX = Path("index.jsonl")


def _full(raw: bytes) -> dict[str, Any] | str:
    """What the full path makes of ``raw``: the summary, or the message of its refusal."""
    try:
        return recording._checked_index_line(raw, INDEX, "line 1")
    except FormatError as exc:
        return str(exc)


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types all the way down (1 is not 1.0 here, nor -0.0 0.0)."""
    return repr(a) == repr(b) and json.dumps(a) == json.dumps(b)


def _assert_agrees(raw: bytes) -> None:
    quick = quick_summary(raw, recording._safe_file)
    full = _full(raw)
    if quick is not None:
        assert isinstance(full, dict), f"the fast path took a line the full path refuses ({full}): {raw[:200]!r}"
        assert _same(quick, full), raw[:200]
    got = recording._index_line(raw, INDEX, 1) if isinstance(full, dict) else None
    assert got is None or _same(got, full)


def _real_lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DEMO_RUN / "index.jsonl").read_text("utf-8").splitlines()]


def test_the_checks_name_every_field_of_an_index_line():
    assert set(FIELDS) == set(IndexLine.model_fields)
    assert {"episode_id", "file", "metrics", "score"} <= REQUIRED
    assert index_lines.MAX_INDEX_VERSION == recording.INDEX_VERSION


def test_real_lines_take_the_fast_path_and_give_what_the_full_path_gives():
    for line in _real_lines():
        raw = json.dumps(line).encode() + b"\n"
        assert quick_summary(raw, recording._safe_file) is not None
        _assert_agrees(raw)


def test_a_recorded_run_with_usage_and_replies_agrees(record):
    run = record("builder=scripted", episodes=2, turns=3)
    for raw in (run / "index.jsonl").read_bytes().splitlines():
        assert quick_summary(raw, recording._safe_file) is not None
        _assert_agrees(raw)


def test_mutated_lines_agree():
    for line in _real_lines()[:2]:
        for _, mutated in mutations(line, seed=7, n=400):
            _assert_agrees(json.dumps(mutated, allow_nan=True).encode())


HOSTILE_VALUES = [
    "1" * 19, "1" * 20, "-" + "9" * 25, "1" * 30, "1" * 31, "1" * 5000, "1e400", "-1e400", "NaN", "Infinity",
    "0.000123456789012345678", "true", "false", "null", '"1"', "3.0", "-1", "1e2", '"\\ud800"', '"\\udc00x"',
    "[[[[[[1]]]]]]", "[" * 150 + "]" * 150, '{"a": {"b": {"c": {"d": 1}}}}', "[]", "{}", '{"roles": 1}',
]  # fmt: skip
FIELD_NAMES = ["score", "turns", "errors", "version", "repeat", "timeout", "stopped", "group", "metrics",
               "agents", "usage", "replies", "infrastructure", "episode_id", "file", "format", "hostile"]  # fmt: skip


@pytest.mark.parametrize("name", FIELD_NAMES)
def test_hostile_values_in_every_field_agree(name):
    line = _real_lines()[0]
    for value in HOSTILE_VALUES:
        text = json.dumps({k: v for k, v in line.items() if k != name})
        _assert_agrees(f'{text[:-1]}, "{name}": {value}}}'.encode())
        if name == "metrics":
            _assert_agrees(text.replace('"iou": ', f'"iou": {value}, "x": ').encode())


@pytest.mark.parametrize(
    "raw",
    [
        b"\xef\xbb\xbf{}",
        b"\xff\xfe{}",
        b'{"a": "\xed\xa0\x80"}',
        b"not json",
        b"[]",
        b"{}",
        b'{"format": "simlab.index", "version": 1}',
    ],
)
def test_broken_lines_take_the_full_path(raw):
    assert quick_summary(raw, recording._safe_file) is None
    with pytest.raises(FormatError):
        recording._index_line(raw, INDEX, 1)


@pytest.mark.parametrize(
    "change",
    [
        {"episode_id": "../etc"},
        {"file": "episodes/../../x.json"},
        {"file": "/etc/passwd"},
        {"usage": {"requests": 1, "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2, "bogus": 1}},
        {"usage": {"requests": 1, "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": -2}},
        {"usage": {"requests": 1, "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2,
                   "roles": {"D1": {"requests": 1, "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2,
                                    "roles": {}}}}},
        {"replies": {"D1": {"acts": 1, "unreadable": 0, "more": 1}}},
        {"replies": {"D1": {"acts": -1, "unreadable": 0}}},
        {"turns": 10**6},
        {"outcome": "won"},
        {"version": 2},
        {"version": True},
    ],
)  # fmt: skip
def test_lines_the_full_path_refuses_are_refused_with_its_message(change):
    raw = json.dumps({**_real_lines()[0], **change}).encode()
    full = _full(raw)
    assert isinstance(full, str)
    assert quick_summary(raw, recording._safe_file) is None
    with pytest.raises(FormatError) as caught:
        recording._index_line(raw, INDEX, 1)
    assert str(caught.value) == full


def test_usage_with_roles_and_a_cost_takes_the_fast_path():
    usage = {"requests": 3, "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15, "cost": None}
    usage["roles"] = {"builder": {**usage, "cost": 0.5, "latency_s": 1.5}}
    raw = json.dumps({**_real_lines()[0], "usage": usage}).encode()
    assert quick_summary(raw, recording._safe_file) is not None
    _assert_agrees(raw)
