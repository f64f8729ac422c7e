"""One reading path for every file SimLab reads (simlab/core/reading.py), attacked the ways issue 26 found:
a link to a device, a FIFO, a socket, a 100,000-digit integer, nesting 50,000 deep, bytes that are not
UTF-8, binary TOML, an unknown format or a newer version. Each is refused with exit 2 naming the file, for
every kind of file and every world family; one line of an index or a judgments file is instead reported
(naming the file and the line) while the rest is read, as documented. Nothing blocks and memory stays
bounded: a FIFO or a device is refused by its name, before it is opened."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from simlab.core import reading
from simlab.core.editing import EditError
from simlab.core.errors import FormatError
from simlab.core.plugins import discover
from simlab.core.recording import INDEX_FILE, RUN_FILE
from simlab.testing.fuzz import (
    HANG_GUARD_S,
    HOSTILE_JSON,
    PLANTED,
    plant,
    set_field,
    spoil,
    task_file_fuzz_test,
    within_guard,
)
from simlab.worlds import family_names, get_family, open_document
from tests.fuzz.hostile import run_cli

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "blocks" / "fixtures"
BIG = "1" * 100_000
DEEP = "[" * 50_000 + "]" * 50_000
SAYS = {  # a word the refusal of each of HOSTILE_JSON must say
    "huge integer": "30 digits",
    "deep nesting": "nested at most 100",
    "not UTF-8": "UTF-8",
    "beyond a float": "finite",
}
FOUND_WHILE_PARSING = ("huge integer", "beyond a float")  # their field is named too
SB_SO = {
    "simple": {
        "simple": {
            "2": {"bvs": [{"shapes": ["bridge-v", "screw"], "colors": ["green", "yellow"], "x": [5, 5], "y": [3, 3]}]}
        }
    }
}
GENERATE_FLAGS = {"rooms": ["--questions-per-task", "1", "--no-images"]}


# ---- helpers ------------------------------------------------------------------------------------------------


def guarded(capsys: pytest.CaptureFixture[str], argv: list[Any]) -> tuple[int, str, str]:
    """``main(argv)`` in a daemon thread: a regression that blocks opening a FIFO fails, never hangs."""
    done: dict[str, Any] = {}
    error = within_guard(lambda: done.update(result=run_cli(capsys, argv)), f"{argv}")
    if error is not None:
        raise error
    return done["result"]


def refusal(kind: str) -> str:
    """What the refusal of a file that is a :data:`PLANTED` ``kind`` says (a loop may be met while the path's
    links are followed, before the file is asked)."""
    return "a loop of symbolic links" if kind == "link loop" else "expected a regular file"


def refused(capsys: pytest.CaptureFixture[str], argv: list[Any], file: Path, *words: str) -> str:
    """``argv`` exits 2 with an error naming ``file`` and saying each of ``words``; returns that line."""
    code, out, err = guarded(capsys, argv)
    assert code == 2, f"exit {code} for {argv}:\n{err[-1500:]}"
    assert "Traceback" not in err + out and "internal error" not in err, err[-1500:]
    line = err.strip().splitlines()[-1]
    assert line.startswith("error:") and str(file) in line, err[-1500:]
    for word in words:
        assert word in line, line[-1500:]
    return line


@pytest.fixture
def planted() -> Iterator[Callable[[Path, str], Path]]:
    """``planted(path, kind)``: :func:`plant`, its sockets closed after the test."""
    sockets = []

    def make(path: Path, kind: str) -> Path:
        sockets.append(plant(path, kind))
        return path

    yield make
    for sock in sockets:
        if sock is not None:
            sock.close()


# ---- inputs ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``generated(world)``: a folder of one task set of ``world`` as ``generate`` writes it (made once)."""
    from simlab.cli import main

    made: dict[str, Path] = {}

    def make(world: str) -> Path:
        if world not in made:
            out = tmp_path_factory.mktemp(f"tasks-{world}") / "tasks"
            assert main(["generate", world, "--n", "1", "--out", str(out), *GENERATE_FLAGS.get(world, [])]) == 0
            made[world] = out
        return made[world]

    return make


