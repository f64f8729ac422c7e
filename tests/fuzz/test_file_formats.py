"""Every file format SimLab reads, fed mutations of real files and arbitrary bytes: the loader gives a value or
a FormatError/ConfigError naming the file, never another exception; the CLI on such a file exits 0 or 2 with
no traceback and writes nothing outside the folder it was given."""

from __future__ import annotations

import contextlib
import json
import shutil
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simlab.core.errors import SimlabError
from simlab.core.recording import INDEX_FILE, RUN_FILE, load_episode, load_run
from simlab.runner.config_file import load_run_config
from simlab.testing.fuzz import mutations
from simlab.worlds import get_family
from simlab.worlds.blocks.craft_import import import_craft_log
from tests.fuzz.hostile import assert_handled

REPO = Path(__file__).resolve().parents[2]
CRAFT_LOG = REPO / "tests" / "blocks" / "fixtures" / "craft_log_small.json"
MUTATIONS = 120  # per format; the CLI sees every eighth
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def blocks_run(tmp_path_factory) -> Path:
    from simlab.cli import main

    out = tmp_path_factory.mktemp("formats") / "run"
    assert main(["run", "--episodes", "2", "--turns", "3", "--out", str(out)]) == 0
    return out


def _write(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, allow_nan=True), encoding="utf-8")
    return path


def _loads_or_refuses(load: Any, *args: Any) -> None:
    """``load(*args)`` returns, or raises a SimlabError (FormatError, ConfigError): nothing else."""
    with contextlib.suppress(SimlabError):
        load(*args)


# ---- mutations of real files ----------------------------------------------------------------------------------


def test_mutated_run_files(tmp_path, capsys, blocks_run):
    original = json.loads((blocks_run / RUN_FILE).read_text("utf-8"))
    for k, (what, mutated) in enumerate(mutations(original, seed=1, n=MUTATIONS)):
        run = tmp_path / f"r{k}"
        shutil.copytree(blocks_run, run)
        _write(run / RUN_FILE, mutated)
        try:
            _loads_or_refuses(load_run, run)
        except Exception as exc:
            raise AssertionError(f"load_run with run.json {what}: {exc!r:.300}") from exc
        if k % 8 == 0:
            assert_handled(capsys, tmp_path, ["report", run])


def test_mutated_index_lines(tmp_path, capsys, blocks_run):
    line = json.loads((blocks_run / INDEX_FILE).read_text("utf-8").splitlines()[0])
    for k, (what, mutated) in enumerate(mutations(line, seed=2, n=MUTATIONS)):
        run = tmp_path / f"r{k}"
        shutil.copytree(blocks_run, run)
        with (run / INDEX_FILE).open("a", encoding="utf-8") as f:
            f.write(json.dumps(mutated, allow_nan=True) + "\n")
        try:
            loaded = load_run(run)
        except Exception as exc:
            raise AssertionError(f"load_run with an index line {what}: {exc!r:.300}") from exc
        assert len(loaded.summaries) >= 1, f"one bad line ({what}) must not hide the good ones"
        if k % 8 == 0:
            assert_handled(capsys, tmp_path, ["report", run])


def test_mutated_episode_files(tmp_path, capsys, blocks_run):
    source = next((blocks_run / "episodes").glob("*.json"))
    original = json.loads(source.read_text("utf-8"))
    for k, (what, mutated) in enumerate(mutations(original, seed=3, n=MUTATIONS)):
        path = _write(tmp_path / f"e{k}.json", mutated)
        try:
            _loads_or_refuses(load_episode, path)
        except Exception as exc:
            raise AssertionError(f"load_episode with {what}: {exc!r:.300}") from exc
        if k % 8 == 0:
            out = tmp_path / f"e{k}.html"
            assert_handled(capsys, tmp_path, ["replay", path, "--export", "html", "--out", out], [out])


