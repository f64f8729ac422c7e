"""How models and people play the COMMA roles: the paper's prompts (appendix D), the solver's reply read as
actions by exact name, and the person's forms.

A solver reply whose every non-empty line is a legal action name (after trimming spaces) is that list of
actions; anything else is a message to the expert (the paper's exact string matching: "Cut wire 2." with a
full stop is a message, not an action). So a reply is unreadable only when it says nothing (an empty reply,
or one whose reasoning was never closed): the model agent re-asks it once; anything else a model says is
what the game gets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simlab.core.family import FormField, ReplyError, ReplyForm, ReplyProtocol, prompt_text
from simlab.core.world import Observation, Reply
from simlab.worlds.puzzles.world import EXPERT, SOLVER


def action_lines(text: str, legal: list[str]) -> list[str] | None:
    """The actions ``text`` names when every non-empty line is exactly a legal action; None otherwise."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines if lines and all(line in legal for line in lines) else None


def read_solver(text: str, observation: Observation) -> Reply:
    """Actions when the reply is a list of legal action names, else a message to the expert."""
    actions = action_lines(text, [str(a) for a in observation.data.get("actions") or []])
    if actions is not None:
        return Reply(action={"actions": actions})
    return _message(text)


def read_expert(text: str, observation: Observation) -> Reply:
    return _message(text)


def _message(text: str) -> Reply:
    if not (text or "").strip():
        raise ReplyError("the reply is empty")
    return Reply(message=text.strip())


def protocol(role: str, observation: Observation, settings: Mapping[str, Any]) -> ReplyProtocol:
    """The protocol of ``role``; ValueError for a role puzzles does not have."""
    if role not in (SOLVER, EXPERT):
        raise ValueError(f"puzzles has no role {role!r}")
    parse = read_solver if role == SOLVER else read_expert
    return ReplyProtocol(
        prompt_text(__package__, role),
        parse,
        "Your reply was empty ({reason}). Reply again.",
        lambda text: Reply(message=None),  # nothing said: recorded as a protocol error, the turn goes on
    )


def reply_form(role: str, observation: Observation) -> ReplyForm:
    """The solver: a message to the expert, or one of the legal actions (the world takes a single name as a
    one-item list); the expert: a message."""
    if role == SOLVER:
        legal = tuple(str(a) for a in observation.data.get("actions") or [])
        act = FormField("actions", "choice", "Or take an action", choices=legal, optional=True)
        return ReplyForm("Your message to the expert (they cannot see the module):", fields=(act,))
    return ReplyForm("Your message to the solver:")
