"""What every hostile-input test checks: the CLI answers with success or a clear error (exit 0 or 2, one
line, no traceback), writes nothing outside the folder it was given, and leaves every input file as it was."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from simlab.cli import main


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with a digest of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def run_cli(capsys: pytest.CaptureFixture[str], argv: Sequence[str]) -> tuple[int, str, str]:
    """``main(argv)`` in this process: (exit status, stdout, stderr); a SystemExit from argparse counts."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def assert_handled(
    capsys: pytest.CaptureFixture[str],
    root: Path,
    argv: Sequence[Any],
    allowed_writes: Sequence[Path] = (),
    codes: Sequence[int] = (0, 2),
) -> tuple[int, str]:
    """Run ``argv`` with ``root`` holding every input: exit status in ``codes``, no traceback, no file under
    ``root`` changed or added except below ``allowed_writes``. Returns (status, stderr)."""
    before = snapshot(root)
    code, out, err = run_cli(capsys, argv)
    assert code in codes, f"exit {code} for {argv}:\n{err[-2000:]}"
    assert "Traceback" not in err + out and "internal error" not in err, err[-2000:]
    if code == 2:
        assert err.strip().splitlines()[-1].startswith(("error:", "usage:")) or "error:" in err, err[-500:]
    after = snapshot(root)
    allowed = [str(Path(p).relative_to(root)) for p in allowed_writes]
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    outside = sorted(k for k in changed if not any(k == a or k.startswith(a + "/") for a in allowed))
    assert not outside, f"{argv} changed files it was not given: {outside[:5]}"
    return code, err


def write_json(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def recorded_run(tmp_path_factory: pytest.TempPathFactory, *argv: str) -> Path:
    """A run folder recorded by ``main(["run", *argv, "--out", FOLDER])`` in a fresh temporary folder."""
    out = tmp_path_factory.mktemp("recorded") / "run"
    assert main(["run", *argv, "--out", str(out)]) == 0
    return out
