"""The puzzles roles as Gymnasium spaces, for the PettingZoo adapter (:mod:`simlab.pettingzoo`).

The expert sends a message. The solver sends a message to the expert or, with ``act`` 1, takes the action
listed at index ``action`` in its observation (the legal actions, in the order the text lists them; the
``action_mask`` in its info marks the listed ones, and an index past the list names no action, which the
module refuses as illegal). The solver sees the module's picture. The reward is correctness: 1 once the
module is solved.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from simlab.core.family import FormField, ReplyForm
from simlab.core.world import Observation, Reply
from simlab.pettingzoo import RoleSpaces, WorldSpaces, form_reply
from simlab.worlds.puzzles.protocol import reply_form
from simlab.worlds.puzzles.world import EXPERT, SOLVER

LISTED = 16  # the most actions a module lists at once (the ATM: 15)
MODULE = (640, 720)  # the module's picture; the largest are scaled down into it
ACT = FormField("act", "flag", "Take the action instead of talking", value="act")
PICK = FormField("action", "int", "Which listed action", low=0, high=LISTED - 1)
SOLVER_FORM = ReplyForm("Your message to the expert", fields=(ACT, PICK))


def spaces(task: Mapping[str, Any], settings: Mapping[str, Any]) -> WorldSpaces:
    """The spaces of every puzzle (the same for every task and setting)."""
    roles = {
        SOLVER: RoleSpaces(SOLVER_FORM, {"module": MODULE}, read=_solver, mask=_listed),
        EXPERT: RoleSpaces(reply_form(EXPERT, Observation(EXPERT, 0, ""))),
    }
    return WorldSpaces(roles, reward=lambda scores: float(scores.get("progress", 0.0) >= 100.0))


def _legal(observation: Observation) -> list[str]:
    return [str(name) for name in observation.data.get("actions") or []]


def _solver(action: Mapping[str, Any], observation: Observation) -> Reply:
    """The listed action the index picks (its name, as the solver's form sends it), or the message."""
    if not int(action.get("act", 0)):
        return form_reply(SOLVER_FORM)(action, observation)
    legal, index = _legal(observation), int(action["action"])
    return Reply(action={"actions": [legal[index] if index < len(legal) else ""]})


def _listed(observation: Observation) -> dict[str, Any]:
    """Any message; the action index only among the listed actions."""
    listed = np.zeros(LISTED, dtype=np.int8)
    listed[: len(_legal(observation))] = 1
    return {"message": None, "act": None, "action": listed}
