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

import fcntl
import json
import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simlab.core.episode import EPISODE_FORMAT, EPISODE_VERSION, Episode
from simlab.core.errors import ConfigError, FormatError
from simlab.core.index_lines import quick_summary
from simlab.core.limits import MAX_RUN_EPISODES
from simlab.core.reading import check_version, decode, parse_json, read_json, read_lines
from simlab.core.records import EpisodeFile, IndexLine, RunFile, checked
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
RUN_FILE = "run.json"
INDEX_FILE = "index.jsonl"
EPISODES_DIR = "episodes"


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
    """A loaded run: its config, the summaries from the index, and any index lines that were unreadable."""

    path: Path
    config: dict[str, Any]
    summaries: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    unlisted: int = 0
    """Unreadable index lines past the first MAX_PROBLEMS: counted only, in the last of ``problems``."""

    @property
    def problem_count(self) -> int:
        """Every problem of the index: those in ``problems`` and those only counted there."""
        return len(self.problems) - (1 if self.unlisted else 0) + self.unlisted

    def episode_path(self, summary: Mapping[str, Any]) -> Path:
        return self.path / str(summary["file"])

    def load_episode(self, episode_id: str) -> Episode:
        for s in self.summaries:
            if s.get("episode_id") == episode_id:
                return load_episode(self.episode_path(s))
        raise KeyError(f"{self.path}: no episode {episode_id!r} in {INDEX_FILE}")

    def episodes(self) -> list[Episode]:
        return [load_episode(self.episode_path(s)) for s in self.summaries]

    def table(self) -> RunTable:
        """The summaries as columns (core/run_table.py): what filters, sorts and exports read."""
        from simlab.core.run_table import RunTable

        return RunTable.from_summaries(self.summaries)

    def to_pandas(self) -> pandas.DataFrame:
        """The episode summaries as a DataFrame, a row per episode, nested fields flattened (``metrics.iou``);
        pandas is imported only here."""
        return self.table().to_pandas()


def load_run(path: str | Path) -> Run:
    """Read ``run.json`` and the index. Bad index lines are reported in ``problems``, not raised, so the rest
    of the run still opens; a missing or unreadable ``run.json`` raises FormatError."""
    path = Path(path)
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
    run = Run(path, dict(config_obj["config"]))
    index = path / INDEX_FILE
    if not os.path.lexists(index):
        return run
    seen: dict[str, int] = {}
    unread = 0
    for lineno, raw in read_lines(index, MAX_INDEX_LINE):
        if not raw.strip():
            continue
        try:
            obj = _index_line(raw, index, lineno)
        except FormatError as exc:
            unread += 1
            if unread <= MAX_PROBLEMS:
                run.problems.append(str(exc))
            continue
        if obj["episode_id"] in seen:  # a re-run after a crash: the later line wins
            run.summaries[seen[obj["episode_id"]]] = obj
        elif len(seen) == MAX_RUN_EPISODES:
            run.problems.append(
                f"{index}, line {lineno}: a run holds at most {MAX_RUN_EPISODES:,} episodes; this line and the "
                "rest of the index were not read"
            )
            break
        else:
            seen[obj["episode_id"]] = len(run.summaries)
            run.summaries.append(obj)
    if unread > MAX_PROBLEMS:
        run.unlisted = unread - MAX_PROBLEMS
        run.problems.append(f"{index}: {run.unlisted:,} more unreadable lines")
    return run


def _index_line(raw: bytes, index: Path, lineno: int) -> dict[str, Any]:
    """One index line, checked; FormatError (a problem of this line only) when it is not a summary.

    Most lines pass the fast check (orjson and a structural test, core/index_lines.py); the rest are read
    again by the bounded reader and pydantic, which name what is wrong."""
    where = f"line {lineno}"
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
    ) -> None:
        """A new run in ``path`` recording ``config``, or with ``resume`` the run there, which ``check`` (when
        given) reads before anything is written: its refusal leaves the folder as it was."""
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
            write_json_atomic(config_path, {"format": RUN_FORMAT, "version": RUN_VERSION, "config": self.config}, 2)
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
        save_episode(self.path / self._relative(episode), episode, within=self.path)

    def index(self, episode: Episode) -> dict[str, Any]:
        """Append the summary line of an episode whose file :meth:`save` wrote (fsynced, under a lock)."""
        rel = self._relative(episode)
        entry = {"format": INDEX_FORMAT, "version": INDEX_VERSION, "episode_id": episode.episode_id, "file": rel}
        entry.update(episode.summary)
        line = (dumps(entry) + "\n").encode("utf-8")
        with self._lock, open_for_writing(self.path, INDEX_FILE, "ab+") as f:
            f.write(_line_start(f) + line)
            f.flush()
            os.fsync(f.fileno())
            self.done.add(episode.episode_id)
        return entry

    @staticmethod
    def _relative(episode: Episode) -> str:
        return _relative_episode_path(episode)


def _refuse_planted_links(run_dir: Path) -> None:
    """WriteRefused naming a link among the files of a run being resumed: a run folder from elsewhere could
    hold one to a file of the user's, which appending or replacing would change."""
    refuse_links(run_dir, (RUN_FILE, INDEX_FILE, EPISODES_DIR))


def _relative_episode_path(episode: Episode) -> str:
    return f"{EPISODES_DIR}/{check_episode_id(episode.episode_id)}.json"


def _line_start(f: Any) -> bytes:
    """A newline when the index ends in a line cut short by a crash, so the new entry starts clean."""
    end = f.seek(0, os.SEEK_END)
    if end == 0:
        return b""
    f.seek(end - 1)
    return b"" if f.read(1) == b"\n" else b"\n"
