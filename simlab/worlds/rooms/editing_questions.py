"""Questions for a room authored in the editor: the five Cosmic task generators on its objects and views,
proposed one by one for keeping, and saved as a benchmark folder that ``python main.py run rooms --tasks
FOLDER`` plays (``benchmark.json`` and ``questions/ID.json``, what
:func:`~simlab.worlds.rooms.benchmark.load_questions` reads).

The views are the editor's: the cameras as placed and the visible sets by the corner rule, so a question
asks about what the person sees in the editor. The cross-view necessity filter does not drop a question
here (the person decides); an item says when one view alone could narrow it down
(:func:`~simlab.worlds.rooms.necessity.needs_both_views`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from simlab.core.editing import EditError, Proposal
from simlab.core.recording import write_json_atomic
from simlab.worlds.rooms.benchmark import question_instance, write_index
from simlab.worlds.rooms.model import Scene
from simlab.worlds.rooms.necessity import needs_both_views
from simlab.worlds.rooms.tasks import TASKS, Question, candidates
from simlab.worlds.rooms.visibility import ViewPair

PER_TASK = 6
"""Questions proposed per task at most: the first candidates each task makes, each lettered by its own seed."""
ALONE = " [one view alone narrows this down]"


def room_questions(scene: Scene, views: ViewPair) -> list[Question]:
    """The questions the task generators make for this room, task by task (ids ``ROOM-TASK-sK``)."""
    return [c.question(k) for task in TASKS for k, c in enumerate(candidates(task, scene, views, 0)[:PER_TASK])]


def item_text(question: Question, scene: Scene, views: ViewPair) -> str:
    """``anchor: Which ...? (A) ... (B) ... - answer B: the gray sofa``, marked when one view suffices."""
    if question.task == "mapping":
        swapped = " and ".join(question.map_swap[0]) if question.map_swap else ""
        text = f"mapping: {question.text} - answer {question.answer}" + (f" (it swaps {swapped})" if swapped else "")
    else:
        options = " ".join(f"({k}) {o}" for k, o in zip(question.option_objects, question.options, strict=True))
        text = f"{question.task}: {question.text} {options} - answer {question.answer}: {_answer(question)}"
    return text if needs_both_views(question, scene, views) else text + ALONE


def _answer(question: Question) -> str:
    """The text of the right option."""
    return question.options[[*question.option_objects].index(question.answer)]


def proposal(scene: Scene, views: ViewPair) -> Proposal:
    """The questions for keeping or discarding; ``save(kept ids, folder)`` writes the kept ones as a benchmark."""
    questions = room_questions(scene, views)
    if not questions:
        raise EditError(no_question_reason(views))
    items = tuple((q.id, item_text(q, scene, views)) for q in questions)
    instances = {q.id: question_instance(scene, views, q) for q in questions}

    def save(kept: Sequence[str], path: Path) -> Path:
        return save_benchmark([instances[k] for k in _known(kept, instances)], path)

    return Proposal(f"Questions for {scene.id}", items, save)


def _known(kept: Sequence[str], instances: dict[str, Any]) -> list[str]:
    unknown = [k for k in kept if k not in instances]
    if unknown:
        raise EditError(f"no proposed question {unknown[0]!r}")
    if not kept:
        raise EditError("keep at least one question to save")
    return list(dict.fromkeys(kept))


def save_benchmark(instances: Sequence[dict[str, Any]], folder: Path) -> Path:
    """Write ``instances`` as a benchmark folder (``run --tasks FOLDER`` plays it); returns the folder."""
    counts: dict[str, int] = {}
    for item in instances:
        write_json_atomic(folder / "questions" / f"{item['id']}.json", item, 1, within=folder)
        counts[item["task"]] = counts.get(item["task"], 0) + 1
    write_index(folder, 0, [item["id"] for item in instances], counts)
    return folder


def first_task(scene: Scene, views: ViewPair) -> dict[str, Any]:
    """A task to play the room with: the first question made (tasks in order); EditError saying why not."""
    questions = room_questions(scene, views)
    if not questions:
        raise EditError(no_question_reason(views))
    return question_instance(scene, views, questions[0])


def no_question_reason(views: ViewPair) -> str:
    """Why no task makes a question of this room (what to change)."""
    counts = f"the Answerer sees {len(views.answerer_visible)} objects, the Helper {len(views.helper_visible)}"
    return (
        f"no question can be asked about this room yet ({counts}, {len(views.shared)} shared): the agents need "
        "objects both see and objects only one sees, each with a description that singles it out"
    )
