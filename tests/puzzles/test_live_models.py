"""Live models play the puzzles over HTTP (the local OpenAI-compatible test server, the real openai client and
our model agent): the solver gets the module as a picture with the paper's prompt, a text-only solver gets
it in words and no picture, the expert gets the manual and never a picture, and replies are played as the
game's rules say (exact action names act, anything else is said)."""

from __future__ import annotations

import pytest

from simlab.testing.openai_server import FakeOpenAIServer, last_user_text, scripted_replies
from simlab.worlds.puzzles.family import task_for
from simlab.worlds.puzzles.wire import correct_wire
from tests.agents.conftest import api_key  # noqa: F401 - the fixture: the test key in the environment
from tests.agents.live_agents import agent_settings, episode_with

# an instance whose right wire comes before the third strike when every wire is cut from the top
TASK = next(
    t
    for t in (task_for("wire", k, 0, {}) for k in range(100))
    if correct_wire(t["instance"]["wires"], t["instance"]["serial"]) <= 3
)
EVERY_WIRE = "\n".join(f"Cut wire {k}" for k in range(1, len(TASK["instance"]["wires"]) + 1))


def replies() -> object:
    return scripted_replies(
        {
            "You are the solver": lambda body: (
                EVERY_WIRE if "Cut every wire" in last_user_text(body) else "What do I do?"
            ),
            "You are the expert": "Cut every wire, top to bottom.",
        }
    )


def parts(request: dict, kind: str) -> list[dict]:
    content = request["messages"][-1]["content"]
    return [p for p in content if isinstance(p, dict) and p.get("type") == kind] if isinstance(content, list) else []


@pytest.mark.parametrize("text_only", [False, True])
def test_models_play_a_wire_puzzle_as_the_paper_sets_it_up(text_only):
    settings = {"after_mistake": "continue"}
    with FakeOpenAIServer(replies()) as server:
        per_role = {"solver": agent_settings(server, text_only=text_only), "expert": agent_settings(server)}
        episode, _agents = episode_with("puzzles", TASK, settings, per_role)
        requests = server.requests
    solver = [r for r in requests if "You are the solver" in r["messages"][0]["content"]]
    expert = [r for r in requests if "You are the expert" in r["messages"][0]["content"]]
    assert solver and expert
    assert all(not parts(r, "image_url") for r in expert)  # the expert never sees the module
    assert "3 Wires:" in str(expert[0]["messages"]) and "Possible actions" not in str(expert[0]["messages"])
    if text_only:
        assert all(not parts(r, "image_url") for r in solver)
        assert "What your pictures show, in words" in str(solver[0]["messages"]) and "I see" in str(solver[0])
    else:
        assert all(len(parts(r, "image_url")) == 1 for r in solver)
    summary = episode.summary
    assert summary["outcome"] == "success" and summary["metrics"]["sr"] == 100  # every wire cut, in order
    said = [e.data["text"] for e in episode.events if e.kind == "message"]
    assert said[:2] == ["What do I do?", "Cut every wire, top to bottom."]
    assert summary["usage"]["calls"] == len(requests)
