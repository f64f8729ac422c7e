"""Clicking a block in the 3D view: what it is, how it stands against the target, which directors see it."""

from __future__ import annotations

from simlab.core import events as ev
from simlab.core.episode import Episode
from simlab.worlds.blocks.inspection import LAYERS, inspect_item, place_of

# The target: a green block at the far-left corner (on D1's and D2's walls), a red block under a blue one in the
# middle cell (the red one is seen by nobody), a yellow one at the near-right corner (D3's wall alone) and an
# orange one in the interior cell (2,1), seen from above by D2 with the paper's setting.
TARGET = {"stacks": {"0,0": ["gs"], "1,1": ["rs", "bs"], "2,2": ["ys"], "2,1": ["os"]}, "spans": []}
BOARD = {"stacks": {"0,0": ["rs"], "2,2": ["ys"]}, "spans": []}


def _episode(interior: str = "paper") -> Episode:
    events = [ev.state(0, {"board": {"stacks": {}, "spans": []}}), ev.state(1, {"board": BOARD})]
    return Episode("e", "blocks", 0, {"board": TARGET}, settings={"interior": interior}, events=events)


def test_a_block_on_two_walls_is_seen_by_both_directors_and_a_wrong_colour_is_said():
    found = inspect_item(_episode(), 1, "block:0,0:0")
    assert found is not None and found.title.startswith("A small red block (rs) at (0,0)")
    assert "Does not match: the target has a small green block (gs) here" in found.lines
    assert "D1 sees it on the left wall: left position, bottom layer" in found.lines
    assert "D2 sees it on the far wall: left position, bottom layer" in found.lines
    assert "D3 does not see it: not on the right wall" in found.lines
    sight = [item.key for item in found.items if item.key.startswith("selected:sight:")]
    assert sight == ["selected:sight:D1", "selected:sight:D2"]


def test_a_buried_interior_block_is_seen_by_nobody_and_a_top_one_by_d2_from_above():
    buried = inspect_item(_episode(), 1, "target:1,1:0")
    assert buried is not None and buried.title == "Target: a small red block (rs) at (1,1), bottom layer"
    assert "Still missing: the target has a small red block (rs) here" in buried.lines
    assert any("No director sees this place" in line for line in buried.lines)
    assert not [item for item in buried.items if "sight" in item.key]
    top = inspect_item(_episode(), 1, "target:2,1:0")
    assert top is not None and "D2 sees it on the far wall: from above, in the interior, bottom layer" in top.lines
    hidden = inspect_item(_episode("reference"), 1, "target:2,1:0")  # the released code: nobody sees inside
    assert hidden is not None and any("No director sees" in line for line in hidden.lines)


def test_a_matching_block_and_keys_that_name_no_block():
    found = inspect_item(_episode(), 1, "block:2,2:0")
    assert found is not None and "Matches the target" in found.lines
    assert "D3 sees it on the right wall: right position, bottom layer" in found.lines
    assert place_of("block:0,0-0,1:2") == ("block", ((0, 0), (0, 1)), 2)
    for key in ("floor", "wall:D1", "block:9,9:0", "block:0,0", "block:a,b:0", "frustum:D2"):
        assert inspect_item(_episode(), 1, key) is None, key


def test_every_layer_has_a_name_and_kinds():
    assert [layer.name for layer in LAYERS] == ["Target", "Placed blocks", "This turn's move", "Directors"]
    assert all(layer.kinds for layer in LAYERS)
