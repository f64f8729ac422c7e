"""A blocks run played by the model agent against the local OpenAI-compatible test server, for the GUI tests
of model calls: real raw records, with a rate-limited attempt, prices (a cost per call) and one unreadable,
hostile builder reply that the agent re-asks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simlab.core.episode import Episode
from simlab.core.plugins import discover
from simlab.core.recording import load_run
from simlab.runner.batch import RunConfig, run
from simlab.testing.openai_server import FakeOpenAIServer, FaultPlan, scripted_replies
from simlab.testing.scripts import BLOCKS_SCRIPT, builder_says

KEY_ENV = "SIMLAB_GUI_TEST_KEY"
HOSTILE = "<b>bold</b> & <script>alert(1)</script>"
"""The builder's first reply: unreadable (so re-asked) and markup that must show as text."""


def record_model_run(out: Path, monkeypatch: pytest.MonkeyPatch, turns: int = 2) -> Episode:
    """Record the run into ``out`` and return its episode."""
    asked: list[int] = []

    def builder(body: dict[str, Any]) -> str:
        asked.append(1)
        return HOSTILE if len(asked) == 1 else builder_says(body)

    script = {**BLOCKS_SCRIPT, "You are the builder": builder}
    monkeypatch.setenv(KEY_ENV, "sk-gui-test")
    plan = FaultPlan(schedule={2: "429"}, retry_after_s=0)
    with FakeOpenAIServer(scripted_replies(script, default=None), faults=plan) as server:
        settings = {
            "base_url": server.base_url,
            "api_key_env": KEY_ENV,
            "backoff_s": 0.001,
            "prices": {"prompt": 0.15, "completion": 0.6},
        }
        config = RunConfig(
            "blocks",
            seed=0,
            episodes=1,
            agents=["director=openai:fake-model", "builder=openai:fake-model"],
            settings={"turns": turns},
            agent_settings={"director": settings, "builder": settings},
        )
        run(config, out, registry=discover())
    return load_run(out).episodes()[0]
