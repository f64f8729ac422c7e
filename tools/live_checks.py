"""The checks of ``make live-check`` (``tools/live_check.py``): SimLab's bookkeeping of a run played by a real
model, read from the run folder's files alone.

Each check is a small function over plain JSON (episode files as dicts, the report's JSON and text, HTML
transcripts) that returns a :class:`Check`: PASS or FAIL, a one-line reason, and the offending items (episode
id, role, turn, the numbers or the text) when it fails. They judge SimLab, not the model: a model that fails
every task passes them all, as long as what it did is recorded and counted right. ``tests/agents/
test_live_checks.py`` runs them on hand-made recordings, so ``make test`` covers them without a model.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simlab.testing.openai_server import message_text  # one reading of a chat message's text

Episode = Mapping[str, Any]

UNREADABLE = "unreadable_reply"
"""The protocol error code SimLab records when a reply could not be read and the give-up rule acted."""
THINK_TAG = re.compile(r"<\s*/?\s*think\s*>", re.IGNORECASE)
MESSAGE_BLOCK = re.compile(r"<message>(.*?)(?:</message>|\Z)", re.IGNORECASE | re.DOTALL)
OPEN_MESSAGE = re.compile(r"<message>", re.IGNORECASE)
CLOSE_MESSAGE = re.compile(r"</message>", re.IGNORECASE)
MIN_REASONING_CHARS = 20
"""Reasoning shorter than this is not looked for in messages (a short phrase may be said publicly too)."""
PICTURE_WORDS = "What your pictures show, in words:"
ATTACHED = re.compile(r"\battached\b", re.IGNORECASE)
REPORT_ROLE_KEYS = ("acts", "unreadable", "give_up_rate", "calls", "mean_latency_s", "prompt_tokens")
ROLES_BLOCK = "per role"
SHOWN = 160
"""Characters of offending text quoted in a check's details."""


@dataclass
class Check:
    """One check's verdict: ``ok``, a one-line ``reason`` and the offending items (empty when it passed);
    ``notes`` are things worth knowing that do not fail it."""

    name: str
    ok: bool
    reason: str
    details: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return "PASS" if self.ok else "FAIL"

    def line(self) -> str:
        return f"{self.verdict}  {self.name}: {self.reason}"


def verdict(name: str, problems: list[str], passed: str, failed: str, notes: list[str] | None = None) -> Check:
    """A Check that fails when there are ``problems``: ``failed`` is its reason, prefixed by their count."""
    if problems:
        return Check(name, False, f"{len(problems)} {failed}", problems, notes or [])
    return Check(name, True, passed, [], notes or [])


