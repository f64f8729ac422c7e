"""The one QApplication of a SimLab process, set up the same way for the app and the editor."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication

from simlab.gui.icons import WINDOW_ICON, app_icon


def application() -> QApplication:
    """The process's QApplication (made on first use), named SimLab (where QSettings keep the app's state) and
    with the app's icon on every window: the main window, role windows and the editor."""
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("SimLab")
    app.setOrganizationName("SimLab")
    app.setWindowIcon(app_icon(WINDOW_ICON))
    return app
