"""Shared set-up of the example-family tests: the installed package, a hand-made board and episode, a run.

The app tests here need the real X display from pytest-xvfb, as ``tests/gui`` does: QtInteractor fails on the
offscreen platform, so the variables that would select it are dropped before Qt is imported.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from simlab.core.episode import Episode
from simlab.core.recording import RunWriter
from simlab.core.world import Observation, Reply
from simlab.runner.batch import RunConfig, run
from simlab.runner.episode import run_episode

os.environ.pop("QT_QPA_PLATFORM", None)
os.environ.pop("PYVISTA_OFF_SCREEN", None)

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "hidden_tictactoe"
INSTALL = f".venv/bin/pip install -e {EXAMPLE.relative_to(REPO)}"

BOARD = {"id": "board_hand", "group": "row", "line": "row 0", "blocked": [[1, 2]], "mines": [[1, 1], [2, 0]]}
"""A hand-made board: the safe line is row 0; O at (1,2); mines at (1,1) and (2,0)."""
PLAYER_REPLIES: tuple[Reply, ...] = (
    Reply(message="Which cell is safe?"),  # turn 1: asks
    Reply(action={"cell": [1, 1]}),  # turn 2: a mine
    Reply(action={"cell": [1, 2]}, reasoning="the O is there, I know"),  # turn 3: taken by the O
    Reply(action={"cell": [0, 0]}),  # turns 4-6: the safe line
    Reply(action={"cell": [0, 1]}),
    Reply(action={"cell": [0, 2]}),
)


def _require_installed() -> None:
    try:
        metadata.distribution("simlab-hidden-tictactoe")
    except metadata.PackageNotFoundError:
        pytest.fail(f"the example family is not installed: run `{INSTALL}`", pytrace=False)


class Replay:
    """An agent that gives fixed replies in order (and records what it was shown)."""

    def __init__(self, replies: Sequence[Reply]) -> None:
        self.replies, self.seen = list(replies), []

    def reset(self, seed: int, role: str, task: Mapping[str, Any]) -> None:
        self.seen = []

    def act(self, observation: Observation) -> Reply:
        self.seen.append(observation)
        return self.replies[len(self.seen) - 1]


def hand_episode() -> Episode:
    """The hand-made board played by the oracle seer and :data:`PLAYER_REPLIES`: an ask, a mine, a mark on an
    O, then the safe line (a win at turn 6)."""
    _require_installed()
    from hidden_tictactoe.agents import OracleSeer

    from simlab.worlds import get_family

    family = get_family("tictactoe")
    world = family.world(BOARD, family.check_settings({}))
    agents = {"seer": OracleSeer("seer"), "player": Replay(PLAYER_REPLIES)}
    return run_episode(world, agents, "board_hand-r0", 0, {"seer": "oracle", "player": "replay"})


@pytest.fixture(scope="session")
def installed() -> None:
    """Fails (never skips) when the package is not installed: proving the registration is the point."""
    _require_installed()


@pytest.fixture(scope="session")
def episode() -> Episode:
    return hand_episode()


@pytest.fixture(scope="session")
def ttt_run(tmp_path_factory: pytest.TempPathFactory, installed: None) -> Iterator[Path]:
    """A run folder: the hand-made episode, then three generated boards with a slipping scripted player."""
    out = tmp_path_factory.mktemp("tictactoe") / "run"
    run(RunConfig("tictactoe", seed=0, episodes=3, agents=["player=scripted:0.5"]), out)
    RunWriter(out, {}, resume=True).add(hand_episode())
    yield out
