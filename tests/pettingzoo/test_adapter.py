"""What the PettingZoo adapter promises beyond PettingZoo's own checks: the world judges every action as it
judges a model's reply (an illegal one gets the world's error, in the infos and in the recording), the rewards
add up to the family's score, and what is played is an ordinary SimLab recording."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from simlab.core.episode import Episode
from simlab.core.errors import ConfigError
from simlab.core.recording import load_episode
from simlab.core.world import Observation
from simlab.pettingzoo import CHARSET, SimLabEnv, env
from simlab.pettingzoo.spaces import REPLACEMENT, observation_text
from simlab.testing import play
from simlab.worlds import family_names, get_family

REPO = Path(__file__).resolve().parents[2]


def builder_turn(game: SimLabEnv) -> None:
    """Every director speaks until it is the builder's turn."""
    while game.agent_selection != "builder":
        agent = game.agent_selection
        game.step(game.roles[agent].action(message="Put the green block at the far left.", reasoning="I see it."))


def recorded(episode: Episode, kind: str) -> list[dict]:
    return [e.data for e in episode.events if e.kind == kind]


def test_an_illegal_move_gets_the_worlds_error_in_the_infos_and_the_recording():
    game = env("blocks", settings={"turns": 3})
    game.reset(seed=0)
    builder_turn(game)
    floating = {"action": "place", "block": "gs", "cell": [0, 0], "layer": 2}  # nothing under it: wrong layer
    game.step(game.roles["builder"].action(floating))
    info = game.infos[game.agent_selection]
    assert info["role"] == "builder" and info["result"]["ok"] is False
    assert info["result"]["error"] == "wrong_layer"
    assert info["result"] in recorded(game.episode, "result")  # the same verdict, recorded
    assert {"action": floating, "text": "PLACE gs @ (0,0) layer 2"} in recorded(game.episode, "action")
    assert not any(game.terminations.values()) and not any(game.truncations.values())
    assert game.agent_selection in ("D1", "D2", "D3") and game.world.turn == 2  # the protocol goes on


def test_an_index_past_the_listed_actions_is_an_illegal_action_and_the_mask_marks_the_listed_ones():
    game = env("puzzles", settings={"turns": 3})
    game.reset(seed=0)
    mask = game.infos["solver"]["action_mask"]["action"]
    listed = game.world.observe("solver").data["actions"]
    assert mask.tolist() == [1] * len(listed) + [0] * (len(mask) - len(listed))
    game.step(game.roles["solver"].action({"act": "act", "action": len(mask) - 1}))
    assert [e["code"] for e in game.infos[game.agent_selection]["errors"]] == ["illegal_action"]
    assert recorded(game.episode, "protocol_error")[-1]["code"] == "illegal_action"


def test_an_action_outside_the_action_space_is_refused_before_the_world_sees_it():
    game = env("tictactoe")
    game.reset(seed=0)
    before = len(game.episode.events)
    with pytest.raises(ValueError, match=r"seer's action is not in action_space\('seer'\)"):
        game.step({"message": "hello"})  # the reasoning is missing
    assert len(game.episode.events) == before and game.agent_selection == "seer"


def test_rewards_add_up_to_the_final_score_in_blocks():
    """The builder plays a verified candidate each turn, so the score moves; each role's rewards, read through
    last() as PettingZoo agents read them, add up to the score the episode ends with."""
    game = env("blocks", settings={"turns": 20})
    game.reset(seed=0)
    totals = dict.fromkeys(game.agents, 0.0)
    for agent in game.agent_iter():
        _observation, reward, terminated, truncated, _info = game.last()
        totals[agent] += reward
        if terminated or truncated:
            game.step(None)
        elif agent == "builder":
            candidates = game.world.observe("builder").data["candidates"]
            game.step(game.roles[agent].action(candidates[0] if candidates else {"action": "clarify"}))
        else:
            game.step(game.roles[agent].action(message="Build what you see."))
    score = game.episode.summary["score"]
    assert game.episode.summary["outcome"] == "success" and score == 1.0  # the candidates built it all
    assert totals == pytest.approx(dict.fromkeys(totals, score))


def test_the_saved_episode_is_the_one_played_and_an_unfinished_one_is_saved_as_stopped(tmp_path):
    game = env("tictactoe")
    game.reset(seed=3)
    for i, agent in enumerate(game.possible_agents):
        game.action_space(agent).seed(i)
    for _ in range(3):
        game.step(game.action_space(game.agent_selection).sample())
    assert game.save(tmp_path / "early.json").summary["outcome"] == "abort"
    assert game.episode.summary == {}  # still playing
    early = load_episode(tmp_path / "early.json")
    assert early.summary["outcome"] == "abort" and early.summary["stopped"] is True
    assert [e.to_json() for e in early.events] == [e.to_json() for e in game.episode.events]
    for agent in game.agent_iter():
        _observation, _reward, terminated, truncated, _info = game.last()
        game.step(None if terminated or truncated else game.action_space(agent).sample())
    game.save(tmp_path / "done.json")
    done = load_episode(tmp_path / "done.json")
    assert done.to_json() == game.episode.to_json()
    assert done.events[: len(early.events)] == early.events and len(done.events) > len(early.events)
    assert done.summary["outcome"] in ("success", "failure") and "stopped" not in done.summary
    assert done.agents == {"seer": "pettingzoo", "player": "pettingzoo"}


def test_the_example_plays_an_episode_with_random_legal_actions_and_saves_it(tmp_path):
    out = tmp_path / "puzzle.json"
    script = REPO / "examples" / "pettingzoo_random.py"
    done = subprocess.run(
        [sys.executable, str(script), "puzzles", str(out), "--seed", "2", "--set", "turns=4"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    episode = load_episode(out)
    assert done.stdout.startswith(f"{out}: {episode.summary['outcome']}, score ")
    assert set(episode.agents.values()) == {"pettingzoo"} and episode.settings["turns"] == 4
    names = [e.data["action"]["action"] for e in episode.events if e.kind == "action"]
    assert names and all(name for name in names)  # the mask kept every action among the listed ones


@pytest.mark.parametrize("name", family_names())
def test_every_character_a_world_writes_is_in_the_text_spaces(name):
    """What the world and its built-in agents write (every text of an episode with the default agents) fits the
    charset, so observations show it as it is."""
    family = get_family(name)
    settings = {"image_width": 64, "image_height": 48} if name == "rooms" else None
    episode = play(family, family.tasks.generate(1, 0)[0], [], 0, settings)
    texts = [str(e.data["text"]) for e in episode.events if isinstance(e.data.get("text"), str)]
    assert texts and not {c for text in texts for c in text} - set(CHARSET)


def test_an_observation_text_keeps_to_its_space():
    """Characters outside the charset are replaced; a text too long leaves out its oldest history first."""
    history = tuple(f"[turn {k}] D1: message {k}" for k in range(40))
    text = "Your view.\nConversation so far:\n" + "\n".join(history) + "\nAnd a smile \U0001f600"
    observation = Observation("D1", 3, text, history=history)
    short = observation_text(observation, 400)
    assert len(short) <= 400 and short.endswith(f"And a smile {REPLACEMENT}")
    assert "message 39" in short and "message 0\n" not in short and "oldest entries left out" in short


def test_a_family_that_declares_no_spaces_is_refused_by_name():
    bare = dataclasses.replace(get_family("blocks"), name="bare", spaces=None)
    with pytest.raises(ConfigError, match="world 'bare' declares no PettingZoo spaces"):
        env(bare)