@pytest.fixture
def run_copy(tmp_path: Path, record: Callable[..., Path]) -> Path:
    """A recorded blocks run, copied to be spoiled, with one judgments line."""
    run = tmp_path / "run"
    shutil.copytree(record(turns=3), run)
    episode_id = json.loads((run / INDEX_FILE).read_text("utf-8").splitlines()[0])["episode_id"]
    (run / "judgments").mkdir()
    (run / "judgments" / f"{episode_id}.jsonl").write_text(json.dumps(judgment(episode_id)) + "\n", "utf-8")
    return run


def judgment(episode_id: str) -> dict[str, Any]:
    """A judgment line as ``judge`` writes one."""
    return {
        "format": "simlab.judgment", "version": 1, "judge": "craft-ps", "model": "m", "episode_id": episode_id,
        "turn": 1, "subject": "", "run": 0, "prompt_sha256": "0" * 64, "labels": {}, "values": {}, "reasons": {},
        "unreadable": None, "reply": "", "call": {},
    }  # fmt: skip


@dataclass(frozen=True)
class Recording:
    """A file of a run folder, and the command that reads it."""

    name: str
    file: Callable[[Path], Path]
    argv: Callable[[Path], list[Any]]


def _episode(run: Path) -> Path:
    return next((run / "episodes").glob("*.json"))


def _judgments(run: Path) -> Path:
    return next((run / "judgments").glob("*.jsonl"))


RECORDINGS = [
    Recording("run.json", lambda run: run / RUN_FILE, lambda run: ["report", run]),
    Recording("episode", _episode, lambda run: ["replay", run, "--export", "html", "--out", run.parent / "t.html"]),
    Recording("index", lambda run: run / INDEX_FILE, lambda run: ["report", run]),
    Recording("judgments", _judgments, lambda run: ["report", run]),
]


@dataclass(frozen=True)
class Import:
    """A file another tool wrote, copied in, and the command that imports it."""

    name: str
    make: Callable[[Path], Path]
    argv: Callable[[Path], list[Any]]


def _copy(source: Path) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        return Path(shutil.copyfile(source, folder / "log.json"))

    return make


def _sb_so(folder: Path) -> Path:
    path = folder / "sb_so_test.json"
    path.write_text(json.dumps(SB_SO), encoding="utf-8")
    return path


def _run_toml(folder: Path) -> Path:
    path = folder / "run.toml"
    path.write_text('world = "blocks"\nepisodes = 1\n[settings]\nturns = 2\n', encoding="utf-8")
    return path


IMPORTS = [
    Import("craft run log", _copy(FIXTURES / "craft_log_small.json"), lambda f: ["import", "craft", f]),
    Import(
        "craft per-turn log",
        _copy(next((FIXTURES / "craft_turn_log").glob("*.json"))),
        lambda f: ["import", "craft", f],
    ),
    Import("clembench targets", _sb_so, lambda f: ["import", "clembench", f]),
    Import("clembench as tasks", _sb_so, lambda f: ["run", "--world", "boards", "--tasks", f, "--episodes", "1"]),
]


def _top_files(folder: Path) -> list[Path]:
    """The JSON files a task folder holds at its top (its index or its tasks)."""
    return sorted(folder.glob("*.json"))


# ---- task files of every family -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", PLANTED)
@pytest.mark.parametrize("world", family_names())
def test_a_task_file_that_is_not_a_regular_file_is_refused_by_name(tmp_path, capsys, planted, generated, world, kind):
    for top in _top_files(generated(world)):
        folder = tmp_path / f"tasks-{top.stem}"
        shutil.copytree(generated(world), folder)
        spoiled = planted(folder / top.name, kind)
        for tasks in (folder, spoiled):
            argv = ["run", "--world", world, "--tasks", tasks, "--out", tmp_path / "out"]
            refused(capsys, argv, spoiled, refusal(kind))
        assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("hostile", HOSTILE_JSON)
