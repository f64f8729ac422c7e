"""Where SimLab writes: the one path every output takes (runs, resumes, figures, exports, judgments, editor
saves and autosaves, generated tasks).

Every file is written below a folder the user named (a run folder, ``--figures DIR``, the folder of an
``--out FILE``) and never leaves it:

* a symbolic link below that folder is followed only when it stays inside it, and the file itself is never
  a link (opened with ``O_NOFOLLOW``): a run folder downloaded from someone else cannot make SimLab append to
  or replace a file of the user's;
* a system folder (``/``, ``/etc``, ``/usr``, ``/bin``, ``/sbin``, ``/lib*``, ``/boot``, ``/dev``,
  ``/proc``, ``/sys``, ``/var`` but ``/var/tmp``) is never written into;
* an output folder (:func:`check_output_folder`) is never the user's home folder itself, nor a run folder or
  a folder inside one, nor an input of the command, nor inside one: figures and exports go beside runs,
  never into them.

A run folder holds only what its run writes, and beside its recordings SimLab keeps a few files of its own
for it (:data:`RUN_SIDECARS`: the full-text index, the notes): :func:`write_sidecar` and
:func:`replace_sidecar` write exactly those names at the top of a folder holding ``run.json``, never through a
link, and nothing else there.

Each refusal is a :class:`WriteRefused` (exit 2) naming the path that would have been touched, raised
before anything is written.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path, PurePath
from typing import BinaryIO, Literal

from simlab.core.errors import ConfigError
from simlab.core.reading import resolved
from simlab.core.run_layout import RUN_FILE

SYSTEM_FOLDERS = frozenset({"etc", "usr", "bin", "sbin", "boot", "dev", "proc", "sys", "var"})
"""Top-level folders SimLab never writes into (with every ``/lib*`` and ``/`` itself)."""
SCRATCH_FOLDERS = (Path("/var/tmp"), Path(tempfile.gettempdir()))
"""Inside a system folder, yet meant for anyone's files (the temporary folder is under /var on macOS); one
that is itself a system folder or ``/`` (``TMPDIR=/usr``) does not count."""
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)  # not on Windows, where links need privileges to make
_MODES = {"ab": os.O_WRONLY | os.O_CREAT | os.O_APPEND, "ab+": os.O_RDWR | os.O_CREAT | os.O_APPEND}
Mode = Literal["ab", "ab+"]
"""Files are opened only to append (an index, a judgments file); anything else is replaced whole."""
SHARED = 0o644  # recordings and exports are meant to be read by others, whatever the umask
RUN_SIDECARS = ("search.sqlite", "notes.json")
"""The files SimLab writes into a run folder beside the run's own (docs/FORMATS.md "Where SimLab writes")."""


TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{8}\.tmp")
"""The name of a temporary file written beside the file it replaces (:func:`temp_name`): what a killed
writer may leave, and the only names a resume clears."""


def temp_name(name: str) -> str:
    """``.NAME.<8 hex digits>.tmp``: a new file's name beside ``name`` (matches :data:`TEMP_NAME`)."""
    return f".{name}.{secrets.token_hex(4)}.tmp"


class WriteRefused(ConfigError):
    """Writing would touch what it must not (a link's target, a system folder, a run, an input)."""


def check_output_folder(folder: Path, purpose: str, inputs: Iterable[Path] = ()) -> Path:
    """``folder`` when ``purpose`` (``"--figures"``, ``"generate --out"``...) may write files into it;
    WriteRefused otherwise: a system folder, the home folder itself, a run folder or a folder inside one
    (one holding ``run.json``, here or above), or one of ``inputs`` (what the command reads) or inside one.
    The folder is judged as given and with its links followed."""
    _check_folder(folder, f"{purpose} {folder}", list(inputs), bare_home=True)
    return folder


def check_output_file(path: Path, purpose: str, inputs: Iterable[Path] = ()) -> Path:
    """``path`` when ``purpose`` may write that one file: its folder passes :func:`check_output_folder` (the
    home folder allowed: a file there is the user's choice), it is none of ``inputs`` and not a link."""
    given = list(inputs)
    _check_folder(path.parent, f"{purpose} {path}", given, bare_home=False)
    if any(resolved(path) == resolved(source) for source in given):
        raise WriteRefused(f"{purpose} {path}: it is what this command reads; choose another file")
    _refuse_link(path)
    return path


