"""Exports draw the episode's own family. Before the family contract a rooms episode exported as a blocks
board: the turn sheet showed an empty 3x3 CRAFT floor and walls D1-D3, the GIF the same, and its HTML
transcript held no picture at all."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from simlab.core.episode import Episode
from simlab.core.family import hex_colour
from simlab.core.recording import load_run
from simlab.render.animation import turn_frame, write_animation
from simlab.render.episode_pictures import main_picture, side_by_side, turn_pictures
from simlab.render.formatting import episode_colours
from simlab.render.transcript import episode_html
from simlab.render.turn_sheet import turn_lines, turn_sheet
from simlab.worlds import get_family

SIZE = (1200, 800)


@pytest.fixture(scope="module")
def rooms_episode(record_rooms) -> Episode:
    return load_run(record_rooms).episodes()[0]


@pytest.fixture(scope="module")
def blocks_episode(record) -> Episode:
    return load_run(record("director=oracle", "builder=scripted:0.3", turns=4)).episodes()[0]


def _sheet_scene_region(sheet: Image.Image) -> np.ndarray:
    """Where :func:`turn_sheet` pastes the big picture (title bar, then a padding)."""
    width, height = sheet.size
    bar, pad = max(28, height // 22), max(8, width // 100)
    return np.asarray(sheet)[bar + pad : bar + pad + round(height * 0.68), pad : pad + round(width * 0.6)]


def test_a_rooms_turn_sheet_shows_the_room_not_a_blocks_board(rooms_episode):
    turn = rooms_episode.last_turn
    sheet = turn_sheet(rooms_episode, turn, SIZE)
    room, was_scene = main_picture(rooms_episode, turn, (round(SIZE[0] * 0.6), round(SIZE[1] * 0.68)))
    assert was_scene
    assert np.array_equal(_sheet_scene_region(sheet), np.asarray(room))
    assert set(turn_pictures(rooms_episode, turn)) == {"Answerer's view", "Helper's view", "question"}


def test_a_rooms_gif_frame_is_the_room(rooms_episode, tmp_path):
    frame = np.asarray(turn_frame(rooms_episode, 0, size=(320, 240))).astype(int)
    room = np.asarray(main_picture(rooms_episode, 0, (320, 240))[0]).astype(int)
    caption_free = (slice(40, None), slice(None))  # below the "turn N of M" caption
    assert np.array_equal(frame[caption_free], room[caption_free])
    path = write_animation(rooms_episode, 0, rooms_episode.last_turn, tmp_path / "r.gif", size=(320, 240))
    with Image.open(path) as gif:
        assert gif.n_frames == rooms_episode.last_turn + 1
        gif.seek(0)
        decoded = np.asarray(gif.convert("RGB")).astype(int)
    assert np.abs(decoded[caption_free] - room[caption_free]).mean() < 8  # GIF palette noise only


def test_a_rooms_transcript_holds_the_rooms_pictures(rooms_episode):
    page = episode_html(rooms_episode)
    turns = rooms_episode.last_turn + 1
    assert page.count("<img") == turns * 4  # the 3D room, both views and the question card, every turn
    assert page.count('alt="Answerer&#x27;s view"') == turns and "D1&#x27;s wall" not in page
    assert f"(task {rooms_episode.task['task']})" in page  # the family's group, in its words


def test_a_blocks_transcript_keeps_its_board_and_walls(blocks_episode):
    page = episode_html(blocks_episode)
    turns = blocks_episode.last_turn + 1
    assert page.count("<img") == 3 + turns * 2  # three walls once, then the 3D scene and the board per turn
    assert page.count("D2&#x27;s wall") >= 1


@pytest.mark.parametrize("which", ["blocks_episode", "rooms_episode"])
def test_a_role_has_one_colour_in_3d_dialogue_sheet_and_transcript(which, request):
    """D2 was teal in the 3D view and purple in the panels; the builder orange in the app, blue in exports."""
    episode: Episode = request.getfixturevalue(which)
    palette = get_family(episode.world).palette
    views = get_family(episode.world).load_views()
    assert views.scene is not None
    drawn = {
        item.key.split(":")[1]: tuple(round(c * 255) for c in item.color)
        for item in views.scene(episode, 0)
        if item.key.startswith(("wall:", "frustum:"))  # a role's wall or eye
    }
    assert drawn and all(drawn[role] == palette[role] for role in drawn)
    colours = episode_colours(episode)
    assert {role: colours[role] for role in palette} == dict(palette)
    page = episode_html(episode, images=False)
    speakers = {e.role for e in episode.events if e.kind == "message"}
    for role in speakers:
        assert f"color:{hex_colour(palette[role])}" in page
        lines = [line for t in range(episode.last_turn + 1) for line in turn_lines(episode, t, colours)]
        assert any(who == role and colour == palette[role] for who, _, colour in lines)


def test_a_family_without_a_3d_scene_still_exports(flat_family, tmp_path):
    """Its big picture is its turn pictures, side by side; the conformance render test passes."""
    from simlab.testing import play, render_test

    family = get_family(flat_family)
    episode = play(family, family.tasks.generate(1, 0)[0], [], 0, {"turns": 3})
    assert episode.world == flat_family
    picture, was_scene = main_picture(episode, 1, (round(SIZE[0] * 0.6), round(SIZE[1] * 0.68)))
    assert not was_scene and len(np.unique(np.asarray(picture).reshape(-1, 3), axis=0)) > 50
    board = next(iter(turn_pictures(episode, 1).values()))
    assert np.array_equal(np.asarray(picture), np.asarray(side_by_side([board], picture.size)))
    assert np.array_equal(_sheet_scene_region(turn_sheet(episode, 1, SIZE)), np.asarray(picture))
    render_test(family, episode)
