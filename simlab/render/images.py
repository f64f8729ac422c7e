"""Small image helpers every renderer shares: the font, PNG bytes, data URLs.

The font is Pillow's bundled one at a size, so pictures come out the same on every machine (a system font
would differ between machines and change what agents are shown).
"""

from __future__ import annotations

import base64
import io
import struct
import zlib
from functools import lru_cache
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from simlab.core.assets import asset_path

TEXTS_KEPT = 4096
"""Rendered texts (a mask of a few kilobytes each) and measures kept for all fonts together (:class:`KeptFont`)."""


class KeptFont(ImageFont.FreeTypeFont):
    """A FreeType font that keeps the texts it rendered and measured, by their arguments: Pillow lays out, hints
    and renders every glyph of a text again at each ``draw.text`` (more than half the time a blocks director's
    wall picture took), and pictures draw the same labels again and again. Its masks are the font's own, so a
    picture is pixel for pixel what the plain font draws."""

    def getmask2(
        self,
        text: str | bytes,
        mode: str = "",
        direction: str | None = None,
        features: list[str] | None = None,
        language: str | None = None,
        stroke_width: float = 0,
        anchor: str | None = None,
        ink: int = 0,
        start: tuple[float, float] | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> tuple[Any, tuple[int, int]]:
        if mode == "RGBA" or features is not None or args:  # a colour font's mask has the ink, and its drawer
            return super().getmask2(  # changes it
                text, mode, direction, features, language, stroke_width, anchor, ink, start, *args, **kwargs
            )
        options = tuple(sorted(kwargs.items()))
        arguments = (text, mode, direction, None, language, stroke_width, anchor, 0, start)
        mask: tuple[Any, tuple[int, int]] = _kept(self, "getmask2", arguments, options)
        return mask  # the same for any ink: a mask says only how much of it each pixel takes

    def getbbox(self, text: str | bytes | bytearray, *args: Any, **kwargs: Any) -> tuple[float, float, float, float]:
        """Pillow's measure, kept when called as ``textbbox`` calls it: (text, mode, direction, features...)."""
        if isinstance(text, bytearray) or kwargs or (len(args) > 2 and args[2] is not None):  # args[2]: features
            return super().getbbox(text, *args, **kwargs)
        box: tuple[float, float, float, float] = _kept(self, "getbbox", (text, *args), ())
        return box


@lru_cache(maxsize=TEXTS_KEPT)
def _kept(font: KeptFont, method: str, arguments: tuple[Any, ...], options: tuple[tuple[str, Any], ...]) -> Any:
    """What Pillow's own ``method`` of ``font`` gives for ``arguments`` and keyword ``options``."""
    return getattr(ImageFont.FreeTypeFont, method)(font, *arguments, **dict(options))


@lru_cache(maxsize=64)
def text_font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's built-in font at ``size`` pixels (needs no font files), keeping what it renders."""
    try:
        font = ImageFont.load_default(size=max(8, size))
    except (TypeError, OSError, ImportError):  # Pillow < 10.1 or built without FreeType
        return ImageFont.load_default()
    if not isinstance(font, ImageFont.FreeTypeFont):
        return font
    return KeptFont(io.BytesIO(font.font_bytes), font.size, font.index, font.encoding, font.layout_engine)


MONO_FONT = "fonts/DejaVuSansMono.ttf"
"""DejaVu Sans Mono, shipped in ``assets/fonts`` with its licence: for codes and numbers a reader must not
misread (a serial number's 0 and O), the same on every machine."""


@lru_cache(maxsize=64)
def mono_font(size: int) -> ImageFont.FreeTypeFont:
    """The shipped monospaced font at ``size`` pixels, keeping what it renders."""
    return KeptFont(str(asset_path(MONO_FONT)), max(8, size))


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
    time where only people look at the files (a build's views, a transcript's pictures): every row filtered by
    PNG's "up" filter in numpy and deflated at that level, the same pixels as Pillow's file, a room view a tenth
    smaller in under half the time (Pillow tries five filters on every row, most of its time)."""
    if isinstance(image, bytes):
        return image
    if compress_level is not None:
        return _png_up(image, compress_level)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


_PNG_COLOUR_TYPES = {"L": 0, "RGB": 2, "RGBA": 6}  # grey, truecolour, truecolour with alpha
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_up(image: Image.Image, level: int) -> bytes:
    """``image`` (any other mode as RGB, or RGBA when it has transparency) as an 8-bit PNG file, every row by
    the "up" filter (each byte minus the one above it), deflated at zlib ``level``."""
    if image.mode not in _PNG_COLOUR_TYPES:
        image = image.convert("RGBA" if image.has_transparency_data else "RGB")
    rows = np.asarray(image, dtype=np.uint8).reshape(image.height, -1)
    lines = np.empty((image.height, rows.shape[1] + 1), dtype=np.uint8)
    lines[:, 0] = 2  # "up"; the first row's row above is zeros, so it is itself
    lines[0, 1:] = rows[0]
    np.subtract(rows[1:], rows[:-1], out=lines[1:, 1:])  # uint8 wraps modulo 256, as PNG's filter does
    header = struct.pack(">IIBBBBB", image.width, image.height, 8, _PNG_COLOUR_TYPES[image.mode], 0, 0, 0)
    chunks = ((b"IHDR", header), (b"IDAT", zlib.compress(lines.tobytes(), level)), (b"IEND", b""))
    return _PNG_SIGNATURE + b"".join(_png_chunk(kind, data) for kind, data in chunks)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


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
