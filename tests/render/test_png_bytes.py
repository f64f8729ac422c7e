"""PNG bytes: the recorded encoding (Pillow's optimize) and the fast one a build and a transcript write (the "up"
filter in numpy): the same pixels in every image mode, the same bytes for the same image."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from simlab.render.images import to_png_bytes

NOISE = np.random.default_rng(7).integers(0, 256, (37, 53, 4), dtype=np.uint8)  # every row wraps below 0


def _images() -> list[Image.Image]:
    rgba = Image.fromarray(NOISE, "RGBA")
    palette = rgba.convert("RGB").convert("P", palette=Image.Palette.ADAPTIVE)
    transparent = palette.copy()
    transparent.info["transparency"] = 0
    return [rgba.convert("RGB"), rgba, rgba.convert("L"), palette, transparent, Image.new("RGB", (1, 1), (250, 3, 128))]


@pytest.mark.parametrize("image", _images(), ids=["RGB", "RGBA", "L", "P", "P+transparency", "1x1"])
@pytest.mark.parametrize("level", [None, 1, 6])
def test_every_encoding_decodes_to_the_very_pixels(image: Image.Image, level: int | None) -> None:
    back = Image.open(io.BytesIO(to_png_bytes(image, level)))
    back.load()
    want = image if image.mode != "P" else image.convert("RGBA" if image.has_transparency_data else "RGB")
    assert back.size == image.size
    assert back.convert(want.mode).tobytes() == want.tobytes()
    assert to_png_bytes(image.copy(), level) == to_png_bytes(image, level)  # the same bytes again


def test_the_fast_encoding_is_the_one_asked_for() -> None:
    image = Image.fromarray(NOISE[..., :3], "RGB")
    assert to_png_bytes(image, 6) != to_png_bytes(image)  # optimize is kept for what a run records
    assert to_png_bytes(b"already png") == b"already png"
