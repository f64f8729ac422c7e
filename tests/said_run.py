"""A run to search and annotate: a copy of the bundled demo run plus one episode whose every searchable text
is a known word at a known turn (tests of search, notes and their commands)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from simlab.core import events as ev
from simlab.core.events import Event
from simlab.core.recording import RunWriter, load_run
from simlab.runner.demo import DEMO_RUN

SAID = "said-r0"
"""The added episode's id; what it holds, by turn:"""
WORDS = {
    "zebracorn": (3, "D1", "message"),
    "quokkaplan": (2, "builder", "reasoning"),
    "unreadable_reply": (4, "builder", "protocol_error"),
    "same_colour": (5, "engine", "error"),
    "strike": (6, "engine", "error"),
}


def demo_copy(folder: Path) -> Path:
    """The demo run's recordings copied into ``folder/run`` (not a search index or notes the app or a test may
    have left in the bundled run)."""
    sidecars = shutil.ignore_patterns("search.sqlite", ".search.sqlite.*", "notes.json")
    return Path(shutil.copytree(DEMO_RUN, folder / "run", ignore=sidecars))


def add_said_episode(run_dir: Path, episode_id: str = SAID, word: str = "zebracorn") -> None:
    """Append (as a run does) an episode made from the run's first one, its events replaced by :data:`WORDS`
    (the message's word is ``word``)."""
    run = load_run(run_dir)
    base = run.load_episode(str(run.summaries[0]["episode_id"]))
    said = [
        ev.reasoning(2, "builder", "my quokkaplan is to wait"),
        ev.message(3, "D1", f"the {word} goes on top"),
        ev.protocol_error(4, "builder", "unreadable_reply", "no move in the reply"),
        Event("result", 5, "engine", {"ok": False, "error": "same_colour", "message": "cannot stack"}),
        Event("result", 6, "engine", {"ok": False, "error": "mistake", "strikes": 2, "message": "wrong wire"}),
    ]
    episode = dataclasses.replace(base, episode_id=episode_id, events=said, raw=[])
    RunWriter(run_dir, run.config, resume=True).add(episode)
