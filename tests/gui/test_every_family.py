"""The app opens an episode of every registered world family (bundled or installed) and every dock follows the
playback through it, with no error shown. A family without a 3D scene is drawn by its turn pictures."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from simlab.core.recording import save_episode
from simlab.gui.main_window import MainWindow
from simlab.testing import play
from simlab.worlds import family_names, get_family
from tests.gui.conftest import wait_shown


@pytest.mark.parametrize("name", family_names())
def test_the_app_opens_and_steps_an_episode_of_every_family(name, qtbot, tmp_path: Path, monkeypatch):
    open_and_step(name, qtbot, tmp_path, monkeypatch)


def test_the_app_shows_a_family_without_a_3d_scene_by_its_pictures(flat_family, qtbot, tmp_path, monkeypatch):
    window = open_and_step(flat_family, qtbot, tmp_path, monkeypatch)
    assert window.world.stack.currentWidget() is window.world.picture
    assert "has no 3D scene" in window.world.message.text() and not window.world.target_mode.isVisible()


def open_and_step(name: str, qtbot, tmp_path: Path, monkeypatch) -> MainWindow:
    """Open a fresh episode of ``name`` and step through it, checking every dock; returns the window."""
    family = get_family(name)
    episode = play(family, family.tasks.generate(1, 0)[0], [], 0, None)
    path = tmp_path / f"{name}.json"
    save_episode(path, episode)
    window = MainWindow(QSettings(str(tmp_path / "simlab.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    errors: list[str] = []
    monkeypatch.setattr(window, "show_error", lambda text: errors.append(text) or False)
    window.show()
    wait_shown(qtbot, window)
    assert window.open_path(path)
    views = family.load_views()
    assert window.agents.roles() == [r for r in family.roles if r in episode.agents]
    for turn in sorted({0, episode.last_turn // 2, episode.last_turn}):
        window.playback.seek(turn)
        qtbot.wait(10)
        assert window.timeline.label_text().startswith(f"turn {turn} of")
        assert window.dialogue.selected_turn == turn or turn == 0
        if views.scene is not None:
            assert window.world.items, f"{name}: nothing drawn in 3D at turn {turn}"
        else:
            assert not window.world.picture.image().isNull()
        shown = [window.agents.panel(r) for r in window.agents.roles()]
        assert turn == 0 or any(panel.pixmaps() or panel.notes() for panel in shown), (
            f"{name}: no agent panel shows a picture, or says none was sent, at turn {turn}"
        )
    assert window.plots.titles() == [p.title for p in family.plots]
    assert errors == []
    return window
