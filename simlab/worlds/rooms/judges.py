"""Cosmic's dialogue repair judge (paper section 5.3, supplementary 12) over recorded rooms episodes.

One item per conversation: an episode with at least one message is rated once, at its last turn, about the
conversation as a whole (subject ""). The judge gets the full task context, as the paper gives it: the task,
the question and options, the ground-truth answer, what each agent sees and the transcript (the messages, the
Answerer ending the chat, its final answer; never its private reasoning). The views are the ones a text-only
agent is given: the world's own observations of the recorded task, in words
(:func:`~simlab.worlds.rooms.observations.view_in_words`, and the map for cognitive mapping). A long
conversation keeps its last :data:`CONVERSATION_TURNS` turns.

The one question is labelled -1, 0 or 1 (flawed and not repaired, no flaw, flawed and repaired); each item is
judged twice and kept only when both runs agree, and the headline is :func:`repair_rate`. The paper's prompt
(its supplementary 12.1) is not in its text; ours is ``prompts/judge_repair.txt``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from simlab.core.episode import Episode
from simlab.core.family import prompt_text
from simlab.core.judging import Judge, JudgeItem, Question, Scale, transcript
from simlab.core.world import Observation
from simlab.worlds.rooms.observations import ANSWERER, HELPER
from simlab.worlds.rooms.world import TASK_INSTRUCTIONS, RoomsWorld

CONVERSATION_TURNS = 40
"""Turns of conversation an item shows (the paper's conversations have at most 10 messages and an answer)."""
REPAIR = "DR"
REPAIR_SCALE = Scale({"-1": -1.0, "0": 0.0, "1": 1.0})
"""-1 flawed and not repaired, 0 no flawed trajectory, 1 flawed and repaired (supplementary 12)."""


def _conversation(episode: Episode) -> list[tuple[int, str, str]]:
    """``(turn, role, text)`` of what was said and done in the open: messages, the end, the final answer."""
    out = []
    for e in episode.events:
        action = e.data.get("action") if e.kind == "action" else None
        if e.kind == "message" and e.role:
            out.append((e.turn, e.role, str(e.data.get("text", ""))))
        elif e.kind == "protocol_error" and e.data.get("code") == "no_message" and e.role:
            out.append((e.turn, e.role, "(an empty message)"))
        elif isinstance(action, Mapping) and action.get("action") == "end" and e.role:
            out.append((e.turn, e.role, "(ends the conversation)"))
        elif isinstance(action, Mapping) and "answer" in action and e.role:
            given = action.get("answer")
            out.append((e.turn, e.role, f"(final answer) {given}" if given else "(a final answer nobody can read)"))
    return out


def _sees(role: str, observation: Observation) -> str:
    words = "\n\n".join(observation.image_texts.values())  # the view, then (cognitive mapping) the map
    return f'What the {role.capitalize()} sees (in its own frame: "you" is the {role.capitalize()}):\n{words}'


def _question(world: RoomsWorld, answerer: Observation) -> str:
    letters, options = answerer.data["letters"], answerer.data["options"]
    if letters == options:  # yes / no
        listed = " / ".join(options)
    else:
        listed = "\n".join(f"({letter}) {option}" for letter, option in zip(letters, options, strict=False))
    right = world.question.answer
    named = dict(zip(letters, options, strict=False)).get(right, "")
    answer = f"({right}) {named}" if named and named != right else right
    question = f"Question (only the Answerer sees it): {answerer.data['question']}"
    return f"{question}\nOptions:\n{listed}\nCorrect answer: {answer}"


def repair_items(episode: Episode) -> list[JudgeItem]:
    """One item for a conversation that has at least one message (none for an empty one)."""
    if not any(e.kind == "message" for e in episode.events):
        return []
    said = _conversation(episode)
    world = RoomsWorld(episode.task, episode.settings)
    answerer, helper = world.observe(ANSWERER), world.observe(HELPER)
    task = world.question.task
    since = max(1, episode.last_turn - CONVERSATION_TURNS + 1)
    context = "\n\n".join(
        [
            f"Task: {task}. {TASK_INSTRUCTIONS.get(task, '')}",
            _question(world, answerer),
            _sees(ANSWERER, answerer),
            _sees(HELPER, helper),
            "The conversation (what you rate):\n" + transcript([e for e in said if e[0] >= since], since),
        ]
    )
    return [JudgeItem(episode.last_turn, "", context)]


def repair_rate(items: Sequence[Mapping[str, str]]) -> float | None:
    """Cosmic's dialogue repair rate: the share of conversations labelled 1 among those labelled 1 or -1 (a
    flawed trajectory was observed); None when no conversation was."""
    flawed = [labels[REPAIR] for labels in items if labels.get(REPAIR) in ("1", "-1")]
    return sum(label == "1" for label in flawed) / len(flawed) if flawed else None


JUDGES: tuple[Judge, ...] = (
    Judge(
        "cosmic-repair",
        "rooms",
        "Dialogue repair",
        "each conversation: was a flawed reasoning trajectory repaired (1), left unrepaired (-1), or absent (0)?",
        prompt_text(__package__, "judge_repair"),
        (
            Question(
                REPAIR,
                "Dialogue repair",
                "Did the conversation follow a flawed reasoning trajectory, and if so did the agents repair it?",
                REPAIR_SCALE,
            ),
        ),
        repair_items,
        runs=2,
        combine="agree",
        rate=repair_rate,
        rate_label="repair rate",
        reference="Cosmic, section 5.3 and supplementary 12 (dialogue repair)",
    ),
)
