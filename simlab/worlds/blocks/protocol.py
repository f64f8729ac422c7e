"""How models and people play the CRAFT roles: prompts, reply parsing, re-asks and the person's move form.

Directors answer ``<think>...</think><message>...</message>``; the builder answers one move line in the CRAFT
colon format (:mod:`simlab.worlds.blocks.replies`), or with ``builder="tools"`` also ``SIMULATE:`` and a move
line, a dry run the world answers within the turn. The system prompts are ``prompts/director.txt`` and
``prompts/builder.txt`` followed by the paragraph of the builder's condition (``prompts/builder_CONDITION.txt``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from simlab.core.family import FormField, ReplyError, ReplyForm, ReplyProtocol, prompt_text
from simlab.core.world import Observation, Reply
from simlab.worlds.blocks.model import BLOCK_CODES, Action, Move
from simlab.worlds.blocks.replies import parse_builder_reply, parse_director_reply
from simlab.worlds.blocks.simulation import SIMULATE, is_simulation, simulate_action
from simlab.worlds.blocks.world import ARCHETYPES, BUILDER, DIRECTORS

DIRECTOR_ECHOES = ("your private reasoning", "your public message", "one instruction for the builder")
"""Placeholders of the director's prompt and re-ask: a reply holding one copied them instead of answering."""
BUILDER_ECHOES = ("block_code:position", "CONFIRM:reasoning", ":span_to", "<move line>")
"""Placeholders of the builder's prompt, its observation and its re-ask."""
TARGET_SIGHT = {
    "full_information": "that you are shown too; you see the current board, the directors' messages of this turn "
    "and the whole target",
}
"""How the builder's prompt says what it sees of the target, where its condition is not the default's."""
DEFAULT_SIGHT = "that you cannot see; you see the current board and the directors' messages of this turn"
SIMULATE_ANSWERS = {
    "reference": "the stacks it would leave and, as the reference game's tool does, whether the block would be "
    "right for the target there and the progress after it",
    "engine": "and the stacks it would leave",
}
"""What a simulation answers besides legality, per ``simulate_feedback`` (the tools prompt says it)."""
REASKS = {
    "oracle": "move line: copy one verified candidate line as it is, or write PLACE:..., REMOVE:... or CLARIFY: "
    "followed by your own question.",
    "tools": "line: SIMULATE: and a move line while simulations are left, or PLACE:..., REMOVE:... or CLARIFY: "
    "followed by your own question.",
}
"""The end of the builder's re-ask, per condition (the one for ``oracle`` names the candidates)."""
DEFAULT_REASK = "move line: PLACE:..., REMOVE:... or CLARIFY: followed by your own question."
_SIMULATE_LINE = re.compile(r"\bSIMULATE\s*:?\s*(?=(?:PLACE|REMOVE|CLARIFY)\b)", re.IGNORECASE)


def _director(text: str, observation: Observation) -> Reply:
    reasoning, message = parse_director_reply(text)
    return Reply(message=message, reasoning=reasoning)


def _builder(text: str, observation: Observation) -> Reply:
    action = read_builder_reply(text)
    if is_simulation(action):
        left = observation.data.get("simulations_left")
        if left is None:
            raise ReplyError("SIMULATE is not offered in this game: reply with one move line")
        if not isinstance(left, int) or left <= 0:
            raise ReplyError("no simulations are left this turn: reply with your move")
    return Reply(message=action["text"] if action["action"] == "clarify" else None, action=action)


def read_builder_reply(text: str) -> dict[str, Any]:
    """The builder's move (:func:`parse_builder_reply`) or, from the first line that says ``SIMULATE:`` before
    a move, the simulate action of that move; a move written on an earlier line comes first."""
    lines = (text or "").splitlines()
    found = ((k, _SIMULATE_LINE.search(line.replace("*", "").replace("`", ""))) for k, line in enumerate(lines))
    at, match = next(((k, m) for k, m in found if m is not None), (None, None))
    if at is None or match is None:
        return parse_builder_reply(text)
    try:
        return parse_builder_reply("\n".join(lines[:at]))
    except ReplyError:
        pass  # nothing before it: the SIMULATE line is the reply
    move = parse_builder_reply(lines[at].replace("*", "").replace("`", "")[match.end() :])
    if move["action"] == Action.CLARIFY.value:
        raise ReplyError(f"{SIMULATE.upper()} tries a PLACE or REMOVE line, not a CLARIFY")
    return simulate_action(Move.from_json(move))


