"""The rooms roles as Gymnasium spaces, for the PettingZoo adapter (:mod:`simlab.pettingzoo`).

Both roles send a message and see their own view (the settings' image size); the Answerer may also end the
dialogue (``action``: 1) and, once it is over, answers with one of the question's letters (``answer``; its
message is then ignored), and sees the candidate map in a mapping question. The reward is correctness: 1 when
the answer is right.

Without a dialogue (the ``condition`` setting) the Answerer only answers, in the same action space (one policy
plays every condition), and the Helper never acts; in ``both-views`` the Answerer also sees ``helper_view``,
the Helper's view, at the same size as its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from simlab.core.world import Observation, Reply
from simlab.pettingzoo import RoleSpaces, WorldSpaces, answer_reply, form_reply
from simlab.worlds.rooms.observations import ANSWERER, BOTH_VIEWS, HELPER, HELPER_VIEW
from simlab.worlds.rooms.protocol import reply_form
from simlab.worlds.rooms.tasks import LETTERS, YES_NO, Question

MAP = (384, 384)  # the candidate map, drawn 768 x 768


def spaces(task: Mapping[str, Any], settings: Mapping[str, Any]) -> WorldSpaces:
    """The spaces of a task: its answer letters, its pictures at the settings' size."""
    question = Question.from_json(task["question"])
    letters = list(YES_NO) if question.task == "mapping" else list(LETTERS[: len(question.options)])
    size = (int(settings["image_width"]), int(settings["image_height"]))
    view = {"view": size}
    dialogue = reply_form(ANSWERER, _at("dialogue", letters))
    answering = reply_form(ANSWERER, _at("answer", letters))
    answerer = replace(dialogue, answers=answering.answers)  # one space for both phases
    pictures = {**view, HELPER_VIEW: size} if settings.get("condition") == BOTH_VIEWS else dict(view)
    if question.task == "mapping":
        pictures["map"] = MAP
    roles = {
        ANSWERER: RoleSpaces(answerer, pictures, read=_answerer),
        HELPER: RoleSpaces(reply_form(HELPER, _at("dialogue", letters)), view),
    }
    return WorldSpaces(roles, reward=lambda scores: scores.get("accuracy", 0.0))


def _at(phase: str, letters: list[str]) -> Observation:
    """An observation of ``phase`` that says only what the reply form reads."""
    return Observation(ANSWERER, 0, "", data={"phase": phase, "letters": letters})


def _answerer(action: Mapping[str, Any], observation: Observation) -> Reply:
    """The dialogue's message (and end), or after the dialogue the answer the action picks."""
    form = reply_form(ANSWERER, observation)
    return answer_reply(form, action) if form.answers is not None else form_reply(form)(action, observation)
