"""The blocks roles as Gymnasium spaces, for the PettingZoo adapter (:mod:`simlab.pettingzoo`).

A director sends a message and private reasoning and sees its wall; the builder sends a move (the fields of
its reply form: place, remove or clarify, a block, a cell, a layer, an optional second cell; a clarify's
question is the message) and sees the board. The reward is overall progress, so every role's rewards over an
episode add up to the final overall progress.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simlab.core.family import ReplyForm
from simlab.pettingzoo import RoleSpaces, WorldSpaces
from simlab.worlds.blocks.protocol import MOVE_FIELDS
from simlab.worlds.blocks.world import BUILDER, DIRECTORS

WALL = (560, 432)  # a director's wall picture is at most 557 x 427 pixels
BOARD = (416, 416)  # the builder's board picture, 404 x 411


def spaces(task: Mapping[str, Any], settings: Mapping[str, Any]) -> WorldSpaces:
    """Every role's spaces (the same for every task and setting)."""
    director = RoleSpaces(ReplyForm("message", "reasoning"), {"wall": WALL})
    builder = RoleSpaces(ReplyForm("message (a clarify's question)", fields=MOVE_FIELDS), {"board": BOARD})
    roles = {**dict.fromkeys(DIRECTORS, director), BUILDER: builder}
    return WorldSpaces(roles, reward=lambda scores: scores.get("overall_progress", 0.0))
