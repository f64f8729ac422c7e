"""How models and people play the CRAFT roles: prompts, reply parsing, re-asks and the person's move form.

Directors answer ``<think>...</think><message>...</message>``; the builder answers one move line in the CRAFT
colon format (:mod:`simlab.worlds.blocks.replies`). The system prompts are ``prompts/director.txt`` and
``prompts/builder.txt``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simlab.core.family import FormField, ReplyForm, ReplyProtocol, prompt_text
from simlab.core.world import Observation, Reply
from simlab.worlds.blocks.model import BLOCK_CODES, Move
from simlab.worlds.blocks.replies import parse_builder_reply, parse_director_reply
from simlab.worlds.blocks.world import ARCHETYPES, BUILDER, DIRECTORS

DIRECTOR_ECHOES = ("your private reasoning", "your public message", "one instruction for the builder")
"""Placeholders of the director's prompt and re-ask: a reply holding one copied them instead of answering."""
BUILDER_ECHOES = ("block_code:position", "CONFIRM:reasoning", ":span_to")
"""Placeholders of the builder's prompt and re-ask."""


def _director(text: str, observation: Observation) -> Reply:
    reasoning, message = parse_director_reply(text)
    return Reply(message=message, reasoning=reasoning)


def _builder(text: str, observation: Observation) -> Reply:
    action = parse_builder_reply(text)
    return Reply(message=action["text"] if action["action"] == "clarify" else None, action=action)


def protocol(role: str, observation: Observation, settings: Mapping[str, Any]) -> ReplyProtocol:
    """The protocol of ``role``; ValueError for a role blocks does not have."""
    fields = {"role": role, "block_codes": ", ".join(BLOCK_CODES)}
    if role == BUILDER:
        return ReplyProtocol(
            prompt_text(__package__, "builder").format(**fields),
            _builder,
            "Your reply could not be read ({reason}). Reply again with exactly one move line: copy one verified "
            "candidate line as it is, or write PLACE:..., REMOVE:... or CLARIFY: followed by your own question.",
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


def reply_form(role: str, observation: Observation) -> ReplyForm:
    """What a person playing ``role`` fills in: a director's message and private reasoning, or the builder's
    move with the verified candidates as presets."""
    if role == BUILDER:
        presets = tuple((Move.from_json(m).describe(), m) for m in observation.data.get("candidates") or [])
        return ReplyForm("Message (optional; a clarify's question):", fields=MOVE_FIELDS, presets=presets)
    return ReplyForm(
        "Your public message (everyone sees it):",
        "Private reasoning (optional; recorded, never shown to the others):",
    )
