"""Start the desktop app: ``python main.py gui [RUN_DIR... | EPISODE] [--episode ID] [--turn N]`` (``make run``
opens the bundled demo). Several run folders open side by side, to compare."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from simlab.gui.background import collection_in_gui_thread
from simlab.gui.main_window import MainWindow
from simlab.gui.qt_app import application


def open_window(
    paths: str | Path | Sequence[str | Path] | None,
    open_first: bool = True,
    episode: str | None = None,
    turn: int | None = None,
) -> MainWindow:
    """A shown main window on ``paths``: one run folder or episode file, or several run folders opened
    together. Episode ``episode`` of the first run (else its first) at ``turn`` (else 0). A place that does not
    exist is said in the status bar, and the window opens."""
    window = MainWindow()
    window.show()
    places = [paths] if isinstance(paths, str | Path) else list(paths or ())
    if not places:
        return window
    opened = window.open_path(places[0]) if len(places) == 1 else window.open_runs(places)
    if not window.runs and not opened:
        return window
    if window.runs and (episode or open_first):
        first = next(iter(window.runs))
        ids = [key.episode_id for key in window.browser.visible_keys() if key.run == first]
        wanted = episode or (ids[0] if ids else None)
        if wanted and not window.open_episode_id(wanted, first):
            window.statusBar().showMessage(f"no episode {wanted!r} in {first}; known: {', '.join(ids[:5])}...", 15000)
    if turn is not None and window.playback.episode is not None:
        if not 0 <= turn <= window.playback.last_turn:
            window.statusBar().showMessage(f"turn {turn} is not in this episode (0-{window.playback.last_turn})", 15000)
        window.playback.seek(turn)
    return window


def run_app(paths: Sequence[str | Path], episode: str | None = None, turn: int | None = None) -> int:
    """Run the Qt event loop on ``paths`` (run folders, or an episode file; none: an empty window), at
    ``episode`` of the first run and ``turn``; returns the exit status."""
    app = application()
    with collection_in_gui_thread(app):  # see gui/background.py
        window = open_window(paths, episode=episode, turn=turn)
        status = app.exec()
        del window
    return int(status)
