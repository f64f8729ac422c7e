"""LLM judges: what a judge is (the contract families and plugins declare), how its replies are read, and the
judgment files stored beside a run's episodes.

A :class:`Judge` rates *items* of a recorded episode: a director's turn (CRAFT's spatial grounding), a turn's
messages together (pragmatic sufficiency), a whole conversation (Cosmic's dialogue repair, COMMA's error
taxonomy). For each item it asks a model its :class:`Question`\\ s, each answered with a label of the
question's :class:`Scale` (Yes/No/Unclear -> 1/0/0.5, a repair label -1/0/1, an error category). The request
is the judge's instructions as the system prompt and the item's context followed by the questions and the
answer format (:func:`judge_messages`); the reply is read line by line (:func:`read_verdict`), so a model that
wraps its answers in prose or markdown is still read, and one that answers nothing usable is recorded as
unreadable with the reason. Families write contexts with :func:`clip` and :func:`transcript`, so one long reply
or a long conversation never makes a prompt of unbounded size.

A judge runs ``runs`` times per item (the papers average three or two independent runs); how the runs
combine is the judge's ``combine``: ``"mean"`` averages the values, ``"agree"`` keeps an item only when every
run gave the same label (Cosmic keeps the conversations both runs agree on).

Judgments are stored in ``RUN/judgments/EPISODE_ID.jsonl`` (format ``simlab.judgment``, documented in
docs/FORMATS.md): one JSON line per answered request, appended and fsynced, so a run killed at any moment
keeps every answer it had and a rerun asks only what is missing. A line is identified by
:meth:`JudgmentRecord.key`: episode, turn, subject, judge, model, the SHA-256 of the exact messages sent and
the run number. Nothing here talks to a network: :mod:`simlab.runner.judging` does.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from simlab.core.episode import Episode
from simlab.core.errors import FormatError
from simlab.core.reading import check_version, decode, parse_json, read_lines
from simlab.core.recording import EPISODES_DIR, MAX_INDEX_LINE, SAFE_ID, dumps
from simlab.core.writing import open_for_writing, refuse_links

if TYPE_CHECKING:
    from simlab.core.figures import FigureData

JUDGMENT_FORMAT = "simlab.judgment"
JUDGMENT_VERSION = 1
JUDGMENTS_DIR = "judgments"
Combine = Literal["mean", "agree"]


# ---- the contract ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Scale:
    """The labels an answer may take and the number each counts as (None: counted apart, not averaged: "N/A",
    or an error category whose share is reported instead of a mean)."""

    labels: Mapping[str, float | None]

    def match(self, text: str) -> str | None:
        """The label ``text`` starts with (any case; the longest label first, so "-1" is not read as "1"). An
        underscore in a label also matches a space or a hyphen: "Repetition loop" is ``repetition_loop``."""
        for label in sorted(self.labels, key=len, reverse=True):
            pattern = re.escape(label).replace("_", "[_ -]")
            if re.match(rf"{pattern}(?![\w-])", text, re.IGNORECASE):
                return label
        return None

    @property
    def categorical(self) -> bool:
        """True when no label carries a number: answers are counted per label, not averaged."""
        return all(v is None for v in self.labels.values())


YES_NO_UNCLEAR = Scale({"Yes": 1.0, "No": 0.0, "Unclear": 0.5})
"""CRAFT's grading scale (section 5.2): Yes = 1, No = 0, Unclear = 0.5."""
YES_NO_UNCLEAR_NA = Scale({"Yes": 1.0, "No": 0.0, "Unclear": 0.5, "N/A": None})
"""The same with "N/A" for a question that does not apply (PS averages the applicable questions only)."""


@dataclass(frozen=True)
class Question:
    """One question a judge answers per item: ``code`` names it in replies and tables (SG3), ``label`` is its
    short name ("Layer inference"), ``text`` the question as asked."""

    code: str
    label: str
    text: str
    scale: Scale = YES_NO_UNCLEAR


@dataclass(frozen=True)
class JudgeItem:
    """One thing a judge rates in an episode: at ``turn`` (a whole conversation is rated at its last turn),
    about ``subject`` (a role such as ``D1``, or ``""`` for the turn or the conversation as a whole), with
    ``context``: everything the judge reads about it, as text."""

    turn: int
    subject: str
    context: str


