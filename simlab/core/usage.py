"""Totals of model calls, read from an episode's raw stream (the records agents put in ``Reply.raw``).

The runner puts them in a summary's ``usage``; the app's Raw tab and the reports print them. Plain data in, plain
data out: nothing here calls a model.
"""

from __future__ import annotations

from typing import Any

USAGE_COUNTS = ("calls", "requests", "failed_requests", "reasks", "parse_errors", "unreadable", "truncated")
USAGE_SUMS = ("prompt_tokens", "completion_tokens", "total_tokens", "latency_s", "ttfb_s")


def model_usage(raw: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals of an episode's model calls, over all roles and per role (``roles``), read from the raw stream:

    ``calls`` chat completions asked (a re-ask is a call), ``requests`` HTTP requests sent (failed attempts
    included) and ``failed_requests``, ``reasks``, ``parse_errors`` (calls whose reply could not be read),
    ``unreadable`` (acts whose last call could not be read, so the role's give-up rule answered: the
    summary's ``replies`` count of model-played roles, by the same definition), ``truncated`` (cut off at the
    token limit), prompt/completion/total tokens, ``latency_s`` (wall time in
    calls, retries and their waits included), ``ttfb_s`` (time to the first byte of the answered attempts: a
    server's queue shows here) and, when the agents were given prices, ``cost``."""
    totals = _usage_of(raw)
    roles = sorted({str(r.get("role", "")) for r in raw})
    totals["roles"] = {role: _usage_of([r for r in raw if str(r.get("role", "")) == role]) for role in roles}
    return totals


def unreadable_acts(raw: list[dict[str, Any]]) -> int:
    """Acts whose last call could not be read: a record with a ``parse_error`` that no re-ask of the same
    role and turn follows (the next record is not its ``call`` + 1)."""
    count = 0
    for k, record in enumerate(raw):
        following = raw[k + 1] if k + 1 < len(raw) else {}
        reasked = (
            following.get("role") == record.get("role")
            and following.get("turn") == record.get("turn")
            and following.get("call") == (record.get("call") or 0) + 1
        )
        count += bool(record.get("parse_error")) and not reasked
    return count


def _usage_of(raw: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = dict.fromkeys((*USAGE_COUNTS, *USAGE_SUMS), 0.0)
    out["unreadable"] = float(unreadable_acts(raw))
    cost, priced = 0.0, False
    for record in raw:
        failed = len(record.get("attempts") or [])
        answered = record.get("response") is not None
        response = record.get("response") or {}
        out["calls"] += 1
        out["requests"] += failed + answered
        out["failed_requests"] += failed
        out["reasks"] += record.get("call") == 2
        out["parse_errors"] += bool(record.get("parse_error"))
        out["truncated"] += response.get("finish_reason") == "length"
        out["latency_s"] += float(record.get("total_s", record.get("latency_s")) or 0)
        out["ttfb_s"] += float(record.get("ttfb_s") or 0)
        usage = record.get("usage") or {}
        for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
            out[name] += float(usage.get(name) or 0)
        if record.get("cost") is not None:
            cost += float(record["cost"])
            priced = True
    out["latency_s"], out["ttfb_s"] = round(out["latency_s"], 4), round(out["ttfb_s"], 4)
    if priced:
        out["cost"] = round(cost, 8)
    return out
