"""GIF and MP4 of a turn range: one frame per turn, readable back."""

from __future__ import annotations

import imageio.v2 as iio
import numpy as np
import pytest
from PIL import Image

from simlab.core.errors import SimlabError
from simlab.core.recording import load_run
from simlab.render.animation import write_animation


@pytest.fixture(scope="module")
def episode(record):
    return load_run(record("director=oracle", "builder=scripted", turns=4, seed=1)).episodes()[0]


def test_gif_has_one_frame_per_turn_and_frames_differ(episode, tmp_path):
    path = write_animation(episode, 1, 4, tmp_path / "a.gif", size=(160, 120))
    gif = Image.open(path)
    assert gif.n_frames == 4
    frames = []
    for k in range(gif.n_frames):
        gif.seek(k)
        frames.append(np.asarray(gif.convert("RGB")))
    assert any(not np.array_equal(frames[0], f) for f in frames[1:])  # the board changes between turns


def test_mp4_decodes_back_to_one_frame_per_turn(episode, tmp_path):
    path = write_animation(episode, 0, 3, tmp_path / "a.mp4", size=(160, 120))
    with iio.get_reader(path) as reader:
        assert reader.count_frames() == 4


def test_unknown_suffix_is_refused(episode, tmp_path):
    with pytest.raises(SimlabError):
        write_animation(episode, 0, 1, tmp_path / "a.avi", size=(160, 120))