@pytest.mark.parametrize("world", family_names())
def test_a_task_file_with_a_hostile_value_is_refused_naming_it(tmp_path, capsys, generated, world, hostile):
    value, word = HOSTILE_JSON[hostile], SAYS[hostile]
    for top in _top_files(generated(world)):
        folder = tmp_path / f"tasks-{top.stem}"
        shutil.copytree(generated(world), folder)
        spoiled = spoil(folder / top.name, value)
        argv = ["run", "--world", world, "--tasks", folder, "--out", tmp_path / "out"]
        refused(capsys, argv, spoiled, word)


@pytest.mark.parametrize("world", family_names())
def test_every_family_loader_refuses_hostile_task_files(tmp_path, generated, world):
    assert task_file_fuzz_test(get_family(world), generated(world), tmp_path) >= len(PLANTED) + len(HOSTILE_JSON)


VERSIONS = {"newer version": (99, "newer than this SimLab reads"), "version as text": ("1", "expected an integer")}


@pytest.mark.parametrize("change", [*VERSIONS, "another format"])
@pytest.mark.parametrize("world", family_names())
def test_a_task_file_of_another_format_or_a_newer_version_is_refused(tmp_path, capsys, generated, world, change):
    """Every object of a task folder that says its format (at the top of a file, or a rooms question's
    scene) is checked: refused when another format or a version this SimLab does not read."""
    spoiled_any = False
    for file in sorted(generated(world).rglob("*.json")):
        data = json.loads(file.read_text("utf-8"))
        places = [()] if "format" in data else []
        places += [(key,) for key, value in data.items() if isinstance(value, dict) and "format" in value]
        for place in places:
            folder = tmp_path / f"{file.stem}-{len(place)}"
            shutil.copytree(generated(world), folder)
            spoiled = folder / file.relative_to(generated(world))
            if change == "another format":
                set_field(spoiled, place, "format", "simlab.something-else")
                word = "field 'format'"
            else:
                set_field(spoiled, place, "version", VERSIONS[change][0])
                word = VERSIONS[change][1]
            refused(capsys, ["run", "--world", world, "--tasks", folder, "--out", tmp_path / "out"], spoiled, word)
            spoiled_any = True
    assert spoiled_any, f"{world}: no task file says its format and version"


# ---- recordings: run.json, episodes, the index, judgments ------------------------------------------------------


@pytest.mark.parametrize("kind", PLANTED)
@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda r: r.name)
def test_a_recording_that_is_not_a_regular_file_is_refused_by_name(capsys, planted, run_copy, recording, kind):
    spoiled = planted(recording.file(run_copy), kind)
    refused(capsys, recording.argv(run_copy), spoiled, refusal(kind))


@pytest.mark.parametrize("hostile", HOSTILE_JSON)
@pytest.mark.parametrize("recording", RECORDINGS[:2], ids=lambda r: r.name)
def test_a_recording_with_a_hostile_value_is_refused_naming_the_field(capsys, run_copy, recording, hostile):
    value, word = HOSTILE_JSON[hostile], SAYS[hostile]
    spoiled = spoil(recording.file(run_copy), value)
    field = ["field 'hostile'"] if hostile in FOUND_WHILE_PARSING else []
    refused(capsys, recording.argv(run_copy), spoiled, word, *field)


@pytest.mark.parametrize("change", [*VERSIONS, "another format"])
@pytest.mark.parametrize("recording", RECORDINGS[:2], ids=lambda r: r.name)
def test_a_recording_of_another_format_or_a_newer_version_is_refused(capsys, run_copy, recording, change):
    file = recording.file(run_copy)
    if change == "another format":
        set_field(file, (), "format", "simlab.something-else")
    else:
        set_field(file, (), "version", VERSIONS[change][0])
    word = "field 'format'" if change == "another format" else VERSIONS[change][1]
    refused(capsys, recording.argv(run_copy), file, word)


