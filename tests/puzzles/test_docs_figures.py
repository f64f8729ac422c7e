"""Every Random-row figure docs/PUZZLES.md quotes is what the command it names prints: the run is played
again here and each quoted figure compared with the recomputed mean at the precision it is quoted with."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from simlab.cli import main
from simlab.core.recording import load_run

DOC = Path(__file__).resolve().parents[2] / "docs" / "PUZZLES.md"
COMMAND = ["run", "--world", "puzzles", "--episodes", "1000", "--agent", "solver=random"]  # as the doc says
METRICS = ("sr", "psr", "mistakes", "acl")
BULLET = re.compile(r"^- \*\*(\w+)\*\*(.*?)(?=^- \*\*|^\n|\Z)", re.M | re.S)
RANDOM = re.compile(r"Random:\s*([\d.]+)\s*/\s*([\d.]+)\s*/\s*([\d.]+)\s*/\s*([\d.]+)")


def quoted() -> dict[str, tuple[str, ...]]:
    """Puzzle (lower case) -> its Random row as the doc writes it."""
    rows = {}
    for name, text in BULLET.findall(DOC.read_text(encoding="utf-8")):
        found = RANDOM.search(" ".join(text.split()))
        if found:
            rows[name.lower()] = found.groups()
    return rows


def test_the_docs_random_rows_are_what_the_named_command_prints(tmp_path, capsys):
    doc = DOC.read_text(encoding="utf-8")
    assert " ".join(COMMAND) in " ".join(doc.split())  # the doc names this very command
    assert main([*COMMAND, "--out", str(tmp_path / "random")]) == 0
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for summary in load_run(tmp_path / "random").summaries:
        for metric in METRICS:
            values[summary["group"]][metric].append(float(summary["metrics"][metric]))
    rows = quoted()
    assert sorted(rows) == sorted(values)  # every puzzle has its row in the doc
    for puzzle, row in rows.items():
        for metric, text in zip(METRICS, row, strict=True):
            decimals = len(text.split(".")[1]) if "." in text else 0
            mean = sum(values[puzzle][metric]) / len(values[puzzle][metric])
            assert abs(float(text) - mean) <= 0.5 * 10**-decimals + 1e-9, f"{puzzle} {metric}: doc {text}, run {mean}"