def refuse_links(folder: Path, names: Iterable[str]) -> None:
    """WriteRefused naming the first of ``names`` in ``folder``, or of the entries of those that are folders,
    that is a symbolic link, or a file with other names (a hard link): a folder SimLab writes into again (a
    run being resumed or judged) may have been given links to elsewhere."""
    for name in names:
        entry = folder / name
        _refuse_linked(entry)
        if entry.is_dir():
            for child in entry.iterdir():
                _refuse_linked(child)


def _refuse_linked(path: Path) -> None:
    _refuse_link(path)
    info = os.lstat(path) if os.path.lexists(path) else None
    if info is not None and stat.S_ISREG(info.st_mode):
        _refuse_hard_link(path, info.st_nlink)


def sidecar_path(run_dir: Path, name: str) -> Path:
    """``run_dir/name`` when SimLab may write that sidecar there: ``name`` is one of :data:`RUN_SIDECARS`,
    ``run_dir`` holds a run (its ``run.json``) outside the system folders, and ``run_dir/name`` is not a symbolic
    link (a run folder from elsewhere may hold one to a file of the user's). WriteRefused otherwise."""
    if name not in RUN_SIDECARS:
        raise WriteRefused(f"{run_dir / name}: not a file SimLab keeps beside a run ({', '.join(RUN_SIDECARS)})")
    _refuse_system_folder(run_dir, f"writing {name} into {run_dir}")
    if not (run_dir / RUN_FILE).is_file() or (run_dir / RUN_FILE).is_symlink():
        raise WriteRefused(f"{run_dir}: not a run folder (no {RUN_FILE}); {name} is kept only beside a run")
    path = run_dir / name
    _refuse_link(path)
    return path


def write_sidecar(run_dir: Path, name: str, data: bytes | str) -> Path:
    """Write the sidecar ``name`` of the run ``run_dir`` whole (:func:`sidecar_path`, then :func:`write_atomic`)."""
    sidecar_path(run_dir, name)
    return write_atomic(run_dir, name, data)


def replace_sidecar(run_dir: Path, name: str, make: Callable[[Path], object]) -> Path:
    """Put a new sidecar ``name`` in place for writers that take a path (SQLite): ``make`` fills a new empty
    file beside it (``.NAME.*.tmp``, made here, so never a link), which is then fsynced and renamed over the
    sidecar: readers see the old file or the whole new one, and no file is ever changed in place."""
    path = sidecar_path(run_dir, name)
    tmp = path.with_name(temp_name(name))
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_FOLLOW | os.O_CLOEXEC, SHARED))
    try:
        make(tmp)
        _refuse_link(tmp)  # replaced by a link while it was being written: do not rename that into place
        fd = os.open(tmp, os.O_RDONLY | _NO_FOLLOW | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, sidecar_path(run_dir, name))
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(run_dir)
    return path


def make_folder(folder: Path, relative: str | PurePath = "") -> Path:
    """``folder/relative`` created (with ``folder``), no link on the way leaving ``folder``; returns it."""
    _refuse_system_folder(folder, f"writing into {folder}")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder
    for part in _parts(folder, relative):
        path = path / part
        _refuse_leaving(folder, path)
        path.mkdir(exist_ok=True)
    return path


def open_for_writing(folder: Path, relative: str | PurePath, mode: Mode = "ab") -> BinaryIO:
    """``folder/relative`` opened to append (``"ab+"``: and to read), its folders created, never through a
    link: the file itself must not be one and no folder on the way may lead out of ``folder`` (WriteRefused
    naming it). Anything else is written whole with :func:`write_atomic`."""
    path = _target(folder, relative)
    if os.path.lexists(path) and not stat.S_ISREG(os.lstat(path).st_mode):  # a FIFO would block the open
        raise WriteRefused(f"{path}: expected a regular file to append to")
    fd = os.open(path, _MODES[mode] | _NO_FOLLOW | os.O_CLOEXEC, SHARED)
    try:
        _refuse_hard_link(path, os.fstat(fd).st_nlink)
    except WriteRefused:
        os.close(fd)
        raise
    return os.fdopen(fd, mode)


def write_atomic(folder: Path, relative: str | PurePath, data: bytes | str) -> Path:
    """Write ``data`` (text as UTF-8) to ``folder/relative`` so a reader sees the old file or the whole new
    one: a temporary file beside it (``.NAME.*.tmp``), fsynced, renamed over it. Links as
    :func:`open_for_writing`; returns the path."""
    path = _target(folder, relative)
    tmp = path.with_name(temp_name(path.name))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_FOLLOW | os.O_CLOEXEC, SHARED)
    try:
        with os.fdopen(fd, "wb") as f:
            os.chmod(tmp, SHARED)
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
    return path


