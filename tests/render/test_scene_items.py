"""Scene items: how a kind is drawn by default, and a family drawing its own kinds the same way."""

from __future__ import annotations

import pyvista as pv

from simlab.render.scene import SceneItem, add_items


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
