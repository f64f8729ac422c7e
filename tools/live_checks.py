"""The checks of ``make live-check`` (``tools/live_check.py``): SimLab's bookkeeping of a run played by a real
model, read from the run folder's files alone.

Each check is a small function over plain JSON (episode files as dicts, the report's JSON and text, HTML
transcripts) that returns a :class:`Check`: PASS or FAIL, a one-line reason, and the offending items (episode
id, role, turn, the numbers or the text) when it fails. They judge SimLab, not the model: a model that fails
every task passes them all, as long as what it did is recorded and counted right. ``tests/agents/
test_live_checks.py`` runs them on hand-made recordings and, through the whole harness, on every family played
against a fake reasoning model, so ``make test`` covers them without a real one.
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

from simlab.agents.reasoning import split_reasoning  # the agent's own reading of a reply's public part
from simlab.testing.openai_server import message_text  # one reading of a chat message's text

Episode = Mapping[str, Any]

UNREADABLE = "unreadable_reply"
"""The protocol error code SimLab records when a reply could not be read and the give-up rule acted."""
ROBOT_FORMAT = "robot_format"
"""The boards world's own protocol error for a robot reply it could not use (the reference's format error)."""
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
    """No public event holds private reasoning, in any family: no ``message`` event's text has a ``<think>`` or
    ``</think>`` tag (any case), and no event but a ``reasoning`` one (messages, actions, results, protocol
    errors, states, every role's later observations) holds the text of a ``reasoning`` event recorded before
    it (reasoning of ``MIN_REASONING_CHARS`` or more; case and spacing ignored).

    Not leaks, but noted: a reasoning text that was public before the model thought it (it copied its prompt
    into its thoughts), and one that a model reply of the episode has in its public part too (the raw stream
    shows it: in a ``<message>`` block, or after the leading reasoning): the model said it, SimLab did not
    leak it."""
    problems: list[str] = []
    notes: list[str] = []
    for episode in episodes:
        think_tags(episode, problems, notes)
        reasoning_leaks(episode, problems, notes)
    return verdict(
        "no private reasoning in public events",
        problems,
        f"{sum(len(events(e, 'message')) for e in episodes)} messages and "
        f"{sum(len(events(e, 'reasoning')) for e in episodes)} reasoning events: no <think> in a message, no "
        "reasoning in a public event",
        "public event(s) leak private reasoning",
        notes,
    )


def think_tags(episode: Episode, problems: list[str], notes: list[str]) -> None:
    """A message with a think tag is a problem (naming the reply it was read from); one read from an unclosed
    ``<message>`` block is noted."""
    for m in events(episode, "message"):
        text = str((m.get("data") or {}).get("text", ""))
        where = f"{episode_id(episode)} turn {m.get('turn')} {m.get('role')}"
        source = source_of(episode, m)
        if THINK_TAG.search(text):
            origin = f" (read from call {source[0]}: {shown(excerpt(source[1], OPEN_MESSAGE))})" if source else ""
            problems.append(f"{where}: message holds a think tag: {shown(text)}{origin}")
        if source and OPEN_MESSAGE.search(source[1]) and not CLOSE_MESSAGE.search(source[1]):
            notes.append(
                f"{where}: message read from an unclosed <message> in call {source[0]} (the rest of the reply "
                f"became public): {shown(excerpt(source[1], OPEN_MESSAGE))}"
            )


def reasoning_leaks(episode: Episode, problems: list[str], notes: list[str]) -> None:
    """Every reasoning text found in a public event after it (see :func:`check_private_reasoning`)."""
    timeline = episode.get("events") or []
    public = [(k, e, folded(" ".join(strings(e.get("data"))))) for k, e in enumerate(timeline)]
    public = [(k, e, text) for k, e, text in public if e.get("kind") != "reasoning"]
    for k, r in enumerate(timeline):
        thought = str((r.get("data") or {}).get("text", "")).strip() if r.get("kind") == "reasoning" else ""
        wanted = folded(thought)
        if len(thought) < MIN_REASONING_CHARS:
            continue
        found = next((e for j, e, text in public if j > k and wanted in text), None)
        if found is None:
            continue
        where = f"{episode_id(episode)} turn {r.get('turn')} {r.get('role')}"
        if any(wanted in text for j, _, text in public if j < k):
            notes.append(f"{where}: the reasoning repeats what was public before it: {shown(thought)}")
        elif model_said_it(episode, thought):
            notes.append(f"{where}: the model wrote its reasoning in its public reply too: {shown(thought)}")
        else:
            said = f"{found.get('kind')} event (turn {found.get('turn')}, {found.get('role') or 'world'})"
            problems.append(f"{where}: {said} {shown(public_text(found))} holds the private reasoning {shown(thought)}")


def strings(value: Any) -> Iterable[str]:
    """Every string inside a JSON value (dict values and list items, depth first)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def public_text(event: Mapping[str, Any]) -> str:
    """An event's text for a detail line: its ``text``, else all its strings."""
    data = event.get("data") or {}
    return str(data.get("text") or " ".join(strings(data)))


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


def model_said_it(episode: Episode, thought: str) -> bool:
    """Whether a model reply of the episode (any role, any turn) has ``thought`` in its public part: inside its
    ``<message>`` blocks when it has any (blocks' directors), else after its leading reasoning blocks. A public
    event holding such a text may hold the model's own public words, not a leak."""
    for record in episode.get("raw") or []:
        content = str((record.get("response") or {}).get("content") or "")
        said = MESSAGE_BLOCK.findall(content) or [split_reasoning(content).public]
        if any(folded(thought) in folded(block) for block in said):
            return True
    return False


def unreadable_acts(raw: Iterable[Mapping[str, Any]]) -> Counter[str]:
    """Per role, the acts whose last call could not be read, counted from the raw stream alone: the stream is
    cut into acts (an act begins with a call 1, unless that call repeats one the endpoint refused: the agent
    asks again fitted to the context the refusal stated), and an act counts when its last record has a
    ``parse_error``. A role whose protocol never re-asks (the boards robot) has one call per act."""
    acts: list[list[Mapping[str, Any]]] = []
    for record in raw:
        last = acts[-1][-1] if acts else None
        same = last is not None and (last.get("role"), last.get("turn")) == (record.get("role"), record.get("turn"))
        if same and last is not None and (record.get("call") != 1 or last.get("response") is None):
            acts[-1].append(record)
        else:
            acts.append([record])
    return Counter(str(act[-1].get("role")) for act in acts if act[-1].get("parse_error"))


def unreadable_events(episode: Episode) -> Counter[str]:
    """Per role, the ``protocol_error`` events coded ``unreadable_reply``."""
    return Counter(
        str(e.get("role")) for e in events(episode, "protocol_error") if (e.get("data") or {}).get("code") == UNREADABLE
    )


def check_unreadable_counted(episodes: Sequence[Episode]) -> Check:
    """Every unreadable reply is counted, the same in four places, per episode and role: the ``protocol_error``
    events coded ``unreadable_reply``, ``summary["replies"][role]["unreadable"]``, for a model-played role
    (one with raw records) ``summary["usage"]["roles"][role]["unreadable"]``, and the acts whose last raw call
    has a ``parse_error`` (:func:`unreadable_acts`). A reply is unreadable when the role's protocol could not
    read it, whatever the game then does with it, with or without a re-ask."""
    problems: list[str] = []
    total = 0
    for episode in episodes:
        eid = episode_id(episode)
        summary = episode.get("summary") or {}
        replies = summary.get("replies")
        if not isinstance(replies, Mapping):
            problems.append(f"{eid}: the summary has no 'replies' counts")
            replies = {}
        usage = (summary.get("usage") or {}).get("roles") or {}
        errors, last_calls = unreadable_events(episode), unreadable_acts(episode.get("raw") or [])
        played = {str(r.get("role")) for r in episode.get("raw") or []}
        for role in sorted({*errors, *last_calls, *(str(r) for r in replies), *played}):
            counted, used = count_of(replies, role), count_of(usage, role)
            figures = [errors[role], counted, last_calls[role], *([used] if role in played else [])]
            total += errors[role]
            if len(set(figures)) != 1:
                problems.append(
                    f"{eid} {role}: {errors[role]} unreadable_reply events, summary replies.unreadable = {counted}, "
                    + (f"usage.roles.unreadable = {used}, " if role in played else "")
                    + f"{last_calls[role]} acts whose last call has a parse_error"
                )
    return verdict(
        "every unreadable reply is counted",
        problems,
        f"{total} unreadable replies; events, summary replies, usage and the raw stream's last calls agree for "
        "every role",
        "role count(s) disagree",
    )


def count_of(per_role: Mapping[str, Any], role: str) -> Any:
    """``per_role[role]["unreadable"]``, or None when there is no such entry."""
    entry = per_role.get(role)
    return entry.get("unreadable") if isinstance(entry, Mapping) else None


def check_report_give_ups(report: Mapping[str, Any], episodes: Sequence[Episode]) -> Check:
    """The report's per-role give-ups are the replies that could not be read: for every role, ``report
    --format json``'s ``roles[role].unreadable`` equals the acts whose last call could not be read, summed over
    the episodes the report lists (an episode an endpoint failure cut short is not indexed), and the
    ``unreadable_reply`` events of those episodes."""
    listed = {str(row.get("episode_id")) for row in report.get("episodes") or [] if isinstance(row, Mapping)}
    counted = [e for e in episodes if episode_id(e) in listed] if listed else list(episodes)
    last_calls: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    for episode in counted:
        last_calls.update(unreadable_acts(episode.get("raw") or []))
        errors.update(unreadable_events(episode))
    roles = report.get("roles") if isinstance(report.get("roles"), Mapping) else {}
    problems = []
    for role in sorted({*roles, *last_calls, *errors}):
        given = count_of(roles, role)
        if not (_number(given) and given == last_calls[role] == errors[role]):
            problems.append(
                f"{role}: report give-ups {given}, {last_calls[role]} acts whose last call could not be read, "
                f"{errors[role]} unreadable_reply events in {len(counted)} episodes"
            )
    shown_roles = ", ".join(f"{role} {last_calls[role]}" for role in sorted(roles))
    return verdict(
        "the report's give-ups are the unreadable replies",
        problems,
        f"per role, report give-ups = unreadable replies in {len(counted)} episodes ({shown_roles})",
        "role(s) whose give-ups disagree",
    )


def check_given_up_at_once(episodes: Sequence[Episode], role: str = "robot", code: str = ROBOT_FORMAT) -> Check:
    """A role whose protocol never re-asks (the boards robot: its game master answers an unreadable reply
    itself) gives an unreadable reply up at once and the world still records its own error: no raw record of
    the role is a second call, and in every turn its ``unreadable_reply`` errors are as many as the world's
    ``code`` errors (``robot_format``)."""
    problems: list[str] = []
    total = 0
    for episode in episodes:
        eid = episode_id(episode)
        calls = [r for r in episode.get("raw") or [] if r.get("role") == role]
        reasked = sorted({r.get("turn") for r in calls if r.get("call") != 1})
        if reasked:
            problems.append(f"{eid}: {role} re-asked (a call 2 or later) in turn(s) {reasked}")
        pairs: dict[Any, list[int]] = {}
        for e in events(episode, "protocol_error"):
            kind = (e.get("data") or {}).get("code")
            if e.get("role") == role and kind in (UNREADABLE, code):
                pairs.setdefault(e.get("turn"), [0, 0])[kind == code] += 1
        total += sum(unread for unread, _ in pairs.values())
        problems += [
            f"{eid} turn {turn}: {unread} unreadable_reply, {world} {code} errors of the {role}"
            for turn, (unread, world) in sorted(pairs.items(), key=lambda item: str(item[0]))
            if unread != world
        ]
    return verdict(
        f"the {role}'s unreadable replies are given up at once",
        problems,
        f"{total} unreadable {role} replies, each one call with no re-ask and the world's own {code} error",
        "problem(s) with the give-ups",
    )


def check_pictures_in_words(
    episodes: Sequence[Episode], text_only: Iterable[str], words: bool | Iterable[str] = True
) -> Check:
    """A text-only model is told what it sees in words: the first user message of every request of a
    text-only role named by ``words`` (True: every one; a set: those roles, e.g. the puzzles solver, whose
    module is a picture, and not the expert, who is shown none; False: none, as blocks' and boards' text
    already says what their pictures show) holds ``What your pictures show, in words:``, no user message
    sends an image part or says "attached" (the model's own quoted words aside), and the role's observation
    events list no images."""
    roles = set(text_only)
    worded = roles if words is True else set() if words is False else set(words)
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
            if role in worded and PICTURE_WORDS not in message_text(users[0]):
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
    said = f"pictures in words ({', '.join(sorted(worded))}), " if worded else ""
    return verdict(
        "text-only models get the pictures in words" if worded else "text-only models are sent no pictures",
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


def blocks_end(summary: Mapping[str, Any], settings: Mapping[str, Any], episode: Episode) -> str | None:
    """Blocks ends when its turn budget is played out, or earlier by success."""
    turns, limit = summary.get("turns"), settings.get("turns")
    if turns == limit or summary.get("outcome") == "success":
        return None
    return f"{turns} of {limit} turns played, outcome {summary.get('outcome')}"


def rooms_end(summary: Mapping[str, Any], settings: Mapping[str, Any], episode: Episode) -> str | None:
    """Rooms ends after its question: the Answerer's final answer is the last act (its action event carries
    ``answer``), at most ``max_rounds`` messages before it, and the outcome is ``abort`` exactly when the
    answer could not be read (rooms counts invalid answers so)."""
    answers = [a for a in events(episode, "action") if "answer" in ((a.get("data") or {}).get("action") or {})]
    if len(answers) != 1:
        return f"{len(answers)} final answers recorded"
    answer, last = answers[0], events(episode, "action")[-1]
    turns, limit = summary.get("turns"), int(settings.get("max_rounds") or 0)
    if answer is not last or answer.get("turn") != turns:
        return f"the final answer (turn {answer.get('turn')}) is not the last act of {turns} turns"
    if not isinstance(turns, int) or turns > limit + 1:
        return f"{turns} turns: more than {limit} messages and the answer"
    unread = ((answer.get("data") or {}).get("action") or {}).get("answer") is None
    if unread != (summary.get("outcome") == "abort"):
        return f"outcome {summary.get('outcome')} with the answer {'unread' if unread else 'read'}"
    return None


def boards_end(summary: Mapping[str, Any], settings: Mapping[str, Any], episode: Episode) -> str | None:
    """Boards ends on the programmer's DONE, when its rounds run out, or when the game master aborts
    (``abort_cause``: max_failures robot failures in a row, or a programmer who sent nothing); a success is a
    board that matches the target when it ends."""
    turns, limit = summary.get("turns"), settings.get("rounds")
    if not isinstance(turns, int) or not isinstance(limit, int) or turns > limit:
        return f"{turns} of {limit} rounds"
    ended = summary.get("done_said") or summary.get("abort_cause") or turns == limit
    if ended and (summary.get("outcome") == "abort") == bool(summary.get("abort_cause")):
        return None
    return f"outcome {summary.get('outcome')} after {turns} of {limit} rounds, abort cause {summary.get('abort_cause')}"


def puzzles_end(summary: Mapping[str, Any], settings: Mapping[str, Any], episode: Episode) -> str | None:
    """Puzzles ends when the module is solved, after ``mistakes`` strikes, or when its turns run out."""
    turns, limit = summary.get("turns"), settings.get("turns")
    strikes = (summary.get("metrics") or {}).get("mistakes") or 0
    if summary.get("outcome") == "success" or strikes >= int(settings.get("mistakes") or 0) or turns == limit:
        return None
    return f"outcome {summary.get('outcome')} after {turns} of {limit} turns and {strikes:g} strikes"


END_RULES = {"blocks": blocks_end, "rooms": rooms_end, "boards": boards_end, "puzzles": puzzles_end}
"""How each family's episodes end by its own rules (read from each world's ``summary``)."""


def check_ended_by_rules(episodes: Sequence[Episode], world: str, settings: Mapping[str, Any]) -> Check:
    """Every episode ended the way its family's rules end one (:data:`END_RULES`; ``settings`` are the run's
    world settings from run.json), not by a timeout, a stop or an endpoint failure."""
    rule = END_RULES[world]
    problems = []
    for episode in episodes:
        summary = episode.get("summary") or {}
        cut = [key for key in ("infrastructure", "timeout", "stopped") if summary.get(key)]
        problem = f"cut short ({', '.join(cut)})" if cut else rule(summary, settings, episode)
        if problem:
            problems.append(f"{episode_id(episode)}: {problem}")
    if not episodes:
        problems.append("no episode was recorded")
    return verdict(
        f"every {world} episode ended by its own rules",
        problems,
        ends_text(episodes),
        "episode(s) that did not end by the rules",
    )


def ends_text(episodes: Sequence[Episode]) -> str:
    """How each episode ended, in a few words: outcome, turns, and why when the world says (boards)."""
    said = []
    for e in episodes:
        s = e.get("summary") or {}
        why = f" ({s['abort_cause']})" if s.get("abort_cause") else " (DONE)" if s.get("done_said") else ""
        said.append(f"{episode_id(e)} {s.get('outcome')}{why} after {s.get('turns')} turns")
    return ", ".join(said)


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
