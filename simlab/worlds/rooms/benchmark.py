"""Build a Cosmic-style benchmark: rooms, two views each, questions per task, the necessity filter.

A question instance (a *task* for the engine) is self-contained JSON: the scene, the two cameras with what
each sees, the question, and the referring expressions used, so a run never depends on a benchmark folder
staying where it was. ``generate rooms`` also writes the rendered views and maps for people to look at.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from simlab.core.family import Progress
from simlab.core.recording import write_json_atomic
from simlab.worlds.rooms.agents import solve_single_view
from simlab.worlds.rooms.cameras import sample_views
from simlab.worlds.rooms.describe import describe_objects
from simlab.worlds.rooms.generator import generate_scene
from simlab.worlds.rooms.model import Scene
from simlab.worlds.rooms.paraphrase import paraphrase_question
from simlab.worlds.rooms.tasks import TASKS, Question, make_question, passes_necessity
from simlab.worlds.rooms.visibility import ViewPair

BENCHMARK_FORMAT = "simlab.rooms.benchmark"
BENCHMARK_VERSION = 1
VIEW_SETTINGS: dict[str, Any] = {}  # sample_views defaults (eye height 1.6 m, pitch -10 degrees, coverage)


def scene_views(seed: int, index: int) -> tuple[Scene, ViewPair] | None:
    """Room ``index`` of the benchmark and its two views, or None when no camera pair meets the constraints."""
    scene = generate_scene(seed, index)
    views = sample_views(scene, seed, VIEW_SETTINGS)
    return (scene, views) if views is not None else None


def instance(
    scene: Scene,
    views: ViewPair,
    task: str,
    seed: int,
    filter_tries: int = 3,
    paraphrase: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """One question instance, or None when the task has no fair question here or the single-view solver
    answers it right in every try (the paper's cross-view necessity filter). With ``paraphrase`` (a model's
    settings, as for the OpenAI-compatible agent) the kept question is reworded, the template kept beside it."""
    question = make_question(task, scene, views, seed)
    if question is None:
        return None
    if filter_tries and not passes_necessity(question, scene, views, solve_single_view, tries=filter_tries, seed=seed):
        return None
    if paraphrase:
        question = paraphrase_question(question, paraphrase)
    return question_instance(scene, views, question)


def question_instance(scene: Scene, views: ViewPair, question: Question) -> dict[str, Any]:
    """The self-contained task of ``question``: scene, views, question and the referring expressions used."""
    ids = sorted({*views.answerer_visible, *views.helper_visible})
    return {
        "id": question.id,
        "tier": question.task,
        "task": question.task,
        "scene": scene.to_json(),
        "views": views.to_json(),
        "question": question.to_json(),
        "descriptions": describe_objects(scene, ids),
    }


def questions(
    per_task: int,
    seed: int,
    tasks: Sequence[str] = TASKS,
    max_scenes: int | None = None,
    paraphrase: Mapping[str, Any] | None = None,
) -> Iterator[dict[str, Any]]:
    """Question instances, ``per_task`` of each task, each task's questions from distinct rooms; rooms are
    shared across tasks, visited in order until every task is full (or ``max_scenes`` rooms were tried)."""
    wanted = {t: per_task for t in tasks}
    index = 0
    while any(wanted.values()) and (max_scenes is None or index < max_scenes):
        made = scene_views(seed, index)
        index += 1
        if made is None:
            continue
        for task in (t for t in tasks if wanted[t]):
            item = instance(*made, task, seed, paraphrase=paraphrase)
            if item is not None:
                wanted[task] -= 1
                yield item


def generate_tasks(
    n: int, seed: int, tasks: Sequence[str] = TASKS, paraphrase: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """``n`` question instances for ``run``, cycling through ``tasks``."""
    chosen = tuple(tasks) or TASKS
    per_task = -(-n // len(chosen))
    items = sorted(
        questions(per_task, seed, chosen, paraphrase=paraphrase), key=lambda q: (chosen.index(q["task"]), q["id"])
    )
    by_task = {t: [q for q in items if q["task"] == t] for t in chosen}
    return [by_task[t][k] for k in range(per_task) for t in chosen if k < len(by_task[t])][:n]


def build_benchmark(
    out_dir: Path,
    n_scenes: int,
    per_task: int,
    seed: int,
    images: bool = True,
    progress: Progress | None = None,
    paraphrase: Mapping[str, Any] | None = None,
    tasks: Sequence[str] = TASKS,
) -> dict[str, Any]:
    """Write the benchmark: ``questions/ID.json`` (instances), ``views/`` and ``maps/`` PNGs, ``benchmark.json``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    ids: list[str] = []
    counts = dict.fromkeys(tasks, 0)
    for item in questions(per_task, seed, tasks, max_scenes=n_scenes, paraphrase=paraphrase):
        write_json_atomic(out_dir / "questions" / f"{item['id']}.json", item, 1)
        ids.append(item["id"])
        counts[item["task"]] += 1
        if images:
            _write_images(out_dir, item)
        if progress is not None:
            progress(len(ids), per_task * len(tasks), ", ".join(f"{t} {counts[t]}" for t in tasks))
    return write_index(out_dir, seed, ids, counts)


