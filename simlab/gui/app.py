"""Start the desktop app: ``python main.py gui [RUN_DIR|EPISODE]`` (``make run`` opens the bundled demo)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtWidgets import QApplication

from simlab.gui.main_window import MainWindow


def open_window(path: str | Path | None, open_first: bool = True) -> MainWindow:
    """A shown main window on ``path`` (a run folder or an episode file), its first episode open."""
    window = MainWindow()
    window.show()
    if path is not None and window.open_path(path) and open_first and window.run is not None:
        ids = window.browser.visible_episode_ids()
        if ids:
            window.open_episode_id(ids[0])
    return window


def run_app(paths: Sequence[str | Path]) -> int:
    """Run the Qt event loop on the first path (or nothing); returns the exit status."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("SimLab")
    app.setOrganizationName("SimLab")
    window = open_window(paths[0] if paths else None)
    status = app.exec()
    del window
    return int(status)
