"""A thinking model's private reasoning in the app: its own panel shows it under "Private reasoning", the
dialogue only when "Show private reasoning" is ticked, the Raw tab as what the server split out, and never
in the partner's panel or a public message. The episode is played by the model agent against the local server
(puzzles' ATM: the solver thinks of its PIN, the server splits the thinking out as reasoning_content)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simlab.core.episode import Episode
from simlab.core.plugins import discover
from simlab.core.recording import load_run
from simlab.gui.agent_panels import AgentPanels
from simlab.gui.dialogue import DialoguePane
from simlab.gui.playback import PlaybackModel
from simlab.runner.batch import RunConfig, run
from simlab.testing.openai_server import FakeOpenAIServer, last_user_text, system_text
from tests.gui.conftest import wait_shown

KEY_ENV = "SIMLAB_GUI_REASONING_KEY"
SECRET = "SECRET-5512"
PIN = re.compile(r"Your PIN is (\d+)")


def thinking(body: dict) -> str:
    pin = PIN.search(last_user_text(body))
    thought = f"{SECRET}: do not say the PIN {pin.group(1)}" if pin else f"{SECRET}: wait for the solver"
    said = "What do you see on the screen?" if "You are the expert" in system_text(body) else "I see a keypad."
    return f"<think>{thought}</think>{said}"


@pytest.fixture(scope="module")
def episode(tmp_path_factory: pytest.TempPathFactory) -> Episode:
    out: Path = tmp_path_factory.mktemp("thinking") / "run"
    with pytest.MonkeyPatch.context() as patch, FakeOpenAIServer(thinking, reasoning_field="reasoning_content") as s:
        patch.setenv(KEY_ENV, "sk-gui-reasoning")
        settings = {"base_url": s.base_url, "api_key_env": KEY_ENV, "text_only": True}
        config = RunConfig(
            "puzzles",
            seed=0,
            episodes=1,
            agents=["solver=openai:fake-model", "expert=openai:fake-model"],
            settings={"turns": 3},
            agent_settings={"solver": settings, "expert": settings},
            groups=["atm"],
        )
        run(config, out, registry=discover())
    return load_run(out).episodes()[0]


def test_the_reasoning_shows_in_its_own_panel_only(qtbot, episode):
    playback = PlaybackModel()
    panels = AgentPanels(playback)
    qtbot.addWidget(panels)
    panels.resize(900, 700)
    panels.show()
    playback.set_episode(episode)
    playback.seek(1)
    solver, expert = panels.panel("solver"), panels.panel("expert")
    assert SECRET in solver.reasoning.body.text() and "do not say the PIN" in solver.reasoning.body.text()
    assert SECRET in expert.reasoning.body.text()  # the expert thought too: in its own panel
    for panel in (solver, expert):
        assert SECRET not in panel.message_text() and SECRET not in panel.observation_text.body.text()


def test_the_dialogue_shows_it_only_when_asked_and_the_raw_tab_as_split_out(qtbot, episode):
    playback = PlaybackModel()
    pane = DialoguePane(playback)
    qtbot.addWidget(pane)
    pane.resize(700, 500)
    pane.show()
    wait_shown(qtbot, pane)
    playback.set_episode(episode)
    text = pane.browser.document().toPlainText()
    assert "I see a keypad." in text and SECRET not in text
    pane.set_show_reasoning(True)
    assert SECRET in pane.browser.document().toPlainText()
    pane.tabs.setCurrentIndex(1)  # the Raw tab
    playback.seek(1)
    qtbot.waitUntil(lambda: "split out by the server" in pane.raw_chat.toPlainText())
    assert SECRET in pane.raw_chat.toPlainText()
