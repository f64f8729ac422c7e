"""The pictures' fonts keep what they rendered: the same pixels as Pillow's own fonts, each text rendered once."""

from __future__ import annotations

from collections.abc import Callable

from PIL import Image, ImageDraw, ImageFont

from simlab.core.assets import asset_path
from simlab.render.images import MONO_FONT, TEXTS_KEPT, KeptFont, _kept, mono_font, text_font

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


def _sheet(sans: Callable[[int], Font], mono: Callable[[int], Font]) -> bytes:
    """A picture with the texts the families draw: anchored, stroked, multi-line, measured, at several sizes, each
    drawn twice (the second from what the font kept)."""
    image = Image.new("RGB", (420, 360), "white")
    draw = ImageDraw.Draw(image)
    for _ in range(2):
        draw.text((10, 10), "L2 (0,1) far", font=sans(14), fill=(90, 90, 90))
        draw.text((200, 40), "near (builder)", font=sans(11), fill="black", anchor="ma")
        draw.text((400, 70), "right", font=sans(16), fill=(200, 30, 30), anchor="rm")
        draw.text((20, 100), "NOT SENT", font=sans(30), fill="red", stroke_width=1, stroke_fill="white")
        draw.multiline_text((20, 150), "two lines\nof a caption", font=sans(12), fill="navy")
        draw.text((20, 220), "SN 0O8B-1l", font=mono(18), fill="black")
        left, top, right, _bottom = draw.textbbox((0, 0), "centred", font=sans(13))
        draw.text((210 - (right - left) // 2, 300 - top), "centred", font=sans(13), fill="green")
    return image.tobytes()


def _plain_default(size: int) -> Font:
    return ImageFont.load_default(size=max(8, size))


def _plain_mono(size: int) -> Font:
    return ImageFont.truetype(str(asset_path(MONO_FONT)), max(8, size))


def test_kept_fonts_draw_the_same_pixels_as_pillows_own() -> None:
    assert isinstance(text_font(14), KeptFont) and isinstance(mono_font(18), KeptFont)
    assert _sheet(text_font, mono_font) == _sheet(_plain_default, _plain_mono)


def test_a_text_drawn_again_is_not_rendered_again() -> None:
    draw = ImageDraw.Draw(Image.new("RGB", (200, 40), "white"))
    font = text_font(17)
    draw.text((5, 5), "rendered once, kept", font=font, fill="black", anchor="la")
    misses, hits = _kept.cache_info().misses, _kept.cache_info().hits
    draw.text((50, 10), "rendered once, kept", font=font, fill="blue", anchor="la")  # moved, another colour
    assert (_kept.cache_info().misses, _kept.cache_info().hits) == (misses, hits + 1)
    draw.text((50, 10), "another text", font=font, fill="blue")
    assert _kept.cache_info().misses == misses + 1
    assert draw.textbbox((0, 0), "a measure", font=font) == draw.textbbox((0, 0), "a measure", font=font)
    assert _kept.cache_info().misses == misses + 2


def test_what_the_fonts_keep_is_bounded() -> None:
    font = text_font(9)
    for k in range(TEXTS_KEPT + 50):
        font.getmask2(f"label {k}", "L")
    assert _kept.cache_info().currsize == TEXTS_KEPT
