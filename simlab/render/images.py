"""Small image helpers every renderer shares: the font, PNG bytes, data URLs.

The font is Pillow's bundled one at a size, so pictures come out the same on every machine (a system font
would differ between machines and change what agents are shown).
"""

from __future__ import annotations

import base64
import io
from functools import lru_cache
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from simlab.core.assets import asset_path


@lru_cache(maxsize=64)
def text_font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's built-in font at ``size`` pixels (needs no font files)."""
    try:
        return ImageFont.load_default(size=max(8, size))
    except (TypeError, OSError, ImportError):  # Pillow < 10.1 or built without FreeType
        return ImageFont.load_default()


MONO_FONT = "fonts/DejaVuSansMono.ttf"
"""DejaVu Sans Mono, shipped in ``assets/fonts`` with its licence: for codes and numbers a reader must not
misread (a serial number's 0 and O), the same on every machine."""


def mono_font(size: int) -> ImageFont.FreeTypeFont:
    """The shipped monospaced font at ``size`` pixels."""
    return ImageFont.truetype(str(asset_path(MONO_FONT)), max(8, size))


def draw_centred(
    draw: ImageDraw.ImageDraw,
    box: tuple[int, int, int, int],
    text: str,
    font: ImageFont.ImageFont | ImageFont.FreeTypeFont,
    fill: Any,
) -> None:
    """``text`` centred in ``box`` (left, top, right, bottom) by its ink, not its line box."""
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    x = (box[0] + box[2] - (right - left)) // 2 - left
    y = (box[1] + box[3] - (bottom - top)) // 2 - top
    draw.text((x, y), text, fill=fill, font=font)


def pixels(image: Image.Image) -> list[Any]:
    """Every pixel of ``image``, row by row, on any Pillow (``getdata`` is deprecated from Pillow 12.1)."""
    flat = getattr(image, "get_flattened_data", None)
    return list(flat() if flat else image.getdata())


def to_png_bytes(image: Image.Image | bytes | Any, compress_level: int | None = None) -> bytes:
    """Encode ``image`` as PNG (bytes pass through); the same image always gives the same bytes.

    By default the smallest file (Pillow's ``optimize``): the bytes whose sha256 a run records for every
    picture sent to a model, so keep it for those. ``compress_level`` (a zlib level, 0-9) trades size for
    time where only people look at the files: a 1024x768 room view at 6 is 4% bigger and 4x faster to make."""
    if isinstance(image, bytes):
        return image
    buffer = io.BytesIO()
    options: dict[str, Any] = {"optimize": True} if compress_level is None else {"compress_level": compress_level}
    image.save(buffer, format="PNG", **options)
    return buffer.getvalue()


def data_url(image: Image.Image | bytes) -> str:
    """``image`` as a ``data:image/png;base64,...`` URL."""
    return "data:image/png;base64," + base64.b64encode(to_png_bytes(image)).decode("ascii")


BACKGROUND: tuple[int, int, int] = (252, 252, 250)
"""The page colour of composed pictures (turn sheets, side-by-side frames)."""


def fit(image: Image.Image, width: int, height: int) -> Image.Image:
    """``image`` scaled down (never up) to fit ``width`` x ``height``, keeping its aspect."""
    scale = min(width / image.width, height / image.height, 1.0)
    return image.resize(
        (max(1, round(image.width * scale)), max(1, round(image.height * scale))), Image.Resampling.LANCZOS
    )
