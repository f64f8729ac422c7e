"""The hostile programs end to end: a live episode in which the local OpenAI-compatible test server plays a
robot that sends every one of them over HTTP, through the real openai client and our model agent. Each is
refused and recorded, nothing is built, no file appears, no module is imported, memory stays bounded."""

from __future__ import annotations

import json
import sys
import threading
import tracemalloc

from simlab.testing.openai_server import FakeOpenAIServer, scripted_replies
from simlab.worlds.boards.targets import generate_targets
from tests.agents.conftest import api_key  # noqa: F401 - the fixture: the test key in the environment
from tests.agents.live_agents import agent_settings, episode_with
from tests.boards.test_interpreter import HOSTILE

GOOD = "put(board, 'washer', 'red', 1, 1)"


class Robot:
    """A reply function: each robot request gets the next program of ``queue`` as its code, then a good one."""

    def __init__(self) -> None:
        self.queue: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, body) -> str:
        with self.lock:
            source = self.queue.pop(0) if self.queue else GOOD
        return "```json\n" + json.dumps({"status": "code", "details": source}) + "\n```"


def test_every_hostile_program_is_refused_through_a_live_episode(tmp_path):
    marker = tmp_path / "pwned"
    programs = [source.replace("MARKER", str(marker)) for _name, source, *_rest in HOSTILE]
    robot = Robot()
    replies = scripted_replies(
        {"You are the Programmer": "Place a red washer at row 1, column 1.", "You are the Robot": robot}
    )
    task = generate_targets(1, seed=0)[0].to_json()
    settings = {"rounds": 1, "max_failures": 100}
    with FakeOpenAIServer(replies) as server:
        per_role = {role: agent_settings(server, max_tokens=2_000_000) for role in ("programmer", "robot")}
        episode_with("boards", task, settings, per_role)  # warm-up: the client's lazy imports happen here
        modules = set(sys.modules)
        robot.queue = list(programs)
        tracemalloc.start()
        try:
            episode, _agents = episode_with("boards", task, settings, per_role)
            _current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    robot_actions = [e for e in episode.events if e.kind == "action" and e.role == "robot"]
    results = [e for e in episode.events if e.kind == "result"]
    sent = [a.data["action"].get("details") for a in robot_actions]
    assert sent[: len(programs)] == [p.strip() for p in programs]  # each arrived whole, as the robot's code
    assert [r.data["ok"] for r in results] == [False] * len(programs) + [True]
    for result, (name, *_rest) in zip(results, HOSTILE, strict=False):
        assert result.data["error"] and "Please correct the code" in result.data["feedback"], name
    states = [e for e in episode.events if e.kind == "state"]
    assert len(states) == 2 and states[1].data["state"]["board"]["cells"] == [[1, 1, [["washer", "red"]]]]  # only GOOD
    assert not marker.exists() and list(tmp_path.iterdir()) == []
    assert set(sys.modules) - modules == set()
    assert peak < 200 * 2**20
    assert episode.summary["metrics"]["code_errors"] == len(programs)
