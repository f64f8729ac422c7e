"""Run folders on disk: crash-safe writes, the summary index, version checks.

A run folder holds::

    run.json         the config that reproduces the run (format simlab.run)
    index.jsonl      one line per finished episode: its summary (format simlab.index), appended last
    episodes/ID.json one file per episode (format simlab.episode)

An episode is written to a temporary file, fsynced and renamed into place before its index line is
appended and fsynced, so the index never names a file that is not complete. A run killed at any moment
resumes by re-running the episodes the index does not list; their half-written files are replaced.
"""

from __future__ import annotations

import array
import fcntl
import json
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, overload

from simlab.core.episode import EPISODE_FORMAT, EPISODE_VERSION, Episode
from simlab.core.errors import ConfigError, FormatError
from simlab.core.index_lines import quick_summary
from simlab.core.limits import MAX_RUN_EPISODES
from simlab.core.reading import MAX_FILE_BYTES, _open, check_version, decode, parse_json, read_json
from simlab.core.records import EpisodeFile, IndexLine, RunFile, checked
from simlab.core.run_layout import EPISODES_DIR, INDEX_FILE, RUN_FILE
from simlab.core.secrets import needs_scrub, scrub
from simlab.core.writing import check_output_folder, make_folder, open_for_writing, refuse_links, write_atomic

if TYPE_CHECKING:
    import pandas

    from simlab.core.run_table import RunTable

RUN_FORMAT = "simlab.run"
RUN_VERSION = 1
INDEX_FORMAT = "simlab.index"
INDEX_VERSION = 1
MAX_PROBLEMS = 1_000
"""Unreadable index lines described one by one; past it, counted."""
MAX_INDEX_LINE = 4 * 2**20
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]{0,159}$")
"""What an episode id (a file name in the run folder) may be: no path separators, no leading dot."""


def dumps(obj: Any, indent: int | None = None) -> str:
    """Strict JSON (no NaN or Infinity) that any other tool can read, with every credential scrubbed: a key
    that slipped into a task, an imported log or an endpoint's reply is never written (core/secrets.py)."""
    separators = (",", ":") if indent is None else None
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False, indent=indent, separators=separators)
    # Events are made by worlds from checked inputs: their keys are not walked, their text still is.
    head = {k: v for k, v in obj.items() if k != "events"} if isinstance(obj, dict) else obj
    if needs_scrub(head, text):
        text = json.dumps(scrub(obj), ensure_ascii=False, allow_nan=False, indent=indent, separators=separators)
    return text


def write_json_atomic(path: Path, obj: Any, indent: int | None = None, within: Path | None = None) -> None:
    """Write JSON to ``path`` so a reader sees the old file or the whole new one, never a part. ``within`` is
    the folder the user named (default: ``path``'s own): no link below it that leads out of it is followed,
    and ``path`` itself is never a link (core/writing.py)."""
    folder = path.parent if within is None else within
    write_atomic(folder, path.relative_to(folder), dumps(obj, indent))


def load_episode(path: str | Path) -> Episode:
    """Read one episode file, checking its format and version."""
    path = Path(path)
    obj = read_json(path)
    check_version(obj, EPISODE_FORMAT, EPISODE_VERSION, path)
    checked(EpisodeFile, obj, path)
    try:
        return Episode.from_json(obj)
    except ValueError as exc:
        raise FormatError(path, "", str(exc)) from None


def save_episode(path: str | Path, episode: Episode, within: Path | None = None) -> None:
    """Write an episode file (atomic; ``within`` as :func:`write_json_atomic`)."""
    write_json_atomic(Path(path), episode.to_json(), within=within)


