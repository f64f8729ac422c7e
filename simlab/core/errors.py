"""Errors SimLab raises for bad input: each names the file, the place in it and what was expected."""

from __future__ import annotations

from pathlib import Path


class SimlabError(Exception):
    """Base class of every error SimLab reports to a user."""


class FormatError(SimlabError, ValueError):
    """A file that cannot be read as what it claims to be (also a ValueError, for callers parsing values).

    ``where`` is a line (``"line 12"``), a JSON path (``"events[3].data.move"``) or a field name.
    """

    def __init__(self, path: str | Path | None, where: str, expected: str) -> None:
        self.path = str(path) if path is not None else "<input>"
        self.where = where
        self.expected = expected
        place = f"{self.path}, {where}" if where else self.path
        super().__init__(f"{place}: {expected}")


class ConfigError(SimlabError):
    """A command-line option, agent spec or config file value that cannot be used."""
