"""GUI tests run real Qt widgets and real VTK under Xvfb (started by pytest-xvfb with -noreset)."""

from __future__ import annotations

import os

import pytest

# QtInteractor needs a real X display: never the offscreen platform here (see shared notes).
os.environ.pop("QT_QPA_PLATFORM", None)
os.environ.pop("PYVISTA_OFF_SCREEN", None)


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path, monkeypatch):
    """Each test gets its own QSettings store and data folder, so saved layouts, recent files and the editor's
    autosaves never leak between tests or into the person's home."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
