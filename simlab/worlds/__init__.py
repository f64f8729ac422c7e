"""The registry of world families: a name -> the family's :class:`~simlab.core.family.WorldFamily`.

The bundled families are listed here as ``"module:attribute"`` strings; installed packages add theirs through
the entry-point group ``simlab.worlds`` (``tictactoe = "my_pkg.family:FAMILY"``). Nothing is imported until
a family is asked for, and this module is the only place outside a family's folder that names its modules
(``tests/core/test_family_boundary.py`` enforces it).
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simlab.core.editing import EditError, EditorDocument
from simlab.core.errors import ConfigError, FormatError
from simlab.core.family import WorldFamily
from simlab.core.plugins import load_target
from simlab.core.reading import check_file, read_json

ENTRY_POINT_GROUP = "simlab.worlds"
BUILTIN: dict[str, str] = {
    "blocks": "simlab.worlds.blocks.family:FAMILY",
    "rooms": "simlab.worlds.rooms.family:FAMILY",
    "boards": "simlab.worlds.boards.family:FAMILY",
    "puzzles": "simlab.worlds.puzzles.family:FAMILY",
}

DEFAULT_WORLD = "blocks"
"""The world ``run`` plays when neither ``--world`` nor a config names one."""

__all__ = ["BUILTIN", "DEFAULT_WORLD", "ENTRY_POINT_GROUP", "WorldFamily", "family_names", "get_family", "registered"]


@functools.cache
def registered() -> dict[str, str]:
    """Every family name -> where its ``WorldFamily`` lives: the bundled ones, then installed entry points
    (a bundled name cannot be taken over by a package)."""
    out = dict(BUILTIN)
    for ep in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        out.setdefault(ep.name, ep.value)
    return out


def family_names() -> list[str]:
    """The registered family names, sorted."""
    return sorted(registered())


@functools.cache
def get_family(name: str) -> WorldFamily:
    """The family called ``name``; ConfigError listing the known ones, or saying why it failed to load."""
    targets = registered()
    if name not in targets:
        raise ConfigError(f"unknown world {name!r}; known worlds: {', '.join(sorted(targets))}")
    try:
        family = load_target(targets[name])
    except Exception as exc:  # an installed family that fails to import must not take SimLab down
        raise ConfigError(f"world {name!r} ({targets[name]}) failed to load: {type(exc).__name__}: {exc}") from exc
    if not isinstance(family, WorldFamily) or family.name != name:
        raise ConfigError(f"world {name!r}: {targets[name]} is not a WorldFamily named {name!r}")
    return family


def open_document(target: str | Path, options: Mapping[str, Any] | None = None) -> EditorDocument:
    """What ``python main.py edit TARGET`` edits: a new document of family ``TARGET`` (``options`` from its
    editor's new fields), or the file ``TARGET`` opened by the first family whose editor recognises it.
    EditError says which families can author and what the file is not."""
    authors = [name for name in family_names() if get_family(name).editor is not None]
    if str(target) in registered():
        kind = get_family(str(target)).load_editor()
        if kind is None:
            raise EditError(f"world {target!r} has nothing to author; families with an editor: {', '.join(authors)}")
        return kind.new(options or {})
    path = Path(target)
    if not os.path.lexists(path):
        raise EditError(f"{path}: no such file, and not a world family with an editor ({', '.join(authors)})")
    if not path.is_dir():  # a folder may hold a family's file; anything else must be a regular file
        try:
            check_file(path)
            if path.suffix == ".json":  # JSON that cannot be read is no editor's: say why, not only that
                read_json(path)
        except FormatError as exc:
            raise EditError(str(exc)) from None
    for name in authors:
        kind = get_family(name).load_editor()
        if kind is not None and kind.can_open(path):
            return kind.open(path)
    raise EditError(f"{path}: not a file any editor opens (families with an editor: {', '.join(authors)})")
