"""What the main window's parts use of the window that holds them, as Protocols.

The live controller (:mod:`simlab.gui.live`) and the turn notes (:mod:`simlab.gui.notes_view`) are made by
:class:`~simlab.gui.main_window.MainWindow` and act on it. Typed against these instead of the window's class,
they do not import the module that imports them, and each says exactly what of the window it touches; the
main window meets them as it is (a structural match, no base class).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Protocol

from PySide6.QtWidgets import QStatusBar, QToolBar, QWidget

from simlab.core.recording import Run
from simlab.gui.browser import EpisodeKey
from simlab.gui.dialogue import DialoguePane
from simlab.gui.playback import PlaybackModel
from simlab.gui.timeline import TimelineWidget


class WindowHost(Protocol):
    """What every part uses: the playback every view follows, messages to the user, and the window itself."""

    playback: PlaybackModel

    def show_error(self, text: str) -> bool:
        """Tell the user ``text`` without blocking the app; False, so a failed action can return it."""
        ...

    def statusBar(self) -> QStatusBar:
        """The window's status bar, for passing messages."""
        ...

    def window(self) -> QWidget:
        """The window as a widget (Qt's ``QWidget.window()``, which a top-level window answers with itself):
        the parent of the part's objects, dialogs and windows."""
        ...


class LiveHost(WindowHost, Protocol):
    """What a live session's controller uses: the players' view, and a toolbar of its own."""

    def set_players(self, roles: Collection[str] | None) -> None:
        """Show only what people playing ``roles`` were given (None: everything)."""
        ...

    def addToolBar(self, toolbar: QToolBar, /) -> None:
        """Add ``toolbar`` to the window."""
        ...

    def removeToolBar(self, toolbar: QToolBar, /) -> None:
        """Take ``toolbar`` off the window."""
        ...


class NotesHost(WindowHost, Protocol):
    """What the turn notes use: which run and episode are open, where marks are drawn, and how to open more."""

    runs: dict[str, Run]
    current: EpisodeKey | None
    timeline: TimelineWidget
    dialogue: DialoguePane

    @property
    def run(self) -> Run | None:
        """The run of the open episode, else the first open run."""
        ...

    def open_path(self, path: str | Path) -> bool:
        """Open a run folder or an episode file; False when it cannot be read."""
        ...

    def open_episode_id(self, episode_id: str, run: str | None = None) -> bool:
        """Show episode ``episode_id`` of the open run ``run``; False when it cannot be read."""
        ...
