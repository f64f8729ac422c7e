"""Search everything said in a run: a full-text index (SQLite FTS5) over every episode's messages, private
reasoning, actions, errors, mistakes, protocol errors, checks, summary words and the researcher's notes and
tags (``RUN/notes.json``), kept as ``RUN/search.sqlite``.

One row per searchable text, with its episode, turn, role and kind. Codes are indexed as words (the default
tokenizer splits ``same_colour`` into ``same colour``; a query for ``same_colour`` is that phrase), and the
porter stemmer lets ``strike`` find a result's ``strikes``. Private reasoning is kind ``reasoning``.

The index is a cache, never trusted over the episode files: each indexed file's size and ``mtime_ns`` are
kept, and an update re-reads only new or changed episodes (and drops those the index no longer lists); the
notes are indexed again whenever their content changes (a digest of them is kept). A
file that is not such an index (corrupt, another program's, another run's, another version) is rebuilt. It
is never changed in place: an update is made in a copy beside it and renamed over it
(:func:`simlab.core.writing.replace_sidecar`), so a reader sees the old index or the new one.

Queries are FTS5 syntax (``word``, ``"a phrase"``, ``a OR b``, ``kind:error``, ``prefix*``); one that is not
is searched as a quoted phrase (:attr:`Found.as_phrase` says why), so any text searches and none raises but
one past :data:`MAX_QUERY_CHARS`. Hits come best first (bm25).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from simlab.core.episode import Episode
from simlab.core.errors import ConfigError, FormatError
from simlab.core.links import turn_command, turn_url
from simlab.core.notes import Mark, RunNotes, mark_words
from simlab.core.reading import check_file, read_bytes
from simlab.core.recording import RUN_FILE, Run, load_episode, load_run
from simlab.core.writing import replace_sidecar, sidecar_path

SEARCH_FILE = "search.sqlite"
SEARCH_FORMAT = "simlab.search"
SEARCH_VERSION = 2
"""2: notes and tags, and the names of an episode's metrics that are not zero (version 1 indexes are made again)."""
MAX_QUERY_CHARS = 1_000
"""The longest query taken: FTS5 parses a query in memory growing with it, and no search needs more."""
MAX_LIMIT = 1_000
"""The most hits one search returns."""
MAX_TEXT_CHARS = 20_000
"""Each indexed text is cut to this (a long reasoning still finds by its first pages; the index stays small)."""
QUERY_STEPS = 20_000_000
"""SQLite virtual-machine steps one query may take before it is stopped (a bound in work, not in time, so
the same query on the same index always gives the same answer)."""
OPEN, CLOSE = "\x02", "\x03"
"""Markers around a matched word in :attr:`Hit.snippet` (control characters, which indexed text never holds)."""
SUMMARY_KIND = "summary"
NOTE_KIND, NOTE_ROLE = "note", "researcher"
"""A mark of ``RUN/notes.json`` is indexed as kind ``note`` of role ``researcher``, at its turn (0: the episode's)."""
_TOKENIZER = "porter unicode61 remove_diacritics 2"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SCHEMA = (
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE files(episode_id TEXT PRIMARY KEY, file TEXT NOT NULL, size INTEGER NOT NULL, "
    "mtime_ns INTEGER NOT NULL, first_row INTEGER NOT NULL, last_row INTEGER NOT NULL)",
    "CREATE TABLE notes(digest TEXT NOT NULL, first_row INTEGER NOT NULL, last_row INTEGER NOT NULL)",
    f"CREATE VIRTUAL TABLE texts USING fts5(episode_id UNINDEXED, turn UNINDEXED, role, kind, text, "
    f"tokenize='{_TOKENIZER}')",
)
_CODE_FIELDS = ("error", "mistake", "taxonomy", "kind", "code")
"""Fields of a result, protocol error or check whose string value is a stable code, indexed as words."""


class QueryError(ConfigError):
    """A query that cannot be searched (too long); every other text searches."""


class Cancelled(Exception):
    """Raised by a progress callback to stop an update; the index is left as it was."""


@dataclass(frozen=True)
class Entry:
    """One searchable text of an episode."""

    turn: int
    role: str
    kind: str
    text: str


@dataclass(frozen=True)
class Hit:
    """A search result: where it is and the text around the match (matches between :data:`OPEN` and
    :data:`CLOSE`)."""

    episode_id: str
    turn: int
    role: str
    kind: str
    snippet: str
    rank: float

    def marked(self, open_mark: str = "[", close_mark: str = "]") -> str:
        """The snippet with its matches between ``open_mark`` and ``close_mark``."""
        return self.snippet.replace(OPEN, open_mark).replace(CLOSE, close_mark)

    def to_json(self, run_dir: Path) -> dict[str, Any]:
        return {
            "episode_id": self.episode_id,
            "turn": self.turn,
            "role": self.role,
            "kind": self.kind,
            "snippet": self.marked(),
            "rank": self.rank,
            "open": turn_command(run_dir, self.episode_id, self.turn),
            "url": turn_url(run_dir, self.episode_id, self.turn),
        }


@dataclass
class Update:
    """What bringing the index up to date did."""

    indexed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: int = 0
    rebuilt: str | None = None
    """Why the whole index was made anew (none there, unreadable, another run's...), or None."""
    problems: list[str] = field(default_factory=list)
    """Episodes that could not be read (left out of the index, tried again next time)."""
    notes: int | None = None
    """How many notes were indexed again (their content changed), or None when they were not."""


@dataclass(frozen=True)
class Found:
    """What a search found: the hits, and why the query was searched as a phrase (None: as written)."""

    hits: list[Hit]
    as_phrase: str | None = None


# ---- what is indexed --------------------------------------------------------------------------------------


def episode_entries(episode: Episode) -> Iterator[Entry]:
    """Every searchable text of ``episode`` in event order, then its summary's words at its last turn."""
    for event in episode.events:
        role = event.role or "engine"
        data = event.data
        if event.kind in ("message", "reasoning") or (event.kind == "action" and data.get("text")):
            yield _entry(event.turn, role, event.kind, data.get("text"))
        elif event.kind == "result":
            yield from _result_entries(event.turn, role, data)
        elif event.kind in ("protocol_error", "check"):
            detail = data.get("detail")
            extra = _codes(detail) if isinstance(detail, Mapping) else []
            yield _entry(event.turn, role, event.kind, " ".join([*_codes(data), *extra, str(data.get("message", ""))]))
    words = _summary_words(episode.summary)
    if words:
        yield _entry(episode.last_turn, "engine", SUMMARY_KIND, " ".join(words))


def _result_entries(turn: int, role: str, data: Mapping[str, Any]) -> Iterator[Entry]:
    """A refused move is kind ``error``, an accepted one that works against the task ``mistake``: their codes
    and the names of their counts (a puzzle's ``strikes``) as words, then the engine's message. Other results
    only by their message."""
    failed = not data.get("ok", True)
    if not failed and not data.get("mistake"):
        if data.get("message"):
            yield _entry(turn, role, "result", data.get("message"))
        return
    counts = [f"{key} {value}" for key, value in data.items() if isinstance(value, int) and not isinstance(value, bool)]
    words = [*_codes(data), *counts, str(data.get("message", ""))]
    yield _entry(turn, role, "error" if failed else "mistake", " ".join(words))


def _codes(data: Mapping[str, Any]) -> list[str]:
    """The codes of ``data``, each once (a blocks mistake's code is its taxonomy too)."""
    return list(
        dict.fromkeys(str(data[name]) for name in _CODE_FIELDS if isinstance(data.get(name), str) and data[name])
    )


def _summary_words(summary: Mapping[str, Any]) -> list[str]:
    """The summary's outcome and its text fields, each after its name (``abort_cause timeout``, a puzzle's
    ``categories``, a model endpoint's failure), then the names of its metrics that are not zero: a failure
    or mistake kind an episode counts (a rate such as ``tax_wrong-colour``, a flag such as ``fail_format``)
    is found by its name, one it never had is not."""
    words = [f"outcome {summary['outcome']}"] if isinstance(summary.get("outcome"), str) else []
    for key, value in summary.items():
        if key in ("outcome", "world", "task_id", "group", "format", "file", "episode_id"):
            continue
        if isinstance(value, str) and value:
            words.append(f"{key} {value}")
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            words.append(f"{key} {' '.join(value)}")
    infrastructure = summary.get("infrastructure")
    if isinstance(infrastructure, Mapping) and infrastructure.get("error"):
        words.append(f"infrastructure {infrastructure['error']}")
    metrics = summary.get("metrics")
    if isinstance(metrics, Mapping):
        counted = [str(k) for k, v in metrics.items() if isinstance(v, int | float) and not isinstance(v, bool) and v]
        words += [f"metrics {' '.join(counted)}"] if counted else []
    return words


def note_entry(mark: Mark) -> Entry:
    """A researcher's mark as searchable text: its tags, ``bookmarked`` and its note, at its turn."""
    return _entry(mark.turn or 0, NOTE_ROLE, NOTE_KIND, mark_words(mark))


def _entry(turn: int, role: str, kind: str, text: object) -> Entry:
    clean = _CONTROL.sub(" ", str(text or ""))[:MAX_TEXT_CHARS]
    return Entry(turn, _CONTROL.sub(" ", role)[:80], kind, clean)


# ---- the index file ---------------------------------------------------------------------------------------

Progress = Callable[[int, int], None]
"""Called with (episodes indexed so far, episodes to index) after each; it may raise :class:`Cancelled`."""


def update_index(run_dir: Path, run: Run | None = None, progress: Progress | None = None) -> Update:
    """Bring ``RUN/search.sqlite`` up to the run's index and notes: episodes new or changed since (size,
    mtime_ns) are read and indexed, those gone are dropped, and the notes indexed again when they changed;
    nothing is written when nothing changed. WriteRefused when the sidecar is a link; PermissionError when
    the run folder cannot be written (see :func:`open_index`); :class:`Cancelled` from ``progress`` leaves
    the index as it was."""
    run = run or load_run(run_dir)
    path = sidecar_path(run_dir, SEARCH_FILE)
    identity = _run_identity(run_dir)
    known, why = _indexed(path, identity)
    plan = _plan(run, known)
    changed = {episode_id for episode_id, _path, _info in plan.changed}
    kept = sum(1 for e in known.files if e not in changed and e not in plan.gone)  # a new episode was never known
    update = Update(kept=kept, rebuilt=why)
    if not plan.changed and not plan.gone and plan.notes is None and why is None:
        return update

    def make(tmp: Path) -> None:
        if why is None:
            shutil.copyfile(path, tmp)
        _apply(tmp, plan, identity, update, fresh=why is not None, progress=progress)

    replace_sidecar(run_dir, SEARCH_FILE, make)
    return update


@dataclass
class _Indexed:
    """What an index holds: each episode's file (size, mtime_ns) and the digest of the notes indexed."""

    files: dict[str, tuple[int, int]] = field(default_factory=dict)
    notes: str | None = None


@dataclass
class _Notes:
    """The run's notes to index, and the digest that says which they are."""

    digest: str
    marks: list[Mark]
    problem: str | None = None


@dataclass
class _Plan:
    changed: list[tuple[str, Path, os.stat_result | None]]
    gone: list[str]
    file_of: dict[str, str]
    notes: _Notes | None
    """The notes, when they differ from those indexed; None when they do not."""


def _plan(run: Run, known: _Indexed) -> _Plan:
    """Which episodes to (re-)index, in index order, which indexed ones the run no longer lists, and the
    notes when they changed."""
    changed: list[tuple[str, Path, os.stat_result | None]] = []
    listed: set[str] = set()
    file_of: dict[str, str] = {}
    for summary in run.summaries:
        episode_id, path = str(summary["episode_id"]), run.episode_path(summary)
        listed.add(episode_id)
        file_of[episode_id] = str(summary["file"])
        info: os.stat_result | None
        try:
            info = check_file(path)
        except FormatError:
            info = None
        if info is None or known.files.get(episode_id) != (info.st_size, info.st_mtime_ns):
            changed.append((episode_id, path, info))
    gone = sorted(e for e in known.files if e not in listed)
    notes = _run_notes(run.path)
    return _Plan(changed, gone, file_of, notes if notes.digest != known.notes else None)


def _run_notes(run_dir: Path) -> _Notes:
    """The run's notes and a digest of what they say (of the problem, when ``notes.json`` cannot be read:
    tried again once it changes)."""
    try:
        marks = RunNotes.load(run_dir).marks()
    except FormatError as exc:
        said = f"{exc}; the notes are not searched"
        return _Notes(hashlib.sha256(said.encode()).hexdigest(), [], said)
    text = "\n".join(m.model_dump_json() for m in marks)
    return _Notes(hashlib.sha256(text.encode()).hexdigest(), marks)


def _apply(db: Path, plan: _Plan, identity: str, update: Update, fresh: bool, progress: Progress | None = None) -> None:
    """Write ``plan`` into the SQLite file ``db`` (a fresh one gets the schema first), one episode at a time,
    then the notes."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=OFF")  # a private copy, renamed into place only when whole
        conn.execute("PRAGMA synchronous=OFF")  # replace_sidecar fsyncs it once, at the end
        conn.execute("BEGIN")
        if fresh:
            for statement in _SCHEMA:
                conn.execute(statement)
        conn.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            [("format", SEARCH_FORMAT), ("version", str(SEARCH_VERSION)), ("run", identity)],
        )
        for episode_id in plan.gone:
            _drop(conn, episode_id)
            update.removed.append(episode_id)
        for done, (episode_id, path, info) in enumerate(plan.changed, 1):
            _index_episode(conn, plan, episode_id, path, info, update)
            if progress is not None:
                progress(done, len(plan.changed))
        if plan.notes is not None:
            _index_notes(conn, plan.notes, update)
        conn.execute("COMMIT")
        conn.execute("INSERT INTO texts(texts) VALUES ('optimize')")  # one b-tree per column: faster queries
    finally:
        conn.close()


def _index_episode(
    conn: sqlite3.Connection, plan: _Plan, episode_id: str, path: Path, info: os.stat_result | None, update: Update
) -> None:
    _drop(conn, episode_id)
    if info is None:
        update.problems.append(f"{path}: no such file; episode {episode_id} is not searched")
        return
    try:
        episode = load_episode(path)
    except FormatError as exc:
        update.problems.append(f"{exc}; episode {episode_id} is not searched")
        return
    _insert(conn, episode_id, plan.file_of[episode_id], info, episode)
    update.indexed.append(episode_id)


def _index_notes(conn: sqlite3.Connection, notes: _Notes, update: Update) -> None:
    """The notes' rows replaced by ``notes`` (one range of rowids, like an episode's)."""
    row = conn.execute("SELECT first_row, last_row FROM notes").fetchone()
    if row is not None:
        conn.execute("DELETE FROM texts WHERE rowid BETWEEN ? AND ?", row)
    conn.execute("DELETE FROM notes")
    first = _next_row(conn)
    rows = [(m.episode_id, e.turn, e.role, e.kind, e.text) for m in notes.marks for e in [note_entry(m)]]
    conn.executemany("INSERT INTO texts(episode_id, turn, role, kind, text) VALUES (?, ?, ?, ?, ?)", rows)
    conn.execute("INSERT INTO notes VALUES (?, ?, ?)", (notes.digest, first, first + len(rows) - 1))
    update.notes = len(rows)
    if notes.problem is not None:
        update.problems.append(notes.problem)


def _drop(conn: sqlite3.Connection, episode_id: str) -> None:
    row = conn.execute("SELECT first_row, last_row FROM files WHERE episode_id = ?", (episode_id,)).fetchone()
    if row is not None:  # an episode's rows are one range of rowids, so deleting them needs no scan
        conn.execute("DELETE FROM texts WHERE rowid BETWEEN ? AND ?", row)
        conn.execute("DELETE FROM files WHERE episode_id = ?", (episode_id,))


def _next_row(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT coalesce(max(rowid), 0) + 1 FROM texts").fetchone()[0])


def _insert(conn: sqlite3.Connection, episode_id: str, file: str, info: os.stat_result, episode: Episode) -> None:
    first = _next_row(conn)
    rows = [(episode_id, e.turn, e.role, e.kind, e.text) for e in episode_entries(episode) if e.text.strip()]
    conn.executemany("INSERT INTO texts(episode_id, turn, role, kind, text) VALUES (?, ?, ?, ?, ?)", rows)
    conn.execute(
        "INSERT INTO files VALUES (?, ?, ?, ?, ?, ?)",
        (episode_id, file, info.st_size, info.st_mtime_ns, first, first + len(rows) - 1),
    )


def _run_identity(run_dir: Path) -> str:
    """A digest of the run's ``run.json``: an index copied from another run is not this run's."""
    return hashlib.sha256(read_bytes(run_dir / RUN_FILE)).hexdigest()


def _indexed(path: Path, identity: str) -> tuple[_Indexed, str | None]:
    """What the index at ``path`` holds, and why it must be made anew instead (None when it can be updated)."""
    if not os.path.lexists(path):
        return _Indexed(), "no index yet"
    try:
        conn = _connect_read_only(path)
        try:
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("format") != SEARCH_FORMAT or meta.get("version") != str(SEARCH_VERSION):
                return _Indexed(), f"{path} is not a {SEARCH_FORMAT} version {SEARCH_VERSION} index"
            if meta.get("run") != identity:
                return _Indexed(), f"{path} indexes another run"
            conn.execute("SELECT count(*) FROM texts WHERE texts MATCH 'x'").fetchone()
            rows = conn.execute("SELECT episode_id, size, mtime_ns FROM files").fetchall()
            notes = conn.execute("SELECT digest FROM notes").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return _Indexed(), f"{path} cannot be read ({exc})"
    files = {str(e): (int(s), int(m)) for e, s, m in rows}
    return _Indexed(files, str(notes[0]) if notes is not None else None), None


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """``path`` opened read-only and immutable: SQLite writes nothing beside it (no journal, no lock file),
    which is true of these files, as they are only ever replaced whole."""
    uri = f"file:{quote(str(path.absolute()))}?mode=ro&immutable=1"
    return sqlite3.connect(uri, uri=True, check_same_thread=False)


# ---- searching --------------------------------------------------------------------------------------------


class SearchIndex:
    """An open, up-to-date index of one run (:func:`open_index`); :meth:`search` it, then :meth:`close`."""

    def __init__(self, run_dir: Path, path: Path, update: Update, scratch: Path | None = None) -> None:
        self.run_dir, self.path, self.update, self._scratch = run_dir, path, update, scratch
        self._conn = _connect_read_only(path)

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)

    def search(self, query: str, limit: int = 20) -> list[Hit]:
        """The best ``limit`` hits of ``query`` (see :meth:`find`)."""
        return self.find(query, limit).hits

    def find(self, query: str, limit: int = 20) -> Found:
        """The best ``limit`` hits of ``query`` (FTS5 syntax, else the text as a phrase, and why). QueryError
        when it is longer than :data:`MAX_QUERY_CHARS`; any other text searches (NUL and control characters
        are spaces), an empty one finding nothing."""
        if len(query) > MAX_QUERY_CHARS:
            raise QueryError(f"a search query holds at most {MAX_QUERY_CHARS:,} characters, got {len(query):,}")
        text = _CONTROL.sub(" ", query).strip()
        if not text:
            return Found([])
        limit = max(1, min(int(limit), MAX_LIMIT))
        try:
            return Found(self._run(text, limit))
        except sqlite3.Error as exc:  # not FTS5 syntax (or past the work bound): the words as they are
            why = f"not a query of FTS5 syntax ({exc}): searched as a phrase"
        try:
            return Found(self._run(_phrase(text), limit), why)
        except sqlite3.Error as exc:
            return Found([], f"{why}, which could not be searched either ({exc})")

    def _run(self, match: str, limit: int) -> list[Hit]:
        steps = [0]

        def budget() -> int:
            steps[0] += 1
            return int(steps[0] * 1000 > QUERY_STEPS)  # non-zero stops the query

        self._conn.set_progress_handler(budget, 1000)
        try:
            rows = self._conn.execute(
                "SELECT episode_id, turn, role, kind, "
                f"snippet(texts, 4, '{OPEN}', '{CLOSE}', '…', 16), rank FROM texts WHERE texts MATCH ? "
                "ORDER BY rank, rowid LIMIT ?",
                (match, limit),
            ).fetchall()
        finally:
            self._conn.set_progress_handler(None, 0)
        return [Hit(str(e), int(t), str(r), str(k), str(s), float(rank)) for e, t, r, k, s, rank in rows]


def _phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def open_index(
    run_dir: Path,
    on_update: Callable[[Update], None] | None = None,
    run: Run | None = None,
    progress: Progress | None = None,
) -> SearchIndex:
    """The search index of the run ``run_dir`` (``run``, when it is read already), brought up to date first
    (:func:`update_index`, which calls ``progress``). A run folder SimLab may not write (a shared, read-only
    one) is indexed in a private temporary folder instead, deleted on :meth:`SearchIndex.close`."""
    run = run or load_run(run_dir)
    try:
        update = update_index(run_dir, run, progress)
        path, scratch = run_dir / SEARCH_FILE, None
    except PermissionError:
        scratch = Path(tempfile.mkdtemp(prefix="simlab-search-"))
        try:
            update, path = _scratch_index(run_dir, run, scratch, progress)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
    if on_update is not None:
        on_update(update)
    return SearchIndex(run_dir, path, update, scratch)


def _scratch_index(run_dir: Path, run: Run, scratch: Path, progress: Progress | None) -> tuple[Update, Path]:
    """The whole index of ``run`` built in ``scratch`` (the run folder is read-only)."""
    path = scratch / SEARCH_FILE
    update = Update(rebuilt=f"{run_dir} cannot be written: indexed in a temporary folder")
    _apply(path, _plan(run, _Indexed()), _run_identity(run_dir), update, fresh=True, progress=progress)
    return update, path


def search_run(run_dir: Path, query: str, limit: int = 20) -> tuple[list[Hit], Update]:
    """``query``'s hits in the run ``run_dir`` (its index brought up to date first), and what the update did."""
    with open_index(run_dir) as index:
        return index.search(query, limit), index.update


def hits_table(hits: Sequence[Hit], run_dir: Path) -> str:
    """What ``search`` prints: per hit its episode, turn, role and kind, the snippet, and the command that
    opens it there."""
    if not hits:
        return "no matches"
    lines = []
    for hit in hits:
        lines.append(f"{hit.episode_id}  turn {hit.turn}  {hit.role}  {hit.kind}")
        lines.append(f"    {hit.marked()}")
        lines.append(f"    {turn_command(run_dir, hit.episode_id, hit.turn)}")
    return "\n".join(lines)
