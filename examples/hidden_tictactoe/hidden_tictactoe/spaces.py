"""Hidden tic-tac-toe's roles as Gymnasium spaces, for SimLab's PettingZoo adapter (``simlab.pettingzoo``).

Both roles send what their reply form holds: the seer a message and private notes, the player a question
and, with ``cell_given`` 1, the cell to mark. Both see the board's picture. The reward is progress on the
safe line. Every turn the seer speaks, then the player acts, and the game ends only after the player's act,
so the game also runs as a PettingZoo ``ParallelEnv``.

Loaded only by the adapter (``FAMILY.spaces`` names it), so the family itself needs no Gymnasium.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simlab.core.world import Observation
from simlab.pettingzoo import RoleSpaces, WorldSpaces

from hidden_tictactoe.protocol import reply_form
from hidden_tictactoe.roles import PLAYER, SEER

BOARD = (344, 344)  # the board's picture, as drawn


def spaces(task: Mapping[str, Any], settings: Mapping[str, Any]) -> WorldSpaces:
    """Both roles' spaces (the same for every board and setting)."""
    roles = {role: RoleSpaces(reply_form(role, Observation(role, 0, "")), {"board": BOARD}) for role in (SEER, PLAYER)}
    return WorldSpaces(roles, reward=lambda scores: scores.get("progress", 0.0), parallel=True)
