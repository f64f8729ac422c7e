"""An episode's wall-clock deadline, seen inside the calls its agents make.

The episode driver (:func:`simlab.runner.episode.play`) checks an episode's timeout between steps; a step
blocked in a model call would only end when the call does. So the driver also sets the deadline for the
thread that plays the episode (:func:`running_until`), and an agent that calls a model cuts each request at
:func:`episode_deadline` and raises :class:`EpisodeTimedOut` when it passes: the episode then ends as timed
out within moments of its deadline, with the cut call in its raw records.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Deadline:
    """A moment on the monotonic clock (``at``), set ``seconds`` after it was made."""

    at: float
    seconds: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        """The deadline ``seconds`` from now."""
        return cls(time.monotonic() + seconds, seconds)

    def left(self) -> float:
        """Seconds until the deadline (zero or less once it has passed)."""
        return self.at - time.monotonic()


class EpisodeTimedOut(Exception):
    """An agent stopped acting because its episode's deadline passed; ``records`` are the act's raw records
    (the cut call among them) and ``role`` the role that was acting."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.role: str | None = None
        self.records: tuple[Mapping[str, Any], ...] = ()


_EPISODE: ContextVar[Deadline | None] = ContextVar("simlab_episode_deadline", default=None)


@contextmanager
def running_until(deadline: Deadline | None) -> Iterator[None]:
    """Within the block, :func:`episode_deadline` on this thread is ``deadline``."""
    token = _EPISODE.set(deadline)
    try:
        yield
    finally:
        _EPISODE.reset(token)


def episode_deadline() -> Deadline | None:
    """The deadline of the episode this thread is playing, or None (no timeout, or no episode)."""
    return _EPISODE.get()
