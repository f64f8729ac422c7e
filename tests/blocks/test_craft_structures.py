"""CRAFT's own published structure files play in SimLab as they are: the file's ids, its complexity labels as
the groups, the boards as the paper's games had them; a damaged entry is refused naming its field."""

from __future__ import annotations

import json
from pathlib import Path

from simlab.cli import main
from simlab.core.recording import load_run
from simlab.worlds import get_family
from simlab.worlds.blocks.model import parse_cell

EXCERPT = Path(__file__).parent / "fixtures" / "craft_structures_excerpt.json"
SHIPPED = Path(__file__).resolve().parents[2] / "assets" / "reference" / "craft" / "structures_dataset_20.json"


def test_the_published_structures_load_with_their_ids_labels_and_boards():
    published = json.loads(EXCERPT.read_text(encoding="utf-8"))
    tasks = get_family("blocks").tasks.load(EXCERPT)
    assert [t["id"] for t in tasks] == [s["id"] for s in published]
    assert [t["tier"] for t in tasks] == [s["complexity"] for s in published]
    for task, source in zip(tasks, published, strict=True):
        stacks = {parse_cell(k): v for k, v in source["structure"].items()}
        assert {parse_cell(k): v for k, v in task["board"]["stacks"].items()} == stacks
        assert len(task["board"]["spans"]) == sum(len(pairs) for pairs in source["spans"].values())


def test_run_plays_them_as_they_are_and_a_group_is_a_complexity_label(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["run", "--world", "blocks", "--tasks", str(EXCERPT), "--agent", "builder=oracle", "--out", str(out)]
    assert main(args) == 0
    run = load_run(out)
    assert [s["task_id"] for s in run.summaries] == ["structure_008", "structure_001", "structure_003"]
    assert all(s["outcome"] == "success" for s in run.summaries)  # the oracle builds every published target
    complex_only = tmp_path / "complex"
    assert main([*args[:-1], str(complex_only), "--group", "complex"]) == 0
    assert [s["task_id"] for s in load_run(complex_only).summaries] == ["structure_003"]


def test_the_shipped_evaluation_set_plays_whole_with_the_oracle_builder(tmp_path):
    """The paper's 20 evaluation structures, shipped as published, all build with the oracle builder."""
    out = tmp_path / "run"
    args = ["run", "--world", "blocks", "--tasks", str(SHIPPED), "--agent", "builder=oracle", "--out", str(out)]
    assert main(args) == 0
    summaries = load_run(out).summaries
    assert [s["task_id"] for s in summaries] == [f"structure_{k:03d}" for k in range(1, 21)]
    assert all(s["outcome"] == "success" for s in summaries)


def test_a_damaged_entry_is_refused_naming_its_field(tmp_path, capsys):
    published = json.loads(EXCERPT.read_text(encoding="utf-8"))
    published[1]["complexity"] = "hard"
    published[2]["spans"]["0"] = [["(0,0)", "(2,2)"]]
    for k, field in ((1, "[1].complexity"), (2, "[2]")):
        broken = tmp_path / f"broken{k}.json"
        entries = [published[0], published[k]] if k == 2 else published[:2]
        broken.write_text(json.dumps(entries), encoding="utf-8")
        assert main(["run", "--world", "blocks", "--tasks", str(broken), "--out", str(tmp_path / f"r{k}")]) == 2
        err = capsys.readouterr().err
        assert str(broken) in err and (field if k == 1 else "[1]") in err
