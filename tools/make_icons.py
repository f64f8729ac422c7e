"""Write the app's icons, assets/icons/*.svg, from the shapes below (authored for SimLab, MIT like the code).

Run ``python tools/make_icons.py`` after changing a shape; ``python tools/make_icons.py --check`` says which
files differ from what the shapes make (a test runs it). Each toolbar icon is a 24 x 24 SVG in one slate ink
with a single accent colour where the action has a meaning of its own (an error, adding, exporting); the
window icon is 64 x 64. The output is plain text, the same on every run.
"""

from __future__ import annotations

import sys
from pathlib import Path

ICONS_DIR = Path(__file__).resolve().parents[1] / "assets" / "icons"
INK = "#37474f"
WARN = "#f9a825"
ADD = "#2e7d32"
EXPORT = "#1565c0"

_FOLDER = (
    '<path d="M2 6.5A1.5 1.5 0 0 1 3.5 5H9l2 2h9.5A1.5 1.5 0 0 1 22 8.5v10a1.5 1.5 0 0 1-1.5 1.5h-17A1.5 1.5 0 0 1 2 '
    f'18.5z" fill="{INK}"/>'
)
_PAGE = (
    f'<path d="M5 2.5h9l5 5v14H5z" fill="#ffffff" stroke="{INK}" stroke-width="1.6" stroke-linejoin="round"/>'
    f'<path d="M14 2.5v5h5" fill="none" stroke="{INK}" stroke-width="1.6" stroke-linejoin="round"/>'
)


def _triangle(x: float, left: bool) -> str:
    """A media triangle 8 wide whose flat side is at ``x`` (pointing left or right from there)."""
    tip = x - 8 if left else x + 8
    return f'<path d="M{x:g} 5v14L{tip:g} 12z" fill="{INK}"/>'


def _bar(x: float) -> str:
    return f'<rect x="{x:g}" y="5" width="2.4" height="14" rx="0.6" fill="{INK}"/>'


def _down_arrow(colour: str) -> str:
    """An arrow down onto a tray at the lower right: "save to a file"."""
    return (
        f'<path d="M17.5 11v7.2M14.2 15l3.3 3.4 3.3-3.4" fill="none" stroke="{colour}" stroke-width="2.2" '
        'stroke-linecap="round" stroke-linejoin="round"/>'
        f'<path d="M13.5 21.5h8" stroke="{colour}" stroke-width="2" stroke-linecap="round"/>'
    )


ICONS: dict[str, str] = {
    "open_run": _FOLDER + '<path d="M4 11h16" stroke="#ffffff" stroke-width="1.4" opacity="0.6"/>',
    "add_run": _FOLDER
    + f'<circle cx="17.5" cy="17.5" r="5.5" fill="{ADD}" stroke="#ffffff" stroke-width="1.2"/>'
    + '<path d="M17.5 14.5v6M14.5 17.5h6" stroke="#ffffff" stroke-width="2" stroke-linecap="round"/>',
    "open_episode": _PAGE
    + f'<path d="M8 12h8M8 15h8M8 18h5" stroke="{INK}" stroke-width="1.5" stroke-linecap="round"/>',
    "first": _bar(4) + _triangle(14.5, left=True) + _triangle(21.5, left=True),
    "back": _triangle(12, left=True) + _triangle(20, left=True),
    "play": f'<path d="M7 4.5v15L19.5 12z" fill="{INK}"/>',
    "pause": f'<rect x="6" y="5" width="4" height="14" rx="1" fill="{INK}"/>'
    + f'<rect x="14" y="5" width="4" height="14" rx="1" fill="{INK}"/>',
    "forward": _triangle(4, left=False) + _triangle(12, left=False),
    "last": _triangle(2.5, left=False) + _triangle(9.5, left=False) + _bar(17.6),
    "next_error": f'<path d="M12 2.8 22.2 20.5H1.8z" fill="{WARN}" stroke="{INK}" stroke-width="1.4" '
    'stroke-linejoin="round"/>'
    + f'<path d="M12 8.5v6.2" stroke="{INK}" stroke-width="2.2" stroke-linecap="round"/>'
    + f'<circle cx="12" cy="17.6" r="1.3" fill="{INK}"/>',
    "export_png": f'<rect x="2" y="3" width="15" height="12.5" rx="1.5" fill="#ffffff" stroke="{INK}" '
    'stroke-width="1.5"/>'
    + f'<path d="M3.5 14 8 9l3 3 2-2 2.5 4z" fill="{INK}"/><circle cx="13" cy="6.8" r="1.4" fill="{INK}"/>'
    + _down_arrow(EXPORT),
    "export_html": _PAGE + f'<path d="M9.5 10.5 7 13l2.5 2.5M14.5 10.5 17 13l-2.5 2.5" fill="none" stroke="{EXPORT}" '
    'stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round"/>',
}
"""Toolbar icons by the action they stand for (the names of ``MainWindow.actions_by_name``; ``pause`` is
``play`` while playing)."""

WINDOW_ICON = (
    '<rect x="2" y="2" width="60" height="60" rx="12" fill="#1e3a5f"/>'
    # a block of the shared world, seen from above at an angle
    '<path d="M32 30 46 37v15l-14 7-14-7V37z" fill="#90a4ae"/>'
    '<path d="M32 30 46 37 32 44 18 37z" fill="#eceff1"/>'
    '<path d="M32 44v15l14-7V37z" fill="#607d8b"/>'
    # two agents talking about it, each with its own colour
    '<path d="M7 9h20a3 3 0 0 1 3 3v9a3 3 0 0 1-3 3H15l-5 5v-5H7a3 3 0 0 1-3-3v-9a3 3 0 0 1 3-3z" fill="#f57c00"/>'
    '<path d="M37 13h20a3 3 0 0 1 3 3v9a3 3 0 0 1-3 3h-3v5l-5-5H37a3 3 0 0 1-3-3v-9a3 3 0 0 1 3-3z" '
    'fill="#26a69a"/>'
    '<path d="M10 15.5h14M10 19h9M40 19.5h14M40 23h9" stroke="#ffffff" stroke-width="2" stroke-linecap="round"/>'
)


def svg(body: str, size: int = 24) -> str:
    """A standalone SVG document of ``size`` x ``size`` user units holding ``body``."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" viewBox="0 0 {size} {size}">'
        f"{body}</svg>\n"
    )


def icon_files() -> dict[str, str]:
    """Every icon file's name and text: the toolbar's and the window's (``simlab.svg``)."""
    files = {f"{name}.svg": svg(body) for name, body in ICONS.items()}
    files["simlab.svg"] = svg(WINDOW_ICON, 64)
    return files


def main(argv: list[str]) -> int:
    """Write the icons, or with ``--check`` list those that differ from the shapes (exit 1 if any)."""
    files = icon_files()
    if "--check" in argv:
        stale = sorted(
            n
            for n, text in files.items()
            if not (ICONS_DIR / n).is_file() or (ICONS_DIR / n).read_text("utf-8") != text
        )
        for name in stale:
            print(f"assets/icons/{name} differs from tools/make_icons.py")
        return 1 if stale else 0
    ICONS_DIR.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (ICONS_DIR / name).write_text(text, "utf-8")
    print(f"wrote {len(files)} icons to {ICONS_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
