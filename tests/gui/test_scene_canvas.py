"""The shared 3D canvas, real VTK under Xvfb: an item that only moved keeps its actor, moved by a user transform,
and one of a new shape keeps it with the new mesh, one of a new colour gets the colour, each drawing what a fresh
actor draws; a draft frame has fewer pixels, the mouse still finds the same world points in it and its texts and
lines are as large on the screen as at full quality."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import pyvista as pv
from PySide6.QtCore import QPoint

from simlab.gui.scene_canvas import DRAFT_TEXT_SHRINK, SceneCanvas
from simlab.render.scene import CameraPose, SceneItem, line_segments, text_label
from tests.gui.conftest import shown_canvas

TOP = CameraPose("top", (0.0, 0.0, 10.0), (0.0, 0.0, 0.0), (0.0, 1.0, 0.0), parallel=True, parallel_scale=3.0)


@pytest.fixture
def canvas(qtbot):
    with shown_canvas(qtbot, TOP) as made:
        yield made


def box(key: str, centre: tuple[float, float, float], size: float = 1.0) -> SceneItem:
    x, y, z = centre
    half = size / 2
    bounds = (x - half, x + half, y - half, y + half, z - half, z + half)
    return SceneItem(key, "object", pv.Box(bounds=bounds), (0.8, 0.2, 0.2), tooltip=key)


def picture(canvas: SceneCanvas) -> np.ndarray:
    canvas.plotter.render()
    return np.asarray(canvas.plotter.screenshot(return_img=True), dtype=int)


def widget_point(canvas: SceneCanvas, point: tuple[float, float, float]) -> QPoint:
    """The Qt position in the canvas where world ``point`` is drawn (at full quality)."""
    renderer = canvas.plotter.renderer
    renderer.SetWorldPoint(*point, 1.0)
    renderer.WorldToDisplay()
    x, y, _z = renderer.GetDisplayPoint()
    ratio = canvas.widget.devicePixelRatioF()
    return QPoint(round(x / ratio), round(canvas.widget.height() - 1 - y / ratio))


def actor_of(canvas: SceneCanvas, key: str):
    return canvas._shown[key].actor


def test_a_moved_item_keeps_its_actor_and_looks_as_a_fresh_one(canvas):
    canvas.show([box("a", (0.0, 0.0, 0.0)), box("b", (-1.5, 1.0, 0.0), 0.5)])
    before = actor_of(canvas, "a")
    moved = [box("a", (1.0, -0.5, 0.0)), box("b", (-1.5, 1.0, 0.0), 0.5)]
    canvas.show(moved)
    assert actor_of(canvas, "a") is before and before.GetPosition() == pytest.approx((1.0, -0.5, 0.0))
    assert [item.key for item in canvas.items] == ["a", "b"]
    shown = picture(canvas)
    canvas.clear()
    canvas.show(moved)  # every actor made afresh from the moved meshes
    assert actor_of(canvas, "a") is not before
    assert np.abs(picture(canvas) - shown).mean() < 0.5
    assert canvas.key_at(*canvas.display_point(widget_point(canvas, (1.0, -0.5, 0.5)))) == "a"  # picked where moved


def sharing_cells(item: SceneItem, points: np.ndarray) -> SceneItem:
    """``item`` with ``points`` of its own and its mesh's very cells (a shallow copy, as an editor moves a mesh)."""
    mesh = item.mesh.copy(deep=False)
    mesh.SetPoints(pv.vtk_points(points, deep=True))
    return replace(item, mesh=mesh)


def test_a_mesh_sharing_the_drawn_cells_is_moved_when_its_points_moved_together_else_drawn_as_given(canvas):
    """The cells shared with the drawn mesh are taken as the same without comparing them; the points still
    decide: all moved by one offset (a drag), the actor is moved; one point apart, it is given the new mesh."""
    drawn = box("a", (0.0, 0.0, 0.0))
    canvas.show([drawn])
    actor, points = actor_of(canvas, "a"), np.asarray(drawn.mesh.points)
    canvas.show([sharing_cells(drawn, points + np.array([0.5, 0.25, 0.0]))])
    assert actor_of(canvas, "a") is actor and actor.GetPosition() == pytest.approx((0.5, 0.25, 0.0))
    assert actor.GetMapper().GetInput() is drawn.mesh
    bent = points.copy()
    bent[0] += (0.0, 0.0, 0.3)
    stretched = sharing_cells(drawn, bent)
    canvas.show([stretched])
    assert actor_of(canvas, "a") is actor and actor.GetPosition() == pytest.approx((0.0, 0.0, 0.0))
    assert actor.GetMapper().GetInput() is stretched.mesh


