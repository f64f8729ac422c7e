"""How a fork's continuation differs from the original's, turn by turn and in the outcome.

A fork replays the original up to its turn and then plays on with other agents
(:mod:`simlab.runner.fork`): the turns before it are the original's, so the two are lined up
(:func:`~simlab.analysis.episode_diff.episode_diff`, the alignment a comparison of two runs uses too) from
the fork's turn on.
"""

from __future__ import annotations

from simlab.analysis.episode_diff import EpisodeDiff, episode_diff
from simlab.core.episode import Episode


def fork_diff(original: Episode, fork: Episode, from_turn: int) -> EpisodeDiff:
    """Both continuations from ``from_turn`` (``a`` the original's, ``b`` the fork's) and their summaries."""
    return episode_diff(original, fork, from_turn)
