"""The Cosmic game master: the Answerer and the Helper talk about a room, then the Answerer answers.

Protocol (paper section 4, supplementary 11): messages alternate starting with the Answerer, one message per
turn, up to ``max_rounds`` messages (10; the paper's "rounds" are counted as messages, as its human interface
ends the chat "after 10 messages are exchanged"). The Answerer may end the chat early by replying with the
action ``{"action": "end"}``. Then the Answerer gets the final-answer prompt; its reply is parsed to a letter
(or yes/no for cognitive mapping) and an unparseable reply is recorded as invalid (outcome ``abort``).

Both roles get their own egocentric image (rendered only when someone looks) and the history; the Answerer
also gets the question, the options and, for cognitive mapping, the map. ``observation.data`` additionally
carries each role's visible objects as ground truth (``view``) and the Answerer's ``camera``: only scripted
baselines read those; live models get the text and images.

The ``condition`` setting (Cosmic section 5.1, fig. 6 right) leaves the dialogue out: in ``both-views`` the
Answerer is given the Helper's picture too (``helper_view``, its objects in ``data["helper_view"]`` in the
Helper's frame), in ``answerer-alone`` its own view only; either way the episode starts in the answer phase,
the Helper never acts, the Answerer answers at turn 1 and the metrics are the dialogue's. Observations and
the summary then name the condition (``condition``); the dialogue's recordings are unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from simlab.core import events as ev
from simlab.core.events import Event
from simlab.core.family import Settings
from simlab.core.world import LazyImages, Observation, Reply, World
from simlab.worlds.rooms.mentions import Resolution, message_mentions
from simlab.worlds.rooms.model import Camera, Scene
from simlab.worlds.rooms.observations import (
    ANSWERER,
    BOTH_VIEWS,
    DIALOGUE,
    HELPER,
    HELPER_FRAME,
    HELPER_VIEW,
    Condition,
    answerer_data,
    helper_view_entries,
    map_in_words,
    view_entries,
    view_in_words,
)
from simlab.worlds.rooms.tasks import Question
from simlab.worlds.rooms.visibility import ViewPair


class RoomsSettings(Settings):
    """The Cosmic protocol's options."""

    max_rounds: int = Field(10, ge=1, le=10_000, description="messages before the final answer (the paper's 10)")
    image_width: int = Field(1024, ge=16, le=8192, description="width of each agent's rendered view, in pixels")
    image_height: int = Field(768, ge=16, le=8192, description="height of each agent's rendered view, in pixels")
    condition: Condition = Field(
        DIALOGUE,
        description="dialogue: the Answerer and the Helper talk, then it answers; both-views: it is given both "
        "views and answers at once (the paper's single-agent condition); answerer-alone: its own view only, no "
        "dialogue (the single-view baseline)",
    )

    @model_serializer(mode="wrap")
    def _recorded(self, dump: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The settings as runs record them, ``condition`` left out when it is the dialogue: the dialogue's
        recordings stay byte for byte what they were before the setting existed, and a recording without it
        (every older one) is a dialogue."""
        out = dict(dump(self))
        if out.get("condition") == DIALOGUE:
            del out["condition"]
        return out


TASK_INSTRUCTIONS = {
    "anchor": "Find which object is visible in both your views.",
    "counting": "Count the objects of one kind in the whole room, counting an object you both see once.",
    "distance": "Work out which object is closest to (or farthest from) a target object.",
    "direction": "Work out in which direction, from the Answerer's point of view, an object only the Helper sees is.",
    "mapping": "Decide whether the Answerer's top-down map of the room is correct.",
}


class RoomsWorld(World):
    """One question about one room, discussed by an Answerer and a Helper."""

    family = "rooms"
    roles = (ANSWERER, HELPER)

    def __init__(self, task: Mapping[str, Any], settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(task, RoomsSettings.checked(settings))
        self.scene = Scene.from_json(task["scene"])
        self.views = ViewPair.from_json(task["views"])
        self.question = Question.from_json(task["question"])
        self.condition = str(self.settings.get("condition", DIALOGUE))
        self.history: list[dict[str, Any]] = []
        self.phase = "dialogue"
        self.answer: str | None = None
        self._ended = False

    # ---- AEC protocol --------------------------------------------------------------------------------
    def reset(self, seed: int) -> list[Event]:
        self.history, self.answer, self._ended = [], None, False
        self.turn = 1
        if self.condition == DIALOGUE:
            self.phase = "dialogue"
            return [ev.state(0, {"phase": "dialogue"})]
        self.phase = "answer"  # no dialogue: the Answerer answers at once
        return [ev.state(0, {"phase": "answer", "condition": self.condition})]

    @property
    def agent_selection(self) -> str | None:
        if self._ended:
            return None
        if self.phase == "answer":
            return ANSWERER
        return ANSWERER if len(self.history) % 2 == 0 else HELPER

    @property
    def done(self) -> bool:
        return self._ended

    @property
    def truncated(self) -> bool:
        return False  # the dialogue budget leads to the answer phase, never past it

    def step(self, reply: Reply) -> list[Event]:
        role = self.agent_selection
        if role is None:
            raise RuntimeError("the episode is over; nothing may act")
        out = self._answer_step(reply) if self.phase == "answer" else self._dialogue_step(role, reply)
        self.turn += 1
        return out

    def _dialogue_step(self, role: str, reply: Reply) -> list[Event]:
        text = (reply.message or "").strip()
        out: list[Event] = []
        if text:
            self.history.append({"turn": self.turn, "role": role, "text": text})
            out.append(ev.message(self.turn, role, text))
            out.append(ev.score(self.turn, {"mentions": float(self.mentions(text, role).count)}))
        else:
            self.history.append({"turn": self.turn, "role": role, "text": ""})
            out.append(ev.protocol_error(self.turn, role, "no_message", f"the {role} sent an empty message"))
        ends = role == ANSWERER and (reply.action or {}).get("action") == "end"
        if ends:
            out.append(Event("action", self.turn, role, {"action": {"action": "end"}, "text": "ends the conversation"}))
        if ends or len(self.history) >= int(self.settings["max_rounds"]):
            self.phase = "answer"
            out.append(ev.state(self.turn, {"phase": "answer", "ended_early": ends}))
        return out

    def _answer_step(self, reply: Reply) -> list[Event]:
        raw = (reply.action or {}).get("answer") if reply.action else None
        answer = parse_answer(str(raw if raw is not None else reply.message or ""), self._letters())
        self.answer, self._ended = answer, True
        correct = answer == self.question.answer
        out = [Event("action", self.turn, ANSWERER, {"action": {"answer": answer}, "text": reply.message or ""})]
        result = {"ok": answer is not None, "answer": answer, "expected": self.question.answer, "correct": correct}
        if answer is None:
            message = f"could not read an answer from {reply.message!r:.80}"
            result.update(error="invalid_answer", message=message)
            out.append(ev.protocol_error(self.turn, ANSWERER, "invalid_answer", message))
        else:
            verdict = "correct" if correct else "wrong"
            result["message"] = f"answered {answer}: {verdict} (right: {self.question.answer})"
            if not correct:
                result["mistake"] = "wrong answer"
        out.append(Event("result", self.turn, "engine", result))
        out.append(ev.score(self.turn, {"accuracy": float(correct), "invalid": float(answer is None)}))
        return out

    # ---- observations ---------------------------------------------------------------------------------
    def observe(self, role: str) -> Observation:
        if role not in self.roles:
            raise ValueError(f"rooms has no role {role!r}")
        camera = self.views.answerer if role == ANSWERER else self.views.helper
        data = self._given(role, camera)
        data.update(
            phase=self.phase,
            history=[{"role": h["role"], "text": h["text"]} for h in self.history],
            round=len(self.history) + 1,
            max_rounds=int(self.settings["max_rounds"]),
        )
        makers = {"view": lambda: self._render(camera)}
        words = {"view": view_in_words(data["view"])}
        if HELPER_VIEW in data:  # both-views: the Helper's picture second, after the Answerer's own
            makers[HELPER_VIEW] = lambda: self._render(self.views.helper)
            words[HELPER_VIEW] = view_in_words(data[HELPER_VIEW], HELPER_FRAME)
        if role == ANSWERER and self.question.task == "mapping":
            makers["map"] = self._render_map
            words["map"] = map_in_words(data["map_objects"])
        history = tuple(f"{h['role']}: {h['text']}" for h in self.history)
        text = self._prompt(role, data, history)
        return Observation(role, self.turn, text, LazyImages(makers), data, image_texts=words, history=history)

    def _given(self, role: str, camera: Camera) -> dict[str, Any]:
        """The role's data before the dialogue fields: its view and, for the Answerer, the question, the map
        and in ``both-views`` the Helper's view; ``condition`` when it is not the dialogue (so the dialogue's
        recordings stay as they were)."""
        if role == ANSWERER:
            data = answerer_data(self.question, self.scene, self.views)
            if self.condition == BOTH_VIEWS:
                data[HELPER_VIEW] = helper_view_entries(self.scene, self.views)
        else:
            visible = self.views.helper_visible
            view = view_entries(self.scene, visible, camera, self.task.get("descriptions") or {})
            data = {"role": HELPER, "task": self.question.task, "view": view}
        if self.condition != DIALOGUE:
            data["condition"] = self.condition
        return data

    def _prompt(self, role: str, data: Mapping[str, Any], history: Sequence[str]) -> str:
        """The turn's message: the question (Answerer), the conversation and what to do now. Who the role is
        and the task are the protocol's system prompt, and the pictures are the agent's to attach or put in
        words, so neither is repeated here."""
        parts = []
        if role == ANSWERER:
            options = "\n".join(f"({letter}) {o}" for letter, o in zip(data["letters"], data["options"], strict=False))
            parts.append(f"Question: {data['question']}\nOptions:\n{options}")
            if self.question.task == "mapping":
                parts.append("The question is about the candidate top-down map of the room; you face up in it.")
        if self.condition != DIALOGUE:  # no conversation to show: the Answerer answers at once
            parts.append(self._answer_now(role, data))
            return "\n\n".join(parts)
        parts.append("Conversation so far:\n" + ("\n".join(history) or "(no messages yet)"))
        if self.phase == "answer" and role == ANSWERER:
            letters = "/".join(data["letters"])
            parts.append(f"The conversation is over. Reply with only your final answer ({letters}).")
        elif self.phase == "answer":  # the Helper is never asked now, but may look (PettingZoo observes anyone)
            parts.append("The conversation is over: the Answerer gives the final answer.")
        elif role == ANSWERER:
            parts.append(
                f"Message {data['round']} of at most {data['max_rounds']}. Write your next message to the Helper, "
                "or end the conversation when you can answer."
            )
        else:
            parts.append(f"Message {data['round']} of at most {data['max_rounds']}. Reply to the Answerer.")
        return "\n\n".join(parts)

    def _answer_now(self, role: str, data: Mapping[str, Any]) -> str:
        """What to do now when there is no dialogue (which picture is which is the system prompt's to say)."""
        if role != ANSWERER:  # the Helper is never asked, but may look (PettingZoo observes anyone)
            return "There is no conversation in this condition: the Answerer answers alone."
        letters = "/".join(data["letters"])
        return f"There is no conversation: answer now. Reply with only your final answer ({letters})."

    def _letters(self) -> list[str]:
        return ["yes", "no"] if self.question.task == "mapping" else ["A", "B", "C", "D"][: len(self.question.options)]

    def _map_ids(self) -> list[str]:
        return sorted({*self.views.answerer_visible, *self.views.helper_visible})

    def _render(self, camera: Camera) -> Any:
        from simlab.worlds.rooms.render import render_view  # VTK only when someone looks

        size = (int(self.settings["image_width"]), int(self.settings["image_height"]))
        return render_view(self.scene, camera, size)

    def _render_map(self) -> Any:
        from simlab.worlds.rooms.render import topdown_map

        return topdown_map(self.scene, self._map_ids(), self.views.answerer, swap=self.question.map_swap)

    # ---- analysis -------------------------------------------------------------------------------------
    def mentions(self, text: str, role: str | None = None) -> Resolution:
        """The objects a message ``role`` sent refers to: ``count`` distinct objects, ``objects`` to outline
        (see :mod:`simlab.worlds.rooms.mentions`; no role, no speaker's view)."""
        return message_mentions(self.scene, self.views, role, text)

    def summary(self) -> dict[str, Any]:
        said = [h for h in self.history if h["text"]]
        messages = [h["text"] for h in said]
        words = sum(len(m.split()) for m in messages)
        mentions = [self.mentions(h["text"], h["role"]).count for h in said]
        correct = self.answer is not None and self.answer == self.question.answer
        outcome = "abort" if self.answer is None else "success" if correct else "failure"
        metrics = {
            "accuracy": float(correct),
            "invalid": float(self.answer is None),
            "words": float(words),
            "messages": float(len(messages)),
            "mentions_per_message": sum(mentions) / len(mentions) if mentions else 0.0,
        }
        summary = {
            "world": self.family,
            "task_id": self.task_id(),
            "group": self.question.task,
            "outcome": outcome,
            "score": float(correct),
            "turns": self.turn - 1,  # every turn played, the answer's included (what the timeline counts)
            "errors": int(not correct),  # an unreadable answer or a wrong one
            "metrics": metrics,
        }
        if self.condition != DIALOGUE:  # report --group-by condition; the dialogue's summaries stay as they were
            summary["condition"] = self.condition
        return summary


def parse_answer(text: str, letters: list[str]) -> str | None:
    """The answer a reply gives: a lone letter (``B``, ``(B)``, ``Answer: B``) or yes/no; None when unclear."""
    cleaned = text.strip()
    if letters == ["yes", "no"]:
        words = set(re.findall(r"\b(yes|no)\b", cleaned.lower()))
        return words.pop() if len(words) == 1 else None
    found = set(re.findall(rf"(?<![A-Za-z])\(?([{''.join(letters)}])\)?(?![A-Za-z])", cleaned))
    return found.pop() if len(found) == 1 else None