def builder_system(settings: Mapping[str, Any]) -> str:
    """The builder's system prompt under its condition (the ``builder`` setting)."""
    condition = str(settings.get("builder", "oracle"))
    fields = {
        "block_codes": ", ".join(BLOCK_CODES),
        "target_sight": TARGET_SIGHT.get(condition, DEFAULT_SIGHT),
        "max_simulations": settings.get("max_simulations", 3),
        "simulate_answer": SIMULATE_ANSWERS[str(settings.get("simulate_feedback", "reference"))],
    }
    parts = (prompt_text(__package__, "builder"), prompt_text(__package__, f"builder_{condition}"))
    return "\n\n".join(parts).format(**fields)


def protocol(role: str, observation: Observation, settings: Mapping[str, Any]) -> ReplyProtocol:
    """The protocol of ``role``; ValueError for a role blocks does not have."""
    fields = {"role": role, "block_codes": ", ".join(BLOCK_CODES)}
    if role == BUILDER:
        condition = str(settings.get("builder", "oracle"))
        return ReplyProtocol(
            builder_system(settings),
            _builder,
            "Your reply could not be read ({reason}). Reply again with exactly one "
            + REASKS.get(condition, DEFAULT_REASK),
            lambda text: Reply(action=None),  # no move this turn; the world records it as a protocol error
            BUILDER_ECHOES,
        )
    if role in DIRECTORS:
        persona = str(observation.data.get("persona", ""))
        fields.update(persona=persona, persona_traits=ARCHETYPES.get(persona, ""))
        return ReplyProtocol(
            prompt_text(__package__, "director").format(**fields),
            _director,
            "Your reply could not be read ({reason}). Reply again: first your private thoughts inside <think> and "
            "</think>, then the one instruction for the builder inside <message> and </message>.",
            lambda text: Reply(message=None),  # says nothing this turn: its raw text may hold private thoughts
            DIRECTOR_ECHOES,
        )
    raise ValueError(f"blocks has no role {role!r}")


CELL_HIGH = 2
MOVE_FIELDS: tuple[FormField, ...] = (
    FormField("action", "choice", "Action", choices=("place", "remove", "clarify")),
    FormField("block", "choice", "Block", choices=BLOCK_CODES, when=("action", ("place",))),
    FormField("cell", "cell", "Cell (i, j)", high=CELL_HIGH, when=("action", ("place", "remove"))),
    FormField("layer", "int", "Layer", high=CELL_HIGH, when=("action", ("place", "remove"))),
    FormField("span_to", "cell", "Spans to", high=CELL_HIGH, optional=True, when=("action", ("place", "remove"))),
)
"""The builder's move as a form; the action it builds is a ``Move`` JSON."""
_TRIED = ("place", "remove", SIMULATE)
TOOL_FIELDS: tuple[FormField, ...] = (
    FormField("action", "choice", "Action", choices=("place", "remove", "clarify", SIMULATE)),
    FormField("move", "choice", "Move to simulate", choices=("place", "remove"), when=("action", (SIMULATE,))),
    FormField("block", "choice", "Block", choices=BLOCK_CODES, when=("action", ("place", SIMULATE))),
    FormField("cell", "cell", "Cell (i, j)", high=CELL_HIGH, when=("action", _TRIED)),
    FormField("layer", "int", "Layer", high=CELL_HIGH, when=("action", _TRIED)),
    FormField("span_to", "cell", "Spans to", high=CELL_HIGH, optional=True, when=("action", _TRIED)),
)
"""The tools builder's form while simulations are left: a move, or a simulate action (a simulated remove
ignores the block)."""


def reply_form(role: str, observation: Observation) -> ReplyForm:
    """What a person playing ``role`` fills in: a director's message and private reasoning, or the builder's
    move with the verified candidates as presets (and a simulate action while the tools condition has some
    left)."""
    if role == BUILDER:
        presets = tuple((Move.from_json(m).describe(), m) for m in observation.data.get("candidates") or [])
        left = observation.data.get("simulations_left")
        fields = TOOL_FIELDS if isinstance(left, int) and left > 0 else MOVE_FIELDS
        return ReplyForm("Message (optional; a clarify's question):", fields=fields, presets=presets)
    return ReplyForm(
        "Your public message (everyone sees it):",
        "Private reasoning (optional; recorded, never shown to the others):",
    )
