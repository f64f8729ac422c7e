"""Every figure of ours that docs/PUZZLES.md quotes is what the command it names prints: each command is run
again here and each quoted figure compared with the recomputed value at the precision it is quoted with (the
Random rows and the Wire length; the Color manual expert's solved counts; the Telehealth chance report and its
exact expectation; the protocol's default limits)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from simlab.cli import main
from simlab.core.recording import load_run
from simlab.worlds.puzzles import chance
from simlab.worlds.puzzles.world import PuzzlesSettings

DOC = Path(__file__).resolve().parents[2] / "docs" / "PUZZLES.md"
COMMAND = ["run", "--world", "puzzles", "--episodes", "1000", "--agent", "solver=random"]  # as the doc says
COLOR = ["run", "--world", "puzzles", "--group", "color", "--episodes", "100", "--agent", "expert=manual"]
CHANCE = "python -m simlab.worlds.puzzles.chance --n 1000"
METRICS = ("sr", "psr", "mistakes", "acl")
BULLET = re.compile(r"^- \*\*(\w+)\*\*(.*?)(?=^- \*\*|^\n|\Z)", re.M | re.S)
RANDOM = re.compile(r"Random:\s*([\d.]+)\s*/\s*([\d.]+)\s*/\s*([\d.]+)\s*/\s*([\d.]+)")


def doc_text() -> str:
    """The doc with its lines joined, as a reader sees the prose."""
    return " ".join(DOC.read_text(encoding="utf-8").split())


def quoted() -> dict[str, tuple[str, ...]]:
    """Puzzle (lower case) -> its Random row as the doc writes it."""
    rows = {}
    for name, text in BULLET.findall(DOC.read_text(encoding="utf-8")):
        found = RANDOM.search(" ".join(text.split()))
        if found:
            rows[name.lower()] = found.groups()
    return rows


def agrees(text: str, value: float) -> bool:
    """``text`` is ``value`` rounded to as many decimals as ``text`` shows."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(float(text) - value) <= 0.5 * 10**-decimals + 1e-9


def means(run: Path) -> dict[str, dict[str, float]]:
    """Group -> metric -> mean over the run's episodes."""
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for summary in load_run(run).summaries:
        for metric in METRICS:
            values[summary["group"]][metric].append(float(summary["metrics"][metric]))
    return {group: {m: sum(v) / len(v) for m, v in row.items()} for group, row in values.items()}


def test_the_docs_random_rows_are_what_the_named_command_prints(tmp_path):
    doc = doc_text()
    assert " ".join(COMMAND) in doc  # the doc names this very command
    assert main([*COMMAND, "--out", str(tmp_path / "random")]) == 0
    measured = means(tmp_path / "random")
    rows = quoted()
    assert sorted(rows) == sorted(measured)  # every puzzle has its row in the doc
    for puzzle, row in rows.items():
        for metric, text in zip(METRICS, row, strict=True):
            assert agrees(text, measured[puzzle][metric]), (
                f"{puzzle} {metric}: doc {text}, run {measured[puzzle][metric]}"
            )
    wire = re.search(r"Random on Wire: ([\d.]+) in the paper, ([\d.]+) here", doc)
    assert wire and agrees(wire.group(2), measured["wire"]["acl"])


def test_the_color_manual_experts_counts_are_what_the_named_command_prints(tmp_path):
    doc = doc_text()
    assert " ".join(COLOR) in doc and "again with `--turns 20`" in doc
    found = re.search(r"solve (\d+) of the 100 in ten turns and (\d+) in twenty", doc)
    assert found
    for turns, text in zip((10, 20), found.groups(), strict=True):
        out = tmp_path / f"color{turns}"
        assert main([*COLOR, "--turns", str(turns), "--out", str(out)]) == 0
        solved = sum(s["outcome"] == "success" for s in load_run(out).summaries)
        assert solved == int(text), f"{turns} turns: doc {text}, run {solved}"


def test_the_telehealth_chance_report_is_what_the_named_command_prints(capsys):
    doc = DOC.read_text(encoding="utf-8")
    block = re.search(rf"`{re.escape(CHANCE)}`.*?```text\n(.*?)```", doc, re.S)
    assert block, f"the doc names `{CHANCE}` and quotes its output in a text block"
    assert chance.main(CHANCE.split()[3:]) == 0
    assert capsys.readouterr().out == block.group(1)


def test_the_telehealth_exact_expectation_quoted_is_the_computed_one():
    found = re.search(r"exact expectation ([\d.]+) / ([\d.]+) / ([\d.]+) / ([\d.]+)", doc_text())
    assert found
    limits = PuzzlesSettings()
    expected = chance.random_expectation(limits.turns, limits.mistakes)
    for metric, text in zip(METRICS, found.groups(), strict=True):
        assert agrees(text, expected[metric]), f"{metric}: doc {text}, computed {expected[metric]}"


def test_the_protocols_limits_are_the_defaults_the_named_command_lists(capsys):
    doc = doc_text()
    assert "`python main.py worlds` lists them with their defaults" in doc
    assert main(["worlds"]) == 0
    listed = capsys.readouterr().out
    for setting in ("turns", "mistakes"):
        value = re.search(rf"`{setting}` \((\d+)", doc)
        assert value and f"    {setting} = {value.group(1)}:" in listed
