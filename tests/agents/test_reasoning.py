"""Reasoning models' private thoughts stay private: inline (<think>...</think>) or split out by the server
(reasoning_content / reasoning), a thinking model's reply gives the reasoning to reasoning events only, in
every role of every family, and a reasoning left open is an unreadable reply, never public text. End to end
through the command line against the local server, with replies each role can read."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from simlab.agents.openai_agent import AgentSettings, read_completion
from simlab.agents.reasoning import split_reasoning
from simlab.core.recording import load_run
from simlab.testing.openai_server import FakeOpenAIServer, last_user_text, system_text

ROOT = Path(__file__).resolve().parents[2]
SECRET = "SECRET-7731"


@pytest.mark.parametrize(
    ("text", "reasoning", "public", "unclosed"),
    [
        ("<think>plan</think>B", "plan", "B", False),
        ("  <THINK>a</Think>\n<think>b</think> hello", "a\n\nb", "hello", False),
        ("<think>cut off at the token lim", "cut off at the token lim", "", True),
        ("Sure. <think>x</think> B", "x", "Sure. B", False),  # wherever a block stands
        ("B\n<think>x</think>", "x", "B", False),
        ("< think >x</ think >B", "x", "B", False),  # loosely written tags
        ('<think type="plan">x</think>B', "x", "B", False),
        ("<thinking>x</thinking>B", "x", "B", False),
        ("<think>a<think>x</think>b</think>B", "a<think>x</think>b", "B", False),  # nested
        ("x</think>B", "x", "B", False),  # the opening tag was in the prompt's template
        ("<think>a</think>B<think>cut", "a\n\ncut", "", True),
        ("a < b and c > d", "", "a < b and c > d", False),
    ],
)
def test_reasoning_is_split_from_the_public_part(text, reasoning, public, unclosed):
    split = split_reasoning(text)
    assert (split.reasoning, split.public, split.unclosed) == (reasoning, public, unclosed)


def test_other_tags_or_none_are_a_setting():
    assert split_reasoning("[[x]]y", ("[[", "]]")).public == "y"
    assert split_reasoning("a ## x ## b", ("##", "##")) == split_reasoning("a [[ x ]] b", ("[[", "]]"))
    assert split_reasoning("<think>x</think>y", ()).public == "<think>x</think>y"
    assert AgentSettings.from_config("m", {"reasoning_tags": ["[[", "]]"]}).reasoning_tags == ("[[", "]]")
    with pytest.raises(ValueError, match="reasoning_tags"):
        AgentSettings.from_config("m", {"reasoning_tags": ["<think>"]})


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_a_servers_split_out_reasoning_is_read(field):
    body = {"choices": [{"message": {"content": "B", field: "my plan"}, "finish_reason": "stop"}]}
    content, response, _usage, _notes = read_completion(json.dumps(body).encode())
    assert content == "B" and response["reasoning"] == "my plan"


PIN = re.compile(r"Your PIN is (\d+)")
CANDIDATE = re.compile(r"^(?:PLACE|REMOVE):\S+", re.MULTILINE)
ACTIONS = re.compile(r"Possible actions \(reply with exact names, one per line\):\n(.+)")


def public_answer(body: dict) -> str:
    """A reply every role of every family can read, picked by the role's system prompt."""
    system, user = system_text(body), last_user_text(body)
    if "You are director" in system:
        return "<message>Put a small red block in the far left cell.</message>"
    if "You are the builder" in system:
        found = CANDIDATE.search(user)
        return f"{found.group(0)}:CONFIRM:the directors agree" if found else "CLARIFY: which block first?"
    if "You are the Robot" in system:
        return '{"status": "code", "details": "put(board, \'washer\', \'red\', 1, 1)"}'
    if "You are the Programmer" in system:
        return "Place a red washer in row 1, column 1."
    if "You are the solver" in system:
        found = ACTIONS.search(user)
        return found.group(1) if found and len(body["messages"]) % 2 else "I see a keypad. What do I press first?"
    if "You are the expert" in system:
        return "Tell me what the screen shows, then follow the manual step by step."
    return "A"  # rooms: the answerer's answer, the helper's message


