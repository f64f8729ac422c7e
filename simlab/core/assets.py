"""Where SimLab's files that are not code live: fonts, icons, materials, reference data.

In a checkout they are the top-level ``assets/`` folder beside the ``simlab`` package; an installed wheel
carries the same tree as ``simlab/_assets`` (``setup.py`` copies it there when the wheel is built). Every
reader asks :func:`asset_path`, so no module knows which of the two it runs from. No Qt, no VTK.
"""

from __future__ import annotations

from pathlib import Path

from simlab.core.errors import SimlabError

_PACKAGE = Path(__file__).resolve().parents[1]
ROOTS: tuple[Path, ...] = (_PACKAGE / "_assets", _PACKAGE.parent / "assets")
"""Where assets are looked for, in order: inside the installed package, then the checkout's ``assets/``."""


class AssetError(SimlabError, FileNotFoundError):
    """An asset SimLab needs is missing (a broken install or checkout), or its name is not a plain relative
    path inside the assets folder."""


def asset_path(name: str) -> Path:
    """The file (or folder) ``name`` of the assets, a ``/``-separated path relative to ``assets/``
    (``"fonts/DejaVuSansMono.ttf"``). Raises :class:`AssetError` naming the asset and where it was looked for."""
    parts = name.split("/")
    if "\\" in name or any(part in ("", ".", "..") for part in parts):
        raise AssetError(f"asset name {name!r} is not a relative path inside assets/ (like 'fonts/X.ttf')")
    for root in ROOTS:
        path = root.joinpath(*parts)
        if path.exists():
            return path
    looked = ", ".join(str(root) for root in ROOTS)
    raise AssetError(
        f"asset {name!r} is missing: looked in {looked}; a checkout has it in assets/, an installed SimLab in "
        "simlab/_assets (reinstall SimLab)"
    )