@pytest.mark.parametrize("hostile", [*HOSTILE_JSON, "newer version"])
@pytest.mark.parametrize("recording", RECORDINGS[2:], ids=lambda r: r.name)
def test_a_hostile_line_is_reported_naming_file_and_line_and_the_rest_is_read(capsys, run_copy, recording, hostile):
    """An index or judgments line is a problem of its own, as documented (the rest of the run opens): the
    report goes on (exit 0) and warns, naming the file, the line and what was expected."""
    file = recording.file(run_copy)
    good = file.read_bytes()
    first = json.loads(good.splitlines()[0])
    if hostile == "newer version":
        line, word = json.dumps({**first, "version": 99}).encode(), "newer than this SimLab reads"
    else:
        value, word = HOSTILE_JSON[hostile], SAYS[hostile]
        line = json.dumps({**first, "hostile": "@@"}).encode().replace(b'"@@"', value)
    file.write_bytes(good + line + b"\n")
    code, out, err = guarded(capsys, recording.argv(run_copy))
    assert code == 0 and "Traceback" not in err, err[-1500:]
    lines = len(good.splitlines()) + 1
    warning = next(w for w in err.splitlines() if w.startswith("warning:") and str(file) in w)
    assert f"line {lines}" in warning and word in warning, warning
    assert out.strip(), "the rest of the run is still reported"


# ---- files other tools wrote, and run configs ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", PLANTED)
@pytest.mark.parametrize("source", IMPORTS, ids=lambda s: s.name)
def test_an_import_that_is_not_a_regular_file_is_refused_by_name(tmp_path, capsys, planted, source, kind):
    spoiled = planted(source.make(tmp_path), kind)
    refused(capsys, [*source.argv(spoiled), "--out", tmp_path / "out"], spoiled, refusal(kind))
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("source", "hostile"),
    [
        pytest.param(source, hostile, id=f"{source.name}-{hostile}")
        for source in IMPORTS
        for hostile in HOSTILE_JSON
        if not (hostile == "beyond a float" and source.name.startswith("craft"))  # CRAFT writes Infinity: read
    ],
)
def test_an_import_with_a_hostile_value_is_refused_naming_it(tmp_path, capsys, source, hostile):
    value, word = HOSTILE_JSON[hostile], SAYS[hostile]
    spoiled = spoil(source.make(tmp_path), value)
    refused(capsys, [*source.argv(spoiled), "--out", tmp_path / "out"], spoiled, word)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", PLANTED)
def test_a_run_config_that_is_not_a_regular_file_is_refused_by_name(tmp_path, capsys, planted, kind):
    spoiled = planted(tmp_path / "run.toml", kind)
    refused(capsys, ["run", "--config", spoiled, "--out", tmp_path / "out"], spoiled, refusal(kind))


@pytest.mark.parametrize(
    ("tail", "word"),
    [
        (b"seed = " + BIG.encode(), "line 3: expected a number of at most 64 bits"),
        (b"seed = 0x" + b"f" * 40, "key 'seed': expected an integer of at most 64 bits"),
        (b"hostile = " + b"[" * 30_000 + b"]" * 30_000, "line 3: expected arrays and tables nested at most 100"),
        (b"hostile = " + b"{a = " * 30_000 + b"1" + b"}" * 30_000, "nested at most 100"),
        (b"[" + b"a." * 20_000 + b"b]", "line 3: expected keys of at most 100 dotted parts"),
        (b'"a".' * 100_000 + b"b = 1", "line 3: expected keys of at most 100 dotted parts"),  # 40 GB to parse
        (b'hostile = "caf\xe9"', "expected UTF-8 text"),
        (b"hostile = 1\x00\x01\x02\xff\xfe", "line 3 column 12: expected TOML text, found the control byte 0x00"),
        (b"hostile = inf", "key 'hostile': expected a finite number"),
    ],
    ids=[
        *("huge integer", "huge hex", "deep arrays", "deep tables", "deep dotted keys", "quoted dotted keys"),
        *("not UTF-8", "binary", "inf"),
    ],
)
def test_a_hostile_run_config_is_refused_naming_the_line_or_key(tmp_path, capsys, tail, word):
    path = _run_toml(tmp_path)
    path.write_bytes(path.read_bytes().replace(b"[settings]", tail + b"\n[settings]"))
    refused(capsys, ["run", "--config", path, "--out", tmp_path / "out"], path, word)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", [DEEP, BIG, "1e400", "NaN"], ids=["deep", "huge integer", "1e400", "NaN"])
