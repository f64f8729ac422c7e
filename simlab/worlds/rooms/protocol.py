"""How models and people play the Cosmic roles: prompts, reply parsing, re-asks and the person's form.

In the dialogue the Answerer writes a message and ends the chat with a line ``END`` (or ``[END]``); the Helper
writes a message; after the dialogue the Answerer replies with one option letter (yes/no for cognitive
mapping). The system prompts are ``prompts/answerer.txt``, ``prompts/helper.txt`` and
``prompts/final_answer.txt``; without a dialogue (the ``condition`` setting) the Answerer answers at once
under ``prompts/both_views.txt`` (it is given both views) or ``prompts/answerer_alone.txt`` (its own only).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from simlab.core.family import FormField, ReplyError, ReplyForm, ReplyProtocol, prompt_text
from simlab.core.world import Observation, Reply
from simlab.worlds.rooms.observations import ANSWERER, ANSWERER_ALONE, BOTH_VIEWS, DIALOGUE, HELPER
from simlab.worlds.rooms.world import TASK_INSTRUCTIONS, parse_answer

ANSWER_PROMPTS: dict[str, str] = {DIALOGUE: "final_answer", BOTH_VIEWS: "both_views", ANSWERER_ALONE: "answerer_alone"}
"""The answer phase's system prompt (a file of ``prompts/``) per ``condition``."""
_END_LINE = re.compile(r"^\s*\[?\s*END\s*\]?\s*[.!]?\s*$", re.IGNORECASE)
_END_TAG = re.compile(r"\[\s*END\s*\]", re.IGNORECASE)


def split_end(text: str) -> tuple[str, bool]:
    """The message without its end marker, and whether it had one: a line ``END`` or ``[END]`` (markdown
    emphasis allowed), or ``[END]`` anywhere, ends the Cosmic dialogue."""
    lines = text.splitlines()
    kept = [line for line in lines if not _END_LINE.match(line.replace("*", ""))]
    message = "\n".join(kept)
    ends = len(kept) < len(lines) or _END_TAG.search(message) is not None
    return _END_TAG.sub("", message).strip(), ends


def _answerer(text: str, observation: Observation) -> Reply:
    message, ends = split_end(text)
    if not message and not ends:
        raise ReplyError("the reply is empty")
    return Reply(message=message or text.strip(), action={"action": "end"} if ends else None)


def _helper(text: str, observation: Observation) -> Reply:
    if not text.strip():
        raise ReplyError("the reply is empty")
    return Reply(message=text.strip())


def _final_answer(text: str, observation: Observation) -> Reply:
    letters = [str(x) for x in observation.data.get("letters") or []]
    if not text.strip() or (letters and parse_answer(text, letters) is None):
        raise ReplyError(f"no single answer among {'/'.join(letters)}")
    return Reply(message=text.strip())


def _as_message(text: str) -> Reply:
    """Give-up reply: the text as the world's message (the world records what is wrong with it)."""
    return Reply(message=text.strip())


def protocol(role: str, observation: Observation, settings: Mapping[str, Any]) -> ReplyProtocol:
    """The protocol of ``role`` in the observation's phase; ValueError for a role rooms does not have."""
    if role not in (ANSWERER, HELPER):
        raise ValueError(f"rooms has no role {role!r}")
    data = observation.data
    fields = {
        "task_instruction": TASK_INSTRUCTIONS.get(str(data.get("task", "")), ""),
        "max_rounds": data.get("max_rounds", settings.get("max_rounds")),
        "letters": "/".join(str(x) for x in data.get("letters") or []),
    }
    again = "Your reply could not be read ({reason}). "
    if data.get("phase") == "answer":
        # the observation says which condition the role is in; the settings, for one made without it
        condition = str(data.get("condition") or settings.get("condition") or DIALOGUE)
        system = prompt_text(__package__, ANSWER_PROMPTS[condition]).format(**fields)
        reask = again + f"Reply with only your final answer: one of {fields['letters']}."
        return ReplyProtocol(system, _final_answer, reask, _as_message)
    parse = _answerer if role == ANSWERER else _helper
    return ReplyProtocol(
        prompt_text(__package__, role).format(**fields), parse, again + "Write your message.", _as_message
    )


def reply_form(role: str, observation: Observation) -> ReplyForm:
    """A message (the Answerer may end the chat with it), or after the dialogue the answer buttons."""
    data = observation.data
    if data.get("phase") == "answer":
        letters = tuple(str(x) for x in data.get("letters") or [])
        return ReplyForm(answers=FormField("answer", "choice", "Your final answer", choices=letters))
    if role == ANSWERER:
        end = FormField(
            "action", "flag", "End the conversation after this message (then give your answer)", value="end"
        )
        return ReplyForm("Your message to the Helper:", fields=(end,))
    return ReplyForm("Your message to the Answerer:")
