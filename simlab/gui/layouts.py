"""Emptying Qt layouts: Qt's item accessors may return None, so the walk over a layout's items lives here once."""

from __future__ import annotations

from collections.abc import Iterator

from PySide6.QtWidgets import QLayout, QWidget


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
