"""The protocol every world follows, shaped like PettingZoo's AEC loop, and what agents exchange with it.

A driver runs a world like this (see :func:`simlab.runner.episode.run_episode`)::

    events = world.reset(seed)
    while not world.finished:
        role = world.agent_selection
        observation = world.observe(role)
        events += world.step(agents[role].act(observation))

``step`` returns the typed events the move caused (messages, the action, the engine's result, the new
state, scores), so a recording is just the concatenation, and replay never re-runs the world.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol

from simlab.core.events import Event
from simlab.core.seeding import rng

OUTCOMES: tuple[str, ...] = ("success", "failure", "abort")


class LazyImages(Mapping[str, Any]):
    """Images rendered only when someone looks: scripted agents never pay for pictures they ignore."""

    def __init__(self, makers: Mapping[str, Callable[[], Any]]) -> None:
        self._makers = dict(makers)
        self._made: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._made:
            self._made[name] = self._makers[name]()
        return self._made[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)


@dataclass(frozen=True)
class Observation:
    """What one role is given before it acts.

    ``text`` is the full prompt-ready description (it never mentions a picture: a model agent says what it
    attaches); ``images`` maps a name to an image (a PIL image) for multimodal agents, and ``image_texts``
    the same pictures in words for text-only ones ("" where the text already holds what the picture shows);
    ``data`` is the same information as JSON for scripted agents and analysis. ``recorded_text`` is what
    the recording keeps instead of ``text`` when part of the prompt (a shared history) is already recorded
    as events: it keeps episode files linear in length, not quadratic. ``history`` holds the shared history
    entries as they stand in ``text`` (one line each, oldest first), so an agent whose context is short can
    drop the oldest (:meth:`with_history`).
    """

    role: str
    turn: int
    text: str
    images: Mapping[str, Any] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict)
    recorded_text: str | None = None
    image_texts: Mapping[str, str] = field(default_factory=dict)
    history: tuple[str, ...] = ()

    def to_event(self, text_only: bool = False) -> Event:
        """The recorded form: images by name (they are re-rendered from the recorded state); for an agent
        that reads text only, no images and their words added, as the agent was given them."""
        text = self.text if self.recorded_text is None else self.recorded_text
        images = [] if text_only else sorted(self.images)
        text += self.words_for_images() if text_only else ""
        return Event("observation", self.turn, self.role, {"text": text, "images": images, "data": dict(self.data)})

    def words_for_images(self) -> str:
        """What the pictures show, in words, to append to the text for a model that reads text only."""
        said = [(name, self.image_texts.get(name, "")) for name in self.images]
        said = [(name, words) for name, words in said if words]
        if not said:
            return ""
        return "\n\nWhat your pictures show, in words:\n" + "\n\n".join(f"[{n}]\n{w}" for n, w in said)

    def with_history(self, keep: int) -> Observation:
        """This observation with only the newest ``keep`` history entries, saying how many were left out."""
        if keep >= len(self.history) or not self.history:
            return self
        block = "\n".join(self.history)
        if block not in self.text:
            return self
        dropped = len(self.history) - keep
        note = f"(the {dropped} oldest entr{'y' if dropped == 1 else 'ies'} left out to fit the model's context)"
        kept = "\n".join([note, *self.history[-keep:]])
        return replace(self, text=self.text.replace(block, kept, 1), history=self.history[-keep:])


@dataclass(frozen=True)
class Reply:
    """What a role returns: any of a public message, private reasoning and an action.

    ``raw`` holds model request/response records for the episode's raw stream (never API keys).
    ``problem`` says why the role's own reply could not be read when this reply is the protocol's give-up
    rule instead (the driver records it as an ``unreadable_reply`` protocol error, and reports count it).
    """

    message: str | None = None
    reasoning: str | None = None
    action: Mapping[str, Any] | None = None
    raw: tuple[Mapping[str, Any], ...] = ()
    problem: str | None = None


class Agent(Protocol):
    """Anything that can play a role: scripted baselines, live models, a person."""

    def reset(self, seed: int, role: str, task: Mapping[str, Any]) -> None:
        """Start a new episode in ``role``; all randomness must come from ``seed``.

        ``task`` is the episode's task JSON. It may hold privileged information (a blocks target): only
        oracle baselines read it; agents that stand for a participant must ignore it."""

    def act(self, observation: Observation) -> Reply:
        """Answer one observation."""


class ScriptedAgent:
    """Base of the built-in scripted agents: the role, the episode's agent seed and the task, set by ``reset``
    (only oracles may read the task), and a private random stream per turn and purpose."""

    def __init__(self, role: str) -> None:
        self.role = role
        self.seed = 0
        self.task: Mapping[str, Any] = {}

    def reset(self, seed: int, role: str, task: Mapping[str, Any]) -> None:
        """Start an episode; agents that are not oracles ignore ``task``."""
        self.seed, self.role, self.task = seed, role, task

    def turn_rng(self, observation: Observation, purpose: str) -> random.Random:
        """A private stream for one turn's choices of ``purpose``."""
        return rng(self.seed, self.role, purpose, observation.turn)


class World(ABC):
    """A world with state, roles with private observations, a protocol and metrics.

    Subclasses set ``family`` and ``roles`` and are built from a ``task`` (the world-specific JSON that
    defines one instance, e.g. a target structure) and ``settings`` (protocol options).
    """

    family: ClassVar[str]
    roles: tuple[str, ...]

    def __init__(self, task: Mapping[str, Any], settings: Mapping[str, Any] | None = None) -> None:
        self.task = dict(task)
        self.settings = dict(settings or {})
        self.turn = 0

    @abstractmethod
    def reset(self, seed: int) -> list[Event]:
        """Start an episode; returns the set-up events of turn 0 (initial state and scores)."""

    @property
    @abstractmethod
    def agent_selection(self) -> str | None:
        """The role that acts next, or None when the episode is over."""

    @abstractmethod
    def observe(self, role: str) -> Observation:
        """What ``role`` is given now. Only the role in ``agent_selection`` may be asked to act."""

    @abstractmethod
    def step(self, reply: Reply) -> list[Event]:
        """Apply the reply of the role in ``agent_selection``; returns the events it caused. The episode
        driver records the reply's private reasoning itself and hands the world the reply without it."""

    @property
    @abstractmethod
    def done(self) -> bool:
        """True when the episode ended by the task's own rule (success, or an abort rule)."""

    @property
    @abstractmethod
    def truncated(self) -> bool:
        """True when the episode ended because its budget (turns) ran out."""

    @property
    def finished(self) -> bool:
        return self.done or self.truncated

    @abstractmethod
    def summary(self) -> dict[str, Any]:
        """Per-episode results: ``outcome`` (one of OUTCOMES), ``score`` (the headline number),
        ``metrics`` (name -> number) and ``errors`` (count of engine and protocol errors)."""

    def task_id(self) -> str:
        return str(self.task.get("id", ""))
