"""Regenerate the README's screenshots of the app and of a headless turn sheet.

Run under a display or Xvfb: ``xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tools/make_screenshots.py``
It writes, in docs/images/: the demo run at turns 3, 9 and 20, a rooms episode, a person playing the builder
(their role window), and a turn sheet from ``replay``.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from simlab.core.recording import load_run
from simlab.gui.live import make_session
from simlab.gui.main_window import MainWindow
from simlab.render.turn_sheet import turn_sheet
from simlab.runner.batch import RunConfig, run
from simlab.runner.demo import DEMO_RUN

OUT = Path(__file__).resolve().parents[1] / "docs" / "images"
EPISODE = "structure_002-r0"  # a complex structure with hidden blocks and engine errors
TURNS = (3, 9, 20)
ROOMS_EPISODE_INDEX = 1  # a counting question: the Helper's report names many objects


def settle(app: QApplication, rounds: int = 20) -> None:
    for _ in range(rounds):
        app.processEvents()


def new_window(tmp: Path) -> MainWindow:
    window = MainWindow(QSettings(str(tmp / "s.ini"), QSettings.Format.IniFormat))
    window.resize(1600, 1000)
    window.show()
    return window


def demo_turns(app: QApplication, tmp: Path) -> None:
    window = new_window(tmp)
    window.open_path(DEMO_RUN)
    window.open_episode_id(EPISODE if EPISODE in {s["episode_id"] for s in load_run(DEMO_RUN).summaries} else "")
    for turn in TURNS:
        window.playback.seek(turn)
        settle(app)
        save(window.export_png, f"app_turn_{turn:02d}.png")
    window.close()


def rooms(app: QApplication, tmp: Path) -> None:
    out = tmp / "rooms"
    run(RunConfig("rooms", seed=0, episodes=5, agents=["answerer=oracle", "helper=oracle"]), out)
    window = new_window(tmp)
    window.open_path(out)
    window.open_episode_id(load_run(out).summaries[ROOMS_EPISODE_INDEX]["episode_id"])
    window.playback.seek(2)
    settle(app)
    save(window.export_png, "app_rooms.png")
    window.close()


def human_builder(app: QApplication, tmp: Path) -> None:
    window = new_window(tmp)
    session = make_session("blocks", 0, {"builder": "human"}, settings={"turns": 6})
    asks: list[str] = []
    session.needsHuman.connect(lambda role, _observation: asks.append(role))
    controller = window.start_live(session)
    while not asks:
        app.processEvents()
    role_window = controller.role_windows["builder"]
    role_window.resize(1100, 870)
    settle(app)
    role_window.grab().save(str(OUT / "app_human_builder.png"))
    print(f"wrote {OUT / 'app_human_builder.png'}")
    controller.close()
    window.close()


def sheet() -> None:
    episode = load_run(DEMO_RUN).load_episode(EPISODE)
    turn_sheet(episode, 9).save(OUT / "replay_turn_sheet.png")
    print(f"wrote {OUT / 'replay_turn_sheet.png'}")


def save(export: Callable[[Path], object], name: str) -> None:
    export(OUT / name)
    print(f"wrote {OUT / name}")


def main() -> int:
    app = QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        demo_turns(app, tmp)
        rooms(app, tmp)
        human_builder(app, tmp)
        sheet()
    return 0


if __name__ == "__main__":
    sys.exit(main())