def shown(text: str, limit: int = SHOWN) -> str:
    """``text`` on one line, at most ``limit`` characters, quoted."""
    flat = " ".join(str(text).split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")


def excerpt(text: str, pattern: re.Pattern[str], before: int = 80, after: int = 160) -> str:
    """The part of ``text`` around the first match of ``pattern`` (its start when there is none)."""
    found = pattern.search(text)
    start = max(0, found.start() - before) if found else 0
    return ("..." if start else "") + text[start : (found.start() if found else 0) + after]


def folded(text: str) -> str:
    """Text compared loosely: case and runs of whitespace ignored."""
    return " ".join(str(text).split()).casefold()


# ---- reading a run folder -------------------------------------------------------------------------------
def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def load_episodes(run_dir: Path) -> list[dict[str, Any]]:
    """Every episode file of a run, indexed or not (an episode cut short by an endpoint failure is written but
    not indexed), ordered by id."""
    files = sorted((run_dir / "episodes").glob("*.json"))
    return [read_json(path) for path in files]


def run_config(run_dir: Path) -> dict[str, Any]:
    """The ``config`` of a run's run.json."""
    return dict(read_json(run_dir / "run.json").get("config") or {})


def text_only_roles(config: Mapping[str, Any]) -> set[str]:
    """The roles whose agent settings in run.json say ``text_only``."""
    settings = config.get("agent_settings") or {}
    return {str(role) for role, values in settings.items() if isinstance(values, Mapping) and values.get("text_only")}


def events(episode: Episode, kind: str) -> list[Mapping[str, Any]]:
    return [e for e in episode.get("events") or [] if e.get("kind") == kind]


def episode_id(episode: Episode) -> str:
    return str(episode.get("episode_id", "?"))


def episode_roles(episode: Episode) -> list[str]:
    """The roles of an episode: its agents, and any role seen in its events or raw stream."""
    roles = dict.fromkeys(str(r) for r in episode.get("agents") or {})
    roles.update(dict.fromkeys(str(e["role"]) for e in episode.get("events") or [] if e.get("role")))
    roles.update(dict.fromkeys(str(r["role"]) for r in episode.get("raw") or [] if r.get("role")))
    return list(roles)


# ---- the checks -----------------------------------------------------------------------------------------
def check_private_reasoning(episodes: Sequence[Episode]) -> Check:
    """No public message holds private reasoning: no ``message`` event's text has a ``<think>`` or ``</think>``
    tag (any case), and none holds the text of a ``reasoning`` event of the same role and turn (reasoning of
    ``MIN_REASONING_CHARS`` or more; case and spacing ignored).

    A reasoning text that the model itself wrote inside its ``<message>`` block too (the raw reply shows it)
    is the model's choice, not a leak: it is noted, not failed."""
    problems: list[str] = []
    notes: list[str] = []
    for episode in episodes:
        eid = episode_id(episode)
        messages = events(episode, "message")
        for m in messages:
            text = str((m.get("data") or {}).get("text", ""))
            where = f"{eid} turn {m.get('turn')} {m.get('role')}"
            source = source_of(episode, m)
            if THINK_TAG.search(text):
                origin = f" (read from call {source[0]}: {shown(excerpt(source[1], OPEN_MESSAGE))})" if source else ""
                problems.append(f"{where}: message holds a think tag: {shown(text)}{origin}")
            if source and OPEN_MESSAGE.search(source[1]) and not CLOSE_MESSAGE.search(source[1]):
                notes.append(
                    f"{where}: message read from an unclosed <message> in call {source[0]} (the rest of the reply "
                    f"became public): {shown(excerpt(source[1], OPEN_MESSAGE))}"
                )
        for r in events(episode, "reasoning"):
            thought = str((r.get("data") or {}).get("text", "")).strip()
            if len(thought) < MIN_REASONING_CHARS:
                continue
            for m in messages:
                if (m.get("role"), m.get("turn")) != (r.get("role"), r.get("turn")):
                    continue
                said = str((m.get("data") or {}).get("text", ""))
                if folded(thought) not in folded(said):
                    continue
                where = f"{eid} turn {r.get('turn')} {r.get('role')}"
                if model_said_it(episode, r, thought):
                    notes.append(f"{where}: the model wrote its reasoning in its <message> block too: {shown(thought)}")
                else:
                    problems.append(f"{where}: message {shown(said)} holds the private reasoning {shown(thought)}")
    return verdict(
        "no private reasoning in public messages",
        problems,
        f"{sum(len(events(e, 'message')) for e in episodes)} messages, none with <think> or a role's own reasoning",
        "message(s) leak private reasoning",
        notes,
    )


def source_of(episode: Episode, message: Mapping[str, Any]) -> tuple[int, str] | None:
    """(call, raw reply) of the model reply a message was read from: the last answered call of its role and
    turn whose text holds the message (case and spacing ignored); None when no raw reply holds it."""
    said = folded(str((message.get("data") or {}).get("text", "")))
    found = None
    for record in episode.get("raw") or []:
        if (record.get("role"), record.get("turn")) != (message.get("role"), message.get("turn")):
            continue
        content = str((record.get("response") or {}).get("content") or "")
        if said and said in folded(content):
            found = (int(record.get("call") or 0), content)
    return found


def model_said_it(episode: Episode, reasoning: Mapping[str, Any], thought: str) -> bool:
    """Whether a raw reply of the reasoning's role and turn has ``thought`` inside its own ``<message>``."""
    for record in episode.get("raw") or []:
        if (record.get("role"), record.get("turn")) != (reasoning.get("role"), reasoning.get("turn")):
            continue
        content = str((record.get("response") or {}).get("content") or "")
        if any(folded(thought) in folded(block) for block in MESSAGE_BLOCK.findall(content)):
            return True
    return False


def check_unreadable_counted(episodes: Sequence[Episode]) -> Check:
    """Every unreadable reply is counted, the same in three places, per episode and role: the
    ``protocol_error`` events coded ``unreadable_reply``, ``summary["replies"][role]["unreadable"]`` and the
    raw records of a second call (the re-ask) whose ``parse_error`` is set."""
    problems: list[str] = []
    total = 0
    for episode in episodes:
        eid = episode_id(episode)
        errors = Counter(
            str(e.get("role"))
            for e in events(episode, "protocol_error")
            if (e.get("data") or {}).get("code") == UNREADABLE
        )
        failed_reasks = Counter(
            str(r.get("role")) for r in episode.get("raw") or [] if r.get("call") == 2 and r.get("parse_error")
        )
        replies = (episode.get("summary") or {}).get("replies")
        if not isinstance(replies, Mapping):
            problems.append(f"{eid}: the summary has no 'replies' counts")
            replies = {}
        for role in sorted({*errors, *failed_reasks, *(str(r) for r in replies)}):
            counts = replies.get(role)
            counted = counts.get("unreadable") if isinstance(counts, Mapping) else None
            total += errors[role]
            if not (errors[role] == counted == failed_reasks[role]):
                problems.append(
                    f"{eid} {role}: {errors[role]} unreadable_reply events, summary replies.unreadable = {counted}, "
                    f"{failed_reasks[role]} failed re-asks in the raw stream"
                )
    return verdict(
        "every unreadable reply is counted",
        problems,
        f"{total} unreadable replies; events, summary counts and failed re-asks agree for every role",
        "role count(s) disagree",
    )


def check_pictures_in_words(episodes: Sequence[Episode], text_only: Iterable[str], words: bool = True) -> Check:
    """A text-only model is told what it sees in words: the first user message of every request of a
    text-only role holds ``What your pictures show, in words:`` (with ``words``; blocks' text already says
    what its pictures show, so it adds none), no user message sends an image part or says "attached" (the
    model's own quoted words aside), and the role's observation events list no images."""
    roles = set(text_only)
    problems: list[str] = []
    requests = 0
    for episode in episodes:
        eid = episode_id(episode)
        said = [str((m.get("data") or {}).get("text", "")) for m in events(episode, "message")]
        for record in episode.get("raw") or []:
            role = str(record.get("role"))
            if role not in roles:
                continue
            requests += 1
            where = f"{eid} turn {record.get('turn')} {role} call {record.get('call')}"
            users = [m for m in (record.get("request") or {}).get("messages") or [] if m.get("role") == "user"]
            if not users:
                problems.append(f"{where}: the request has no user message")
                continue
            if words and PICTURE_WORDS not in message_text(users[0]):
                problems.append(f"{where}: the user message lacks {PICTURE_WORDS!r}")
            for user in users:
                if isinstance(user.get("content"), list) and any(
                    isinstance(p, Mapping) and p.get("type") != "text" for p in user["content"]
                ):
                    problems.append(f"{where}: a user message carries an image part")
                text = message_text(user)
                for quoted in said:  # what models said comes back in later prompts: their words, not SimLab's
                    if quoted.strip():
                        text = text.replace(quoted, "")
                found = ATTACHED.search(text)
                if found:
                    start = max(0, found.start() - 60)
                    problems.append(
                        f"{where}: the user message says 'attached': {shown(text[start : found.end() + 60])}"
                    )
        for obs in events(episode, "observation"):
            if str(obs.get("role")) in roles and (obs.get("data") or {}).get("images"):
                images = obs["data"]["images"]
                problems.append(f"{eid} turn {obs.get('turn')} {obs.get('role')}: observation lists images {images}")
    if requests == 0 and not problems:
        return Check("text-only models get the pictures in words", False, "no request of a text-only role to check")
    said = "pictures in words, " if words else ""
    return verdict(
        "text-only models get the pictures in words" if words else "text-only models are sent no pictures",
        problems,
        f"{requests} requests of text-only roles: {said}no image, no 'attached', observations list no images",
        "problem(s) with what text-only models were sent",
    )


EXIT_MEANING = {2: "bad input", 3: "a model endpoint failed", 70: "internal error", 130: "stopped"}


def exit_problem(exit_code: int, output: str) -> str | None:
    """What a run's exit status says went wrong (None for 0), with the run's last output line."""
    if exit_code == 0:
        return None
    lines = [line for line in output.strip().splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("error:", "internal error:", "stopped:"))]
    said = (errors or lines or ["(no output)"])[-1].strip()
    return f"run exited {exit_code} ({EXIT_MEANING.get(exit_code, 'failed')}): {said}"


