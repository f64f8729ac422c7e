"""The boards roles as Gymnasium spaces, for the PettingZoo adapter (:mod:`simlab.pettingzoo`).

The programmer sends an instruction and private notes, or ends the game (``done``: 1 sends DONE); the robot
sends the fields of its reply form (``status`` and ``details``: its code, question or acknowledgement). Each
role sees the pictures its condition gives it (``target_view`` and ``state_view`` of the settings): the
target, one picture per level of it, the board and the colour legend. The reward is the share of the
target's pieces in place, so every role's rewards over an episode add up to that share at the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simlab.core.family import FormField, ReplyForm
from simlab.core.world import Observation, Reply
from simlab.pettingzoo import RoleSpaces, WorldSpaces, form_reply
from simlab.worlds.boards.protocol import ROBOT_FIELDS
from simlab.worlds.boards.targets import Target
from simlab.worlds.boards.world import DONE, PROGRAMMER, ROBOT

BOARD = (560, 608)  # an 8 x 8 board is drawn 559 x 605
LEGEND = (640, 356)
DONE_FIELD = FormField("done", "flag", f"Say {DONE}: the board matches the target", value=DONE)
PROGRAMMER_FORM = ReplyForm("Your instruction to the robot", "Private notes", fields=(DONE_FIELD,))


def spaces(task: Mapping[str, Any], settings: Mapping[str, Any]) -> WorldSpaces:
    """The spaces of a task under the settings' condition."""
    target = _target_pictures(task, settings)
    state = {"board": BOARD, "legend": LEGEND} if settings["state_view"] == "image" else {}
    single = settings["agents"] == "single"
    roles = {
        PROGRAMMER: RoleSpaces(PROGRAMMER_FORM, {**target, **state}, read=_programmer),
        ROBOT: RoleSpaces(ReplyForm(fields=ROBOT_FIELDS), {**(target if single else {}), **state}),
    }
    return WorldSpaces(roles, reward=lambda scores: scores.get("correct_pieces", 0.0))


def _target_pictures(task: Mapping[str, Any], settings: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """The target as pictures: none in text mode, the whole target, and in layers mode one per level."""
    view = settings["target_view"]
    if view == "text":
        return {}
    levels = Target.from_json(task).board().top_level() if view == "layers" else 0
    return {"target": BOARD, **{f"target_level_{k}": BOARD for k in range(1, levels + 1)}, "legend": LEGEND}


def _programmer(action: Mapping[str, Any], observation: Observation) -> Reply:
    """DONE when the action says so, else the instruction and notes."""
    if int(action.get("done", 0)):
        return Reply(message=DONE)
    return form_reply(PROGRAMMER_FORM)(action, observation)
