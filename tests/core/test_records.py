"""The typed records at the file boundary and their published JSON Schemas, read by a tool that is not SimLab."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from simlab.core.errors import FormatError
from simlab.core.recording import INDEX_FILE, RUN_FILE, load_episode, load_run
from simlab.core.records import SCHEMAS, check_summary, json_schema
from simlab.runner.demo import DEMO_RUN

DOCS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_published_schemas_are_the_models(name):
    """Regenerate with `python main.py schema --out docs/schemas` when this fails."""
    published = json.loads((DOCS / f"{name}.schema.json").read_text(encoding="utf-8"))
    assert published == json_schema(name)


def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads((DOCS / f"{name}.schema.json").read_text(encoding="utf-8")))


def test_a_plain_json_schema_validator_reads_the_demo_run():
    _validator("run").validate(json.loads((DEMO_RUN / RUN_FILE).read_text(encoding="utf-8")))
    lines = (DEMO_RUN / INDEX_FILE).read_text(encoding="utf-8").splitlines()
    for line in lines:
        _validator("index-line").validate(json.loads(line))
    episode = json.loads((DEMO_RUN / json.loads(lines[0])["file"]).read_text(encoding="utf-8"))
    _validator("episode").validate(episode)


def test_a_rooms_run_follows_the_schemas_too(record_rooms):
    for line in (record_rooms / INDEX_FILE).read_text(encoding="utf-8").splitlines():
        _validator("index-line").validate(json.loads(line))
        _validator("episode").validate(json.loads((record_rooms / json.loads(line)["file"]).read_text("utf-8")))


def test_the_schemas_refuse_what_simlab_refuses():
    line = json.loads((DEMO_RUN / INDEX_FILE).read_text(encoding="utf-8").splitlines()[0])
    with pytest.raises(jsonschema.ValidationError, match="'won' is not one of"):
        _validator("index-line").validate({**line, "outcome": "won"})


def test_an_index_line_with_a_bad_field_is_a_problem_naming_it(tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(DEMO_RUN, run)
    lines = (run / INDEX_FILE).read_text(encoding="utf-8").splitlines()
    bad = {**json.loads(lines[1]), "turns": "twenty"}
    (run / INDEX_FILE).write_text("\n".join([lines[0], json.dumps(bad), *lines[2:]]) + "\n", encoding="utf-8")
    loaded = load_run(run)
    assert len(loaded.summaries) == len(lines) - 1
    assert len(loaded.problems) == 1 and "line 2 field 'turns'" in loaded.problems[0]


def test_a_run_file_missing_its_tasks_names_the_field(tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(DEMO_RUN, run)
    obj = json.loads((run / RUN_FILE).read_text(encoding="utf-8"))
    del obj["config"]["tasks"]
    (run / RUN_FILE).write_text(json.dumps(obj), encoding="utf-8")
    with pytest.raises(FormatError, match=r"run.json, field 'config.tasks': Field required"):
        load_run(run)


def test_an_episode_file_with_an_unknown_event_kind_names_the_event(tmp_path):
    path = DEMO_RUN / json.loads((DEMO_RUN / INDEX_FILE).read_text(encoding="utf-8").splitlines()[0])["file"]
    obj = json.loads(path.read_text(encoding="utf-8"))
    obj["events"][3]["kind"] = "telepathy"
    (tmp_path / "e.json").write_text(json.dumps(obj), encoding="utf-8")
    with pytest.raises(FormatError, match=r"field 'events.3.kind'"):
        load_episode(tmp_path / "e.json")


def test_a_world_summary_without_its_turns_is_refused_naming_the_field():
    good = {"world": "w", "task_id": "t", "outcome": "success", "score": 1.0, "turns": 3, "errors": 0, "metrics": {}}
    check_summary(good, "w")
    with pytest.raises(ValueError, match="w: summary field 'turns': Field required"):
        check_summary({k: v for k, v in good.items() if k != "turns"}, "w")
    with pytest.raises(ValueError, match="field 'outcome'"):
        check_summary({**good, "outcome": "draw"}, "w")