def infrastructure_problems(episodes: Sequence[Episode]) -> list[str]:
    """The episodes an endpoint failure cut short (their summary's ``infrastructure``)."""
    return [
        f"{episode_id(e)}: aborted by the endpoint: {json.dumps((e.get('summary') or {})['infrastructure'])[:SHOWN]}"
        for e in episodes
        if (e.get("summary") or {}).get("infrastructure")
    ]


def outcomes_text(episodes: Sequence[Episode]) -> str:
    return ", ".join(
        f"{episode_id(e)} {(e.get('summary') or {}).get('outcome')} after {(e.get('summary') or {}).get('turns')} turns"
        for e in episodes
    )


def check_turn_budget(episodes: Sequence[Episode], turns: int, exit_code: int, output: str = "") -> Check:
    """The run finished (exit 0; exit 3 is an endpoint failure, shown with its reason) and every episode used
    its whole turn budget (summary ``turns`` == ``turns``) or ended earlier by success, with no
    infrastructure abort."""
    problems = [p for p in [exit_problem(exit_code, output)] if p]
    if not episodes:
        problems.append("no episode was recorded")
    problems += infrastructure_problems(episodes)
    for episode in episodes:
        summary = episode.get("summary") or {}
        played, outcome = summary.get("turns"), summary.get("outcome")
        if played != turns and outcome != "success":
            problems.append(f"{episode_id(episode)}: {played} of {turns} turns played, outcome {outcome}")
    return verdict(
        f"the {turns}-turn budget is played to the end",
        problems,
        f"exit 0; {outcomes_text(episodes)}",
        "problem(s): " + (problems[0] if problems else ""),
    )


