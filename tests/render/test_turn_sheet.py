"""The headless turn sheet and the GIF animation."""

import numpy as np
import pytest
from PIL import Image

from simlab.core.errors import SimlabError
from simlab.core.recording import load_run
from simlab.render.animation import write_animation
from simlab.render.turn_sheet import turn_sheet


@pytest.fixture(scope="module")
def episode(record):
    return load_run(record("director=oracle", "builder=scripted", turns=4, seed=1)).episodes()[0]


def test_turn_sheet_has_the_size_and_is_not_blank(episode):
    image = turn_sheet(episode, 2, size=(800, 500))
    assert image.size == (800, 500)
    pixels = np.asarray(image)
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 300
    assert (pixels[:20, :, :].mean()) < 100  # the dark title bar


def test_gif_has_one_frame_per_turn(episode, tmp_path):
    path = write_animation(episode, 1, episode.last_turn, tmp_path / "a.gif", size=(160, 120))
    with Image.open(path) as gif:
        assert gif.n_frames == episode.last_turn


def test_animation_rejects_bad_ranges_and_suffixes(episode, tmp_path):
    with pytest.raises(SimlabError, match="turns"):
        write_animation(episode, 0, episode.last_turn + 1, tmp_path / "a.gif")
    with pytest.raises(SimlabError, match="expected a file ending"):
        write_animation(episode, 0, 1, tmp_path / "a.avi")
