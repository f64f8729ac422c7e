"""Where SimLab's files that are not code live: ``assets/`` (fonts, icons, materials, reference data) and
``scenes/`` (the bundled demo and example rooms).

In a checkout they are top-level folders beside the ``simlab`` package; an installed wheel carries the same
trees as ``simlab/_assets`` and ``simlab/_scenes`` (``setup.py`` copies them there when the wheel is built).
Every reader asks :func:`asset_path` or :func:`scene_path`, so no module knows which of the two it runs from.
No Qt, no VTK.
"""

from __future__ import annotations

from pathlib import Path

from simlab.core.errors import SimlabError

_PACKAGE = Path(__file__).resolve().parents[1]
ROOTS: dict[str, tuple[Path, ...]] = {
    folder: (_PACKAGE / f"_{folder}", _PACKAGE.parent / folder) for folder in ("assets", "scenes")
}
"""Where each shipped folder is looked for, in order: inside the installed package, then in the checkout."""


class AssetError(SimlabError, FileNotFoundError):
    """A file SimLab ships is missing (a broken install or checkout), or its name is not a plain relative
    path inside its folder."""


def asset_path(name: str) -> Path:
    """The file (or folder) ``name`` of the assets, a ``/``-separated path relative to ``assets/``
    (``"fonts/DejaVuSansMono.ttf"``). Raises :class:`AssetError` naming the asset and where it was looked for."""
    return _shipped("assets", name)


def scene_path(name: str) -> Path:
    """The file (or folder) ``name`` of the bundled scenes, relative to ``scenes/`` (``"blocks/demo.toml"``);
    raises :class:`AssetError` as :func:`asset_path` does."""
    return _shipped("scenes", name)


def _shipped(folder: str, name: str) -> Path:
    parts = name.split("/")
    if "\\" in name or any(part in ("", ".", "..") for part in parts):
        raise AssetError(f"{name!r} is not a relative path inside {folder}/ (like 'fonts/X.ttf')")
    roots = ROOTS[folder]
    for root in roots:
        path = root.joinpath(*parts)
        if path.exists():
            return path
    looked = ", ".join(str(root) for root in roots)
    raise AssetError(
        f"{folder}/{name} is missing: looked in {looked}; a checkout has it in {folder}/, an installed SimLab in "
        f"simlab/_{folder} (reinstall SimLab)"
    )