def check_run_completed(episodes: Sequence[Episode], expected: int, exit_code: int, output: str = "") -> Check:
    """The run finished (exit 0) with ``expected`` episodes recorded, none cut short by the endpoint."""
    problems = [p for p in [exit_problem(exit_code, output)] if p]
    if len(episodes) != expected:
        problems.append(f"{len(episodes)} episodes recorded, {expected} expected")
    problems += infrastructure_problems(episodes)
    return verdict(
        f"the run completes its {expected} episodes",
        problems,
        f"exit 0; {outcomes_text(episodes)}",
        "problem(s): " + (problems[0] if problems else ""),
    )


def check_latency_and_tokens(episodes: Sequence[Episode], context: int) -> Check:
    """Every answered call records ``ttfb_s`` > 0, ``total_s`` >= ``latency_s`` > 0 and usage with
    ``prompt_tokens`` > 0; no request's ``prompt_tokens`` exceeds ``context``."""
    problems: list[str] = []
    answered = 0
    largest = 0
    for episode in episodes:
        eid = episode_id(episode)
        for record in episode.get("raw") or []:
            if record.get("response") is None:
                continue
            answered += 1
            where = f"{eid} turn {record.get('turn')} {record.get('role')} call {record.get('call')}"
            ttfb, latency, total = (record.get(k) for k in ("ttfb_s", "latency_s", "total_s"))
            if not _positive(ttfb):
                problems.append(f"{where}: ttfb_s = {ttfb!r}")
            if not _positive(latency) or not _number(total) or total < latency:
                problems.append(f"{where}: latency_s = {latency!r}, total_s = {total!r}")
            prompt = (record.get("usage") or {}).get("prompt_tokens")
            if not _positive(prompt):
                problems.append(f"{where}: usage.prompt_tokens = {prompt!r}")
            elif prompt > context:
                problems.append(f"{where}: {prompt} prompt tokens, over the {context}-token context")
            if _number(prompt):
                largest = max(largest, int(prompt))
    if answered == 0 and not problems:
        return Check("latency and tokens are recorded", False, "no answered model call to check")
    return verdict(
        "latency and tokens are recorded",
        problems,
        f"{answered} answered calls with ttfb, latency and usage; largest prompt {largest} of {context} tokens",
        "call(s) with missing or impossible figures",
    )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _positive(value: Any) -> bool:
    return _number(value) and value > 0


