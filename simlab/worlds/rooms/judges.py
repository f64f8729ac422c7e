"""Cosmic's two LLM judges over recorded rooms episodes: dialogue repair (paper section 5.3, supplementary 12)
and the failure-mode taxonomy (section 5.2, figure 7, supplementary 9).

Both rate a conversation as a whole, once, at its last turn (subject ""), and read the full task context, as
the paper gives its repair judge: the task, the question and options, the ground-truth answer, what each agent
sees and the transcript (the messages, the Answerer ending the chat, its final answer; never its private
reasoning). The views are the ones a text-only agent is given: the world's own observations of the recorded
task, in words (:func:`~simlab.worlds.rooms.observations.view_in_words`, and the map for cognitive mapping). A
long conversation keeps its last :data:`CONVERSATION_TURNS` turns.

``cosmic-repair``: one item per conversation with at least one message. The one question is labelled -1, 0 or
1 (flawed and not repaired, no flaw, flawed and repaired); each item is judged twice and kept only when both
runs agree, and the headline is :func:`repair_rate`. The paper's prompt (its supplementary 12.1) is not in its
text; ours is ``prompts/judge_repair.txt``.

``cosmic-failures``: one item per failed conversation (:func:`failed`: the Answerer's final answer was wrong or
unreadable, after at least one message; successful ones are not judged, as in the paper, which labels 150
failed conversations), its context the same plus the outcome. Seven Yes/No questions, one per subcategory of
the paper's three error categories (:data:`CATEGORIES`): a conversation may show several (multi-label), or
none. An error counts whether or not the agents corrected it later (the paper counts "all errors made";
``cosmic-repair`` rates the corrections). The paper's authors labelled the conversations by hand and publish no prompt;
``prompts/judge_failures.txt`` quotes the definitions of its section 5.2 (supplementary 9 gives examples only).
Each item is judged three times and each subcategory is present when more than half of the runs that answered
it said Yes (:func:`present`). Not ``agree`` like the repair judge: with seven labels an item whose runs differ
on any one would be dropped whole, losing many conversations and most often those with several or borderline
errors, which skews the distribution; an odd number of runs leaves no tie when every run answers.

Figure 7 is the distribution of the error categories over all errors: every (conversation, subcategory)
present is one error, per task and pooled over tasks; a main category's share is the sum of its
subcategories' (:func:`error_shares`). :func:`failure_modes_figure` draws it from a run's judgments, with the
arguments of the generic per-question judge figure. That generic figure and ``report``'s judge table show
each subcategory's mean instead: here, the share of failed conversations showing it (runs averaged).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simlab.analysis.judgments import ItemScore, item_scores
from simlab.core.episode import Episode
from simlab.core.family import FigureData, FigurePoint, FigureSeries, lineup_of, prompt_text
from simlab.core.judging import Judge, JudgeItem, JudgmentRecord, Question, Scale, transcript
from simlab.core.world import Observation
from simlab.worlds.rooms.observations import ANSWERER, HELPER
from simlab.worlds.rooms.tasks import TASKS
from simlab.worlds.rooms.world import TASK_INSTRUCTIONS, RoomsWorld

CONVERSATION_TURNS = 40
"""Turns of conversation an item shows (the paper's conversations have at most 10 messages and an answer)."""
REPAIR = "DR"
REPAIR_SCALE = Scale({"-1": -1.0, "0": 0.0, "1": 1.0})
"""-1 flawed and not repaired, 0 no flawed trajectory, 1 flawed and repaired (supplementary 12)."""
PRESENT = Scale({"Yes": 1.0, "No": 0.0})
"""Whether a conversation shows an error of a subcategory: no "Unclear", as the paper labels each present or not."""
ALL_TASKS = "all tasks"
"""The series of figure 7 pooled over tasks."""


# ---- the context both judges read ---------------------------------------------------------------------
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
    question = f"Question (only the Answerer sees it): {answerer.data['question']}"
    return f"{question}\nOptions:\n{listed}\nCorrect answer: {_named(world.question.answer, answerer)}"


def _named(letter: str, answerer: Observation) -> str:
    """``(B) the red chair`` for an option letter, the bare answer for yes / no."""
    named = dict(zip(answerer.data["letters"], answerer.data["options"], strict=False)).get(letter, "")
    return f"({letter}) {named}" if named and named != letter else letter


def _context(episode: Episode, world: RoomsWorld) -> str:
    """The task, the question with the right answer, both views and the transcript (see the module docstring)."""
    answerer, helper = world.observe(ANSWERER), world.observe(HELPER)
    task = world.question.task
    since = max(1, episode.last_turn - CONVERSATION_TURNS + 1)
    return "\n\n".join(
        [
            f"Task: {task}. {TASK_INSTRUCTIONS.get(task, '')}",
            _question(world, answerer),
            _sees(ANSWERER, answerer),
            _sees(HELPER, helper),
            "The conversation (what you rate):\n"
            + transcript([e for e in _conversation(episode) if e[0] >= since], since),
        ]
    )


def _talked(episode: Episode) -> bool:
    """Whether anything was said: a conversation to rate (an episode played without dialogue has none)."""
    return any(e.kind == "message" for e in episode.events)


# ---- dialogue repair ----------------------------------------------------------------------------------
def repair_items(episode: Episode) -> list[JudgeItem]:
    """One item for a conversation that has at least one message (none for an empty one)."""
    if not _talked(episode):
        return []
    world = RoomsWorld(episode.task, episode.settings)
    return [JudgeItem(episode.last_turn, "", _context(episode, world))]


def repair_rate(items: Sequence[Mapping[str, str]]) -> float | None:
    """Cosmic's dialogue repair rate: the share of conversations labelled 1 among those labelled 1 or -1 (a
    flawed trajectory was observed); None when no conversation was."""
    flawed = [labels[REPAIR] for labels in items if labels.get(REPAIR) in ("1", "-1")]
    return sum(label == "1" for label in flawed) / len(flawed) if flawed else None


# ---- the failure-mode taxonomy ------------------------------------------------------------------------
@dataclass(frozen=True)
class Category:
    """One of the paper's three error categories: its code (the prefix of its subcategories' codes), its name
    and its subcategories, each a question the judge answers."""

    code: str
    label: str
    questions: tuple[Question, ...]


def _present(code: str, label: str, text: str) -> Question:
    return Question(code, label, text, PRESENT)


CATEGORIES: tuple[Category, ...] = (
    Category(
        "PF",
        "Perceptual",
        (
            _present(
                "PF1", "Object recognition", "Did an agent miss a visible object or take it for another category?"
            ),
            _present(
                "PF2",
                "Attribute mislabelling",
                "Did an agent give an object a colour, size or other property it does not have?",
            ),
        ),
    ),
    Category(
        "CG",
        "Cross-view grounding",
        (
            _present(
                "CG1",
                "Referential ambiguity",
                "Did an agent describe an object too vaguely to single out one instance in the partner's view?",
            ),
            _present(
                "CG2",
                "Instance merging",
                "Did the agents take two distinct objects, one in each view, for the same object?",
            ),
            _present(
                "CG3", "Instance duplication", "Did the agents take one object both see for two different objects?"
            ),
        ),
    ),
    Category(
        "GR",
        "Geometric & relational",
        (
            _present(
                "GR1",
                "Perspective-taking",
                "Did an agent map the partner's directions wrongly onto its own frame (left-right or front-back swap)?",
            ),
            _present(
                "GR2",
                "Layout understanding",
                "Did an agent get wrong how objects are arranged relative to one another in the room?",
            ),
        ),
    ),
)
"""The paper's taxonomy (section 5.2), in its order; the codes are ours (the paper numbers no subcategory)."""
FAILURE_QUESTIONS: tuple[Question, ...] = tuple(q for c in CATEGORIES for q in c.questions)


def failed(episode: Episode) -> bool:
    """Whether the Answerer's final answer was judged wrong or could not be read (an episode cut short before
    its answer, by a timeout or an endpoint failure, did not fail at the task and is not judged)."""
    return any(e.kind == "result" and e.role == "engine" and e.data.get("correct") is False for e in episode.events)


def _outcome(episode: Episode, world: RoomsWorld) -> str:
    answerer = world.observe(ANSWERER)
    given = next((e.data.get("answer") for e in episode.events if e.kind == "result" and e.role == "engine"), None)
    right = _named(world.question.answer, answerer)
    if not given:
        return f"Outcome: the Answerer's final answer could not be read; the correct answer is {right}."
    return (
        f"Outcome: the Answerer answered {_named(str(given), answerer)}, which is wrong; the correct answer is {right}."
    )


def failure_items(episode: Episode) -> list[JudgeItem]:
    """One item for a failed conversation (:func:`failed`, with at least one message), none for a successful
    or unfinished one, or one where nothing was said (no conversation, no failure of one)."""
    if not (failed(episode) and _talked(episode)):
        return []
    world = RoomsWorld(episode.task, episode.settings)
    context = f"{_context(episode, world)}\n\n{_outcome(episode, world)}"
    return [JudgeItem(episode.last_turn, "", context)]


def present(item: ItemScore, code: str) -> bool:
    """Whether the subcategory ``code`` is present in a judged item: more than half of the runs that answered
    it said Yes (the item's value is the mean over those runs)."""
    value = item.values.get(code)
    return value is not None and value > 0.5


def error_counts(items: Iterable[ItemScore]) -> Counter[str]:
    """The errors of ``items`` per subcategory code: each conversation counts once per subcategory present."""
    return Counter(q.code for item in items for q in FAILURE_QUESTIONS if present(item, q.code))


def error_shares(counts: Mapping[str, int]) -> dict[str, float]:
    """Each main category's and subcategory's share of all the errors counted (figure 7), keyed by code in the
    taxonomy's order (a category, then its subcategories); empty when there is no error."""
    total = sum(counts.get(q.code, 0) for q in FAILURE_QUESTIONS)
    if not total:
        return {}
    out: dict[str, float] = {}
    for category in CATEGORIES:
        out[category.code] = sum(counts.get(q.code, 0) for q in category.questions) / total
        out.update({q.code: counts.get(q.code, 0) / total for q in category.questions})
    return out


SHARE_NAMES: dict[str, str] = {
    **{c.code: f"{c.code} {c.label}" for c in CATEGORIES},
    **{q.code: f"{q.code} {q.label}" for q in FAILURE_QUESTIONS},
}
"""The bars of figure 7 by code: ``CG Cross-view grounding``, ``CG2 Instance merging``."""


def failure_modes_figure(
    judge: Judge, records: Sequence[JudgmentRecord], summaries: Sequence[Mapping[str, Any]]
) -> FigureData:
    """Cosmic figure 7 from a run's judgments of ``judge`` and the run's index ``summaries`` (for each
    episode's task and agents): per category and subcategory, its share of all errors, one series per task and
    one over all tasks (prefixed with the agent lineup when several played, suffixed with the judging model
    when several judged). The same arguments as the generic per-question judge figure."""
    by_id = {str(s.get("episode_id")): s for s in summaries}
    items, _ = item_scores(judge, records)
    groups: dict[tuple[str, str], list[ItemScore]] = {}
    for item in items:
        groups.setdefault((lineup_of(by_id.get(item.episode_id, {}).get("agents") or {}), item.model), []).append(item)
    several_lineups = len({lineup for lineup, _ in groups}) > 1
    several_models = len({model for _, model in groups}) > 1
    series = []
    for lineup, model in sorted(groups):
        prefix = f"{lineup} · " if several_lineups else ""
        suffix = f" · judged by {model}" if several_models else ""
        for task, group in _by_task(groups[lineup, model], by_id):
            points = _share_points(group)
            if points:
                series.append(FigureSeries(f"{prefix}{task}{suffix}", points))
    return FigureData("bar", "error category", "share of all errors", tuple(series), (0.0, 1.0))


def _by_task(items: Sequence[ItemScore], by_id: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, list[ItemScore]]]:
    """``items`` per task in the paper's order (tasks the index does not know after them), then all of them."""
    groups: dict[str, list[ItemScore]] = {}
    for item in items:
        groups.setdefault(str(by_id.get(item.episode_id, {}).get("group", "")), []).append(item)
    order = [t for t in TASKS if t in groups] + sorted(t for t in groups if t not in TASKS)
    return [(task, groups[task]) for task in order] + ([(ALL_TASKS, list(items))] if items else [])


def _share_points(items: Sequence[ItemScore]) -> tuple[FigurePoint, ...]:
    ids = tuple(dict.fromkeys(i.episode_id for i in items))
    return tuple(
        FigurePoint(SHARE_NAMES[code], share, episodes=ids) for code, share in error_shares(error_counts(items)).items()
    )


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
    Judge(
        "cosmic-failures",
        "rooms",
        "Failure modes",
        "each failed conversation: which of the seven perceptual, grounding and geometric error kinds it shows",
        prompt_text(__package__, "judge_failures"),
        FAILURE_QUESTIONS,
        failure_items,
        runs=3,
        combine="mean",
        figure=failure_modes_figure,
        reference="Cosmic, section 5.2 (failure mode analysis, figure 7) and supplementary 9",
    ),
)
