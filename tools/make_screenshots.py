"""Regenerate the README's screenshots of the app on the bundled demo run.

Run under a display or Xvfb: ``xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tools/make_screenshots.py``
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from simlab.core.recording import load_run
from simlab.gui.main_window import MainWindow
from simlab.runner.demo import DEMO_RUN

OUT = Path(__file__).resolve().parents[1] / "docs" / "images"
EPISODE = "structure_002-r0"  # a complex structure with hidden blocks and engine errors
TURNS = (3, 9, 20)


def main() -> int:
    app = QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory() as tmp:
        window = MainWindow(QSettings(str(Path(tmp) / "s.ini"), QSettings.Format.IniFormat))
        window.resize(1600, 1000)
        window.show()
        window.open_path(DEMO_RUN)
        window.open_episode_id(EPISODE if EPISODE in {s["episode_id"] for s in load_run(DEMO_RUN).summaries} else "")
        for turn in TURNS:
            window.playback.seek(turn)
            for _ in range(20):
                app.processEvents()
            window.export_png(OUT / f"app_turn_{turn:02d}.png")
            print(f"wrote {OUT / f'app_turn_{turn:02d}.png'}")
        window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
