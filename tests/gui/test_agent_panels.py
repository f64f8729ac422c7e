"""AgentPanels: one panel per role showing what it was given and what it did at the playback's turn."""

from __future__ import annotations

import pytest

from simlab.core.episode import Episode
from simlab.core.recording import load_run
from simlab.gui.agent_panels import AgentPanels
from simlab.gui.playback import PlaybackModel
from simlab.worlds.blocks.images import observation_images as blocks_images


@pytest.fixture(scope="module")
def episode(record) -> Episode:
    return load_run(record("builder=random", turns=8)).episodes()[0]


@pytest.fixture
def panels(qtbot, episode):
    playback = PlaybackModel()
    widget = AgentPanels(playback)
    qtbot.addWidget(widget)
    widget.resize(480, 900)
    widget.show()
    playback.set_episode(episode)
    return widget, playback


def _last_observation_turn(episode: Episode, role: str, turn: int) -> int | None:
    turns = [e.turn for e in episode.events if e.kind == "observation" and e.role == role and e.turn <= turn]
    return max(turns, default=None)


def test_one_panel_per_role_directors_first(panels, episode):
    widget, _ = panels
    assert widget.roles() == ["D1", "D2", "D3", "builder"]
    assert set(widget.roles()) == set(episode.agents)
    assert "random" in widget.panel("builder").title.text()
    persona = next(e.data["data"]["persona"] for e in episode.events if e.kind == "observation" and e.role == "D1")
    assert f"({persona})" in widget.panel("D1").title.text() and "(" not in widget.panel("builder").title.text()
    assert "#804dcc" in widget.panel("D1").title.text()  # D1's colour in the family's palette


def test_shown_turn_follows_playback(panels, episode):
    widget, playback = panels
    for turn in range(episode.last_turn + 1):
        playback.seek(turn)
        for role in widget.roles():
            assert widget.panel(role).shown_turn == _last_observation_turn(episode, role, turn)


def test_builder_shows_its_action_and_images(panels, episode):
    widget, playback = panels
    action = next(e for e in episode.events if e.kind == "action" and e.turn == 3)
    playback.seek(3)
    builder = widget.panel("builder")
    assert action.data["text"] in builder.message_text()
    assert builder.pixmaps() and all(not p.isNull() for p in builder.pixmaps())
    for role in ("D1", "D2", "D3"):
        panel = widget.panel(role)
        if panel.shown_turn is not None:
            assert panel.pixmaps() and all(not p.isNull() for p in panel.pixmaps())


def test_director_message_and_idle_note(panels, episode):
    widget, playback = panels
    message = next(e for e in episode.messages() if e.turn >= 2)
    playback.seek(message.turn)
    panel = widget.panel(message.role)
    assert message.data["text"] in panel.message_text()
    assert panel.shown_turn == message.turn
    idle = {"D1", "D2", "D3"} - {e.role for e in episode.events_of_turn(message.turn) if e.kind == "message"}
    for role in idle:
        idle_panel = widget.panel(role)
        assert idle_panel.message_text() == ""
        if idle_panel.shown_turn is not None:
            assert f"Did not act in turn {message.turn}" in idle_panel.status.text()


def test_sections_collapsed_by_default(panels):
    widget, playback = panels
    playback.seek(2)
    panel = widget.panel("builder")
    assert not panel.observation_text.expanded
    assert not panel.observation_text.body.isVisible()
    panel.observation_text.button.click()
    assert panel.observation_text.body.isVisible()
    assert "board" in panel.observation_text.body.text().lower()


def test_injected_images_for_and_pixmap_cache(qtbot, episode):
    calls = []

    def images_for(data):
        calls.append(data)
        return blocks_images(data)

    playback = PlaybackModel()
    widget = AgentPanels(playback, images_for=images_for)
    qtbot.addWidget(widget)
    playback.set_episode(episode)
    for turn in (1, 2, 3, 2, 1, 3):
        playback.seek(turn)
    observations = {(e.role, e.turn) for e in episode.events if e.kind == "observation" and 1 <= e.turn <= 3}
    assert len(calls) <= len(observations) + len(widget.roles())


def test_no_episode(qtbot):
    playback = PlaybackModel()
    widget = AgentPanels(playback)
    qtbot.addWidget(widget)
    assert widget.roles() == []
    playback.set_episode(None)
    assert widget.roles() == []
