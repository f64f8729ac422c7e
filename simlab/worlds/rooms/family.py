"""The rooms family (Cosmic) as the rest of SimLab sees it: tasks are question instances about a furnished
room, roles the Answerer and the Helper. Everything here is declared through
:class:`~simlab.core.family.WorldFamily`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from simlab.core.episode import Episode
from simlab.core.family import PlotSpec, Progress, SeriesSpec, TaskSource, WorldFamily
from simlab.worlds.rooms import protocol
from simlab.worlds.rooms.agents import AGENTS
from simlab.worlds.rooms.figures import FIGURES
from simlab.worlds.rooms.model_filter import NECESSITY_DIR, FilterModel
from simlab.worlds.rooms.observations import ANSWERER, HELPER, PALETTE
from simlab.worlds.rooms.tasks import TASKS
from simlab.worlds.rooms.world import RoomsSettings, RoomsWorld

_T = TypeVar("_T")


class GenerateOptions(BaseModel):
    """Options of ``generate rooms`` (and of the questions a run generates)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    questions_per_task: int = Field(50, ge=1, le=2_000, description="questions of each task in a written benchmark")
    images: bool = Field(True, description="render both agents' views and the maps into the benchmark folder")
    paraphrase_model: str | None = Field(None, description="reword the questions with this model (Cosmic 7.2)")
    paraphrase_base_url: str | None = Field(
        None, description="its OpenAI-compatible URL (default: $OPENAI_BASE_URL, else OpenAI's)"
    )
    paraphrase_key_env: str = Field("OPENAI_API_KEY", description="the variable holding its API key")
    filter_model: str | None = Field(
        None,
        description="also drop the questions this model answers right in every try from the Answerer's view alone "
        "(Cosmic's filter; its runs go to BENCH/necessity/, resumable)",
    )
    filter_base_url: str | None = Field(
        None, description="its OpenAI-compatible URL (default: $OPENAI_BASE_URL, else OpenAI's)"
    )
    filter_key_env: str = Field("OPENAI_API_KEY", description="the variable holding its API key")
    filter_tries: int = Field(3, ge=1, le=20, description="tries per question (the paper's 3)")
    filter_concurrency: int = Field(4, ge=1, le=256, description="questions asked at once")
    filter_text_only: bool = Field(False, description="give the filter model the view in words, not the picture")

    def paraphrase(self) -> dict[str, Any] | None:
        """The paraphrasing model's settings, or None when questions keep their template wording."""
        if not self.paraphrase_model:
            return None
        out = {"model": self.paraphrase_model, "api_key_env": self.paraphrase_key_env}
        return out | ({"base_url": self.paraphrase_base_url} if self.paraphrase_base_url else {})

    def filter(self) -> FilterModel | None:
        """The filtering model, or None when only the rule-based necessity filter runs."""
        if not self.filter_model:
            return None
        return FilterModel(
            self.filter_model,
            self.filter_base_url,
            self.filter_key_env,
            self.filter_tries,
            self.filter_concurrency,
            self.filter_text_only,
        )


def _options(options: BaseModel | None) -> GenerateOptions:
    return options if isinstance(options, GenerateOptions) else GenerateOptions()


def generate(
    n: int, seed: int, options: BaseModel | None = None, groups: Sequence[str] = (), progress: Progress | None = None
) -> list[dict[str, Any]]:
    """``n`` question instances, cycling through the tasks (or only ``groups``)."""
    from simlab.worlds.rooms.benchmark import generate_tasks  # view sampling: loaded when tasks are made

    return generate_tasks(n, seed, tuple(groups) or TASKS, _options(options).paraphrase())


def write(
    out_dir: Path,
    n: int,
    seed: int,
    options: BaseModel | None = None,
    groups: Sequence[str] = (),
    progress: Progress | None = None,
) -> str:
    """``generate rooms``: try ``n`` rooms, keep ``questions_per_task`` balanced questions of each task, write
    them with the rendered views and maps (docs in scenes/rooms/README.md); the summary says what the
    choice cost (candidates made, kept by the necessity filter, chosen) and each task's room types."""
    from simlab.worlds.rooms.benchmark import build_benchmark, summary_text

    opts = _options(options)
    tasks = tuple(groups) or TASKS
    index = build_benchmark(
        out_dir, n, opts.questions_per_task, seed, opts.images, progress, opts.paraphrase(), tasks, opts.filter()
    )
    return summary_text(index, out_dir)


