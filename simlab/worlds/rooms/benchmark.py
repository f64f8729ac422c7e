"""Build a Cosmic-style benchmark: rooms, two views each, questions per task, the necessity filter.

A question instance (a *task* for the engine) is self-contained JSON: the scene, the two cameras with what
each sees, the question, and the referring expressions used, so a run never depends on a benchmark folder
staying where it was. ``generate rooms`` also writes the rendered views and maps for people to look at.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from simlab.core.family import Progress
from simlab.core.processes import ordered_map, process_pool
from simlab.core.recording import write_json_atomic
from simlab.core.seeding import rng, stable_seed
from simlab.core.writing import write_atomic
from simlab.render.images import to_png_bytes
from simlab.worlds.rooms.balance import Ledger, Offer, Picked, select
from simlab.worlds.rooms.cameras import sample_views
from simlab.worlds.rooms.describe import describe_objects
from simlab.worlds.rooms.generator import generate_scene
from simlab.worlds.rooms.model import SCENE_FORMAT, SCENE_VERSION, Scene
from simlab.worlds.rooms.model_filter import NECESSITY_DIR, FilterModel, answered_alone
from simlab.worlds.rooms.necessity import all_features, needs_both_views
from simlab.worlds.rooms.paraphrase import paraphrase_question
from simlab.worlds.rooms.tasks import (
    ANSWER_SPACES,
    TASKS,
    Candidate,
    Question,
    answer_label,
    candidates,
    high_in_window,
    many_of_a_kind,
)
from simlab.worlds.rooms.visibility import SceneGeometry, ViewPair

BENCHMARK_FORMAT = "simlab.rooms.benchmark"
BENCHMARK_VERSION = 1
VIEW_SETTINGS: dict[str, Any] = {}  # sample_views defaults (eye height 1.6 m, pitch -10 degrees, coverage)
EXTRA_ROOMS = 8  # rooms tried beyond one per question when a run makes its questions on the fly
MAX_GROWTH = 8  # ... and at most this many times that, when tasks lack candidates
MAX_WORKERS = 8  # processes sampling views
FILTER_ROUNDS = 4  # rounds of the model filter: replacements are asked about too, up to this many times
COUNTING_VIEWS = 2  # more pairs of viewpoints sampled in a room with many of a kind, for counting (see _more_views)
ROLES = ("answerer", "helper")  # the views' file names, in ViewPair's camera order
PARALLEL_FROM = 24  # rooms: fewer are sampled in this process (starting workers costs about a second each)
PNG_LEVEL = 6
"""zlib level of the views and maps written (no sha256 is kept of them): 4 and 5 take as long, 1 to 3 half as
long for files 70% bigger."""


def scene_views(seed: int, index: int) -> tuple[Scene, ViewPair] | None:
    """Room ``index`` of the benchmark and its two views, or None when no camera pair meets the constraints."""
    scene, geom = _room(seed, index)
    views = sample_views(scene, seed, VIEW_SETTINGS, geom)
    return (scene, views) if views is not None else None


def _room(seed: int, index: int) -> tuple[Scene, SceneGeometry]:
    """Room ``index`` and its geometry, built once for every sampling of its views (its meshes and ray
    intersector cost more than a sampling's rays)."""
    scene = generate_scene(seed, index)
    return scene, SceneGeometry(scene)


@dataclass(frozen=True)
class RoomOffers:
    """One room of the pool: its scene and views (None when no camera pair worked), its candidates per task
    that passed the necessity filter, and how many each task made before the filter."""

    index: int
    scene: Scene | None
    views: ViewPair | None
    offers: dict[str, list[Offer]]
    made: dict[str, int]
    extra_views: int = 0


def room_offers(seed: int, index: int, tasks: Sequence[str]) -> RoomOffers:
    """Room ``index``'s candidates of ``tasks``, each with its options' features, the ones that one view alone
    could narrow down dropped (:func:`~simlab.worlds.rooms.necessity.needs_both_views`)."""
    scene, geom = _room(seed, index)
    views = sample_views(scene, seed, VIEW_SETTINGS, geom)
    if views is None:
        return RoomOffers(index, None, None, {}, {})
    offers: dict[str, list[Offer]] = {}
    counts: dict[str, int] = {}
    for task in tasks:
        found = candidates(task, scene, views, seed)
        counts[task] = len(found)
        offers[task] = [offer for c in found if (offer := _offer(index, c, scene, views, seed)) is not None]
    extra = 0
    if "counting" in tasks and many_of_a_kind(scene):
        for views_k in _more_views(scene, seed, geom):
            extra += 1
            found = [c for c in candidates("counting", scene, views_k, seed) if high_in_window(c)]
            counts["counting"] += len(found)
            offers["counting"] += [o for c in found if (o := _offer(index, c, scene, views_k, seed, True)) is not None]
    return RoomOffers(index, scene, views, offers, counts, extra)


def _more_views(scene: Scene, seed: int, geom: SceneGeometry) -> Iterator[ViewPair]:
    """Up to :data:`COUNTING_VIEWS` more pairs of viewpoints of a room, each sampled as the first was."""
    for k in range(COUNTING_VIEWS):
        views = sample_views(scene, stable_seed(seed, "counting-views", k), VIEW_SETTINGS, geom)
        if views is not None:
            yield views


def _offer(
    index: int, candidate: Candidate, scene: Scene, views: ViewPair, seed: int, own_views: bool = False
) -> Offer | None:
    """The candidate with its options' features, answer first (``own_views``: asked from ``views``, not the
    room's first pair); None when it fails the necessity filter."""
    question = candidate.question(seed, letter=0)
    if not needs_both_views(question, scene, views):
        return None
    feats = all_features(question, scene, views)
    order = [question.answer, *(k for k in question.option_objects if k != question.answer)]
    spread = answer_label(question) if candidate.task in ANSWER_SPACES else ""
    return Offer(index, candidate, tuple(feats[k] for k in order), spread, views if own_views else None)


def room_pool(
    seed: int,
    rooms: range,
    tasks: Sequence[str],
    progress: Progress | None = None,
    workers: int | Executor | None = None,
) -> list[RoomOffers]:
    """:func:`room_offers` of every room in ``rooms``, in order; in ``workers`` processes (by default one per
    core, up to :data:`MAX_WORKERS`, when there are :data:`PARALLEL_FROM` rooms or more: view sampling
    renders id images, much of the time of a build). Each room's seeds derive from ``seed`` and its index
    alone, so the pool is the same whatever the number of workers."""
    job = partial(room_offers, seed, tasks=tuple(tasks))
    out = []
    for item in ordered_map(job, rooms, _workers(workers, len(rooms))):
        out.append(item)
        _tick(progress, len(out), len(rooms), "rooms")
    return out


def _workers(workers: int | Executor | None, jobs: int) -> int | Executor:
    """``workers`` (a number of processes or a pool), or by default one per core (at most
    :data:`MAX_WORKERS`) when the jobs are many enough to pay for starting them."""
    if workers is not None:
        return workers
    return min(os.cpu_count() or 1, MAX_WORKERS) if jobs >= PARALLEL_FROM else 1


def _tick(progress: Progress | None, done: int, total: int, what: str) -> None:
    if progress is not None:
        progress(done, total, f"{what} {done} of {total}")


@dataclass(frozen=True)
class Selection:
    """A benchmark's questions, their pool and what choosing them cost."""

    items: list[dict[str, Any]]
    pool: list[RoomOffers]
    ledgers: dict[str, Ledger]
    filter_rounds: list[dict[str, int]] = field(default_factory=list)

    def stats(self, tasks: Sequence[str]) -> dict[str, Any]:
        """Rooms tried, rooms with views, distinct rooms used, candidates per task before and after the
        necessity filter, each task's room types and its most uneven feature (right-rate over chance)."""
        rooms = {item["scene"]["id"] for item in self.items}
        usable = [room for room in self.pool if room.scene is not None]
        per_task: dict[str, Any] = {}
        for task in tasks:
            kept = [item for item in self.items if item["task"] == task]
            types = Counter(str(item["scene"]["room_type"]) for item in kept)
            feature, ratio = self.ledgers[task].worst() if task in self.ledgers else ("", 1.0)
            per_task[task] = {
                "questions": len(kept),
                "candidates": sum(room.made.get(task, 0) for room in usable),
                "needing_both_views": sum(len(room.offers.get(task, [])) for room in usable),
                "room_types": {k: round(v / max(1, len(kept)), 3) for k, v in sorted(types.items())},
                "most_uneven_feature": {"feature": feature, "right_over_chance": round(ratio, 3)},
            }
        counts = {"rooms_tried": len(self.pool), "rooms_with_views": len(usable), "distinct_rooms": len(rooms)}
        counts["more_views_for_counting"] = sum(room.extra_views for room in usable)
        model = {"model_filter": self.filter_rounds} if self.filter_rounds else {}
        return {**counts, "tasks": per_task, **model}


def select_questions(
    per_task: int,
    seed: int,
    tasks: Sequence[str] = TASKS,
    n_rooms: int | None = None,
    paraphrase: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    filter_model: FilterModel | None = None,
    filter_dir: Path | None = None,
    workers: int | Executor | None = None,
) -> Selection:
    """Up to ``per_task`` question instances of each task from rooms ``0 .. n_rooms-1`` (by default as many
    rooms as questions, grown until every task is full or 8 times that many were tried), chosen by
    :func:`~simlab.worlds.rooms.balance.select`. With ``filter_model`` the chosen questions also go through
    Cosmic's model filter (:mod:`simlab.worlds.rooms.model_filter`, its runs in ``filter_dir``): those the
    model answers from the Answerer's view alone in every try are replaced, round after round. With
    ``paraphrase`` (a model's settings, as for the OpenAI-compatible agent) each kept question is reworded,
    the template kept beside it. ``workers``: processes making the rooms, or their pool (see
    :func:`room_pool`)."""
    wanted = n_rooms if n_rooms is not None else max(per_task * len(tasks), 2 * per_task) + EXTRA_ROOMS
    pool = room_pool(seed, range(wanted), tasks, progress, workers)
    while n_rooms is None and len(pool) < MAX_GROWTH * wanted and not _enough(pool, tasks, per_task):
        pool += room_pool(seed, range(len(pool), 2 * len(pool)), tasks, progress, workers)
    offers = {t: [o for room in pool for o in room.offers.get(t, [])] for t in tasks}
    picked, ledgers = select(offers, per_task, rng(seed, "rooms", "balance"))
    rounds: list[dict[str, int]] = []
    if filter_model is not None:
        if filter_dir is None:
            raise ValueError("the model filter records its runs: give filter_dir")
        picked, ledgers, rounds = _model_filtered(pool, offers, picked, per_task, seed, filter_model, filter_dir)
    items = []
    for task in tasks:
        for pick in sorted(picked[task], key=lambda p: p.offer.room):
            question = _question(pick, seed)
            if paraphrase:
                question = paraphrase_question(question, paraphrase)
            items.append(_instance(pool, pick, question))
    return Selection(items, pool, ledgers, rounds)


def _question(pick: Picked, seed: int) -> Question:
    return pick.offer.candidate.question(seed, pick.letter)


def _instance(pool: Sequence[RoomOffers], pick: Picked, question: Question) -> dict[str, Any]:
    room = pool[pick.offer.room]
    views = pick.offer.views or room.views
    assert room.scene is not None and views is not None  # rooms without views offer nothing
    return question_instance(room.scene, views, question)


def _model_filtered(
    pool: Sequence[RoomOffers],
    offers: dict[str, list[Offer]],
    picked: dict[str, list[Picked]],
    per_task: int,
    seed: int,
    model: FilterModel,
    out_dir: Path,
) -> tuple[dict[str, list[Picked]], dict[str, Ledger], list[dict[str, int]]]:
    """Ask the model about every chosen question it has not seen and replace those it answers alone; again for
    the replacements, up to :data:`FILTER_ROUNDS` rounds, the last of which drops without replacing (so every
    kept question was asked about). Each round's run is ``out_dir/round-K``."""
    asked: set[int] = set()
    rounds: list[dict[str, int]] = []
    ledgers: dict[str, Ledger] = {}
    for k in range(1, FILTER_ROUNDS + 1):
        new = [p for found in picked.values() for p in found if id(p.offer) not in asked]
        if not new:
            break
        instances = [_instance(pool, p, _question(p, seed)) for p in new]
        alone = answered_alone(instances, seed, model, out_dir / f"round-{k}")
        asked |= {id(p.offer) for p in new}
        dropped = {id(p.offer) for p, item in zip(new, instances, strict=True) if item["id"] in alone}
        last = k == FILTER_ROUNDS
        rounds.append({"round": k, "asked": len(new), "answered_alone": len(dropped), "replaced": int(not last)})
        if not dropped:
            break
        offers = {t: [o for o in found if id(o) not in dropped] for t, found in offers.items()}
        keep = {t: [p for p in found if id(p.offer) not in dropped] for t, found in picked.items()}
        if last:
            picked, ledgers = keep, _ledgers(keep)
        else:
            picked, ledgers = select(offers, per_task, rng(seed, "rooms", "balance", k), keep)
    return picked, ledgers or _ledgers(picked), rounds


def _ledgers(picked: Mapping[str, Sequence[Picked]]) -> dict[str, Ledger]:
    out = {}
    for task, found in picked.items():
        out[task] = Ledger(space=ANSWER_SPACES.get(task, ()))  # what was chosen, counted again (no targets used)
        for pick in found:
            out[task].add(pick.offer)
    return out


def _enough(pool: Sequence[RoomOffers], tasks: Sequence[str], per_task: int) -> bool:
    return all(sum(1 for room in pool if room.offers.get(t)) >= per_task for t in tasks)


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


def generate_tasks(
    n: int, seed: int, tasks: Sequence[str] = TASKS, paraphrase: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """``n`` question instances for ``run``, cycling through ``tasks``."""
    chosen = tuple(tasks) or TASKS
    per_task = -(-n // len(chosen))
    items = select_questions(per_task, seed, chosen, paraphrase=paraphrase).items
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
    filter_model: FilterModel | None = None,
    workers: int | None = None,
) -> dict[str, Any]:
    """Write the benchmark from rooms ``0 .. n_scenes-1``: ``questions/ID.json`` (instances), ``views/`` and
    ``maps/`` PNGs, ``benchmark.json`` (with the selection's statistics under ``stats``); with
    ``filter_model``, the model filter's runs under ``necessity/``. Rooms and pictures are made in
    ``workers`` processes (by default one per core for large builds); every file is the same, byte for byte,
    whatever their number."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with _pool(workers, n_scenes) as pool:
        selection = select_questions(
            per_task, seed, tasks, n_scenes, paraphrase, progress, filter_model, out_dir / NECESSITY_DIR, pool
        )
        # the questions are written while the workers draw the pictures (they were all forked before: no
        # process is forked while this thread runs); writing them first left both cores idle for seconds
        with ThreadPoolExecutor(1) as writer:
            written = writer.submit(_write_questions, out_dir, selection.items)
            if images:
                _write_pictures(out_dir, selection.items, progress, pool)
            written.result()
    counts = Counter(item["task"] for item in selection.items)
    ids = [item["id"] for item in selection.items]
    return write_index(out_dir, seed, ids, {t: counts[t] for t in tasks}, selection.stats(tasks))


@contextmanager
def _pool(workers: int | None, rooms: int) -> Iterator[int | Executor]:
    """The :func:`_workers` for a build of ``rooms`` rooms: one pool of processes for both stages when there
    are several (each imports VTK, makes its render windows and warms up once, not once a stage), else
    their number."""
    count = _workers(workers, rooms)
    if isinstance(count, Executor) or count <= 1:
        yield count
        return
    with process_pool(count) as pool:
        yield pool


def _write_questions(out_dir: Path, items: Sequence[Mapping[str, Any]]) -> None:
    for item in items:
        write_json_atomic(out_dir / "questions" / f"{item['id']}.json", item, 1, within=out_dir)


def summary_text(index: Mapping[str, Any], out_dir: Path) -> str:
    """What ``generate rooms`` prints: the questions written, the rooms they come from and, per task, how many
    candidates were made, how many need both views, how many were kept, the room types' shares and the
    feature whose right-rate is farthest from chance after balancing."""
    counts = ", ".join(f"{k} {v}" for k, v in index["counts"].items())
    lines = [f"wrote {len(index['questions'])} questions ({counts}) to {out_dir}"]
    stats = index.get("stats")
    if not stats:
        return lines[0]
    lines.append(
        f"rooms: {stats['rooms_tried']} tried, {stats['rooms_with_views']} with a pair of views, "
        f"{stats['distinct_rooms']} used; {stats.get('more_views_for_counting', 0)} more pairs of views sampled "
        "in rooms with many of a kind, for counts high in their window"
    )
    for task, row in stats["tasks"].items():
        types = ", ".join(f"{k} {v:.0%}" for k, v in row["room_types"].items())
        uneven = row["most_uneven_feature"]
        worst = (
            f"; most uneven: {uneven['feature']} right {uneven['right_over_chance']:.2f}x chance"
            if uneven["feature"]
            else ""
        )
        lines.append(
            f"  {task}: {row['candidates']} candidates, {row['needing_both_views']} need both views, "
            f"{row['questions']} kept ({types}){worst}"
        )
    for row in stats.get("model_filter", []):
        lines.append(
            f"  model filter, round {row['round']}: asked {row['asked']}, {row['answered_alone']} answered from the "
            f"Answerer's view alone in every try ({'replaced' if row['replaced'] else 'dropped'})"
        )
    lines.append(f"check it: python main.py validity {out_dir}")
    return "\n".join(lines)


def write_index(
    out_dir: Path, seed: int, ids: Sequence[str], counts: Mapping[str, int], stats: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Write ``benchmark.json``, what :func:`load_questions` (``run --tasks DIR``) reads: the question ids
    whose files are in ``questions/``, in order, how many there are of each task and, for a generated
    benchmark, how its questions were chosen (``stats``)."""
    index = {"format": BENCHMARK_FORMAT, "version": BENCHMARK_VERSION, "seed": seed, "questions": list(ids)}
    index["counts"] = dict(counts)
    if stats is not None:
        index["stats"] = dict(stats)
    write_json_atomic(out_dir / "benchmark.json", index, 1, within=out_dir)
    return index


def load_questions(path: Path) -> list[dict[str, Any]]:
    """Question instances from a benchmark folder (its ``benchmark.json``) or one question file."""
    from simlab.core.errors import FormatError
    from simlab.core.reading import check_version, read_json
    from simlab.core.recording import SAFE_ID

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
    check_version(item["scene"], SCENE_FORMAT, SCENE_VERSION, path, "scene")
    return [item]


def _question_file(path: Path) -> dict[str, Any]:
    return load_questions(path)[0]


@dataclass(frozen=True)
class RoomPictures:
    """What is drawn of one room: both agents' views (from the first question asked in the room, as
    ``views/ROOM_ROLE.png``) and the map of each of its mapping questions (``maps/ID.png``)."""

    scene: dict[str, Any]
    views: dict[str, Any]
    maps: tuple[tuple[str, dict[str, Any], Any], ...]
    """Per mapping question: its id, its views and its map swap."""


def picture_jobs(items: Sequence[Mapping[str, Any]]) -> list[RoomPictures]:
    """The rooms of ``items`` in the order they are first asked about, each with what is drawn of it."""
    rooms: dict[str, RoomPictures] = {}
    for item in items:
        room = str(item["scene"]["id"])
        job = rooms.setdefault(room, RoomPictures(item["scene"], item["views"], ()))
        if item["task"] == "mapping":
            entry = (str(item["id"]), item["views"], item["question"].get("map_swap"))
            rooms[room] = RoomPictures(job.scene, job.views, (*job.maps, entry))
    return list(rooms.values())


def room_pictures(job: RoomPictures) -> list[tuple[str, bytes]]:
    """The PNG files of one room, named by their place in the benchmark folder: both agents' views and, for
    cognitive mapping, the map the Answerer is shown."""
    from simlab.worlds.rooms.render import render_views, topdown_map  # VTK only when pictures are made

    scene, views = Scene.from_json(job.scene), ViewPair.from_json(job.views)
    pictures = render_views(scene, [views.answerer, views.helper])
    named = zip(ROLES, pictures, strict=True)
    out = [(f"views/{scene.id}_{role}.png", to_png_bytes(view, PNG_LEVEL)) for role, view in named]
    for question, seen, swap in job.maps:
        pair = ViewPair.from_json(seen)
        ids = sorted({*pair.answerer_visible, *pair.helper_visible})
        picture = topdown_map(scene, ids, pair.answerer, swap=swap)
        out.append((f"maps/{question}.png", to_png_bytes(picture, PNG_LEVEL)))
    return out


def _write_pictures(
    out_dir: Path, items: Sequence[Mapping[str, Any]], progress: Progress | None, workers: int | Executor
) -> None:
    """Every room's pictures, drawn in worker processes and written here in room order."""
    jobs = picture_jobs(items)
    for done, files in enumerate(ordered_map(room_pictures, jobs, _workers(workers, len(jobs))), 1):
        for name, data in files:
            write_atomic(out_dir, name, data)
        _tick(progress, done, len(jobs), "pictures of room")