def check_report(report: Mapping[str, Any], table: str, roles: Iterable[str]) -> Check:
    """``report --format json`` has a ``roles`` entry for every role with acts, unreadable, give_up_rate,
    calls, mean_latency_s and prompt_tokens, and the text table prints the per-role block naming each role."""
    problems: list[str] = []
    entries = report.get("roles")
    if not isinstance(entries, Mapping):
        problems.append("the JSON report has no 'roles'")
        entries = {}
    wanted = list(roles)
    for role in wanted:
        entry = entries.get(role)
        if not isinstance(entry, Mapping):
            problems.append(f"no roles entry for {role}")
            continue
        missing = [k for k in REPORT_ROLE_KEYS if not _number(entry.get(k))]
        if missing:
            problems.append(f"{role}: missing or not a number: {', '.join(missing)}")
    block = table[table.find(ROLES_BLOCK) :] if ROLES_BLOCK in table else ""
    if not block:
        problems.append(f"the text table has no {ROLES_BLOCK!r} block")
    else:
        rows = {line.split()[0] for line in block.splitlines()[1:] if line.strip()}
        absent = [role for role in wanted if role not in rows]
        if absent:
            problems.append(f"the per-role block has no row for {', '.join(absent)}")
    return verdict(
        "the report has per-role give-ups, latency and tokens",
        problems,
        f"JSON roles and the table's per-role block cover {', '.join(wanted)}",
        "problem(s) with the per-role report",
    )


def check_transcripts(episodes: Sequence[Episode], pages: Mapping[str, str]) -> Check:
    """The HTML transcript of every episode (``pages``: episode id -> HTML) names every message of it (its
    HTML-escaped text appears in the page)."""
    problems: list[str] = []
    named = 0
    for episode in episodes:
        eid = episode_id(episode)
        page = pages.get(eid)
        if page is None:
            problems.append(f"{eid}: no HTML transcript")
            continue
        for m in events(episode, "message"):
            text = str((m.get("data") or {}).get("text", ""))
            if html.escape(text, quote=True) in page:
                named += 1
            else:
                problems.append(f"{eid} turn {m.get('turn')} {m.get('role')}: message missing: {shown(text)}")
    return verdict(
        "the HTML transcript names every message",
        problems,
        f"{named} messages in {len(pages)} transcript(s)",
        "message(s) missing from the transcripts",
    )


# ---- figures for the summary ----------------------------------------------------------------------------
def role_rows(report: Mapping[str, Any]) -> list[list[str]]:
    """Per role, from the report JSON: acts, give-ups (rate), re-asks, calls, mean latency, tokens."""
    rows = []
    for role, s in (report.get("roles") or {}).items():
        rows.append(
            [
                str(role),
                f"{s.get('acts', 0):.0f}",
                f"{s.get('unreadable', 0):.0f} ({s.get('give_up_rate', 0):.0%})",
                f"{s.get('reasks', 0):.0f}",
                f"{s.get('calls', 0):.0f}",
                f"{s.get('truncated', 0):.0f}",
                f"{s.get('mean_latency_s', 0):.2f}",
                f"{s.get('prompt_tokens', 0):,.0f}",
                f"{s.get('completion_tokens', 0):,.0f}",
            ]
        )
    return rows


ROLE_HEADER = ["role", "acts", "give-ups", "re-asks", "calls", "cut off", "mean s/call", "prompt tok", "compl tok"]


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Fixed-width text, the first column left-aligned."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    lines = [
        "  ".join(
            str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in [header, *rows]
    ]
    return "\n".join(lines)
