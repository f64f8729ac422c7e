"""Reasoning models' private thoughts stay private: inline (<think>...</think>) or split out by the server
(reasoning_content / reasoning), a thinking model's reply gives the reasoning to reasoning events only, and
a reasoning left open is an unreadable reply, never public text. End to end against the local server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from simlab.agents.openai_agent import AgentSettings, read_completion
from simlab.agents.reasoning import split_reasoning
from simlab.core.recording import load_run
from simlab.testing.openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
SECRET = "SECRET-7731"


@pytest.mark.parametrize(
    ("text", "reasoning", "public", "unclosed"),
    [
        ("<think>plan</think>B", "plan", "B", False),
        ("  <THINK>a</Think>\n<think>b</think> hello", "a\n\nb", "hello", False),
        ("<think>cut off at the token lim", "cut off at the token lim", "", True),
        ("no reasoning here <think>x</think>", "", "no reasoning here <think>x</think>", False),
    ],
)
def test_leading_reasoning_is_split_from_the_public_part(text, reasoning, public, unclosed):
    split = split_reasoning(text)
    assert (split.reasoning, split.public, split.unclosed) == (reasoning, public, unclosed)


def test_other_tags_or_none_are_a_setting():
    assert split_reasoning("[[x]]y", ("[[", "]]")).public == "y"
    assert split_reasoning("<think>x</think>y", ()).public == "<think>x</think>y"
    assert AgentSettings.from_config("m", {"reasoning_tags": ["[[", "]]"]}).reasoning_tags == ("[[", "]]")
    with pytest.raises(ValueError, match="reasoning_tags"):
        AgentSettings.from_config("m", {"reasoning_tags": ["<think>"]})


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_a_servers_split_out_reasoning_is_read(field):
    body = {"choices": [{"message": {"content": "B", field: "my plan"}, "finish_reason": "stop"}]}
    content, response, _usage, _notes = read_completion(json.dumps(body).encode())
    assert content == "B" and response["reasoning"] == "my plan"


def thinking(body: dict) -> str:
    """Every role of the rooms world, answered the way reasoning models answer: think, then a letter."""
    return f"<think>{SECRET}: the Helper must not read this</think>A"


def play_rooms(tmp_path: Path, server: FakeOpenAIServer) -> Path:
    out = tmp_path / "run"
    args = ["run", "--world", "rooms", "--episodes", "3", "--seed", "4", "--out", str(out)]
    for role in ("answerer", "helper"):
        args += ["--agent", f"{role}=openai:fake-model", "--agent-setting", f"{role}.base_url={server.base_url}"]
        args += ["--agent-setting", f"{role}.api_key_env=SIMLAB_REASONING_KEY"]
    env = {**os.environ, "SIMLAB_REASONING_KEY": "sk-reasoning"}
    done = subprocess.run(
        [sys.executable, "main.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("field", [None, "reasoning_content"])
def test_a_thinking_model_s_reasoning_reaches_reasoning_events_only(tmp_path, field):
    with FakeOpenAIServer(thinking, reasoning_field=field) as server:
        out = play_rooms(tmp_path, server)
    run = load_run(out)
    assert SECRET not in (out / "index.jsonl").read_text()
    kinds_with_secret, reasoning_events = set(), 0
    for episode in run.episodes():
        for event in episode.events:
            if SECRET in json.dumps(event.data):
                kinds_with_secret.add(event.kind)
            reasoning_events += event.kind == "reasoning" and SECRET in json.dumps(event.data)
        assert episode.summary["metrics"]["accuracy"] in (0.0, 1.0)
        assert SECRET not in json.dumps(episode.summary)
    assert kinds_with_secret == {"reasoning"} and reasoning_events >= 6  # every message and every answer


def test_a_reasoning_left_open_is_unreadable_not_public(tmp_path):
    with FakeOpenAIServer(lambda body: f"<think>{SECRET} and then the limit came") as server:
        out = play_rooms(tmp_path, server)
    for episode in load_run(out).episodes():
        public = [e for e in episode.events if e.kind != "reasoning"]
        assert not any(SECRET in json.dumps(e.data) for e in public)
        assert any(SECRET in json.dumps(e.data) for e in episode.events if e.kind == "reasoning")  # kept, privately
        assert episode.summary["outcome"] == "abort"  # no answer could be read
