"""The package stays typed: mypy (configured in pyproject.toml, also run by `make lint`) finds nothing in
any module of simlab (gui and worlds included), the example family or the shipped plugins."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_mypy_checks_the_whole_package():
    files = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["files"]
    assert "simlab" in files, f"mypy checks only {files}: every package of simlab must be typed"


def test_mypy_is_clean(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,  # a cold cache over ~230 files: about a minute idle, several under a loaded CI
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "no issues found" in out.stdout