def write_index(out_dir: Path, seed: int, ids: Sequence[str], counts: Mapping[str, int]) -> dict[str, Any]:
    """Write ``benchmark.json``, what :func:`load_questions` (``run --tasks DIR``) reads: the question ids
    whose files are in ``questions/``, in order, and how many there are of each task."""
    index = {"format": BENCHMARK_FORMAT, "version": BENCHMARK_VERSION, "seed": seed, "questions": list(ids)}
    index["counts"] = dict(counts)
    write_json_atomic(out_dir / "benchmark.json", index, 1)
    return index


def load_questions(path: Path) -> list[dict[str, Any]]:
    """Question instances from a benchmark folder (its ``benchmark.json``) or one question file."""
    from simlab.core.errors import FormatError
    from simlab.core.recording import SAFE_ID, check_version, read_json

    if path.is_dir():
        index = read_json(path / "benchmark.json")
        check_version(index, BENCHMARK_FORMAT, BENCHMARK_VERSION, path / "benchmark.json")
        ids = index.get("questions", [])
        if not isinstance(ids, list) or not all(isinstance(i, str) and SAFE_ID.match(i) for i in ids):
            raise FormatError(path / "benchmark.json", "field 'questions'", "expected question ids that are file names")
        return [_question_file(path / "questions" / f"{i}.json") for i in ids]
    item = read_json(path)
    if not isinstance(item, dict) or not {"scene", "views", "question"} <= set(item):
        raise FormatError(path, "", "expected a rooms question instance with 'scene', 'views' and 'question'")
    return [item]


def _question_file(path: Path) -> dict[str, Any]:
    return load_questions(path)[0]


def _write_images(out_dir: Path, item: dict[str, Any]) -> None:
    """Both agents' views of the question's room and, for cognitive mapping, the map the Answerer is shown."""
    from simlab.worlds.rooms.render import render_view, topdown_map

    scene, views = Scene.from_json(item["scene"]), ViewPair.from_json(item["views"])
    (out_dir / "views").mkdir(exist_ok=True)
    for role, camera in (("answerer", views.answerer), ("helper", views.helper)):
        path = out_dir / "views" / f"{scene.id}_{role}.png"  # a room serves several tasks: render it once
        if not path.exists():
            render_view(scene, camera).save(path)
    if item["task"] == "mapping":
        (out_dir / "maps").mkdir(exist_ok=True)
        ids = sorted({*views.answerer_visible, *views.helper_visible})
        swap = item["question"].get("map_swap")
        topdown_map(scene, ids, views.answerer, swap=swap).save(out_dir / "maps" / f"{item['id']}.png")