def test_an_item_of_a_new_shape_keeps_its_actor_with_the_new_mesh_and_one_of_a_new_colour_gets_the_colour(canvas):
    canvas.show([box("a", (0.0, 0.0, 0.0))])
    first = actor_of(canvas, "a")
    larger = [box("a", (0.5, 0.0, 0.0), 2.0)]  # not the same mesh moved: the actor is given the new one
    canvas.show(larger)
    assert actor_of(canvas, "a") is first and first.GetPosition() == pytest.approx((0.0, 0.0, 0.0))
    shown = picture(canvas)
    canvas.clear()
    canvas.show(larger)
    assert np.abs(picture(canvas) - shown).mean() < 0.5
    blue = [SceneItem("a", "object", larger[0].mesh, (0.1, 0.1, 0.9), tooltip="a")]
    canvas.show(blue)  # in another colour: the actor is handed on with the colour swapped in
    shown = picture(canvas)
    canvas.clear()
    canvas.show(blue)
    assert np.abs(picture(canvas) - shown).mean() < 0.5


def test_a_draft_has_fewer_pixels_and_the_mouse_finds_the_same_points_in_it(canvas):
    canvas.show([box("a", (1.0, -0.5, 0.0))])
    full = canvas.plotter.ren_win.GetSize()
    at = widget_point(canvas, (1.2, -0.4, 0.5))
    point, key = canvas.plane_point(*canvas.display_point(at)), canvas.key_at(*canvas.display_point(at))
    canvas.set_draft(2)
    assert tuple(canvas.plotter.ren_win.GetSize()) == (full[0] // 2, full[1] // 2)
    assert canvas.plotter.ren_win.GetMultiSamples() == 0
    draft = picture(canvas)
    assert draft.shape[:2] == (full[1] // 2, full[0] // 2)
    assert canvas.plane_point(*canvas.display_point(at)) == pytest.approx(point, abs=0.03)  # a draft pixel is 1.5 cm
    assert canvas.key_at(*canvas.display_point(at)) == key == "a"
    canvas.set_draft(1)
    assert tuple(canvas.plotter.ren_win.GetSize()) == tuple(full)
    assert canvas.plotter.ren_win.GetMultiSamples() > 0 or canvas._samples == 0


def _extent(image: np.ndarray, rgb: tuple[int, int, int]) -> tuple[int, int]:
    """How many columns and rows hold pixels near ``rgb`` (a text's width, a horizontal line's thickness)."""
    near = np.abs(image[:, :, :3] - np.asarray(rgb)).sum(axis=2) < 300  # anti-aliased edges count
    return int(near.any(axis=0).sum()), int(near.any(axis=1).sum())


def test_a_drafts_texts_and_lines_keep_their_size_on_the_screen(canvas):
    blue, green = (0.0, 0.0, 1.0), (0.0, 0.6, 0.0)
    line = SceneItem("line", "frustum", line_segments([((-2.0, -1.0, 0.0), (2.0, -1.0, 0.0))]), green, line_width=6.0)
    canvas.show([text_label("label:eye", (-1.0, 1.0, 0.0), "Answerer", blue), line])
    text_width, _ = _extent(picture(canvas), (0, 0, 255))
    _, line_width = _extent(picture(canvas), (0, 153, 0))
    canvas.set_draft(2)  # each draft pixel is stretched over two on the screen
    draft = picture(canvas)
    assert _extent(draft, (0, 0, 255))[0] * 2 == pytest.approx(text_width, rel=0.2)
    assert _extent(draft, (0, 153, 0))[1] * 2 == pytest.approx(line_width, abs=2)
    canvas.set_draft(4)  # a text this much smaller would blur past reading: it is drawn at half size at least
    assert _extent(picture(canvas), (0, 0, 255))[0] * DRAFT_TEXT_SHRINK == pytest.approx(text_width, rel=0.2)
    canvas.set_draft(1)
    assert _extent(picture(canvas), (0, 0, 255))[0] == text_width


def test_a_line_drawn_in_a_draft_and_kept_aside_comes_back_at_its_full_width(canvas):
    """An actor taken off during a drag is kept hidden with a draft's thinner line; handed on to a new item at
    full quality, it draws that item's line as wide as a fresh actor would."""
    green = (0.0, 0.6, 0.0)

    def line(key: str) -> SceneItem:
        return SceneItem(key, "frustum", line_segments([((-2.0, -1.0, 0.0), (2.0, -1.0, 0.0))]), green, line_width=6.0)

    canvas.show([line("first")])
    _, full_width = _extent(picture(canvas), (0, 153, 0))
    canvas.set_draft(2)
    canvas.show([])  # its actor is kept aside, hidden, its line drawn for the draft
    canvas.set_draft(1)
    canvas.show([line("second")])  # the same look: the kept actor is handed on
    assert _extent(picture(canvas), (0, 153, 0))[1] == pytest.approx(full_width, abs=1)


def _drawn(canvas: SceneCanvas) -> list[object]:
    renderer = canvas.plotter.renderer
    props = [renderer.GetViewProps().GetItemAsObject(k) for k in range(renderer.GetViewProps().GetNumberOfItems())]
    return [prop for prop in props if prop.GetVisibility()]


def test_a_drafts_unchanged_items_are_drawn_merged_as_their_own_actors_draw_them(canvas):
    """While drafting, the items a gesture left alone are one actor a look (one draw call), each face in its
    item's colour and lit as before; the moved item is drawn alone and can be picked; full quality brings every
    item's own actor back."""
    colours = [(0.8, 0.2, 0.2), (0.2, 0.6, 0.3), (0.3, 0.3, 0.9), (0.9, 0.8, 0.1)]
    items = [replace(box(f"b{k}", (k - 1.5, 0.5 * k - 0.7, 0.0), 0.8), color=c) for k, c in enumerate(colours)]
    glass = SceneItem("glass", "tint", pv.Box(bounds=(-2.5, 2.5, -1.6, -1.2, 0.0, 0.6)), (0.1, 0.1, 0.1), opacity=0.4)
    canvas.show([*items, glass])
    on_b3, on_b0 = (widget_point(canvas, point) for point in [(1.5, -1.2, 0.4), (-1.5, -0.7, 0.4)])
    canvas.set_draft(2)
    moved = [*items[:3], replace(box("b3", (1.5, -1.0, 0.0), 0.8), color=colours[3]), glass]
    canvas.show(moved)  # the first draft step: b3 moved, the rest merged
    assert len(_drawn(canvas)) == 3  # the three opaque boxes as one actor, b3 alone, the glass alone
    assert canvas._shown["b3"].picked.GetVisibility() and not actor_of(canvas, "b0").GetVisibility()
    merged = picture(canvas)
    canvas.set_draft(1)
    canvas.set_draft(2)  # drafting again: every item drawn by its own actor until the next step
    assert len(_drawn(canvas)) == 5
    assert np.abs(picture(canvas) - merged).max() <= 2  # the same pixels: colours, lighting, places
    canvas.show([*moved[:3], replace(moved[3], mesh=box("b3", (1.5, -1.2, 0.0), 0.8).mesh), glass])
    assert len(_drawn(canvas)) == 3 and canvas.key_at(*canvas.display_point(on_b3)) == "b3"
    canvas.set_draft(1)
    assert len(_drawn(canvas)) == 5 and canvas.key_at(*canvas.display_point(on_b0)) == "b0"


def test_a_drafts_merged_faces_are_unlit_and_coloured_as_vtk_lights_them_from_any_camera(canvas):
    """The merged actor and the moved item's are drawn without lighting (per-pixel lighting was most of a draft's
    render on software GL), their faces coloured as the light kit lights the items' own actors, from a perspective
    camera as from the top, and again when the camera moves during the draft."""
    colours = [(0.8, 0.2, 0.2), (0.2, 0.6, 0.3), (0.3, 0.3, 0.9), (0.9, 0.8, 0.1)]
    items = [replace(box(f"b{k}", (k - 1.5, 0.5 * k - 0.7, 0.3 * k), 0.8), color=c) for k, c in enumerate(colours)]
    floor = SceneItem("floor", "object", pv.Plane(i_size=6, j_size=4), (0.7, 0.6, 0.5))
    canvas.show([*items, floor])
    canvas.set_draft(2)
    moved = replace(items[3], mesh=box("b3", (1.5, -1.0, 0.6), 0.8).mesh)
    canvas.show([*items[:3], moved, floor])  # a draft step: the boxes left alone merged, the floor (no tooltip) alone
    assert sorted(len(merged.keys) for merged in canvas._merged.values()) == [1, 3]
    flat = canvas._shown["b3"].flat
    assert flat is not None and flat.actor.GetPosition() == pytest.approx((0.0, -1.8, -0.3), abs=1e-6)  # not remade
    unlit = [flat.actor, *(merged.faces.actor for merged in canvas._merged.values())]
    assert not any(actor.GetProperty().GetLighting() for actor in unlit)
    assert "lit" not in items[3].mesh.cell_data  # its colours went to a copy: the item's mesh is the family's
    for pose in (
        CameraPose("three-quarter", (4.0, -5.0, 4.0), (0.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
        CameraPose("low", (-3.0, -4.0, 1.0), (0.5, 0.5, 0.3), (0.0, 0.0, 1.0), view_angle=50.0),
        TOP,
    ):
        canvas.set_camera(pose)  # the same merged actor, its faces coloured again for this camera
        drafted = picture(canvas)
        assert np.abs(drafted - _lit_instead(canvas)).max() <= 2, pose.name
    canvas.set_draft(1)  # released: every item's own lit actor again, no unlit one left
    assert not canvas._merged and all(shown.flat is None for shown in canvas._shown.values())
    released = picture(canvas)
    canvas.clear()
    canvas.show([*items[:3], moved, floor])
    assert np.abs(picture(canvas) - released).max() == 0  # the pixels of everything drawn afresh


def _lit_instead(canvas: SceneCanvas) -> np.ndarray:
    """The frame with every item drawn by its own, lit actor instead of the unlit ones of a draft (merged, or
    alone for a moved item), which are put back after."""
    swaps = [(merged.faces.actor, [actor_of(canvas, key) for key in merged.keys]) for merged in canvas._merged.values()]
    swaps += [(shown.flat.actor, [shown.actor]) for shown in canvas._shown.values() if shown.flat is not None]
    for unlit, lit in swaps:
        unlit.VisibilityOff()
        for actor in lit:
            actor.VisibilityOn()
    own = picture(canvas)
    for unlit, lit in swaps:
        unlit.VisibilityOn()
        for actor in lit:
            actor.VisibilityOff()
    return own