def write_through_scratch(path: Path, make: Callable[[Path], object]) -> Path:
    """For writers that take only a path (Pillow, Qt, matplotlib, ffmpeg), which would follow a link there:
    ``make`` writes a file of ``path``'s name in a private temporary folder, which is then put in place with
    :func:`write_atomic`. Returns ``path``."""
    scratch = Path(tempfile.mkdtemp(prefix="simlab-write-"))
    try:
        made = scratch / path.name
        make(made)
        return write_atomic(path.parent, path.name, made.read_bytes())
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _target(folder: Path, relative: str | PurePath) -> Path:
    """``folder/relative`` with its folders made, once it is known that writing it stays inside ``folder``."""
    parts = _parts(folder, relative)
    if not parts:
        raise WriteRefused(f"{folder}: expected the name of a file to write, got a folder")
    parent = make_folder(folder, PurePath(*parts[:-1]))
    path = parent / parts[-1]
    _refuse_link(path)
    return path


def _parts(folder: Path, relative: str | PurePath) -> tuple[str, ...]:
    parts = PurePath(relative).parts
    if PurePath(relative).is_absolute() or ".." in parts:
        raise WriteRefused(f"{folder / relative}: expected a file inside {folder}")
    return parts


def _refuse_link(path: Path) -> None:
    if path.is_symlink():
        raise WriteRefused(f"{path} is a symbolic link to {os.readlink(path)}; refusing to write through it")


def _refuse_hard_link(path: Path, links: int) -> None:
    """WriteRefused when the file at ``path`` has other names: a hard link planted in a run folder is the same
    file as one of the user's, which appending would change too."""
    if links > 1:
        raise WriteRefused(f"{path} has {links - 1:,} other name(s) (hard links); appending would change them too")


def _refuse_leaving(folder: Path, path: Path) -> None:
    """WriteRefused when ``path`` (below ``folder``) is a link that leads out of it; links within are fine."""
    if path.is_symlink() and not resolved(path).is_relative_to(resolved(folder)):
        _refuse_link(path)


def _check_folder(folder: Path, said: str, inputs: list[Path], bare_home: bool) -> None:
    """The rules of an output folder (:func:`check_output_folder`); ``said`` starts a refusal's message."""
    if os.path.lexists(folder) and not folder.is_dir():
        raise WriteRefused(f"{said}: {folder} is a file; expected a folder (a new one, or one to add files to)")
    _refuse_system_folder(folder, said, bare_home)
    for seen in _both_ways(folder):
        run = _run_folder_above(seen)
        if run is not None:
            where = "already holds a run" if run == seen else f"is inside the run folder {run}"
            raise WriteRefused(
                f"{said}: {seen} {where}; SimLab writes into a run only what the run owns: choose a folder outside it"
            )
        for source in inputs:
            found = resolved(source)
            if seen == found or seen.is_relative_to(found):
                raise WriteRefused(f"{said}: {seen} is inside {source}, which this command reads")


def _refuse_system_folder(folder: Path, said: str, bare_home: bool = False) -> None:
    """WriteRefused when ``folder`` is (or is inside) a system folder, or with ``bare_home`` is the home
    folder itself (a folder of outputs there would spill among the user's own files)."""
    for seen in _both_ways(folder):
        top = seen.parts[1] if len(seen.parts) > 1 else ""
        system = not top or top in SYSTEM_FOLDERS or top.startswith("lib")
        if system and not any(seen.is_relative_to(scratch) for scratch in _scratch_folders()):
            where = "is" if seen == Path(seen.anchor, top) else "is inside"
            raise WriteRefused(
                f"{said}: {seen} {where} the system folder {Path(seen.anchor, top)}; SimLab writes nothing there"
            )
        if bare_home and seen in _home():
            raise WriteRefused(f"{said}: {seen} is your home folder itself; name a folder inside it")


def _home() -> list[Path]:
    try:
        return _both_ways(Path.home())
    except RuntimeError:  # no home folder known (no $HOME, no password entry): there is none to protect
        return []


def _scratch_folders() -> list[Path]:
    return [p for folder in SCRATCH_FOLDERS for p in _both_ways(folder) if len(p.parts) > 2]


def _both_ways(folder: Path) -> list[Path]:
    """``folder`` made absolute as written, and with its links followed (each may say where it is)."""
    return list(dict.fromkeys((Path(os.path.abspath(folder)), resolved(folder))))


def _run_folder_above(folder: Path) -> Path | None:
    return next((f for f in (folder, *folder.parents) if os.path.lexists(f / RUN_FILE)), None)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # some filesystems refuse to open directories; the rename is still atomic there
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
