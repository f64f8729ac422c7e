"""Start the desktop app: ``python main.py gui [RUN_DIR|EPISODE] [--episode ID] [--turn N]`` (``make run`` opens
the bundled demo)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtWidgets import QApplication

from simlab.gui.main_window import MainWindow


def open_window(
    path: str | Path | None, open_first: bool = True, episode: str | None = None, turn: int | None = None
) -> MainWindow:
    """A shown main window on ``path`` (a run folder or an episode file): episode ``episode`` of a run (else its
    first) at ``turn`` (else 0). A place that does not exist is said in the status bar, and the window opens."""
    window = MainWindow()
    window.show()
    if path is None or not window.open_path(path):
        return window
    if window.run is not None and (episode or open_first):
        ids = window.browser.visible_episode_ids()
        wanted = episode or (ids[0] if ids else None)
        if wanted and not window.open_episode_id(wanted):
            window.statusBar().showMessage(f"no episode {wanted!r} in {path}; known: {', '.join(ids[:5])}...", 15000)
    if turn is not None and window.playback.episode is not None:
        if not 0 <= turn <= window.playback.last_turn:
            window.statusBar().showMessage(f"turn {turn} is not in this episode (0-{window.playback.last_turn})", 15000)
        window.playback.seek(turn)
    return window


def run_app(paths: Sequence[str | Path], episode: str | None = None, turn: int | None = None) -> int:
    """Run the Qt event loop on the first path (or nothing), at ``episode`` and ``turn``; returns the exit
    status."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("SimLab")
    app.setOrganizationName("SimLab")
    window = open_window(paths[0] if paths else None, episode=episode, turn=turn)
    status = app.exec()
    del window
    return int(status)
