"""An episode played through the PettingZoo adapter is an ordinary SimLab recording: the app opens the file
``env.save`` wrote the way ``python main.py gui FILE`` does, and draws it to its last turn."""

from __future__ import annotations

from simlab.gui.app import open_window
from simlab.pettingzoo import env
from tests.gui.conftest import wait_shown


def test_the_app_opens_an_episode_saved_by_the_adapter(qtbot, tmp_path, monkeypatch):
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "HOME"):  # the app's settings stay out of the home folder
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    game = env("blocks", settings={"turns": 3})
    game.reset(seed=0)
    for i, agent in enumerate(game.possible_agents):
        game.action_space(agent).seed(i)
    for agent in game.agent_iter():
        _observation, _reward, terminated, truncated, _info = game.last()
        game.step(None if terminated or truncated else game.action_space(agent).sample())
    path = tmp_path / "played.json"
    episode = game.save(path)
    window = open_window(path, turn=episode.last_turn)
    qtbot.addWidget(window)
    wait_shown(qtbot, window)
    assert window.playback.episode is not None and window.playback.episode.to_json() == episode.to_json()
    assert window.agents.roles() == ["D1", "D2", "D3", "builder"]
    assert window.timeline.label_text().startswith(f"turn {episode.last_turn} of {episode.last_turn}")
    assert window.world.items
