"""The typed core stays typed: mypy (configured in pyproject.toml, also run by `make lint`) finds nothing in
simlab/core, simlab/runner and simlab/analysis."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_mypy_is_clean_on_the_core_runner_and_analysis(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "no issues found" in out.stdout
