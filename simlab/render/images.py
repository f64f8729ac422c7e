"""Small image helpers every renderer shares: the font, PNG bytes, data URLs.

The font is Pillow's bundled one at a size, so pictures come out the same on every machine (a system font
would differ between machines and change what agents are shown).
"""

from __future__ import annotations

import base64
import io
from functools import lru_cache
from typing import Any

from PIL import Image, ImageFont


@lru_cache(maxsize=64)
def text_font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's built-in font at ``size`` pixels (needs no font files)."""
    try:
        return ImageFont.load_default(size=max(8, size))
    except (TypeError, OSError, ImportError):  # Pillow < 10.1 or built without FreeType
        return ImageFont.load_default()


def to_png_bytes(image: Image.Image | bytes | Any) -> bytes:
    """Encode ``image`` as PNG (bytes pass through); the same image always gives the same bytes."""
    if isinstance(image, bytes):
        return image
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def data_url(image: Image.Image | bytes) -> str:
    """``image`` as a ``data:image/png;base64,...`` URL."""
    return "data:image/png;base64," + base64.b64encode(to_png_bytes(image)).decode("ascii")


BACKGROUND: tuple[int, int, int] = (252, 252, 250)
"""The page colour of composed pictures (turn sheets, side-by-side frames)."""


def fit(image: Image.Image, width: int, height: int) -> Image.Image:
    """``image`` scaled down (never up) to fit ``width`` x ``height``, keeping its aspect."""
    scale = min(width / image.width, height / image.height, 1.0)
    return image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))), Image.LANCZOS)
