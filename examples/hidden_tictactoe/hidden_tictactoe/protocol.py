"""How models and people play the two roles: prompts, reply parsing, the re-ask, and the person's form.

The seer answers with free text (its message). The player answers with one line ``MOVE i,j`` (also
``MOVE (i, j)``) or ``ASK question``; the first such line of the reply counts. Prompts are package data:
``prompts/seer.txt`` and ``prompts/player.txt``. Model output is only ever matched with regular expressions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from simlab.core.family import FormField, ReplyError, ReplyForm, ReplyProtocol, prompt_text
from simlab.core.world import Observation, Reply

from hidden_tictactoe.board import SIZE
from hidden_tictactoe.roles import PLAYER, SEER

MOVE_RE = re.compile(r"^\W*MOVE\W*?\(?\s*(\d+)\s*,\s*(\d+)\s*\)?", re.IGNORECASE)
ASK_RE = re.compile(r"^\W*ASK\b\s*:?\s*(.*\S)", re.IGNORECASE)
PLAYER_REASK = "Your reply could not be read ({reason}). Reply with exactly one line: MOVE i,j or ASK your question."
SEER_REASK = "Your reply could not be read ({reason}). Write your message to the player."


def parse_player(text: str, observation: Observation | None = None) -> Reply:
    """The player's reply: a move ``{"cell": [i, j]}`` or a question (a message); ReplyError otherwise."""
    for line in text.splitlines():
        move = MOVE_RE.match(line)
        if move:
            return Reply(action={"cell": [int(move.group(1)), int(move.group(2))]})
        ask = ASK_RE.match(line)
        if ask:
            return Reply(message=ask.group(1).strip())
    raise ReplyError("no line starting with MOVE i,j or ASK")


def parse_seer(text: str, observation: Observation | None = None) -> Reply:
    """The seer's reply is its message; ReplyError when it is empty."""
    if not text.strip():
        raise ReplyError("the reply is empty")
    return Reply(message=text.strip())


def protocol(role: str, observation: Observation, settings: Mapping[str, Any]) -> ReplyProtocol:
    """The protocol of ``role``; ValueError for a role the game does not have. A player whose re-asked reply
    still cannot be read loses the turn (the world records a protocol error)."""
    fields = {"lives": settings.get("lives", 2), "turns": settings.get("turns", 8)}
    if role == SEER:
        system = prompt_text(__package__, "seer").format(**fields)
        return ReplyProtocol(system, parse_seer, SEER_REASK, lambda text: Reply(message=text.strip() or None))
    if role == PLAYER:
        system = prompt_text(__package__, "player").format(**fields)
        return ReplyProtocol(system, parse_player, PLAYER_REASK, lambda text: Reply())
    raise ValueError(f"tictactoe has no role {role!r}")


CELL_FIELD = FormField(
    "cell", "cell", "Mark the cell (row, column); leave unticked to only ask", high=SIZE - 1, optional=True
)


def reply_form(role: str, observation: Observation) -> ReplyForm:
    """A seer writes a message (and private notes); a player ticks a cell to mark, or writes a question."""
    if role == PLAYER:
        return ReplyForm("Your question to the seer (optional when you mark a cell):", fields=(CELL_FIELD,))
    return ReplyForm("Your message to the player:", "Private notes (optional; recorded, never shown to the player):")