def _load(path: Path) -> list[dict[str, Any]]:
    from simlab.worlds.rooms.benchmark import load_questions

    return load_questions(path)


def _parsed(task: Mapping[str, Any], name: str, parse: Callable[[Any], _T]) -> _T:
    """``task[name]`` read by ``parse`` (which refuses a missing or damaged field), its error named by field."""
    try:
        return parse(task.get(name))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ValueError(f"field {name!r}: {exc}") from None


def _validate(task: Mapping[str, Any]) -> None:
    """The scene, the views and the question each well formed, and agreeing with each other: the views see
    objects of this room, the question is about it and names its objects, every category is one we can build."""
    from simlab.worlds.rooms.catalog import CATEGORIES
    from simlab.worlds.rooms.model import Scene
    from simlab.worlds.rooms.tasks import Question
    from simlab.worlds.rooms.visibility import ViewPair

    scene = _parsed(task, "scene", Scene.from_json)
    views = _parsed(task, "views", ViewPair.from_json)
    question = _parsed(task, "question", Question.from_json)
    ids = {o.id for o in scene.objects}
    unknown = sorted({o.category for o in scene.objects} - set(CATEGORIES))
    if unknown:
        raise ValueError(f"field 'scene': unknown object category {unknown[0]!r:.40}")
    if not set(views.answerer_visible) | set(views.helper_visible) <= ids:
        raise ValueError("field 'views': a view sees an object the scene does not have")
    if question.scene_id != scene.id:
        raise ValueError(f"field 'question': it is about scene {question.scene_id!r:.40}, not {scene.id!r:.40}")
    object_options = question.task in ("anchor", "distance")  # the others' options are counts, directions, yes/no
    named = {str(v) for v in question.option_objects.values()} if object_options else set()
    if question.target is not None:
        named.add(question.target)
    if not named <= ids:
        raise ValueError("field 'question': it names an object the scene does not have")


def mentions_per_turn(episode: Episode) -> list[float | None]:
    """The objects each message named (the ``mentions`` score of its turn), 0 on turns without one."""
    out: list[float | None] = [0.0] * (episode.last_turn + 1)
    for event in episode.events:
        if event.kind == "score" and "mentions" in event.data.get("metrics", {}):
            out[event.turn] = float(event.data["metrics"]["mentions"])
    return out


FAMILY = WorldFamily(
    name="rooms",
    description="Cosmic: an Answerer and a Helper with different views of a furnished room answer a spatial question",
    world=RoomsWorld,
    roles=(ANSWERER, HELPER),
    tasks=TaskSource(
        generate=generate,
        load=_load,
        write=write,
        validate=_validate,
        options=GenerateOptions,
        groups=TASKS,
        group_of=lambda task: task.get("task"),
        group_label="task",
        n_help="rooms to try when writing a benchmark; questions when a run generates its tasks",
        max_tasks=10_000,  # a room tried takes about a second, a question 0.2 s: 10,000 are hours of work
        resumable=(NECESSITY_DIR,),
    ),
    settings=RoomsSettings,
    agents=AGENTS,
    default_agents={ANSWERER: "oracle", HELPER: "oracle"},
    protocol=protocol.protocol,
    reply_form=protocol.reply_form,
    views="simlab.worlds.rooms.presentation:VIEWS",
    palette=PALETTE,
    plots=(
        PlotSpec(
            "Objects mentioned per message",
            "objects",
            (SeriesSpec("objects named", (69, 90, 100), mentions_per_turn),),
            steps=True,
        ),
    ),
    headline_metrics=("accuracy", "invalid", "words", "mentions_per_message"),
    figures=FIGURES,
    editor="simlab.worlds.rooms.editing:EDITOR",
    judges="simlab.worlds.rooms.judges:JUDGES",
    spaces="simlab.worlds.rooms.spaces:spaces",
    validity="simlab.worlds.rooms.validity:validity_report",
)
