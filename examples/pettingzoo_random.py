"""Play one episode of a SimLab world through PettingZoo with random legal actions, and save it.

    python examples/pettingzoo_random.py blocks out/blocks-random.json --seed 0 --set turns=5
    python main.py gui out/blocks-random.json        # the app opens it like any recording

Each role samples its action space (honouring the ``action_mask`` its info gives, as PettingZoo's own tests
do); the world judges every action as it would a model's reply. Needs ``pip install 'simlab[pettingzoo]'``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from simlab.core.episode import Episode
from simlab.pettingzoo import env


def play(world: str, out: Path, seed: int, settings: dict[str, Any]) -> tuple[Episode, dict[str, float]]:
    """One episode of ``world``'s first task with random legal actions, saved to ``out``: the episode and
    every role's total reward."""
    game = env(world, settings=settings, seed=seed)
    game.reset(seed=seed)
    totals = dict.fromkeys(game.agents, 0.0)
    for i, agent in enumerate(game.possible_agents):
        game.action_space(agent).seed(seed + i)  # the same seed plays the same episode
    for agent in game.agent_iter():
        _observation, reward, terminated, truncated, info = game.last()
        totals[agent] += reward
        action = None if terminated or truncated else game.action_space(agent).sample(info.get("action_mask"))
        game.step(action)
    return game.save(out), totals


def setting(item: str) -> tuple[str, Any]:
    """``NAME=VALUE``: the value read as JSON when it is (``turns=5``), else as text (``interior=reference``)."""
    name, _, value = item.partition("=")
    try:
        return name, json.loads(value)
    except ValueError:
        return name, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("world", help="a registered world family: blocks, rooms, boards, puzzles, tictactoe...")
    parser.add_argument("out", type=Path, help="the episode file to write")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=JSON", help="a world setting (repeat)")
    args = parser.parse_args()
    episode, totals = play(args.world, args.out, args.seed, dict(setting(item) for item in args.set))
    summary = episode.summary
    print(f"{args.out}: {summary['outcome']}, score {summary['score']}, {summary['turns']} turns")
    print("rewards: " + ", ".join(f"{role} {total:.2f}" for role, total in totals.items()))


if __name__ == "__main__":
    main()
