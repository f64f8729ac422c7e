"""Bounded time and memory whatever the input: the inputs that made SimLab loop over a billion turns or plan
a billion episodes, run in a child process under an address-space limit (a leak or a runaway loop would fail
with MemoryError there) and the suite's own timeout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LIMIT_BYTES = 3 * 2**30  # the CLI with numpy, pydantic and trimesh imported uses well under 1 GiB
CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from simlab.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _run_bounded(*argv: object) -> subprocess.CompletedProcess[str]:
    code = CHILD.format(limit=LIMIT_BYTES)
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, argv)], cwd=REPO, capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def episode_file(tmp_path_factory) -> Path:
    from simlab.cli import main

    out = tmp_path_factory.mktemp("bounded") / "run"
    assert main(["run", "--episodes", "1", "--turns", "2", "--out", str(out)]) == 0
    return next((out / "episodes").glob("*.json"))


def test_a_recording_that_claims_turn_a_billion(tmp_path, episode_file):
    obj = json.loads(episode_file.read_text("utf-8"))
    obj["events"].append({"kind": "score", "turn": 10**9, "data": {"metrics": {}}})
    path = tmp_path / "late.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    done = _run_bounded("replay", path, "--export", "gif", "--out", tmp_path / "a.gif")
    assert done.returncode == 2 and "MemoryError" not in done.stderr and "turn" in done.stderr


@pytest.mark.parametrize("flags", [["--episodes", "1000000000"], ["--episodes", "1", "--repeats", "999999999"]])
def test_a_billion_episodes_asked_for(tmp_path, flags):
    done = _run_bounded("run", *flags, "--out", tmp_path / "out")
    assert done.returncode == 2 and "MemoryError" not in done.stderr and not (tmp_path / "out").exists()


def test_an_index_of_200_000_broken_lines(tmp_path, episode_file):
    run = episode_file.parent.parent
    copy = tmp_path / "run"
    copy.mkdir()
    for name in ("run.json", "index.jsonl"):
        (copy / name).write_bytes((run / name).read_bytes())
    (copy / "episodes").mkdir()
    (copy / "episodes" / episode_file.name).write_bytes(episode_file.read_bytes())
    with (copy / "index.jsonl").open("ab") as f:
        f.write(b'{"format": "simlab.index", "version": 1}\n' * 200_000 + b"\xff" * 10_000 + b"\n")
    done = _run_bounded("report", copy)
    assert done.returncode == 0 and "MemoryError" not in done.stderr
    assert "and 199,991 more unreadable index lines" in done.stderr and len(done.stderr.splitlines()) < 20
