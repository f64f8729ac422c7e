"""The world-family contract: everything the rest of SimLab needs to know about one kind of world.

A family lives in one folder (``simlab/worlds/NAME/`` for the bundled ones, any installed package for others)
and declares itself with one :class:`WorldFamily` object, found by name through :mod:`simlab.worlds` (a
built-in table plus the entry-point group ``simlab.worlds``). Generic code (the CLI, the runner, the exports,
the app, the model agents) reads only this object and never imports a family's modules, so adding a family
is one folder plus one registration.

The parts, in the spirit of PettingZoo's env contract and clemcore's game master:

* :class:`TaskSource`: generate (in memory or written to a folder), load, validate the family's tasks, the
  groups they fall in (a tier, a question type) and its generate options as a typed model;
* ``settings``: a pydantic model of the world's settings (defaults, documentation, validation in one place;
  the CLI's ``--set``, run.toml and the app's new-episode form all go through it);
* roles, role groups, built-in agents and, per role, the :class:`ReplyProtocol` a model follows (prompt,
  reply parser, re-ask, give-up rule) and the :class:`ReplyForm` a person fills in;
* ``views``: where its pictures come from (:class:`FamilyViews`, loaded only when something is drawn, so
  running episodes never needs VTK), its :class:`PlotSpec` s and its role ``palette``;
* its headline metrics, the importers it offers and its analysis figures (:class:`FigureSpec`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simlab.core.editing import EditorKind
from simlab.core.errors import ConfigError
from simlab.core.figures import FigureData
from simlab.core.figures import FigurePoint as FigurePoint  # the contract's parts, importable from here as before
from simlab.core.figures import FigureSeries as FigureSeries
from simlab.core.forms import FormField
from simlab.core.judging import Judge
from simlab.core.limits import MAX_REPEATS, MAX_TASKS
from simlab.core.plugins import load_target
from simlab.core.world import Agent, Observation, Reply, World

if TYPE_CHECKING:
    from PIL import Image

    from simlab.core.episode import Episode
    from simlab.render.scene import CameraPose, SceneItem

RGB = tuple[int, int, int]
Progress = Callable[[int, "int | None", str], None]
"""Long work reports ``(done, total or None, what is going on)``; the CLI shows it as a progress bar."""


# ---- settings --------------------------------------------------------------------------------------------


class Settings(BaseModel):
    """Base of a family's typed settings and generate options: unknown names are errors, every field has a
    default and a description (shown by ``--help``, ``python main.py worlds`` and the app's forms)."""

    model_config = ConfigDict(extra="forbid", validate_default=True, strict=True)

    repeat: int = Field(
        0, ge=0, le=MAX_REPEATS - 1, description="which repeat of a task this episode is (set by the runner)"
    )

    @classmethod
    def checked(cls, values: Mapping[str, Any] | None) -> dict[str, Any]:
        """``values`` completed with the defaults, as JSON; ConfigError naming the first bad one."""
        return validate_model(cls, values or {}, "setting").model_dump(mode="json")


class NoOptions(BaseModel):
    """Generate options of a family that has none."""

    model_config = ConfigDict(extra="forbid", strict=True)


def validate_model(model: type[BaseModel], values: Mapping[str, Any], what: str) -> BaseModel:
    """``values`` checked by ``model``; ConfigError naming the first bad field, what it got and the known names.

    Values are checked as JSON (they come from JSON, TOML and the command line, and are recorded as JSON), so
    a list stands for a tuple, and with strict models a number is never read from a string or a bool."""
    try:
        text = json.dumps(dict(values), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{what}s must be plain JSON values ({exc})") from None
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        error = exc.errors()[0]
        name = ".".join(str(p) for p in error["loc"]) or "?"
        if error["type"] == "extra_forbidden":
            known = ", ".join(model.model_fields)
            raise ConfigError(f"unknown {what} {name!r}; known: {known}") from None
        got = error.get("input")
        message = str(error["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"{what} {name!r}: {message} (got {got!r})") from None


# ---- tasks -----------------------------------------------------------------------------------------------


def _no_group(task: Mapping[str, Any]) -> str | None:
    return None


@dataclass(frozen=True)
class TaskSource:
    """How a family makes and reads its tasks (one task = the JSON that defines one episode's instance).

    ``generate(n, seed, options, groups, progress)`` returns ``n`` tasks in memory (what ``run`` plays);
    ``write(out_dir, n, seed, options, groups, progress)`` is the ``generate`` command: it writes a folder
    that ``load`` reads back and returns the summary to print. ``groups`` restricts both to tasks of those
    groups (``group_of(task)``: a blocks tier, a rooms question type); ``options`` is an instance of
    ``options`` (the family's generate options). ``validate(task)`` raises ValueError naming the field.
    """

    generate: Callable[..., list[dict[str, Any]]]
    load: Callable[[Path], list[dict[str, Any]]]
    write: Callable[..., str]
    validate: Callable[[Mapping[str, Any]], None]
    options: type[BaseModel] = NoOptions
    groups: tuple[str, ...] = ()
    group_of: Callable[[Mapping[str, Any]], str | None] = _no_group
    group_label: str = "group"
    n_help: str = "how many tasks"
    max_tasks: int = MAX_TASKS
    """The most tasks one ``generate`` or ``write`` makes: fewer than :data:`~simlab.core.limits.MAX_TASKS` when
    the family cannot make more distinct ones, or making them takes hours. ``generate --n`` and ``run --episodes``
    are refused above it."""
    resumable: tuple[str, ...] = ()
    """Entries ``write`` records as it goes (the rooms model filter's runs, ``necessity``): a folder that holds
    only these is what an interrupted ``generate`` left, and the same command writes into it again, resuming
    them, where any other folder that is not empty is refused."""


@dataclass(frozen=True)
class ImporterOption:
    """An option of one importer, given as ``--NAME VALUE`` after ``import NAME FILE``."""

    name: str
    metavar: str
    help: str


@dataclass(frozen=True)
class Importer:
    """``python main.py import NAME FILE --out RUN_DIR [--OPTION VALUE ...]``: turns another tool's recordings
    into a run folder. ``run(file, out_dir, options)`` (``options``: the given values of :attr:`options` by
    name) returns a line to print; bad input raises a SimlabError naming the place."""

    name: str
    description: str
    run: Callable[[Path, Path, Mapping[str, str]], Any]
    options: tuple[ImporterOption, ...] = ()


# ---- how models and people play a role -----------------------------------------------------------------


class ReplyError(ValueError):
    """A model's reply that the role's protocol cannot read; the message says why (it goes into the re-ask)."""


@dataclass(frozen=True)
class ReplyProtocol:
    """How a model plays one role at one observation (clemcore's idea: the game owns its protocol).

    ``system`` is the system prompt; ``parse(text, observation)`` reads a reply or raises :class:`ReplyError`;
    ``reask`` is the correction sent once after an unreadable reply (``{reason}`` is filled in), or None when
    the game itself answers an unreadable reply (the cobot robot's game master sends its parse error back
    and counts it toward the abort rule): the agent then gives up at once; ``give_up(text)`` is what the role
    does when the (re-asked) reply cannot be read: it must never publish what the model wrote privately (a
    director that cannot be read says nothing that turn).

    A reply is *unreadable* when ``parse`` raised on it, whatever the game then does with the give-up: one
    definition for every family, counted in the summary's ``replies``, the model usage and the reports.
    ``echoes`` are placeholders of the prompt and the re-ask (``your public message``, ``CLARIFY:question``)
    that a real reply never contains: a reply holding one is unreadable, however well it parses."""

    system: str
    parse: Callable[[str, Observation], Reply]
    reask: str | None
    give_up: Callable[[str], Reply]
    echoes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReplyForm:
    """What a person playing a role can send at one observation; the app builds the form from it.

    ``message`` / ``reasoning`` are the labels of the text boxes (None: not offered); ``fields`` build the
    action object; ``answers`` is a field whose every choice is a button that sends at once (a final answer);
    ``presets`` are (label, action) pairs that fill the fields (verified candidate moves)."""

    message: str | None = None
    reasoning: str | None = None
    fields: tuple[FormField, ...] = ()
    answers: FormField | None = None
    presets: tuple[tuple[str, Mapping[str, Any]], ...] = ()

    def active(self, name: str, values: Mapping[str, Any]) -> bool:
        """Whether field ``name`` takes part in the action given the current ``values``."""
        spec = next(f for f in self.fields if f.name == name)
        if spec.when is not None and values.get(spec.when[0]) not in spec.when[1]:
            return False
        return not spec.optional or values.get(name) is not None

    def action(self, values: Mapping[str, Any]) -> dict[str, Any] | None:
        """The action object the field ``values`` describe (None when no field applies)."""
        out = {f.name: values[f.name] for f in self.fields if self.active(f.name, values) and f.name in values}
        out = {k: v for k, v in out.items() if v is not None}
        return out or None

    def reply(self, message: str = "", reasoning: str = "", values: Mapping[str, Any] | None = None) -> Reply:
        """The reply a filled-in form sends."""
        return Reply(message.strip() or None, reasoning.strip() or None, self.action(values or {}))

    def answer(self, choice: str) -> Reply:
        """The reply an answer button sends."""
        assert self.answers is not None
        return Reply(message=choice, action={self.answers.name: choice})


# ---- pictures and plots ---------------------------------------------------------------------------------


ObservationImages = Callable[[Mapping[str, Any], "Episode", int], "dict[str, Image.Image]"]
"""``(observation_json, episode, turn) -> {name: picture}``: pictures of one recorded observation."""


def from_observation(draw: Callable[[Mapping[str, Any]], dict[str, Image.Image]]) -> ObservationImages:
    """``draw``, which needs the observation's JSON alone (its data holds what is drawn), as
    :data:`ObservationImages`."""
    return lambda observation, _episode, _turn: draw(observation)


SceneBuilder = Callable[..., "list[SceneItem]"]
"""``(episode, turn, overlay=True, style="ghost") -> items``: the 3D world after ``turn``."""


@dataclass(frozen=True)
class SeriesSpec:
    """One curve: a legend label, a colour and its value per turn 0..last_turn (None where undefined)."""

    label: str
    colour: RGB
    values: Callable[[Episode], list[float | None]]

    @classmethod
    def of_metric(cls, label: str, colour: RGB, metric: str) -> SeriesSpec:
        """The curve of one per-turn metric, as the episode's score events give it."""
        return cls(label, colour, lambda episode: episode.metric_series(metric))


@dataclass(frozen=True)
class PlotSpec:
    """One per-turn plot of the app's Plots dock. ``steps`` draws a value per turn as a step, else a line
    with markers; ``y_range`` fixes the axis (progress on 0..1), else it fits the data."""

    title: str
    y_label: str
    series: tuple[SeriesSpec, ...]
    steps: bool = False
    y_range: tuple[float, float] | None = None


@dataclass(frozen=True)
class Layer:
    """One entry of the 3D view's layer list (napari's layers, Rerun's entity tree): the scene item ``kinds``
    it shows, switched on and off together; its ``legend`` (what each colour means) and ``help``. Items of a
    kind no layer names are always drawn."""

    name: str
    kinds: tuple[str, ...]
    legend: tuple[tuple[str, RGB], ...] = ()
    help: str = ""
    visible: bool = True


@dataclass(frozen=True)
class Inspection:
    """What clicking an item of the 3D view shows: what it is (``title``), who sees it and why (``lines``), and
    ``items`` drawn while it stays selected (its outline, the rays that decide who sees it) and the item kinds
    it ``hides`` meanwhile (every object's rays, so its own stand out)."""

    title: str
    lines: tuple[str, ...] = ()
    items: tuple[SceneItem, ...] = ()
    hides: tuple[str, ...] = ()


Inspector = Callable[["Episode", int, str], "Inspection | None"]
"""``(episode, turn, item key) -> Inspection``, or None when the key names nothing to inspect."""


@dataclass(frozen=True)
class FamilyViews:
    """How a family is drawn: in the app, in exports and for agents. No Qt: pictures are PIL images and
    the 3D world is a list of :class:`~simlab.render.scene.SceneItem`.

    * ``scene`` builds the 3D world after a turn (None: a family with no 3D scene, drawn from its pictures);
      ``cameras(episode)`` are the named presets in button order, ``default_camera`` the first shown;
      ``overlay_label`` names what the overlay toggle shows (the target, the visibility tints),
      ``overlay_styles`` the ways it can be drawn (passed to ``scene`` as ``style``; the app adds "hidden")
      and ``overlay_help`` says what it is (no styles: no overlay choice); ``layers`` are the view's layer
      list and legend; ``inspect`` answers a click on an item (None: items are not inspectable).
    * ``observation_images(observation_json, episode, turn)`` re-renders the pictures a recorded observation
      gave its role, exactly as sent: those its ``images`` name (none for an agent given text only), each
      the very image the world's ``observe`` gave (so the same PNG a model was sent), nothing drawn on it;
      ``turn`` is the observation's. The agent panels' "as sent" mode and the Raw tab's checks use it; an
      extra picture it returns is never shown as sent;
    * ``annotated_images(observation_json, episode, turn)`` draws the researcher's pictures of an observation
      at the playback's ``turn``, none of them sent: a sent picture with marks on it, under its own name
      (the objects named at the turn outlined), or a picture the role was never given (a question card with
      the right answer, a board a text-only condition gave in words). The panels' "annotated" mode shows
      them in place of, or after, the sent ones, each marked NOT SENT on the picture; None: a family with
      nothing to add (``images_follow_turn``: they change with the turn, not only per observation;
      ``images_without_vtk``: both are drawn without VTK, so the app draws the next turn's on a thread beside
      the GUI's, see ``gui/frame_thread.py``, and, as nothing else in a step then uses VTK, renders a step's 3D
      scene on a render thread of its own, see ``gui/offscreen_view.py``);
    * ``turn_pictures(episode, turn)`` are the 2D pictures exports show beside the scene for a turn (for a
      family without a scene, the app's world view draws them on a thread beside the GUI's: they must be
      drawn without VTK, see ``gui/frame_thread.py``), ``episode_pictures(episode)`` those shown once (each
      director's wall);
    * ``role_note(episode, role)`` is a word shown after the role's name in the agent panels (a director's
      persona), or "".
    """

    observation_images: ObservationImages
    turn_pictures: Callable[[Episode, int], dict[str, Image.Image]]
    scene: SceneBuilder | None = None
    cameras: Callable[[Episode], Mapping[str, CameraPose]] = lambda _episode: {}
    default_camera: str = "free"
    overlay_label: str = "Target"
    overlay_styles: tuple[str, ...] = ("ghost", "wireframe")
    overlay_help: str = "How the target is drawn: translucent ghosts, wireframes, or hidden"
    images_follow_turn: bool = False
    episode_pictures: Callable[[Episode], dict[str, Image.Image]] = lambda _episode: {}
    role_note: Callable[[Episode, str], str] = lambda _episode, _role: ""
    layers: tuple[Layer, ...] = ()
    inspect: Inspector | None = None
    annotated_images: ObservationImages | None = None  # after the others: views built by position still work
    images_without_vtk: bool = False


# ---- figures from recordings (the numbers themselves: simlab.core.figures) -------------------------------


@dataclass(frozen=True)
class FigureSpec:
    """One analysis figure of a run, computed from its recorded episodes only (no model, no judge):
    ``make(episodes)`` gets them sorted by id; ``name`` is the file stem of its CSV, PNG and SVG."""

    name: str
    title: str
    make: Callable[[Sequence[Episode]], FigureData]


def lineup(episode: Episode) -> str:
    """The agents that played an episode, ``role=agent`` in role order: the series a figure compares."""
    return lineup_of(episode.agents)


def lineup_of(agents: Mapping[str, Any]) -> str:
    """:func:`lineup` from an ``agents`` mapping (an episode's or its index summary's)."""
    return " ".join(f"{role}={spec}" for role, spec in sorted(agents.items())) or "(unknown agents)"


def by_lineup(episodes: Sequence[Episode]) -> list[tuple[str, list[Episode]]]:
    """``episodes`` grouped by :func:`lineup`, the groups in label order, each keeping the episodes' order."""
    groups: dict[str, list[Episode]] = {}
    for episode in episodes:
        groups.setdefault(lineup(episode), []).append(episode)
    return sorted(groups.items())


# ---- the family ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorldFamily:
    """One kind of world, as the engine, the CLI, the exports and the app see it.

    ``views`` and the importers' code are named as ``"module:attribute"`` and imported on first use, so a
    family can be listed and its episodes played without loading its renderers."""

    name: str
    description: str
    world: type[World]
    roles: tuple[str, ...]
    tasks: TaskSource
    settings: type[Settings]
    agents: Mapping[str, Callable[..., Agent]]
    default_agents: Mapping[str, str]
    protocol: Callable[[str, Observation, Mapping[str, Any]], ReplyProtocol]
    reply_form: Callable[[str, Observation], ReplyForm]
    views: str
    palette: Mapping[str, RGB]
    role_groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    plots: Sequence[PlotSpec] = ()
    headline_metrics: Sequence[str] = ()
    paper_metrics: Sequence[str] = ()
    """The rows of ``report --format paper`` in the paper's own table order (default: the headline metrics)."""
    importers: Mapping[str, Importer] = field(default_factory=dict)
    figures: Sequence[FigureSpec] = ()
    """The analysis figures ``report --figures`` draws from a run of this family (plain data, no plotting)."""
    editor: str | None = None
    """``"module:attribute"`` of the family's :class:`~simlab.core.editing.EditorKind` (None: nothing to author)."""
    judges: str | None = None
    """``"module:attribute"`` of the family's LLM judges, a tuple of :class:`~simlab.core.judging.Judge`."""
    spaces: str | None = None
    """``"module:attribute"`` of ``(task, settings) -> simlab.pettingzoo.WorldSpaces``: each role's Gymnasium
    observation and action spaces and the reward, for the PettingZoo adapter (docs/PETTINGZOO.md); imported
    only by the adapter. None: the family is not offered as a PettingZoo environment."""
    validity: str | None = None
    """``"module:attribute"`` of ``(tasks, source, seed) -> simlab.analysis.validity.ValidityReport``: what
    baselines (chance, priors without the world, single views...) score on a set of this family's tasks, so
    ``python main.py validity BENCH`` shows whether they measure what they claim. None: no such report."""
    turn_metrics: Callable[[Episode], Sequence[Mapping[str, float | None]]] | None = None
    """An episode's per-turn values read from its events, one mapping per turn in order (name -> number, None
    where the value is undefined at that turn): what ``report --correlate NAME --unit turn`` correlates over
    every turn of a run (CRAFT table 8). None: the family declares none."""

    # ---- roles ----------------------------------------------------------------------------------------
    def expand_role(self, role: str) -> tuple[str, ...]:
        """``director`` -> (D1, D2, D3); a concrete role -> itself. Raises ConfigError when unknown."""
        if role in self.role_groups:
            return self.role_groups[role]
        if role in self.roles:
            return (role,)
        names = ", ".join([*self.role_groups, *self.roles])
        raise ConfigError(f"world {self.name!r} has no role {role!r}; roles: {names}")

    # ---- settings -------------------------------------------------------------------------------------
    @property
    def default_settings(self) -> dict[str, Any]:
        """Every setting at its default, as recorded in run configs (the runner's ``repeat`` left out)."""
        return {k: v for k, v in self.settings().model_dump(mode="json").items() if k != "repeat"}

    def check_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """``settings`` completed with defaults; ConfigError naming the first setting that cannot work."""
        checked = validate_model(self.settings, settings, f"{self.name} setting").model_dump(mode="json")
        return checked if "repeat" in settings else {k: v for k, v in checked.items() if k != "repeat"}

    def generate_options(self, options: Mapping[str, Any] | None = None) -> BaseModel:
        """The family's generate options from ``options`` (ConfigError naming a bad one)."""
        return validate_model(self.tasks.options, options or {}, f"{self.name} generate option")

    def check_groups(self, groups: Sequence[str]) -> tuple[str, ...]:
        """``groups`` when every one is a group of this family; ConfigError listing the known ones."""
        unknown = [g for g in groups if g not in self.tasks.groups]
        if unknown:
            known = ", ".join(self.tasks.groups) or "none"
            raise ConfigError(f"world {self.name!r} has no {self.tasks.group_label} {unknown[0]!r}; known: {known}")
        return tuple(groups)

    # ---- pictures -------------------------------------------------------------------------------------
    def load_editor(self) -> EditorKind | None:
        """The family's editor kind (imported now), or None when it has nothing to author."""
        if self.editor is None:
            return None
        kind = load_target(self.editor)
        if not isinstance(kind, EditorKind):
            raise TypeError(f"{self.editor} is a {type(kind).__name__}, expected a simlab.core.editing.EditorKind")
        return kind

    def load_judges(self) -> tuple[Judge, ...]:
        """The family's LLM judges (imported now), in declared order; () when it declares none."""
        if self.judges is None:
            return ()
        judges = tuple(load_target(self.judges))
        for judge in judges:
            if not isinstance(judge, Judge):
                raise TypeError(f"{self.judges} holds a {type(judge).__name__}, expected simlab.core.judging.Judge")
        return judges

    def load_validity(self) -> Callable[..., Any]:
        """The family's validity report function (imported now); ConfigError when it declares none."""
        if self.validity is None:
            raise ConfigError(f"world {self.name!r} has no validity report")
        report = load_target(self.validity)
        if not callable(report):
            raise TypeError(f"{self.validity} is a {type(report).__name__}, expected a function")
        function: Callable[..., Any] = report
        return function

    def load_views(self) -> FamilyViews:
        """The family's :class:`FamilyViews` (its rendering code is imported now, once)."""
        return _load_views(self.views)


@functools.cache
def _load_views(target: str) -> FamilyViews:
    views = load_target(target)
    if not isinstance(views, FamilyViews):
        raise TypeError(f"{target} is a {type(views).__name__}, expected a simlab.core.family.FamilyViews")
    return views


NEUTRAL_RGB: RGB = (90, 96, 104)
"""Colour of the engine and of roles nobody declared."""
EXTRA_RGB: tuple[RGB, ...] = ((194, 24, 91), (93, 122, 31), (141, 90, 59), (57, 73, 171), (184, 134, 11))
"""Colours handed out, in sorted order, to roles a palette does not name (an imported log's extra speaker)."""


def role_colours(palette: Mapping[str, RGB], roles: Sequence[str]) -> dict[str, RGB]:
    """A colour per role: the palette's own, then the extras in sorted role order; the engine is neutral."""
    out = {role: palette[role] for role in roles if role in palette}
    others = sorted({r for r in roles if r not in palette and r not in ("", "engine")})
    out.update({role: EXTRA_RGB[k % len(EXTRA_RGB)] for k, role in enumerate(others)})
    out.update({r: NEUTRAL_RGB for r in roles if r in ("", "engine")})
    return out


def hex_colour(rgb: RGB) -> str:
    """``(31, 95, 191)`` -> ``"#1f5fbf"``."""
    return "#{:02x}{:02x}{:02x}".format(*rgb)


@functools.cache
def prompt_text(package: str, name: str) -> str:
    """A prompt template shipped inside a family's package: ``prompts/NAME.txt``."""
    return resources.files(package).joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8").strip()