def test_a_hostile_set_value_is_refused(tmp_path, capsys, value):
    code, _out, err = guarded(capsys, ["run", "--set", f"turns={value}", "--out", tmp_path / "out"])
    assert code == 2 and err.startswith("error:") and "internal error" not in err, err[-500:]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("url", ["::::", "http://[::1", "localhost:8000", "ftp://example.com/v1", "http://h\n/v1"])
def test_an_unusable_base_url_is_refused_naming_the_setting(tmp_path, capsys, monkeypatch, url):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    argv = ["run", "--world", "boards", "--episodes", "1", "--agent", "programmer=openai:m"]
    code, _out, err = guarded(capsys, [*argv, "--agent-setting", f"programmer.base_url={url}", "--out", tmp_path / "o"])
    assert code == 2 and "agent setting 'base_url'" in err and "internal error" not in err, err[-500:]
    assert not (tmp_path / "o").exists()


# ---- plugin manifests and editor documents (autosaves are opened the same way) -----------------------------------


@pytest.mark.parametrize(
    "content",
    [
        b"name = " + BIG.encode(),
        b"name = " + b"[" * 30_000,
        b'name = "x"\n\x00\x00',
        b'name = "\xff"',
        "fifo",
        "device",
    ],
    ids=["huge integer", "deep", "binary", "not UTF-8", "fifo", "device"],
)
def test_a_hostile_plugin_manifest_is_reported_and_the_others_still_load(tmp_path, planted, content):
    manifest = tmp_path / "plugins" / "bad" / "plugin.toml"
    if isinstance(content, bytes):
        manifest.parent.mkdir(parents=True)
        manifest.write_bytes(content)
    else:
        planted(manifest, content)
    found: dict[str, Any] = {}
    assert within_guard(lambda: found.update(registry=discover(tmp_path / "plugins", False)), "discover") is None
    registry = found["registry"]
    assert "expected" in registry.problems[str(manifest)] and "openai" in registry.plugins


def _editor_files(generated: Callable[[str], Path]) -> list[tuple[str, Path]]:
    """(family, a file its editor opens) for every family with an editor."""
    out = []
    for world in family_names():
        kind = get_family(world).load_editor()
        if kind is None:
            continue
        folder = generated(world)
        out.append((world, next(p for p in sorted(folder.rglob("*.json")) if kind.can_open(p))))
    return out


@pytest.mark.parametrize("hostile", [*PLANTED, *HOSTILE_JSON])
def test_an_editor_document_or_autosave_that_is_hostile_is_refused_naming_it(tmp_path, planted, generated, hostile):
    for world, source in _editor_files(generated):
        path = tmp_path / world / source.name
        path.parent.mkdir()
        if hostile in PLANTED:
            planted(path, hostile)
        else:
            spoil(Path(shutil.copyfile(source, path)), HOSTILE_JSON[hostile])
        kind = get_family(world).load_editor()
        assert kind is not None
        for open_ in (open_document, kind.open):  # `edit FILE`, and an autosave being restored
            error = within_guard(lambda o=open_, p=path: o(p), f"{world}: opening {path}")
            assert isinstance(error, EditError) and str(path) in str(error), f"{world} {open_}: {error!r}"
            if hostile not in PLANTED:
                assert SAYS[hostile] in str(error), str(error)


# ---- the reader itself: bounded memory, bounded reads ---------------------------------------------------------


