"""Every live-agent test finds the test key in the environment, as a real run finds OPENAI_API_KEY."""

from __future__ import annotations

import pytest

from tests.agents.live_agents import KEY, KEY_ENV


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
