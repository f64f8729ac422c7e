"""The assets folder and its one resolver: what ships there, each with its source, and names it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from simlab.core import assets
from simlab.core.assets import AssetError, asset_path, scene_path
from simlab.render.images import mono_font
from simlab.runner.demo import DEMO_CONFIG

CHECKOUT_ASSETS = Path(__file__).resolve().parents[2] / "assets"


def test_a_checkout_finds_its_assets_folder() -> None:
    font = asset_path("fonts/DejaVuSansMono.ttf")
    assert font == CHECKOUT_ASSETS / "fonts" / "DejaVuSansMono.ttf"
    assert font.read_bytes()[:4] == b"\x00\x01\x00\x00"  # a TrueType font
    assert asset_path("icons").is_dir()


def test_the_installed_copy_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    packaged = tmp_path / "_assets"
    (packaged / "fonts").mkdir(parents=True)
    (packaged / "fonts" / "DejaVuSansMono.ttf").write_bytes(b"packaged")
    monkeypatch.setitem(assets.ROOTS, "assets", (packaged, CHECKOUT_ASSETS))
    assert asset_path("fonts/DejaVuSansMono.ttf").read_bytes() == b"packaged"
    assert asset_path("fonts/LICENSE-DejaVu.txt") == CHECKOUT_ASSETS / "fonts" / "LICENSE-DejaVu.txt"


def test_the_bundled_scenes_are_found_the_same_way() -> None:
    assert DEMO_CONFIG == scene_path("blocks/demo.toml") == CHECKOUT_ASSETS.parent / "scenes" / "blocks" / "demo.toml"
    with pytest.raises(AssetError, match=r"scenes/blocks/nothing\.toml is missing"):
        scene_path("blocks/nothing.toml")


def test_a_missing_asset_is_named_with_where_it_was_looked_for() -> None:
    with pytest.raises(AssetError, match=r"assets/fonts/Missing\.ttf is missing: looked in .*assets") as caught:
        asset_path("fonts/Missing.ttf")
    assert isinstance(caught.value, FileNotFoundError)


@pytest.mark.parametrize("name", ["", "/etc/passwd", "../pyproject.toml", "fonts/../../setup.py", "fonts//x", "a\\b"])
def test_names_outside_the_assets_folder_are_refused(name: str) -> None:
    with pytest.raises(AssetError, match="not a relative path inside assets/"):
        asset_path(name)


def test_every_folder_says_what_it_holds_and_under_which_licence() -> None:
    folders = sorted(p.name for p in CHECKOUT_ASSETS.iterdir() if p.is_dir())
    assert folders == ["fonts", "icons", "materials", "reference"]
    assert (CHECKOUT_ASSETS / "fonts" / "LICENSE-DejaVu.txt").is_file()
    for readme in sorted(CHECKOUT_ASSETS.rglob("README.md")):
        assert "icence" in readme.read_text("utf-8"), readme
    craft = (CHECKOUT_ASSETS / "reference" / "craft" / "README.md").read_text("utf-8")
    assert "https://github.com/csu-signal/CRAFT" in craft


def test_the_mono_font_is_read_from_the_assets() -> None:
    assert Path(str(mono_font(20).path)) == CHECKOUT_ASSETS / "fonts" / "DejaVuSansMono.ttf"
