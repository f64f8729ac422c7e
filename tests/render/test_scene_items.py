"""Scene items: how a kind is drawn by default, and a family drawing its own kinds the same way."""

from __future__ import annotations

import numpy as np
import pyvista as pv

from simlab.render.scene import (
    EDGE_DARKENING,
    CameraPose,
    SceneItem,
    add_items,
    clear_kept_actors,
    darker,
    offscreen_plotter,
    render_items,
    set_camera,
)


def _item(kind: str, **more) -> SceneItem:
    return SceneItem(f"{kind}:1", kind, pv.Box(), (0.2, 0.4, 0.6), **more)


def test_edges_and_culling_default_by_kind_and_can_be_set_for_any_kind():
    assert _item("block").edged and not _item("block").culled
    assert _item("target").culled and not _item("target").edged
    assert not _item("marker").edged and not _item("marker").culled
    assert _item("marker", edges=True, cull_back=True).edged and _item("marker", cull_back=True).culled
    assert not _item("block", edges=False).edged
    assert not _item("block", style="wireframe").edged  # a wireframe has no faces to outline


def test_the_plotter_draws_what_the_item_asks_for():
    plotter = pv.Plotter(off_screen=True, window_size=(64, 48))
    try:
        actors = add_items(plotter, [_item("marker", edges=True, cull_back=True), _item("floor")])
        marked, plain = actors["marker:1"].GetProperty(), actors["floor:1"].GetProperty()
        assert marked.GetEdgeVisibility() and marked.GetBackfaceCulling()
        assert not plain.GetEdgeVisibility() and not plain.GetBackfaceCulling()
    finally:
        plotter.close()


def _fresh(items: list[SceneItem], camera: CameraPose, size: tuple[int, int]) -> np.ndarray:
    """``items`` rendered on an empty plotter: every actor made afresh."""
    clear_kept_actors()
    return np.asarray(render_items(items, camera, size))


def test_renders_in_a_row_keep_unchanged_actors_and_give_the_pixels_of_fresh_ones():
    """Consecutive off-screen renders reuse the actors of unchanged items: each picture is still the one the
    items make drawn afresh, translucent ones blended in the same order, a changed item drawn as it now is."""
    camera = CameraPose("c", (3.0, -4.0, 3.0), (0.0, 0.0, 0.0), (0.0, 0.0, 1.0))
    size = (160, 120)
    floor = SceneItem("floor", "floor", pv.Plane(i_size=4, j_size=4), (0.8, 0.8, 0.8))
    ghost = SceneItem("ghost", "target", pv.Box((-0.5, 0.5, -0.5, 0.5, 0, 1)), (0.2, 0.3, 0.9), opacity=0.4)
    cube = SceneItem("cube", "block", pv.Box((-1, 0, -1, 0, 0, 1)), (0.9, 0.2, 0.2))
    moved = SceneItem("cube", "block", pv.Box((0, 1, 0, 1, 0, 1)), (0.9, 0.2, 0.2))  # same key and look, moved
    frames = [[floor, cube, ghost], [floor, moved, ghost], [ghost, floor], [floor, moved, ghost]]
    for items in frames:
        kept = np.asarray(render_items(items, camera, size))
        assert np.array_equal(kept, _fresh(items, camera, size))
    first, second = (np.asarray(render_items(items, camera, size)) for items in frames[:2])
    assert not np.array_equal(first, second)  # the moved cube is drawn where it now is
    render_items(frames[0], camera, size)
    with offscreen_plotter(size) as plotter:
        plotter.clear_actors()  # another user of the plotter (an id render) took everything off
    assert np.array_equal(np.asarray(render_items(frames[1], camera, size)), second)


def _add_mesh_pixels(plotter: pv.Plotter, items: list[SceneItem], camera: CameraPose) -> np.ndarray:
    """``items`` drawn as pyvista's ``add_mesh`` draws them with :func:`add_items`'s arguments: the reference
    the copied prototypes must match."""
    plotter.clear_actors()
    for item in items:
        plotter.add_mesh(
            item.mesh,
            color=item.color,
            opacity=item.opacity,
            style=item.style,
            line_width=item.line_width,
            show_edges=item.edged,
            edge_color=darker(item.color, EDGE_DARKENING) if item.edged else None,
            smooth_shading=False,
            culling="back" if item.culled else None,
            reset_camera=False,
            render=False,
            ambient=0.5,
            diffuse=0.55,
            specular=0.0,
        )
    set_camera(plotter, camera)
    plotter.render()
    return np.asarray(plotter.screenshot(return_img=True)).copy()


def test_added_actors_draw_the_pixels_of_add_mesh_for_every_look():
    """Every look an item can ask for (styles, translucency, edges, culling, line width), two items of each in
    different colours (the second a copy of the first's prototype): the pixels of ``add_mesh``. The items are
    named and pickable as asked, and the prototypes are never on screen."""
    camera = CameraPose("c", (3.0, -4.0, 3.0), (0.0, 0.0, 0.0), (0.0, 0.0, 1.0))
    looks = [
        {"kind": "block"},
        {"kind": "floor", "tooltip": "the floor"},
        {"kind": "target", "opacity": 0.4},
        {"kind": "marker", "style": "wireframe", "line_width": 3.0},
        {"kind": "marker", "style": "points"},
        {"kind": "failed", "opacity": 0.7},
    ]
    items = []
    for k, look in enumerate(looks):
        kind = look.pop("kind")
        for j, colour in enumerate([(0.9, 0.2, 0.2), (0.1, 0.5, 0.8)]):
            box = pv.Box((k * 0.6 - 1.8, k * 0.6 - 1.4, j - 1.0, j - 0.6, 0.0, 0.3 + 0.2 * j))
            items.append(SceneItem(f"{kind}:{k}.{j}", kind, box, colour, **look))
    plotter = pv.Plotter(off_screen=True, window_size=(200, 150))
    try:
        expected = _add_mesh_pixels(plotter, items, camera)
        plotter.clear_actors()
        actors = add_items(plotter, items)
        set_camera(plotter, camera)
        plotter.render()
        assert np.array_equal(np.asarray(plotter.screenshot(return_img=True)), expected)
        assert list(plotter.renderer.actors) == [item.key for item in items]  # no prototype among them
        assert [actors[item.key].GetPickable() for item in items] == [bool(item.tooltip) for item in items]
    finally:
        plotter.close()