def test_a_file_is_read_to_its_bound_and_no_further_even_when_stat_says_it_is_small(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_bytes(b"[" + b"0," * 600_000 + b"0]")
    read: list[int] = []
    real_read, real_fstat = os.read, os.fstat

    def counting_read(fd: int, n: int) -> bytes:
        data = real_read(fd, n)
        read.append(len(data))
        return data

    def lying_fstat(fd: int) -> os.stat_result:  # a file that grows after it was asked, or a size stat misreports
        info = real_fstat(fd)
        return os.stat_result((info.st_mode, *info[1:6], 0, *info[7:]))

    monkeypatch.setattr(reading.os, "read", counting_read)
    monkeypatch.setattr(reading.os, "fstat", lying_fstat)
    with pytest.raises(reading.LimitError, match="at most 1 MiB"):
        reading.read_json(path, max_bytes=2**20)
    assert sum(read) == 2**20 + 1


def test_a_line_longer_than_its_bound_is_cut_and_the_next_lines_still_come(tmp_path):
    path = tmp_path / "index.jsonl"
    path.write_bytes(b'{"a": 1}\n' + b"x" * 50_000 + b"\n" + b'{"b": 2}\n')
    lines = list(reading.read_lines(path, max_line=1_000))
    assert [(n, len(line)) for n, line in lines] == [(1, 9), (2, 1_001), (3, 9)]
    with pytest.raises(reading.LimitError, match="at most 20,000 bytes"):
        list(reading.read_lines(path, max_line=1_000, max_bytes=20_000))


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('{"a": [1, {"b": ' + BIG + "}]}", "field 'a[1].b'"),
        ('{"a": [1, 1e999]}', "field 'a[1]'"),
        ('{"a": {"b": NaN}}', "field 'a.b'"),
        ('{"a": -1234567890123456789012345678901}', "field 'a'"),
    ],
)
def test_a_refused_number_names_its_field(text, field):
    with pytest.raises(reading.LimitError, match=field.replace("[", r"\[").replace("]", r"\]")) as caught:
        reading.parse_json(text, "f.json", "line 3")
    assert str(caught.value).startswith(f"f.json, line 3 {field}: expected")


@pytest.mark.parametrize(
    "text",
    [
        "[" * 101 + "]" * 101,
        '{"a": ' * 200 + "1" + "}" * 200,
        '["\\\\", ' + "[" * 101 + "]" * 101 + "]",  # an escaped backslash does not hide the nesting after it
        "[" * 100_000,  # never closed: a parser recurses before it finds out
    ],
)
def test_json_nested_past_the_bound_is_refused_before_parsing(text):
    with pytest.raises(reading.LimitError, match="nested at most 100 levels"):
        reading.parse_json(text, "f.json")


@pytest.mark.parametrize(
    "text",
    ['["' + "[" * 5_000 + '"]', '["\\"' + "{" * 5_000 + '"]', "[" * 100 + "]" * 100, '{"a": "]]]]' + "[" * 150 + '"}'],
)
def test_brackets_inside_strings_are_not_nesting(text):
    assert reading.parse_json(text, "f.json") == json.loads(text)


def test_a_device_is_refused_in_a_child_with_little_memory(tmp_path):
    """The CLI under an address-space limit: /dev/zero and /dev/urandom behind links are refused by name for
    a task file, a run config and a CRAFT log, where they used to be read until memory ran out."""
    child = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))\n"
        "from simlab.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    for device in ("/dev/zero", "/dev/urandom"):
        link = tmp_path / f"{Path(device).name}.json"
        link.symlink_to(device)
        for argv in (
            ["import", "craft", link, "--out", tmp_path / "o"],
            ["run", "--config", link, "--out", tmp_path / "o"],
            ["run", "--world", "boards", "--tasks", link, "--out", tmp_path / "o"],
        ):
            done = subprocess.run(
                [sys.executable, "-c", child, *map(str, argv)],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=HANG_GUARD_S,
            )
            assert done.returncode == 2 and "character device" in done.stderr, done.stderr[-800:]


def test_check_file_never_opens_what_it_refuses(tmp_path, planted, monkeypatch):
    paths = [planted(tmp_path / kind, kind) for kind in PLANTED]
    opened: list[str] = []
    monkeypatch.setattr(reading.os, "open", lambda *a, **k: opened.append(str(a[0])) or -1)
    for path in paths:
        with pytest.raises(FormatError, match="expected a regular file, and this is"):
            reading.read_bytes(path)
    assert opened == []
