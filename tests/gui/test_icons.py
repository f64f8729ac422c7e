"""The app's own icons (assets/icons, made by tools/make_icons.py) on the main window's actions and title bar."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QIcon, QImage
from PySide6.QtWidgets import QStyle

from simlab.core.assets import AssetError
from simlab.core.recording import load_run
from simlab.gui.icons import WINDOW_ICON, app_icon
from simlab.gui.main_window import TOOLBAR_ICONS, MainWindow
from simlab.runner.demo import DEMO_RUN

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def image(icon: QIcon, size: int = 32) -> QImage:
    return icon.pixmap(size, size).toImage().convertToFormat(QImage.Format.Format_ARGB32)


def inked(picture: QImage) -> int:
    """How many pixels are not transparent."""
    return sum(picture.pixelColor(x, y).alpha() > 0 for x in range(picture.width()) for y in range(picture.height()))


def test_every_toolbar_action_shows_its_own_drawn_icon(window: MainWindow) -> None:
    pictures = {}
    for name in TOOLBAR_ICONS:
        shown = image(window.actions_by_name[name].icon())
        assert shown == image(app_icon(name)), name
        assert inked(shown) > 40, f"{name}: the icon draws (almost) nothing"
        pictures[name] = shown
    assert len({bytes(p.constBits()) for p in pictures.values()}) == len(TOOLBAR_ICONS)  # no two alike
    standard = image(window.style().standardIcon(QStyle.StandardPixmap.SP_MediaPlay))
    assert pictures["play"] != standard


def test_the_window_carries_the_simlab_icon(window: MainWindow) -> None:
    assert image(window.windowIcon(), 64) == image(app_icon(WINDOW_ICON), 64)
    assert inked(image(window.windowIcon(), 16)) > 200  # a filled tile, legible in a task bar


def test_playing_shows_pause_and_stopping_shows_play_again(window: MainWindow) -> None:
    assert window.open_path(DEMO_RUN)
    assert window.open_episode_id(load_run(DEMO_RUN).summaries[0]["episode_id"])
    play = window.actions_by_name["play"]
    window.playback.play()
    assert window.playback.playing
    assert image(play.icon()) == image(app_icon("pause"))
    window.playback.pause()
    assert image(play.icon()) == image(app_icon("play"))


def test_a_missing_icon_is_named() -> None:
    with pytest.raises(AssetError, match=r"assets/icons/no_such_action\.svg is missing"):
        app_icon("no_such_action")


def test_the_shipped_icons_are_what_the_script_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(TOOLS))
    import make_icons

    assert make_icons.main(["--check"]) == 0
    assert sorted(make_icons.icon_files()) == sorted(f"{n}.svg" for n in (*TOOLBAR_ICONS, "pause", WINDOW_ICON))
    sys.modules.pop("make_icons")
