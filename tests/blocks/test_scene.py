"""The 3D blocks scene: what it holds at every turn of real recordings, and what its pictures show."""

from pathlib import Path

import numpy as np
import pytest

from simlab.cli import main
from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.core.recording import load_run
from simlab.render.scene import render_items
from simlab.worlds.blocks.images import COLOR_RGB
from simlab.worlds.blocks.model import Board
from simlab.worlds.blocks.scene import CAMERAS, blocks_scene, count_blocks, eye_point

REPO = Path(__file__).resolve().parents[2]
CRAFT_LOG = REPO / "tests" / "blocks" / "fixtures" / "craft_log_small.json"
SMALL = (320, 240)


@pytest.fixture(scope="module")
def recorded(record) -> Episode:
    return load_run(record("director=oracle", "builder=scripted", turns=8, seed=3)).episodes()[0]


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Episode:
    out = tmp_path_factory.mktemp("imported") / "run"
    assert main(["import", "craft", str(CRAFT_LOG), "--out", str(out)]) == 0
    return load_run(out).episodes()[0]


def _kinds(items, kind):
    return [i for i in items if i.kind == kind]


def _moves(episode: Episode) -> dict[int, bool]:
    """turn -> ok, for turns whose builder tried a place or remove."""
    out = {}
    for t in range(episode.last_turn + 1):
        events = episode.events_of_turn(t)
        action = next((e.data["action"] for e in events if e.kind == "action"), None)
        result = next((e.data for e in events if e.kind == "result"), None)
        if action and result is not None and action.get("action") in ("place", "remove"):
            out[t] = bool(result["ok"])
    return out


def test_block_count_equals_the_pieces_on_the_board_at_every_turn(recorded):
    for turn in range(recorded.last_turn + 1):
        board = Board.from_json(recorded.state_at(turn)["board"])
        items = blocks_scene(recorded, turn)
        assert count_blocks(items) == len(list(board.pieces())), turn
        assert len({i.key for i in items}) == len(items)


def test_highlight_exactly_on_turns_whose_move_succeeded(recorded, imported):
    for episode in (recorded, imported):
        moves = _moves(episode)
        for turn in range(episode.last_turn + 1):
            highlights = _kinds(blocks_scene(episode, turn), "highlight")
            assert len(highlights) == (1 if moves.get(turn) else 0), (episode.episode_id, turn)


def test_a_failed_move_is_a_red_ghost_whose_tooltip_holds_the_error_code(imported):
    moves = _moves(imported)
    failed_turns = [t for t, ok in moves.items() if not ok]
    assert failed_turns == [4]
    for turn in range(imported.last_turn + 1):
        failed = [i for i in _kinds(blocks_scene(imported, turn), "failed") if i.style == "surface"]
        assert len(failed) == (1 if turn in failed_turns else 0)
    ghost, outline = _kinds(blocks_scene(imported, 4), "failed")
    assert outline.style == "wireframe" and "wrong_layer" in outline.tooltip
    assert "wrong_layer" in ghost.tooltip and ghost.key == "failed:1,0:1"
    assert ghost.opacity < 1 and ghost.color[0] > 0.8 > ghost.color[1]


def test_target_ghosts_cover_only_what_is_not_built_yet(recorded):
    target = list(Board.from_json(recorded.task["board"]).pieces())
    first = blocks_scene(recorded, 0)
    assert len(_kinds(first, "target")) == len(target)
    last = blocks_scene(recorded, recorded.last_turn)
    assert len(_kinds(last, "target")) < len(target)
    assert not _kinds(blocks_scene(recorded, 0, overlay=False), "target")
    wire = _kinds(blocks_scene(recorded, 0, style="wireframe"), "target")
    assert all(i.style == "wireframe" for i in wire)


def test_walls_and_eyes_of_the_three_directors(recorded):
    items = blocks_scene(recorded, 0)
    walls = {i.key: i.tooltip for i in _kinds(items, "wall")}
    assert walls == {"wall:D1": "D1 - left wall", "wall:D2": "D2 - far wall", "wall:D3": "D3 - right wall"}
    assert len(_kinds(items, "frustum")) == 3
    assert eye_point("D1")[0] < -3 and eye_point("D2")[1] > 5 and eye_point("D3")[0] > 5


def test_an_imported_illegal_board_is_drawn_from_its_codes():
    codes = {"0,0": ["rl"], "0,1": ["zz", "gs"]}
    episode = Episode(
        "x", "blocks", 0, {"board": None}, events=[Event("state", 0, None, {"state": {"board": None, "codes": codes}})]
    )
    items = blocks_scene(episode, 0)
    assert count_blocks(items) == 2  # rl as a small box, gs on layer 1; zz cannot be drawn


def _colour_share(pixels: np.ndarray, rgb, tol: int = 40) -> float:
    return float(np.mean(np.all(np.abs(pixels.astype(int) - np.array(rgb)) < tol, axis=-1)))


def _episode_of(board_json) -> Episode:
    state = Event("state", 0, None, {"state": {"board": board_json}})
    return Episode("synthetic", "blocks", 0, {"board": board_json}, events=[state])


def test_render_is_not_blank_deterministic_and_shows_the_block_colours(recorded):
    image = render_items(blocks_scene(recorded, recorded.last_turn), CAMERAS["free"], SMALL)
    assert image.size == SMALL
    pixels = np.asarray(image)
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 200
    again = np.asarray(render_items(blocks_scene(recorded, recorded.last_turn), CAMERAS["free"], SMALL))
    assert np.array_equal(pixels, again)
    stacks = {"2,0": ["gs"], "2,1": ["bs"], "2,2": ["rs"], "1,0": ["ys"], "1,2": ["os"]}
    rainbow = _episode_of({"stacks": stacks, "spans": []})
    for camera in ("free", "builder"):
        pixels = np.asarray(render_items(blocks_scene(rainbow, 0), CAMERAS[camera], SMALL))
        for name, rgb in COLOR_RGB.items():
            assert _colour_share(pixels, rgb) > 0.002, (camera, name)


def test_builder_camera_shows_a_red_block_at_0_0_in_the_top_left_quadrant():
    board = Board.from_json({"stacks": {"0,0": ["rs"]}, "spans": []})
    episode = Episode(
        "red",
        "blocks",
        0,
        {"board": board.to_json()},
        events=[Event("state", 0, None, {"state": {"board": board.to_json()}})],
    )
    pixels = np.asarray(render_items(blocks_scene(episode, 0, overlay=False), CAMERAS["builder"], SMALL))
    red = np.all(np.abs(pixels.astype(int) - np.array(COLOR_RGB["red"])) < 45, axis=-1)
    ys, xs = np.nonzero(red)
    assert len(xs) > 200
    assert xs.mean() < SMALL[0] / 2 and ys.mean() < SMALL[1] / 2


def test_every_camera_sees_something(recorded):
    items = blocks_scene(recorded, recorded.last_turn)
    for name, pose in CAMERAS.items():
        pixels = np.asarray(render_items(items, pose, SMALL))
        assert (pixels < 250).any(axis=-1).mean() > 0.05, name
