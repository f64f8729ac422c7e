"""The HTML transcript: every message, one section per turn, escaped text, inline pictures."""

import html
import re
from pathlib import Path

import pytest

from simlab.cli import main
from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.core.recording import load_run
from simlab.render.transcript import episode_html

CRAFT_LOG = Path(__file__).resolve().parents[2] / "tests" / "blocks" / "fixtures" / "craft_log_small.json"


@pytest.fixture(scope="module")
def episode(record) -> Episode:
    return load_run(record("director=oracle", "builder=scripted", turns=3, seed=1)).episodes()[0]


def test_every_message_and_one_section_per_turn(episode):
    page = episode_html(episode, images=False)
    for message in episode.messages():
        assert html.escape(message.data["text"], quote=True) in page
    sections = re.findall(r'<section id="turn-(\d+)">', page)
    assert sections == [str(t) for t in range(episode.last_turn + 1)]
    assert episode.episode_id in page and "<details" in page
    assert "data:image/png" not in page


def test_model_text_is_escaped(episode):
    evil = '<script>alert("x")</script> & <b>bold</b>'
    events = [*episode.events, Event("message", episode.last_turn, "D1", {"text": evil})]
    events.append(Event("reasoning", episode.last_turn, "D2", {"text": "<img src=x onerror=alert(1)>"}))
    hacked = Episode(
        episode.episode_id, episode.world, episode.seed, episode.task, events=events, agents=episode.agents
    )
    page = episode_html(hacked, images=False)
    assert "<script>" not in page and "<img src=x" not in page
    assert html.escape(evil, quote=True) in page


def test_images_are_inline_pngs(episode):
    page = episode_html(episode)
    pictures = re.findall(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]+"', page)
    # three walls once, then a 3D scene and a board per turn
    assert len(pictures) == 3 + 2 * (episode.last_turn + 1)


def test_an_imported_episode_with_failures_renders(tmp_path):
    out = tmp_path / "imported"
    assert main(["import", "craft", str(CRAFT_LOG), "--out", str(out)]) == 0
    imported = load_run(out).episodes()[0]
    page = episode_html(imported)
    assert "FAILED [wrong_layer]" in page
    assert len(re.findall(r'<section id="turn-', page)) == imported.last_turn + 1


def _copy(episode: Episode, count: int) -> Episode:
    """``episode`` as it stood after its first ``count`` events (a live episode still being played)."""
    events = episode.events[:count]
    return Episode(episode.episode_id, episode.world, episode.seed, episode.task, episode.settings, events=events)


def test_a_transcript_made_again_of_an_episode_that_grew_shows_every_turn_as_drawn_afresh(episode):
    """The pictures are kept per turn for the episode exported; once it grew (a live episode, here in the middle
    of turn 1, before its move changed the board) every picture is the one a fresh copy of the episode gets."""
    moved = next(k for k, e in enumerate(episode.events) if e.turn == 1 and e.kind == "state")
    live = _copy(episode, moved)
    early = episode_html(live)
    assert len(re.findall(r'<img src="data:image/png', early)) == 3 + 2 * 2
    live.events.extend(episode.events[moved:])
    assert episode_html(live) == episode_html(_copy(episode, len(episode.events)))