@dataclass(frozen=True)
class Judge:
    """An LLM judge of one world family's recordings (see the module docstring).

    ``items(episode)`` lists what to rate (an empty list when nothing applies, e.g. a turn with no private
    reasoning); ``instructions`` is the system prompt (a prompt file's text); ``runs`` the default number of
    independent runs per item; ``rate`` an optional headline over the combined items (Cosmic's repair rate),
    with ``rate_label`` naming it."""

    name: str
    world: str
    title: str
    description: str
    instructions: str
    questions: tuple[Question, ...]
    items: Callable[[Episode], Sequence[JudgeItem]]
    runs: int = 1
    combine: Combine = "mean"
    rate: Callable[[Sequence[Mapping[str, str]]], float | None] | None = None
    rate_label: str = ""
    figure: Callable[[Judge, Sequence[JudgmentRecord], Sequence[Mapping[str, Any]]], FigureData] | None = None
    """The judge's own figure in place of the per-question one, from its records and the run's index
    summaries (Cosmic figure 7: shares of error categories per task); ``report`` also prints its numbers."""
    reference: str = ""  # where in which paper the judge comes from

    def question(self, code: str) -> Question | None:
        return next((q for q in self.questions if q.code == code), None)


ANSWER_FORMAT = (
    "Answer every question on its own line, in this form and nothing else:\n"
    "CODE: ANSWER | one short sentence saying why\n"
    "where CODE is the question's code and ANSWER is one of the choices given with it."
)


def judge_messages(judge: Judge, item: JudgeItem) -> list[dict[str, str]]:
    """The chat messages sent for ``item``: the instructions, then the context, the questions and the format."""
    lines = [f"{q.code}: {q.text} ({' / '.join(q.scale.labels)})" for q in judge.questions]
    user = f"{item.context.strip()}\n\nQuestions:\n" + "\n".join(lines) + f"\n\n{ANSWER_FORMAT}"
    return [{"role": "system", "content": judge.instructions.strip()}, {"role": "user", "content": user}]


def prompt_sha256(messages: Sequence[Mapping[str, str]]) -> str:
    """The digest that identifies a request's prompt: the same messages give the same digest on any machine."""
    text = json.dumps(list(messages), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---- writing an item's context (helpers for the families' items) ------------------------------------------
TEXT_LIMIT = 1500
"""Characters of one message an item's context keeps (:func:`clip`): a long reply never makes a long prompt."""


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text`` whole when it has at most ``limit`` characters, else its first third and its last two thirds
    (where a reasoning concludes) around a note saying how many characters were left out."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = limit // 3
    return f"{text[:head]} [... {len(text) - limit:,} characters left out ...] {text[len(text) - (limit - head) :]}"


def transcript(entries: Iterable[tuple[int, str, str]], since: int = 1, limit: int = TEXT_LIMIT) -> str:
    """``(turn, who, text)`` entries as ``[turn N] who: text`` lines, each text clipped to ``limit``; when
    ``since`` is past turn 1, a first line says the turns before it were left out (the caller keeps only
    entries from ``since`` on, so a context holds a bounded window of a long conversation)."""
    lines = [f"[turn {turn}] {who}: {clip(text, limit)}" for turn, who, text in entries]
    if since > 1:
        lines.insert(0, f"(turns 1 to {since - 1} left out)")
    return "\n".join(lines) or "(nothing)"


# ---- reading a reply -------------------------------------------------------------------------------------
_DECORATION = "\\s*_`'\"#>"  # markdown and quoting small models wrap codes and answers in


@dataclass(frozen=True)
class Verdict:
    """What one reply said: per question code, the label chosen and the reason given (questions it did not
    answer are absent); ``unreadable`` says why the reply, or part of it, could not be read."""

    labels: dict[str, str]
    reasons: dict[str, str]
    unreadable: str | None = None