@dataclass
class Run:
    """A loaded run: its config, the summaries from the index, and any index lines that were unreadable.

    A run read by :func:`load_run_table` (the app's) holds its summaries as columns (``columns``) and reads a
    whole summary back from its index line only when one is asked for (``summaries`` is then an
    :class:`IndexSummaries`); :meth:`follow` reads the lines a run still being played appends."""

    path: Path
    config: dict[str, Any]
    summaries: Sequence[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    unlisted: int = 0
    """Unreadable index lines past the first MAX_PROBLEMS: counted only, in the last of ``problems``."""
    columns: RunTable | None = None
    tail: IndexTail | None = None
    """Where the index has been read up to (runs read by :func:`load_run_table`)."""

    @property
    def problem_count(self) -> int:
        """Every problem of the index: those in ``problems`` and those only counted there."""
        return len(self.problems) - (1 if self.unlisted else 0) + self.unlisted

    def episode_path(self, summary: Mapping[str, Any]) -> Path:
        return self.path / str(summary["file"])

    def summary_of(self, episode_id: str) -> dict[str, Any] | None:
        """The summary of episode ``episode_id``, or None (through the columns when the run has them: one index
        line read, not every one)."""
        if self.columns is not None:
            rows = self.columns.rows_of("episode_id", episode_id)
            return self.summaries[int(rows[0])] if len(rows) else None
        return next((s for s in self.summaries if s.get("episode_id") == episode_id), None)

    def load_episode(self, episode_id: str) -> Episode:
        summary = self.summary_of(episode_id)
        if summary is None:
            raise KeyError(f"{self.path}: no episode {episode_id!r} in {INDEX_FILE}")
        return load_episode(self.episode_path(summary))

    def episodes(self) -> list[Episode]:
        return [load_episode(self.episode_path(s)) for s in self.summaries]

    def table(self) -> RunTable:
        """The summaries as columns (core/run_table.py): what filters, sorts and exports read."""
        from simlab.core.run_table import RunTable

        return self.columns if self.columns is not None else RunTable.from_summaries(self.summaries)

    def to_pandas(self) -> pandas.DataFrame:
        """The episode summaries as a DataFrame, a row per episode, nested fields flattened (``metrics.iou``);
        pandas is imported only here."""
        return self.table().to_pandas()

    def follow(self) -> bool:
        """Read the index lines appended since the last read (a run still being played grows), or the whole
        index again when it was replaced or cut; True when the episodes or the problems changed. Only for a
        run read by :func:`load_run_table`."""
        from simlab.core.run_table import RunTable

        if self.tail is None:
            return False
        if self.tail.replaced() or not isinstance(self.summaries, IndexSummaries):
            self.tail, self.columns = IndexTail(self.tail.index), None
            self.summaries = IndexSummaries(self.tail.index, array.array("q"))
        before = (self.tail.offset, self.tail.partial)
        tables, offsets = [], array.array("q", self.summaries.offsets)
        while chunk := self.tail.read(FOLLOW_CHUNK):
            tables.append(RunTable.from_summaries([summary for _offset, summary in chunk]))
            offsets.extend(offset for offset, _summary in chunk)
        changed = self.columns is None or before != (self.tail.offset, self.tail.partial)
        self.problems, self.unlisted = self.tail.problem_list(), self.tail.unread_past
        if tables or self.columns is None:
            table = RunTable.concat([*([self.columns] if self.columns is not None else []), *tables])
            latest = table.latest_rows("episode_id")  # a re-run after a crash: the later line wins
            if latest is not None:
                table, offsets = table.take(latest), array.array("q", (offsets[k] for k in latest.tolist()))
            self.columns, self.summaries = table, IndexSummaries(self.tail.index, offsets)
        return changed


FOLLOW_CHUNK = 8_192
"""Index lines made into columns at a time: the dicts of one chunk are all that is held at once."""


def load_run(path: str | Path) -> Run:
    """Read ``run.json`` and the index. Bad index lines are reported in ``problems``, not raised, so the rest
    of the run still opens; a missing or unreadable ``run.json`` raises FormatError."""
    run = _run_config(Path(path))
    index = run.path / INDEX_FILE
    if not os.path.lexists(index):
        return run
    tail = IndexTail(index, final=True)
    summaries: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    while chunk := tail.read(FOLLOW_CHUNK):
        for _offset, obj in chunk:
            if obj["episode_id"] in seen:  # a re-run after a crash: the later line wins
                summaries[seen[obj["episode_id"]]] = obj
            else:
                seen[obj["episode_id"]] = len(summaries)
                summaries.append(obj)
    run.summaries, run.problems, run.unlisted = summaries, tail.problem_list(), tail.unread_past
    return run


def load_run_table(path: str | Path) -> Run:
    """:func:`load_run` for a run of any size: the summaries held as columns (``Run.columns``, a tenth of their
    memory as dicts), each whole one read back from its index line when asked for; :meth:`Run.follow` reads
    what is appended later. The same episodes, values and problems as :func:`load_run`."""
    run = _run_config(Path(path))
    run.tail = IndexTail(run.path / INDEX_FILE)
    run.follow()
    return run


def _run_config(path: Path) -> Run:
    """A run with the config of ``path/run.json`` and no episodes yet; FormatError when it is not a run."""
    if not path.is_dir():
        raise FormatError(path, "", "expected a run folder (with run.json and index.jsonl)")
    if not os.path.lexists(path / RUN_FILE):  # a link that leads nowhere is refused by the reader, by name
        raise FormatError(
            path,
            "",
            f"not a SimLab run: no {RUN_FILE}. A folder of generated tasks is played first "
            f"(python main.py run --world NAME --tasks {path} --out RUN), then RUN is opened; an episode file "
            "opens on its own",
        )
    config_obj = read_json(path / RUN_FILE)
    check_version(config_obj, RUN_FORMAT, RUN_VERSION, path / RUN_FILE)
    checked(RunFile, config_obj, path / RUN_FILE)
    return Run(path, dict(config_obj["config"]))


class IndexTail:
    """Reads a run's ``index.jsonl`` from where the last read stopped, so a run still being played is followed
    by reading only what was appended.

    Each whole line is checked as :func:`load_run` checks it; an unreadable one is a problem (the first
    :data:`MAX_PROBLEMS` described, the rest counted). A last line without its newline may still be being
    written: unless ``final``, it is read again next time, and shown as a problem (``partial``) meanwhile
    when it cannot be read yet. At most :data:`MAX_RUN_EPISODES` summaries are read (the rest is a problem)."""

    def __init__(self, index: Path, final: bool = False) -> None:
        self.index, self.final = index, final
        self.offset = 0  # bytes read: every line before it is read
        self.lineno = 0
        self.read_so_far = 0
        self.problems: list[str] = []
        self.unread = 0
        self.partial: str | None = None  # the problem of a last line that may still be being written
        self.capped: str | None = None  # said once MAX_RUN_EPISODES lines are read
        self._identity: tuple[int, int] | None = None

    @property
    def unread_past(self) -> int:
        """Unreadable lines past the first MAX_PROBLEMS (counted only)."""
        return max(0, self.unread - MAX_PROBLEMS)

    def problem_list(self) -> list[str]:
        """The problems as ``Run.problems`` holds them: described, then counted, then the cap, then a line cut
        short."""
        more = [f"{self.index}: {self.unread_past:,} more unreadable lines"] if self.unread_past else []
        return [*self.problems, *more, *filter(None, (self.capped, self.partial))]

    def replaced(self) -> bool:
        """Whether the index is no longer the file read so far: another file in its place, or shorter."""
        try:
            st = os.stat(self.index)
        except OSError:
            return self.offset > 0
        moved = self._identity is not None and (st.st_dev, st.st_ino) != self._identity
        return moved or st.st_size < self.offset

    def read(self, max_lines: int) -> list[tuple[int, dict[str, Any]]]:
        """Up to ``max_lines`` summaries of the lines after the last read, each with its line's byte offset; []
        when there are none (the index missing counts as empty)."""
        if self.capped or not os.path.lexists(self.index):
            return []
        with open(_open(self.index), "rb") as f:
            st = os.fstat(f.fileno())
            if st.st_size > MAX_FILE_BYTES:
                raise FormatError(self.index, "", f"expected a file of at most {MAX_FILE_BYTES // 2**20} MiB")
            self._identity = (st.st_dev, st.st_ino)
            f.seek(self.offset)
            return self._lines(f, max_lines)

    def _lines(self, f: BinaryIO, max_lines: int) -> list[tuple[int, dict[str, Any]]]:
        out: list[tuple[int, dict[str, Any]]] = []
        while len(out) < max_lines and (raw := f.readline(MAX_INDEX_LINE + 1)):
            size, whole = len(raw), raw.endswith(b"\n")
            if not whole and size > MAX_INDEX_LINE:  # too long to be a summary: skipped unread, then reported
                size, whole = size + _rest_of_line(f), True
            obj = self._line(raw, whole or self.final)
            if obj is _PARTIAL:
                break
            start, self.offset = self.offset, self.offset + size
            if not isinstance(obj, dict):
                continue
            if self.read_so_far == MAX_RUN_EPISODES:
                self.capped = (
                    f"{self.index}, line {self.lineno}: a run holds at most {MAX_RUN_EPISODES:,} episodes; "
                    "this line and the rest of the index were not read"
                )
                break
            self.read_so_far += 1
            out.append((start, obj))
        return out

    def _line(self, raw: bytes, complete: bool) -> dict[str, Any] | object | None:
        """One line's summary; None for a blank or unreadable one (a problem now), :data:`_PARTIAL` for a last
        line that may still be being written and cannot be read yet."""
        lineno = self.lineno + 1
        if not raw.strip():
            self.lineno = lineno
            return None
        try:
            obj = _index_line(raw, self.index, lineno)
        except FormatError as exc:
            if not complete:
                self.partial = str(exc)
                return _PARTIAL
            self.unread += 1
            if self.unread <= MAX_PROBLEMS:
                self.problems.append(str(exc))
            obj = None
        self.lineno, self.partial = lineno, None
        return obj


_PARTIAL = object()


def _rest_of_line(f: BinaryIO) -> int:
    """Read past the rest of an overlong line, a chunk at a time; how many bytes that was."""
    skipped = 0
    while rest := f.readline(4 * 2**20):
        skipped += len(rest)
        if rest.endswith(b"\n"):
            break
    return skipped


class IndexSummaries(Sequence[dict[str, Any]]):
    """A run's summaries read back from its index, one line each, by the lines' byte offsets: what a run read
    as columns gives where a whole summary is wanted (opening an episode, comparing it with another run's)."""

    def __init__(self, index: Path, offsets: array.array[int]) -> None:
        self.file, self.offsets = index, offsets

    def __len__(self) -> int:
        return len(self.offsets)

    @overload
    def __getitem__(self, k: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, k: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, k: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(k, slice):
            return list(self._read(self.offsets[k]))
        return next(self._read([self.offsets[k]]))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self._read(self.offsets)

    def _read(self, offsets: Sequence[int]) -> Iterator[dict[str, Any]]:
        """The summaries at ``offsets`` (FormatError when the index changed under them since)."""
        with open(_open(self.file), "rb") as f:
            for offset in offsets:
                f.seek(offset)
                yield _index_line(f.readline(MAX_INDEX_LINE + 1), self.file, f"at byte {offset}")


def _index_line(raw: bytes, index: Path, lineno: int | str) -> dict[str, Any]:
    """One index line (``lineno``: its number, or where it is in other words), checked; FormatError (a problem
    of this line only) when it is not a summary.

    Most lines pass the fast check (orjson and a structural test, core/index_lines.py); the rest are read
    again by the bounded reader and pydantic, which name what is wrong."""
    where = lineno if isinstance(lineno, str) else f"line {lineno}"
    if len(raw) > MAX_INDEX_LINE:
        raise FormatError(index, where, f"expected a summary of at most {MAX_INDEX_LINE // 1024} KiB")
    quick = quick_summary(raw, _safe_file)
    return quick if quick is not None else _checked_index_line(raw, index, where)


def _checked_index_line(raw: bytes, index: Path, where: str) -> dict[str, Any]:
    """One index line read by the bounded reader and checked by pydantic: the path that names the problem."""
    obj = parse_json(decode(raw, index, where), index, where)
    check_version(obj, INDEX_FORMAT, INDEX_VERSION, index, where)
    checked(IndexLine, obj, index, where)
    if not _safe_file(obj["episode_id"], obj["file"]):
        raise FormatError(index, where, "expected a plain episode id and its file as episodes/NAME.json")
    return dict(obj)


class RunLock:
    """An exclusive lock on a run folder held by this process (``flock`` on the folder itself, so it adds no
    file to the run): released by :meth:`close`, or when the process ends however it ends."""

    def __init__(self, path: Path) -> None:
        """Take the lock on ``path``; ConfigError when another process holds it, so two resumes of one folder
        never both append episodes."""
        self.fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.close()
            raise ConfigError(
                f"{path}: another SimLab process is writing this run; let it finish (or stop it) and resume then"
            ) from None

    def close(self) -> None:
        """Release the lock (closing the folder's descriptor); once is enough."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:
        self.close()


def _safe_file(episode_id: str, file: Any) -> bool:
    """Whether an index line's id and file name an episode file inside the run folder: ``episodes/NAME``."""
    folder, _, name = str(file).partition("/")
    return bool(SAFE_ID.match(episode_id)) and folder == EPISODES_DIR and bool(SAFE_ID.match(name))


def check_episode_id(episode_id: str, what: str = "episode id") -> str:
    """``episode_id`` when it can name a file in a run folder; ConfigError otherwise (ids come from task files)."""
    if not isinstance(episode_id, str) or not SAFE_ID.match(episode_id):
        raise ConfigError(
            f"{what} {episode_id!r:.80}: expected letters, digits, '.', '_' or '-' (at most 160, not starting with "
            "'.'), since it names a file"
        )
    return episode_id


def check_run_folder(path: Path, resume: bool) -> None:
    """A run is written only into a new or empty folder, or (resuming) one that holds a run: never among other
    files, which it could overwrite."""
    if resume:
        if not (path / RUN_FILE).is_file():
            raise FormatError(path, "", f"no run to resume there (no {RUN_FILE})")
        return
    if path.exists() and not path.is_dir():
        raise FormatError(path, "", "expected a folder for the run, and this is a file")
    if (path / RUN_FILE).exists():
        raise FormatError(path, "", "already holds a run; choose a new folder or pass --resume")
    if path.is_dir() and any(path.iterdir()):
        raise FormatError(path, "", "holds other files; a run is written only into a new or empty folder")


class RunWriter:
    """Writes a run folder: the config once, then each finished episode file and its index line.

    :meth:`add` may be called from several threads: index lines are appended one at a time.
    """

    def __init__(
        self,
        path: str | Path,
        config: Mapping[str, Any],
        resume: bool = False,
        check: Callable[[Run], object] | None = None,
        runtime: Mapping[str, Any] | None = None,
    ) -> None:
        """A new run in ``path`` recording ``config`` (and, when given, the ``runtime`` it is played with, in
        the same write), or with ``resume`` the run there, which ``check`` (when given) reads before anything
        is written: its refusal leaves the folder as it was."""
        self.path = Path(path)
        config_path = self.path / RUN_FILE
        if resume and os.path.lexists(config_path):
            _refuse_planted_links(self.path)
            existing = load_run(self.path)
            if check is not None:
                check(existing)
            self.config = existing.config
            self.done = {s["episode_id"] for s in existing.summaries}
        else:
            check_run_folder(self.path, resume=False)
            check_output_folder(self.path, "a new run in")
            self.config = dict(config)
            self.done = set()
            head = {"format": RUN_FORMAT, "version": RUN_VERSION, "config": self.config}
            write_json_atomic(config_path, head if runtime is None else {**head, "runtime": dict(runtime)}, 2)
        make_folder(self.path, EPISODES_DIR)
        self._lock = threading.Lock()
        self._held = RunLock(self.path)  # the lock lasts as long as this writer (released with it)

    def close(self) -> None:
        """Let go of the run's lock: another writer may take the run (this one should write no more)."""
        self._held.close()

    def add(self, episode: Episode) -> dict[str, Any]:
        """Write the episode file, then append its summary line (fsynced). Returns the index entry."""
        self.save(episode)
        return self.index(episode)

    def save(self, episode: Episode) -> None:
        """Write the episode file only (atomic; any thread: each file has its own temporary). It counts as
        done once :meth:`index` has appended its line."""
        save_run_episode(self.path, episode)

    def index(self, episode: Episode) -> dict[str, Any]:
        """Append the summary line of an episode whose file :meth:`save` wrote (fsynced, under a lock)."""
        return self.index_all([episode])[0]

    def index_all(self, episodes: Sequence[Episode]) -> list[dict[str, Any]]:
        """Append the summary lines of episodes whose files :meth:`save` wrote, in their order, with one write
        and one fsync (a batch indexes the episodes that finished together at once: an fsync per line, on the
        one thread that writes the index, held a fast batch back). Returns the index entries."""
        entries = [self._entry(episode) for episode in episodes]
        lines = b"".join((dumps(entry) + "\n").encode("utf-8") for entry in entries)
        with self._lock, open_for_writing(self.path, INDEX_FILE, "ab+") as f:
            f.write(_line_start(f) + lines)
            f.flush()
            os.fsync(f.fileno())
            self.done.update(episode.episode_id for episode in episodes)
        return entries

    def _entry(self, episode: Episode) -> dict[str, Any]:
        """The index entry of an episode: its id, its file and its summary."""
        rel = self._relative(episode)
        entry = {"format": INDEX_FORMAT, "version": INDEX_VERSION, "episode_id": episode.episode_id, "file": rel}
        entry.update(episode.summary)
        return entry

    @staticmethod
    def _relative(episode: Episode) -> str:
        return _relative_episode_path(episode)


def _refuse_planted_links(run_dir: Path) -> None:
    """WriteRefused naming a link among the files of a run being resumed: a run folder from elsewhere could
    hold one to a file of the user's, which appending or replacing would change."""
    refuse_links(run_dir, (RUN_FILE, INDEX_FILE, EPISODES_DIR))


def save_run_episode(run_dir: Path, episode: Episode) -> None:
    """Write an episode's file into the run folder ``run_dir`` (as :meth:`RunWriter.save`; also from a worker
    process, which holds no writer: only the process that owns the run's lock writes its index)."""
    save_episode(run_dir / _relative_episode_path(episode), episode, within=run_dir)


def _relative_episode_path(episode: Episode) -> str:
    return f"{EPISODES_DIR}/{check_episode_id(episode.episode_id)}.json"


def _line_start(f: Any) -> bytes:
    """A newline when the index ends in a line cut short by a crash, so the new entry starts clean."""
    end = f.seek(0, os.SEEK_END)
    if end == 0:
        return b""
    f.seek(end - 1)
    return b"" if f.read(1) == b"\n" else b"\n"
