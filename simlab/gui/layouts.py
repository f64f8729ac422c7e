"""Emptying Qt layouts (Qt's item accessors may return None, so the walk over a layout's items lives here once),
settling them at once, and labels that change their text without laying anything out again."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QLabel, QLayout, QWidget


def widgets_in(layout: QLayout) -> list[QWidget]:
    """The widgets directly in ``layout``, in order (spacers and nested layouts skipped)."""
    items = (layout.itemAt(k) for k in range(layout.count()))
    return [w for item in items if item is not None and (w := item.widget()) is not None]


def take_widgets(layout: QLayout) -> Iterator[QWidget]:
    """Take every item out of ``layout`` (nested layouts emptied too) and yield the widgets they held; the
    caller decides their fate (hide, reparent, delete)."""
    while layout.count():
        item = layout.takeAt(0)
        if item is None:  # count() said there was one: Qt never does this, but its API allows it
            return
        widget, inner = item.widget(), item.layout()
        if widget is not None:
            yield widget
        elif inner is not None:
            yield from take_widgets(inner)


def settle(widget: QWidget, inner: Iterable[QWidget] = ()) -> None:
    """Give ``widget``'s children their new sizes now, after children were shown, hidden, added or given new
    contents, rather than in the event loop's next rounds (one nesting level a round). A 3D view renders at
    every new size, so a view resized in three rounds renders three frames; settled
    before its new scene is added, it renders the old one (cheap) and the new one once. ``inner``: the widgets
    inside ``widget`` whose children changed, innermost first (a splitter lays out on its own posted request,
    not through a layout)."""
    for child in inner:
        QCoreApplication.sendPostedEvents(child, QEvent.Type.LayoutRequest)
    layout = widget.layout()
    if layout is not None:
        layout.activate()


def fix_label_size(label: QLabel, widest: str, room: int = 0) -> None:
    """Fix ``label``'s size to fit ``widest``, the widest text it will show for a while (an episode's last turn),
    and ``room`` pixels: a label of fixed size changing its text asks no layout above it again, so a step
    repaints the label alone instead of laying out its dock and the window. Nothing changes when the size
    already is that."""
    label.setFixedSize(label.fontMetrics().horizontalAdvance(widest) + room, label.sizeHint().height())
