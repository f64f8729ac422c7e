"""Where an export may write: never over a recording, never outside what the user chose.

Every export and save of the command line and the app (a PNG, an HTML transcript, an animation, a figure's
files, a validity report, a live episode) goes through :func:`export_file` or :func:`export_into`. They ask
:func:`refuse_overwriting_a_recording` first, which says which recording a path would replace. A recording is

* a file that belongs to a run folder (a folder holding ``run.json``): its ``run.json``, its ``index.jsonl``,
  and anything in its ``episodes/`` or ``judgments/`` folder, there already or not (a file put there would
  sit among the run's own), or
* any JSON file that says early on it is a SimLab file (``"format": "simlab.…"``): an episode, an index or
  a ``run.json`` copied elsewhere, a benchmark, a scene.

The path is judged both as given and with its links followed, so a link to a recording is refused too. Then
the rules every output follows (:mod:`simlab.core.writing`): no export goes into a run folder at all, nor
into a system folder, nor through a link, and the file is written whole or not at all. :func:`export_into`
writes several files into a folder the user chose: all of them are checked before any is written, so a
refusal leaves the folder as it was.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from simlab.core.errors import ConfigError
from simlab.core.judging import JUDGMENTS_DIR
from simlab.core.reading import resolved
from simlab.core.recording import EPISODES_DIR, INDEX_FILE, RUN_FILE
from simlab.core.writing import check_output_file, check_output_folder, write_atomic, write_through_scratch

HEAD_BYTES = 4096
"""How much of an existing file is read to tell whether it is a SimLab JSON file (its format comes early)."""
RUN_FOLDERS = (EPISODES_DIR, JUDGMENTS_DIR)
"""A run folder's subfolders that are wholly the run's."""
_FORMAT = re.compile(rb'"format"\s*:\s*"(simlab\.[^"]*)"')


def refuse_overwriting_a_recording(path: Path, replaces: str | None = None) -> None:
    """ConfigError, saying why, when writing ``path`` would replace or join a recording (see the module's
    docstring) or ``path`` is a folder. ``replaces`` names the one SimLab format a file there may hold and be
    replaced (a previous export of the same kind, such as a validity report)."""
    if path.is_dir():
        raise ConfigError(f"{path} is a folder; name the file to write")
    why = _recording(path.absolute()) or _recording(resolved(path))
    if why is None:
        found = recording_format(path)
        why = None if found is None or found == replaces else f"it is a {found} file"
    if why is not None:
        raise ConfigError(f"{path}: would overwrite a SimLab recording ({why}); choose another file")


def recording_format(path: Path) -> str | None:
    """The SimLab format an existing regular file starts with (``simlab.episode``...), else None (no such
    file, another kind of file, or one that cannot be read, which writing would not get past either)."""
    if not path.is_file():  # a pipe or a device is never read: it could block
        return None
    try:
        with path.open("rb") as f:
            head = f.read(HEAD_BYTES)
    except OSError:
        return None
    if not head.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"{"):  # a page or a picture that quotes one
        return None
    found = _FORMAT.search(head)
    return found.group(1).decode("utf-8", "replace") if found else None


def _recording(path: Path) -> str | None:
    """Which file of which run the absolute ``path`` would be, or None when it belongs to no run folder."""
    for folder in path.parents:
        if not (folder / RUN_FILE).is_file():
            continue
        parts = path.relative_to(folder).parts
        if parts in ((RUN_FILE,), (INDEX_FILE,)):
            return f"it is the {parts[0]} of the run in {folder}"
        if parts[0] in RUN_FOLDERS:
            return f"it is in the {parts[0]} folder of the run in {folder}"
    return None


def export_file(
    path: Path, write: Callable[[Path], object], inputs: Sequence[Path] = (), replaces: str | None = None
) -> Path:
    """``write`` (given a path of ``path``'s name in a scratch folder) made into ``path``, once it is known
    that ``path`` replaces no recording (``replaces`` as :func:`refuse_overwriting_a_recording`), is in no
    run folder, system folder or of ``inputs`` (what the command reads), and is no link. Returns ``path``."""
    refuse_overwriting_a_recording(path, replaces)
    check_output_file(path, "export to", inputs)
    return write_through_scratch(path, write)


def export_into(folder: Path, write: Callable[[Path], Sequence[Path]]) -> list[Path]:
    """Files made by ``write`` (given a scratch folder, it returns the files it wrote there) copied into
    ``folder`` under their names, once every one of them is known not to replace a recording and ``folder``
    to be a place for outputs (:func:`~simlab.core.writing.check_output_folder`); returns them. The scratch
    folder is removed whatever happens, so nothing is left but the files copied."""
    with tempfile.TemporaryDirectory(prefix="simlab-export-") as scratch:
        made = list(write(Path(scratch)))
        targets = [folder / file.name for file in made]  # plain names: nothing lands outside ``folder``
        for target in targets:
            refuse_overwriting_a_recording(target)
        check_output_folder(folder, "export into")
        return [write_atomic(folder, file.name, file.read_bytes()) for file in made]