def read_verdict(judge: Judge, text: str) -> Verdict:
    """Read a judge's reply: for each question, the first line naming its code followed by one of its labels
    (``SG3: Yes | the layer is right``, ``**SG3** - yes, because...``). Missing answers are named in
    ``unreadable``; a reply answering nothing is unreadable as a whole."""
    labels: dict[str, str] = {}
    reasons: dict[str, str] = {}
    for q in judge.questions:
        found = _answer(q, text)
        if found is not None:
            labels[q.code], reasons[q.code] = found
    missing = [q.code for q in judge.questions if q.code not in labels]
    if not missing:
        return Verdict(labels, reasons)
    if not text.strip():
        return Verdict({}, {}, "the reply is empty")
    what = "no question answered" if len(missing) == len(judge.questions) else "no answer to " + ", ".join(missing)
    choices = " / ".join(dict.fromkeys(label for q in judge.questions for label in q.scale.labels))
    return Verdict(labels, reasons, f"{what} in the form CODE: ANSWER ({choices})")


def _answer(question: Question, text: str) -> tuple[str, str] | None:
    pattern = rf"(?im)^[{_DECORATION}\-*]*{re.escape(question.code)}(?![\w])[{_DECORATION}]*[:=.)\-–—]?[{_DECORATION}]*"
    for found in re.finditer(pattern, text):
        rest = text[found.end() :].split("\n", 1)[0]
        label = question.scale.match(rest)
        if label is not None:
            reason = rest[len(label) :].strip(" \t*_`'\"|:-–—.,;")
            return label, reason
    return None


# ---- stored judgments ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgmentRecord:
    """One answered judge request as stored (see docs/FORMATS.md, ``simlab.judgment``)."""

    judge: str
    model: str
    episode_id: str
    turn: int
    subject: str
    run: int
    prompt_sha256: str
    labels: dict[str, str]
    reasons: dict[str, str]
    unreadable: str | None = None
    reply: str = ""
    values: dict[str, float | None] = field(default_factory=dict)
    call: dict[str, Any] = field(default_factory=dict)  # endpoint (public URL), seed, usage, latency_s

    def key(self) -> tuple[str, int, str, str, str, str, int]:
        """What a rerun looks up before asking: the same item, judge, model, prompt and run is never asked twice."""
        return (self.episode_id, self.turn, self.subject, self.judge, self.model, self.prompt_sha256, self.run)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": JUDGMENT_FORMAT,
            "version": JUDGMENT_VERSION,
            "judge": self.judge,
            "model": self.model,
            "episode_id": self.episode_id,
            "turn": self.turn,
            "subject": self.subject,
            "run": self.run,
            "prompt_sha256": self.prompt_sha256,
            "labels": dict(self.labels),
            "values": dict(self.values),
            "reasons": dict(self.reasons),
            "unreadable": self.unreadable,
            "reply": self.reply,
            "call": dict(self.call),
        }

    @classmethod
    def from_json(cls, obj: Any) -> JudgmentRecord:
        """The record of a stored line; ValueError naming the field that is wrong."""
        if not isinstance(obj, Mapping) or obj.get("format") != JUDGMENT_FORMAT:
            raise ValueError(f"expected a {JUDGMENT_FORMAT} object")
        if obj.get("version") != JUDGMENT_VERSION:
            raise ValueError(f"field 'version': expected {JUDGMENT_VERSION}, got {obj.get('version')!r}")
        text: dict[str, str] = {}
        for name in ("judge", "model", "episode_id", "subject", "prompt_sha256"):
            value = obj.get(name)
            if not isinstance(value, str):
                raise ValueError(f"field {name!r}: expected a string, got {value!r}")
            text[name] = value
        for name in ("turn", "run"):
            if not isinstance(obj.get(name), int) or isinstance(obj.get(name), bool) or obj[name] < 0:
                raise ValueError(f"field {name!r}: expected a non-negative integer, got {obj.get(name)!r}")
        for name in ("labels", "reasons", "values", "call"):
            if not isinstance(obj.get(name, {}), Mapping):
                raise ValueError(f"field {name!r}: expected an object")
        unreadable = obj.get("unreadable")
        return cls(
            judge=text["judge"],
            model=text["model"],
            episode_id=text["episode_id"],
            turn=obj["turn"],
            subject=text["subject"],
            run=obj["run"],
            prompt_sha256=text["prompt_sha256"],
            labels={str(k): str(v) for k, v in obj.get("labels", {}).items()},
            reasons={str(k): str(v) for k, v in obj.get("reasons", {}).items()},
            unreadable=str(unreadable) if unreadable is not None else None,
            reply=str(obj.get("reply", "")),
            values={str(k): _number(v) for k, v in obj.get("values", {}).items()},
            call=dict(obj.get("call", {})),
        )


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def make_record(
    judge: Judge, model: str, episode_id: str, item: JudgeItem, run: int, sha: str, reply: str
) -> JudgmentRecord:
    """The record of ``reply`` to ``judge`` about ``item``: the reply read, each label's number attached."""
    verdict = read_verdict(judge, reply)
    values = {}
    for code, label in verdict.labels.items():
        question = judge.question(code)
        values[code] = question.scale.labels[label] if question is not None else None
    return JudgmentRecord(
        judge.name, model, episode_id, item.turn, item.subject, run, sha,
        verdict.labels, verdict.reasons, verdict.unreadable, reply, values,
    )  # fmt: skip