def thinking(body: dict) -> str:
    """Every role of every family, answered the way reasoning models answer: think (the solver thinks of its
    PIN, which only its private reasoning ever repeats), then a reply the role can read."""
    pin = PIN.search(last_user_text(body))
    private = f" and my PIN is {pin.group(1)}" if pin else ""
    return f"<think>{SECRET}: the partner must not read this{private}</think>{public_answer(body)}"


FAMILIES = {
    "rooms": ("answerer", "helper"),
    "blocks": ("director", "builder"),
    "boards": ("programmer", "robot"),
    "puzzles": ("solver", "expert"),
}

BUDGETS = {"blocks": ["--turns", "6"], "boards": ["--set", "rounds=6"], "puzzles": ["--turns", "6"]}


def play(tmp_path: Path, server: FakeOpenAIServer, world: str, episodes: int = 1) -> Path:
    """``run`` of ``world`` with every role a text-only model behind ``server``, through the command line."""
    out = tmp_path / world
    args = ["run", "--world", world, "--episodes", str(episodes), "--seed", "4", "--out", str(out)]
    args += BUDGETS.get(world, [])
    for role in FAMILIES[world]:
        args += ["--agent", f"{role}=openai:fake-model"]
        for key, value in (("base_url", server.base_url), ("api_key_env", "SIMLAB_REASONING_KEY")):
            args += ["--agent-setting", f"{role}.{key}={value}"]
        args += ["--agent-setting", f"{role}.text_only=true"]
    env = {**os.environ, "SIMLAB_REASONING_KEY": "sk-reasoning"}
    done = subprocess.run(
        [sys.executable, "main.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("field", [None, "reasoning_content"])
@pytest.mark.parametrize("world", list(FAMILIES))
def test_a_thinking_model_s_reasoning_reaches_reasoning_events_only(tmp_path, world, field):
    with FakeOpenAIServer(thinking, reasoning_field=field) as server:
        out = play(tmp_path, server, world, episodes=2 if world == "rooms" else 1)
    run = load_run(out)
    assert SECRET not in (out / "index.jsonl").read_text()
    for episode in run.episodes():
        holding = {e.kind for e in episode.events if SECRET in json.dumps(e.data)}
        assert holding == {"reasoning"}, f"{episode.episode_id}: the secret is in {holding - {'reasoning'}} events"
        acts = Counter(e.role for e in episode.events if e.kind == "observation")
        thoughts = Counter(e.role for e in episode.events if e.kind == "reasoning" and SECRET in e.data["text"])
        assert thoughts == acts  # every act's reasoning is kept, as the role's
        assert SECRET not in json.dumps(episode.summary)
        spoken = [e for e in episode.events if e.kind in ("message", "action")]
        assert spoken, "the roles' replies were read: something was said or done"
        assert episode.summary["replies"] == {r: {"acts": n, "unreadable": 0} for r, n in sorted(acts.items())}
        if world == "puzzles":  # the PIN was only ever thought: no leak is counted
            assert episode.summary["metrics"].get("leak") in (0.0, None)
            assert not [e for e in episode.events if e.data.get("code") == "private_leak"]
        if field is not None:
            assert all(r["response"].get("reasoning") for r in episode.raw)  # the server's field is kept


def test_a_reasoning_left_open_is_unreadable_not_public(tmp_path):
    with FakeOpenAIServer(lambda body: f"<think>{SECRET} and then the limit came") as server:
        out = play(tmp_path, server, "rooms", episodes=3)
    for episode in load_run(out).episodes():
        public = [e for e in episode.events if e.kind != "reasoning"]
        assert not any(SECRET in json.dumps(e.data) for e in public)
        assert any(SECRET in json.dumps(e.data) for e in episode.events if e.kind == "reasoning")  # kept, privately
        assert episode.summary["outcome"] == "abort"  # no answer could be read
