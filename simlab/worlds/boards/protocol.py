"""How models and people play the cobot roles: prompts, reply reading and the person's forms.

The programmer answers an instruction in plain words, or ``DONE``; the response anchors of the paper's
prompts (``[[ ## instruction ## ]]``, ``[[ ## completed ## ]]``) are taken off. The robot answers the JSON of
:mod:`simlab.worlds.boards.replies`. A robot reply that cannot be read is unreadable like any other (it
counts as a give-up) but is not re-asked by the model agent: as in the paper, the game master sends the
reference's parse error back and counts it toward the abort rule, so the robot's give-up rule hands the unread
text to the world (``{"status": "unreadable", ...}``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from simlab.core.family import FormField, ReplyError, ReplyForm, ReplyProtocol, prompt_text
from simlab.core.world import Observation, Reply
from simlab.worlds.boards.replies import STATUSES, parse_robot_reply
from simlab.worlds.boards.world import DONE, PROGRAMMER, ROBOT

_ANCHOR = re.compile(r"\[\[\s*##\s*[a-z_ ]+\s*##\s*\]\]", re.IGNORECASE)
PROGRAMMER_ECHOES = ("your instruction (or",)
"""Placeholders of the programmer's prompt a real instruction never holds."""

GUIDES = {
    "two": "a Programmer who sees the target tells you what to build. You never see the target.",
    "single": "you see the target structure and build it yourself; nobody else takes part.",
}
STATUS_LINES = {
    "two": 'Use "clarification" with your question in "details" when the instruction is unclear, and '
    '"acknowledgement" to answer a message that needs no code.',
    "single": 'When your grid matches the target, reply {"status": "acknowledgement", "details": "DONE"}. '
    "There is nobody to ask for clarification.",
}


def read_instruction(text: str, observation: Observation) -> Reply:
    """The programmer's instruction (or DONE) without the response anchors; ReplyError when nothing is left."""
    said = _ANCHOR.sub(" ", text or "").strip()
    if not said:
        raise ReplyError("the reply holds no instruction")
    return Reply(message=DONE if said.rstrip(".!").strip() == DONE else said)


def read_robot(text: str, observation: Observation) -> Reply:
    """The robot's JSON as its action; ReplyError when it cannot be read."""
    return Reply(action=parse_robot_reply(_ANCHOR.sub(" ", text or "")))


def robot_gives_up(text: str) -> Reply:
    """An unreadable robot reply goes to the world as ``unreadable`` with the parser's reason: the game
    master's parse error and the abort rule apply, as in the paper."""
    try:
        parse_robot_reply(_ANCHOR.sub(" ", text or ""))
        error = "unreadable"  # read now: the reply was refused before parsing (it copies a placeholder)
    except ReplyError as exc:
        error = str(exc)
    return Reply(action={"status": "unreadable", "text": (text or "")[:4000], "error": error})


def protocol(role: str, observation: Observation, settings: Mapping[str, Any]) -> ReplyProtocol:
    """The protocol of ``role``; ValueError for a role boards does not have."""
    board = observation.data.get("board") or {}
    size = {"rows": board.get("rows", 8), "cols": board.get("cols", 8)}
    if role == PROGRAMMER:
        return ReplyProtocol(
            prompt_text(__package__, "programmer").format(done=DONE, **size),
            read_instruction,
            f"Your reply could not be read ({{reason}}). Reply again with only your instruction, or {DONE}.",
            lambda text: Reply(message=None),  # no instruction: the game master aborts (a format violation)
            PROGRAMMER_ECHOES,
        )
    if role == ROBOT:
        agents = str(settings.get("agents", "two"))
        system = prompt_text(__package__, "robot").format(
            guide=GUIDES.get(agents, GUIDES["two"]), statuses=STATUS_LINES.get(agents, STATUS_LINES["two"]), **size
        )
        return ReplyProtocol(
            system,
            read_robot,
            None,  # the game master answers an unreadable reply itself, as in the paper
            robot_gives_up,
        )
    raise ValueError(f"boards has no role {role!r}")


ROBOT_FIELDS: tuple[FormField, ...] = (
    FormField("status", "choice", "Reply", choices=STATUSES),
    FormField("details", "code", "Code, question or acknowledgement"),
)


def reply_form(role: str, observation: Observation) -> ReplyForm:
    """What a person playing ``role`` fills in: the programmer's instruction (or DONE), or the robot's
    status and its code or question (the interpreter's verdict comes back in the dialogue)."""
    if role == ROBOT:
        return ReplyForm(fields=ROBOT_FIELDS)
    return ReplyForm(f"Your instruction to the robot ({DONE} to finish):", "Private notes (optional; recorded):")
