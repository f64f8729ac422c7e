"""The desktop app on the example family: the window opens its run, draws its 3D board and agent panels from
its own views, follows the playback, and a person can play its player through the family's reply form."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QImage

from simlab.gui.live import make_session
from simlab.gui.main_window import MainWindow
from tests.gui.conftest import wait_shown

pytestmark = pytest.mark.usefixtures("installed")
WAIT_MS = 20_000
HAND = "board_hand-r0"


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets its own settings store, as in tests/gui."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def window(qtbot, tmp_path: Path, ttt_run: Path) -> Iterator[MainWindow]:
    win = MainWindow(QSettings(str(tmp_path / "simlab.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    wait_shown(qtbot, win)
    assert win.open_path(ttt_run)
    yield win
    win.close()


def pixels(image: QImage) -> np.ndarray:
    rgba = image.convertToFormat(QImage.Format.Format_RGBA8888)
    rows = np.frombuffer(rgba.constBits(), np.uint8).reshape(rgba.height(), rgba.bytesPerLine())
    return rows[:, : 4 * rgba.width()].reshape(rgba.height(), rgba.width(), 4).copy()  # before rgba is freed


def test_the_window_draws_the_board_the_panels_and_the_plots_at_every_turn(window):
    assert HAND in window.browser.visible_episode_ids() and window.open_episode_id(HAND)
    episode = window.playback.episode
    assert list(window.world.cameras) == ["free", "player", "seer"]
    assert window.world.overlay_label.text() == "Mines & safe line:" and window.world.message.text() == ""
    assert window.agents.roles() == ["seer", "player"]
    assert window.plots.titles() == ["Progress on the safe line", "Mines"]
    for turn in range(episode.last_turn + 1):
        window.playback.seek(turn)
        state = episode.state_at(turn)
        assert window.world.count("mark") == len(state["marks"])
        assert window.world.count("mine") == len(state["revealed"])
        assert window.world.count("blocked") == 1 and window.world.count("safe") == 3
        assert window.plots.cursor_turn() == turn
        for role in ("seer", "player"):  # turn 0 is the set-up: nobody has observed anything yet
            shown = window.agents.panel(role).pixmaps()
            assert len(shown) == (turn > 0) and not any(p.isNull() for p in shown)
    assert window.plots.series("progress") == episode.metric_series("progress")
    assert window.last_error == ""


def test_the_seer_panel_shows_the_hidden_mines_and_the_player_panel_does_not(window):
    window.open_episode_id(HAND)
    window.playback.seek(1)
    seer = pixels(window.agents.panel("seer").pixmaps()[0].toImage())
    player = pixels(window.agents.panel("player").pixmaps()[0].toImage())
    red = lambda rgba: int(((rgba[..., 0] > 180) & (rgba[..., 1] < 80) & (rgba[..., 2] < 80)).sum())  # noqa: E731
    assert red(seer) > 100 and red(player) == 0
    assert "Hidden mines" in window.agents.panel("seer").observation_text.body.text()
    assert "Hidden mines" not in window.agents.panel("player").observation_text.body.text()


def test_the_hidden_toggle_a_failed_move_and_the_exports(window, tmp_path):
    window.open_episode_id(HAND)
    window.playback.seek(2)
    assert window.world.count("hidden") == 1  # (2,0): the seer's secret; (1,1) was stepped on
    window.world.target_mode.setCurrentText("Hidden")
    assert window.world.count("hidden") == 0 and window.world.count("safe") == 0
    window.world.target_mode.setCurrentText("Wireframe")
    assert [i.style for i in window.world.items if i.kind == "hidden"] == ["wireframe"]
    window.playback.seek(0)
    assert window.playback.next_error() and window.playback.turn == 2
    (failed,) = [i for i in window.world.items if i.kind == "failed"]
    assert "[mine]" in failed.tooltip
    assert window.playback.next_error() and window.playback.turn == 3
    for name in window.world.cameras:
        window.world.set_camera(name)
    assert window.export_png(tmp_path / "world.png", window.world)
    shot = np.asarray(Image.open(tmp_path / "world.png").convert("RGB"))
    assert len(np.unique(shot.reshape(-1, 3), axis=0)) > 100  # the 3D board was drawn, not a blank view
    assert window.export_html(tmp_path / "t.html") and window.export_animation(tmp_path / "a.gif", 0, 2)
    assert Image.open(tmp_path / "a.gif").n_frames == 3 and window.last_error == ""


def test_a_person_plays_the_player_with_the_familys_form(window, qtbot):
    session = make_session("tictactoe", 0, {"player": "human"})
    asks: list = []
    session.needsHuman.connect(lambda role, observation: asks.append((role, observation)))
    controller = window.start_live(session)
    for k in range(3):
        qtbot.waitUntil(lambda k=k: len(asks) > k, timeout=WAIT_MS)
        role, observation = asks[k]
        player = controller.role_windows["player"]
        text = player.visible_text()
        assert role == "player" and player.pixmaps_shown() == 1 and "Hidden mines" not in text
        said = observation.data["this_turn"][0]["text"]  # the oracle seer: "Mark (i,j) next. ..."
        cell = [int(said[6]), int(said[8])]
        player.move_form.set_values({"cell": cell})
        assert player.reply().action == {"cell": cell}
        qtbot.mouseClick(player.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state == "finished", timeout=WAIT_MS)
    summary = session.episode.summary
    assert summary["outcome"] == "success" and summary["turns"] == 3 and summary["agents"]["player"] == "human"