@pytest.mark.parametrize("world", ["blocks", "rooms"])
def test_mutated_task_files(tmp_path, capsys, world, blocks_run, record_rooms):
    family = get_family(world)
    run = blocks_run if world == "blocks" else record_rooms
    task = load_run(run).config["tasks"][0]
    head = {"format": "simlab.blocks.structure", "version": 1} if world == "blocks" else {}
    for k, (what, mutated) in enumerate(mutations(task, seed=4, n=MUTATIONS)):
        path = _write(tmp_path / f"t{k}.json", {**head, **mutated} if isinstance(mutated, dict) else mutated)
        try:
            _loads_or_refuses(family.tasks.load, path)
        except Exception as exc:
            raise AssertionError(f"{world} tasks.load with {what}: {exc!r:.300}") from exc
        if k % 8 == 0:
            out = tmp_path / f"out{k}"
            assert_handled(capsys, tmp_path, ["run", "--world", world, "--tasks", path, "--out", out], [out])


def test_mutated_craft_logs(tmp_path, capsys):
    original = json.loads(CRAFT_LOG.read_text("utf-8"))
    for k, (what, mutated) in enumerate(mutations(original, seed=5, n=MUTATIONS)):
        path = _write(tmp_path / f"log{k}.json", mutated)
        try:
            _loads_or_refuses(import_craft_log, path)
        except Exception as exc:
            raise AssertionError(f"import_craft_log with {what}: {exc!r:.300}") from exc
        if k % 8 == 0:
            out = tmp_path / f"out{k}"
            assert_handled(capsys, tmp_path, ["import", "craft", path, "--out", out], [out])


# ---- arbitrary bytes and text ---------------------------------------------------------------------------------

JSON_TEXT = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=12,
    ).map(lambda v: json.dumps(v, allow_nan=True)),
)


@FUZZ
@given(content=st.binary(max_size=300))
def test_any_bytes_as_an_index_line(tmp_path_factory, blocks_run, content):
    run = tmp_path_factory.mktemp("bytes") / "run"
    shutil.copytree(blocks_run, run)
    with (run / INDEX_FILE).open("ab") as f:
        f.write(content.replace(b"\n", b" ") + b"\n")
    loaded = load_run(run)
    assert len(loaded.summaries) >= 2


@FUZZ
@given(text=JSON_TEXT)
def test_any_text_as_an_episode_file(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("text") / "episode.json"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    _loads_or_refuses(load_episode, path)


TOML_TEXT = st.text(alphabet=string.printable, max_size=200) | st.sampled_from(
    [
        'world = "blocks"\nseed = "abc"\n',
        'world = ["blocks"]\n',
        "world = 5\n",
        'world = "blocks"\nagents = 3\n',
        'world = "blocks"\n[agents.builder]\nagent = 7\n',
        'world = "blocks"\n[settings]\nturns = "many"\n',
        'world = "blocks"\nsettings = [1, 2]\n',
        'world = "blocks"\ngroups = "simple"\n',
        'world = "blocks"\ntasks = "/nonexistent/place"\n',
        'world = "nowhere"\n',
        'world = "blocks"\nepisodes = -4\n',
        'world = "blocks"\n[generate]\nquestions_per_task = 3\n',
        "a = [" * 300 + "]" * 300,
        "\x00\x01",
    ]
)


@FUZZ
@given(text=TOML_TEXT)
def test_any_text_as_a_run_config(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("toml") / "run.toml"
    path.write_text(text, encoding="utf-8")
    _loads_or_refuses(load_run_config, path)


@pytest.mark.parametrize(
    "text",
    [
        'world = "blocks"\nseed = "abc"\nepisodes = 1\n',
        'world = "blocks"\nepisodes = 1\n[settings]\nturns = "many"\n',
        'world = "blocks"\nepisodes = 1\n[agents.builder]\nagent = "nosuchagent"\n',
        'world = "blocks"\nepisodes = 1\ngroups = ["hardest"]\n',
        'world = "rooms"\nepisodes = 1\n[generate]\nquestions_per_task = -2\n',
        "[[[",
    ],
)
def test_a_bad_run_config_exits_2_naming_it(tmp_path, capsys, text):
    path = tmp_path / "run.toml"
    path.write_text(text, encoding="utf-8")
    code, _err = assert_handled(capsys, tmp_path, ["run", "--config", path, "--out", tmp_path / "out"])
    assert code == 2 and not (tmp_path / "out").exists()
