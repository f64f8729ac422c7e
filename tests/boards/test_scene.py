"""The boards' 3D scene: its pieces at every turn of real episodes, their colours and heights, the target
overlay and its difference markers, the cameras, and what an off-screen render shows."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pytest

from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.render.scene import SceneItem, render_items
from simlab.testing import play, render_test
from simlab.worlds import get_family
from simlab.worlds.boards.images import COLOUR_RGB
from simlab.worlds.boards.model import Board, Placement, build, put
from simlab.worlds.boards.presentation import VIEWS
from simlab.worlds.boards.scene import (
    CAMERAS,
    LEVEL_HEIGHT,
    MARKER_RGB,
    PIECE_RGB,
    board_at,
    boards_cameras,
    boards_scene,
    count_pieces,
    level_base,
)
from simlab.worlds.boards.targets import Target, generate_targets

FAMILY = get_family("boards")
SMALL = (320, 240)


@pytest.fixture(scope="module")
def recorded() -> list[Episode]:
    """Real episodes of a noisy robot (some wrong and extra pieces on the way), in memory."""
    tasks = generate_targets(4, 0)
    return [play(FAMILY, t.to_json(), ["robot=noisy:0.3"], 0, {}) for t in tasks]


def _target(*placements: tuple[str, str, int, int]) -> Target:
    return Target("synthetic", tuple(Placement(*p) for p in placements))


def _episode(target: Target, board: Board) -> Episode:
    """An episode whose board after turn 1 is ``board`` (empty at turn 0)."""
    events = [
        Event("state", 0, None, {"state": {"board": Board().to_json()}}),
        Event("state", 1, None, {"state": {"board": board.to_json()}}),
    ]
    return Episode("synthetic", "boards", 0, target.to_json(), events=events)


def _kind(items: Iterable[SceneItem], kind: str) -> list[SceneItem]:
    return [i for i in items if i.kind == kind]


def _by_key(items: Iterable[SceneItem]) -> dict[str, SceneItem]:
    return {i.key: i for i in items}


def test_piece_count_equals_the_board_at_every_turn_of_real_episodes(recorded):
    changed = 0
    for episode in recorded:
        for turn in range(episode.last_turn + 1):
            board = Board.from_json(episode.state_at(turn)["board"])
            items = boards_scene(episode, turn)
            assert count_pieces(items) == board.count(), (episode.episode_id, turn)
            assert len({i.key for i in items}) == len(items)
            changed += board != board_at(episode, max(turn - 1, 0))
    assert changed >= 4  # the episodes really build something


def test_pieces_have_their_colours_and_stand_at_their_levels():
    board = build([Placement("nut", "blue", 4, 4), Placement("washer", "red", 4, 4), Placement("screw", "green", 4, 4)])
    put(board, "bridge-h", "yellow", 2, 2)
    items = _by_key(boards_scene(_episode(_target(("nut", "red", 1, 1)), board), 1, overlay=False))
    expected = {"piece:4,4:1": "blue", "piece:4,4:2": "red", "piece:4,4:3": "green", "piece:2,2:1": "yellow"}
    assert {k: i.color for k, i in items.items() if i.kind == "piece"} == {k: PIECE_RGB[c] for k, c in expected.items()}
    for key in expected:
        level = int(key.rsplit(":", 1)[1])
        assert items[key].mesh.bounds[4] == pytest.approx(level_base(level), abs=1e-6), key
    assert items["piece:4,4:2"].mesh.bounds[5] <= level_base(3)  # a piece keeps within its level
    assert level_base(2) - level_base(1) == pytest.approx(LEVEL_HEIGHT)
    bridge = items["piece:2,2:1"].mesh.bounds
    assert bridge[1] - bridge[0] > 1.5 and bridge[3] - bridge[2] < 0.7  # one slab along the row
    assert items["piece:2,2:1"].tooltip == "yellow bridge-h at row 2, col 2 and row 2, col 3, level 1"


def test_row_1_is_the_far_side_and_column_1_the_left():
    board = build([Placement("nut", "red", 1, 1), Placement("nut", "blue", 8, 8)])
    items = _by_key(boards_scene(_episode(_target(("nut", "red", 1, 1)), board), 1))
    far_left, near_right = items["piece:1,1:1"].mesh.center, items["piece:8,8:1"].mesh.center
    assert far_left[0] < near_right[0] and far_left[1] > near_right[1]


def test_the_overlay_ghosts_missing_pieces_and_marks_wrong_and_extra_ones():
    target = _target(("bridge-v", "red", 3, 3), ("nut", "green", 6, 6), ("washer", "blue", 6, 6))
    board = build([Placement("nut", "green", 6, 6), Placement("screw", "red", 6, 6), Placement("washer", "blue", 8, 1)])
    episode = _episode(target, board)
    items = boards_scene(episode, 1)
    ghosts = _by_key(_kind(items, "target"))
    assert set(ghosts) == {"target:3,3:1"}  # the bridge once; the green nut is built, the washer's place is wrong
    assert ghosts["target:3,3:1"].opacity < 0.5 and ghosts["target:3,3:1"].color == PIECE_RGB["red"]
    markers = _by_key(_kind(items, "difference"))
    assert set(markers) == {"wrong:6,6:2", "extra:8,1:1"}
    assert markers["extra:8,1:1"].color == MARKER_RGB["extra"] != markers["wrong:6,6:2"].color
    assert all(m.style == "wireframe" for m in markers.values())
    assert "the target has blue washer" in markers["wrong:6,6:2"].tooltip
    assert not _kind(boards_scene(episode, 1, overlay=False), "target")
    assert not _kind(boards_scene(episode, 1, overlay=False), "difference")
    wire = _kind(boards_scene(episode, 1, style="wireframe"), "target")
    assert wire and all(i.style == "wireframe" for i in wire)


def test_the_whole_target_is_ghosted_before_anything_is_built_and_nothing_once_it_is():
    target = generate_targets(5, 0)[3]
    built = target.board()
    episode = _episode(target, built)
    before = boards_scene(episode, 0)
    assert len(_kind(before, "target")) == built.count() and not _kind(before, "difference")
    after = boards_scene(episode, 1)
    assert not _kind(after, "target") and not _kind(after, "difference")
    assert count_pieces(after) == built.count()


def test_cameras_frame_the_board_and_the_close_up_what_the_episode_uses(recorded):
    cameras = boards_cameras(recorded[0])
    assert {"iso", "top", "front", "side", "close"} <= set(cameras) and VIEWS.default_camera in cameras
    assert cameras["top"].parallel and cameras["top"].view_up == (0.0, 1.0, 0.0)
    cells = recorded[0].state_at(recorded[0].last_turn)["board"]["cells"]
    focal = cameras["close"].focal_point
    rows = [x for x, _, _ in cells]
    assert 8 - max(rows) - 1 <= focal[1] <= 8 - min(rows) + 1
    whole, close = cameras["iso"], cameras["close"]
    assert np.linalg.norm(np.subtract(close.position, close.focal_point)) < np.linalg.norm(
        np.subtract(whole.position, whole.focal_point)
    )


# ---- off-screen renders ---------------------------------------------------------------------------------


def _share(pixels: np.ndarray, rgb: tuple[int, int, int], tol: int = 45) -> np.ndarray:
    return np.all(np.abs(pixels.astype(int) - np.array(rgb)) < tol, axis=-1)


def test_from_the_top_a_red_nut_at_row_1_col_1_is_in_the_top_left_quadrant():
    board = build([Placement("nut", "red", 1, 1)])
    pixels = np.asarray(
        render_items(boards_scene(_episode(_target(("nut", "red", 1, 1)), board), 1), CAMERAS["top"], SMALL)
    )
    ys, xs = np.nonzero(_share(pixels, COLOUR_RGB["red"]))
    assert len(xs) > 40
    assert xs.mean() < SMALL[0] / 2 and ys.mean() < SMALL[1] / 2


def test_a_render_is_deterministic_and_shows_every_piece_colour():
    board = build(
        [
            Placement(s, c, 3, k + 2)
            for k, (s, c) in enumerate(zip(("nut", "washer", "screw", "nut"), COLOUR_RGB, strict=True))
        ]
    )
    episode = _episode(_target(("nut", "red", 3, 2)), board)
    cameras = boards_cameras(episode)
    for camera in ("close", "top"):
        pixels = np.asarray(render_items(boards_scene(episode, 1), cameras[camera], SMALL))
        for name, rgb in COLOUR_RGB.items():
            assert _share(pixels, rgb).mean() > 0.0005, (camera, name)
    again = np.asarray(render_items(boards_scene(episode, 1), cameras["top"], SMALL))
    assert np.array_equal(pixels, again)


def test_every_camera_sees_the_board(recorded):
    episode = recorded[0]
    items = boards_scene(episode, episode.last_turn)
    for name, pose in boards_cameras(episode).items():
        pixels = np.asarray(render_items(items, pose, SMALL))
        assert (pixels < 235).any(axis=-1).mean() > 0.05, name


def test_everything_the_family_draws_renders(recorded):
    """The conformance suite's drawing checks: observation pictures, turn sheets, transcript, GIF."""
    render_test(FAMILY, recorded[1], max_frames=3)
    assert set(VIEWS.turn_pictures(recorded[1], 1)) == {"board"}
    assert set(VIEWS.episode_pictures(recorded[1])) == {"target"}
