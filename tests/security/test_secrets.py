"""Credentials never reach a run folder: refused in every setting a user gives, scrubbed from whatever slips in
(an imported log's key, a key in a task), recognised by name and by look."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from simlab.cli import main
from simlab.core.recording import dumps
from simlab.core.secrets import (
    REDACTED,
    looks_secret,
    name_is_secret,
    scrub,
    scrub_text,
    secret_places,
    value_is_secret,
)

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-live-THIS-MUST-NEVER-BE-WRITTEN-0123456789"


def _files_hold(folder: Path, text: str) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and text in p.read_text("utf-8", errors="replace")]


@pytest.mark.parametrize(
    "name",
    ["api_key", "apiKey", "x-api-key", "auth", "auth_header", "bearer", "bearerToken", "password", "client_secret"],
)
def test_credential_names(name):
    assert name_is_secret(name)


@pytest.mark.parametrize("name", ["api_key_env", "max_tokens", "prompt_tokens", "keyboard", "monkey", "base_url"])
def test_names_that_are_not_credentials(name):
    assert not name_is_secret(name)


@pytest.mark.parametrize(
    "value",
    [
        KEY,
        "Bearer abcdefghijklmnop",
        "http://alice:hunter2@example.org/v1",
        "https://h/v1?api_key=123",
        "eyJhbGciOiJI.eyJzdWIiOiIx.sig",
    ],
)
def test_credential_values_are_found_and_scrubbed(value):
    assert value_is_secret(value)
    assert secret_places({"a": {"b": [value]}}) == ["a.b[0]"]
    cleaned = scrub({"a": {"b": [value]}})["a"]["b"][0]
    assert REDACTED in cleaned and "hunter2" not in cleaned and "123" not in cleaned.split("=")[-1]


FRAGMENTS = (
    *("sk-", "SK-", "\u017fk-", "Bearer ", "basic\t", "eyJ", ".eyJ", "AKIA", "ASIA", "ghp_", "github_pat_", "xoxb_"),
    *("HF_", "://", "http://", "alice:", "@", "/", "?", "&", "api-key=", "token=", "sig=", "=", " ", "\n", "x"),
    *("0123456789", "abcdefgh", "ABCDEFGHIJKLMNOP", "\u0130", "\u0131", "\u212a", "\u00e9", "\u2192", "_", "-", "."),
)


def test_the_quick_look_answers_as_the_full_search_does():
    """looks_secret tries the pattern only where a match can start: the same answer on any text, the case
    folds of the IGNORECASE pattern (ſk-, the Kelvin sign) and word boundaries before those places included."""
    r = random.Random(0)
    texts = ["".join(r.choice(FRAGMENTS) for _ in range(r.randint(1, 14))) for _ in range(20_000)]
    found = [value_is_secret(text) for text in texts]
    assert [looks_secret(text) for text in texts] == found
    assert 2_000 < sum(found) < 18_000  # both answers are well represented
    assert not looks_secret("xsk-0123456789") and looks_secret("x sk-0123456789")


@pytest.mark.parametrize(
    "value",
    [
        {"raw": ({"password": "hunter2hunter2"},)},  # a tuple is written as an array: its keys are looked at
        {"raw": [{"text": "the link ends in ?token=abcdef123"}]},  # a credential in a query, no scheme before it
        {"base_url": "http://127.0.0.1:8000/v1", "tasks": [{"id": "t"}] * 500, "x": "http://u:hunter2@h/"},
    ],
)
def test_recordings_are_scrubbed_wherever_the_credential_sits(value):
    text = dumps(value)
    assert REDACTED in text and "hunter2" not in text and "abcdef123" not in text


def test_known_keys_are_scrubbed_from_free_text():
    text = f"401: bad key {KEY}; Authorization: Bearer {KEY}; your key ends in {KEY[-8:]}"
    cleaned = scrub_text(text, [KEY])
    assert KEY not in cleaned and cleaned.startswith("401: bad key [redacted]; Authorization: Bearer [redacted];")


@pytest.mark.parametrize(
    ("flag", "where"),
    [
        ("builder.auth=letmein", "builder auth"),
        ("builder.bearer=abc", "builder bearer"),
        ('builder.extra={"api_key": "x"}', "builder extra.api_key"),
        ("builder.base_url=http://user:pw@127.0.0.1:9/v1", "builder base_url"),
        (f"director.model_note={KEY}", "director model_note"),
        ("builder.api_key_env=sk-this-is-a-key-not-a-name", "builder api_key_env"),
    ],
)
def test_credentials_in_agent_settings_are_refused_before_anything_is_written(flag, where, tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["run", "--episodes", "1", "--turns", "1", "--agent-setting", flag, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and f"agent setting {where}" in err and "credential" in err
    assert not out.exists()


def test_credentials_in_a_run_config_file_are_refused(tmp_path, capsys):
    config = tmp_path / "run.toml"
    config.write_text(
        'world = "blocks"\nepisodes = 1\n[agents.builder]\nagent = "scripted"\nextra = { api_key = "abc" }\n',
        encoding="utf-8",
    )
    code = main(["run", "--config", str(config), "--out", str(tmp_path / "run")])
    assert code == 2 and "extra.api_key" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_world_setting_that_looks_like_a_key_is_refused(tmp_path, capsys):
    code = main(
        ["run", "--episodes", "1", "--set", f"start_board={json.dumps({'token': KEY})}", "--out", str(tmp_path / "r")]
    )
    assert code == 2 and "credential" in capsys.readouterr().err


def test_a_key_inside_an_imported_craft_log_never_reaches_the_run(tmp_path, capsys):
    log = json.loads((REPO / "tests" / "blocks" / "fixtures" / "craft_log_small.json").read_text("utf-8"))
    log["experiment_info"]["api_key"] = KEY
    log["experiment_info"]["endpoint"] = f"https://user:{KEY}@api.example.org/v1"
    log["games"][0]["turns"][0]["director_responses"]["D2"]["internal_thinking"] += f" my key is {KEY}"
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    assert main(["import", "craft", str(path), "--out", str(tmp_path / "run")]) == 0
    assert _files_hold(tmp_path / "run", KEY) == []
    assert _files_hold(tmp_path / "run", REDACTED)  # it was there, and was scrubbed
