"""GIF and MP4 of a turn range: one frame per turn, readable back."""

from __future__ import annotations

import imageio.v2 as iio
import numpy as np
import pytest
from PIL import Image

from simlab.core.errors import SimlabError
from simlab.core.recording import load_run
from simlab.render.animation import turn_frame, write_animation
from simlab.render.turn_sheet import turn_lines


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


def test_frames_with_the_dialogue_show_each_turn_s_words_and_the_outcome_on_the_last(episode, tmp_path):
    plain, spoken = turn_frame(episode, 2, size=(320, 240)), turn_frame(episode, 2, size=(320, 240), dialogue=True)
    assert spoken.width > plain.width and spoken.height > plain.height  # the dialogue beside, the bar above
    panel = np.asarray(spoken.crop((330, 40, spoken.width - 10, spoken.height - 10)).convert("L"))
    assert (panel < 128).sum() > 200  # words are written there
    assert turn_lines(episode, 2, {})  # that turn said or did something to write
    last = turn_frame(episode, episode.last_turn, size=(320, 240), dialogue=True)
    bars = [np.asarray(f.crop((0, 0, f.width, 20)).convert("L")) for f in (spoken, last)]
    assert not np.array_equal(bars[0][:, 200:], bars[1][:, 200:])  # the last turn's bar adds the outcome
    path = write_animation(episode, 0, 2, tmp_path / "talk.gif", size=(320, 240), dialogue=True)
    assert Image.open(path).size == spoken.size


def test_the_command_line_writes_frames_with_the_dialogue(episode, tmp_path):
    from simlab.cli import main
    from simlab.core.recording import save_episode

    save_episode(tmp_path / "e.json", episode)
    out = tmp_path / "e.gif"
    assert main(["replay", str(tmp_path / "e.json"), "--export", "gif", "--with-dialogue", "--out", str(out)]) == 0
    assert Image.open(out).width > 800  # the 800-pixel picture and the dialogue beside it