def judgments_path(run_dir: Path, episode_id: str) -> Path:
    """``RUN/judgments/EPISODE_ID.jsonl``; ValueError for an id that is not a safe file name."""
    if not SAFE_ID.match(episode_id):
        raise ValueError(f"episode id {episode_id!r} is not a safe file name")
    return Path(run_dir) / JUDGMENTS_DIR / f"{episode_id}.jsonl"


def read_judgments(path: Path) -> tuple[list[JudgmentRecord], list[str]]:
    """Every readable record of one judgments file and the problems met (``FILE line N: why``). A last line
    cut short by a crash is a problem, not an error: its request is simply asked again. A file that is not a
    regular file (a device, a FIFO) or is over :data:`~simlab.core.reading.MAX_FILE_BYTES` raises
    FormatError."""
    records: list[JudgmentRecord] = []
    problems: list[str] = []
    if not os.path.lexists(path):
        return records, problems
    for number, raw in read_lines(path, MAX_INDEX_LINE):  # FormatError: not a regular file, or too large
        where = f"line {number}"
        if len(raw) > MAX_INDEX_LINE:
            problems.append(f"{path} {where}: longer than {MAX_INDEX_LINE:,} bytes, skipped")
            continue
        if not raw.strip():
            continue
        try:
            obj = parse_json(decode(raw, path, where), path, where)
            check_version(obj, JUDGMENT_FORMAT, JUDGMENT_VERSION, path, where)
            records.append(JudgmentRecord.from_json(obj))
        except FormatError as exc:
            problems.append(str(exc))
        except ValueError as exc:
            problems.append(f"{path} {where}: {exc}")
    return records, problems


def load_run_judgments(run_dir: Path) -> tuple[list[JudgmentRecord], list[str]]:
    """Every judgment stored in a run folder, files in name order, lines in file order."""
    folder = Path(run_dir) / JUDGMENTS_DIR
    records: list[JudgmentRecord] = []
    problems: list[str] = []
    if not folder.is_dir():
        return records, problems
    for path in sorted(folder.glob("*.jsonl")):
        found, trouble = read_judgments(path)
        records += found
        problems += trouble
    return records, problems


class JudgmentWriter:
    """Appends records to the judgments files of a run, one fsynced line each, from any thread.

    Before the first append to a file, a last line left incomplete by a crash is cut off, so the new line
    starts on a line of its own. A link among the judgments (a run folder from elsewhere may hold one to a
    file of the user's) is refused before anything is asked (core/writing.py)."""

    def __init__(self, run_dir: Path) -> None:
        if not (Path(run_dir) / EPISODES_DIR).is_dir():
            raise FormatError(run_dir, "", f"not a run folder (no {EPISODES_DIR}/ folder)")
        refuse_links(Path(run_dir), (JUDGMENTS_DIR,))
        self.run_dir = Path(run_dir)
        self._lock = threading.Lock()
        self._repaired: set[str] = set()

    def append(self, record: JudgmentRecord) -> None:
        relative = judgments_path(self.run_dir, record.episode_id).relative_to(self.run_dir)
        line = (dumps(record.to_json()) + "\n").encode("utf-8")
        with self._lock, open_for_writing(self.run_dir, relative, "ab+") as f:
            if record.episode_id not in self._repaired:
                _cut_partial_line(f)
                self._repaired.add(record.episode_id)
            f.write(line)
            f.flush()
            os.fsync(f.fileno())


def _cut_partial_line(f: BinaryIO) -> None:
    """Drop the bytes of the open file after its last newline: what a crash left of a line being written."""
    f.seek(0)
    data = f.read()
    end = data.rfind(b"\n") + 1
    if end != len(data):
        f.truncate(end)
