"""The app's own icons, drawn for SimLab and shipped in ``assets/icons`` (``tools/make_icons.py`` makes them)."""

from __future__ import annotations

from functools import cache

from PySide6.QtGui import QIcon

from simlab.core.assets import asset_path

WINDOW_ICON = "simlab"


@cache
def app_icon(name: str) -> QIcon:
    """The icon ``assets/icons/NAME.svg`` (an action's name, or :data:`WINDOW_ICON`); a missing file raises
    :class:`~simlab.core.assets.AssetError` naming it. Qt draws the SVG sharp at any size."""
    return QIcon(str(asset_path(f"icons/{name}.svg")))
