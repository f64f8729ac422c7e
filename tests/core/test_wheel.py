"""SimLab as a user installs it: a wheel built from the checkout (offline), installed into a fresh venv, run from
outside the checkout. It plays the demo and draws rooms pictures from the assets the wheel carries."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from simlab.worlds.rooms import generator, render
from simlab.worlds.rooms.cameras import sample_views
from simlab.worlds.rooms.materials import MATERIALS

pytestmark = pytest.mark.slow  # about 40 s: a wheel build, an install, the demo and two renders

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "simlab", "assets", "scenes")
"""What the wheel is built from (copied out, so the build leaves nothing in the checkout)."""

DRAW = """
import json, sys
import simlab
from simlab.core.assets import asset_path
from simlab.render.images import mono_font
from simlab.worlds.rooms import generator, render
from simlab.worlds.rooms.cameras import sample_views

scene = generator.generate_scene(7, 0)
camera = sample_views(scene, 7).answerer
render.render_view(scene, camera, (320, 240)).save("view.png")
render.topdown_map(scene, [o.id for o in scene.objects][:4], camera, (256, 256)).save("map.png")
found = {"simlab": simlab.__file__, "materials": asset_path("materials/rooms.toml"), "font": mono_font(12).path}
print(json.dumps({key: str(value) for key, value in found.items()}))
"""


def _run(args: list[str], cwd: Path, timeout: int = 600) -> str:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _build_wheel(tmp: Path) -> Path:
    if int(version("setuptools").split(".")[0]) < 70:
        pytest.fail("building a wheel offline needs setuptools >= 70.1 here: pip install -e '.[test]'")
    source = tmp / "source"
    source.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(REPO / name, source / name)
    pip = [sys.executable, "-m", "pip"]
    _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(tmp / "dist"), str(source)], tmp)
    return next((tmp / "dist").glob("simlab-*.whl"))


def _install(wheel: Path, tmp: Path) -> Path:
    """A fresh venv holding the wheel; SimLab's dependencies come from this interpreter's site-packages, named
    in a .pth file (so their own .pth files, such as an editable SimLab's finder, are not run)."""
    env = tmp / "venv"
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)], tmp)
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp).strip())
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "zz_simlab_test_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n", "utf-8")
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The venv SimLab's wheel is installed in (built from this checkout)."""
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = _build_wheel(tmp)
    names = zipfile.ZipFile(wheel).namelist()
    for shipped in (
        "simlab/_assets/fonts/DejaVuSansMono.ttf",
        "simlab/_assets/fonts/LICENSE-DejaVu.txt",
        "simlab/_assets/icons/simlab.svg",
        "simlab/_assets/materials/rooms.toml",
        "simlab/_assets/reference/craft/structures_dataset_20.json",
        "simlab/_scenes/blocks/demo.toml",
    ):
        assert shipped in names, f"the wheel lacks {shipped}"
    return _install(wheel, tmp)


def test_the_installed_wheel_plays_the_demo(installed: Path, tmp_path: Path) -> None:
    out = _run([str(installed / "bin" / "simlab"), "demo", "--out", str(tmp_path / "demo")], tmp_path)
    assert "SimLab demo" in out and "6 episodes" in out
    assert len((tmp_path / "demo" / "index.jsonl").read_text("utf-8").splitlines()) == 6


def test_the_installed_wheel_draws_rooms_from_its_own_assets(installed: Path, tmp_path: Path) -> None:
    found = json.loads(_run([str(installed / "bin" / "python"), "-c", DRAW], tmp_path).splitlines()[-1])
    package = Path(found["simlab"]).parent
    assert package.is_relative_to(installed), "SimLab was imported from somewhere other than the wheel"
    assert Path(found["materials"]) == package / "_assets" / "materials" / "rooms.toml"
    assert Path(found["font"]) == package / "_assets" / "fonts" / "DejaVuSansMono.ttf"
    drawn_map = Image.open(tmp_path / "map.png").convert("RGB")
    assert drawn_map.getpixel((1, 1)) == MATERIALS.map["background"]
    scene = generator.generate_scene(7, 0)
    views = sample_views(scene, 7)
    assert views is not None
    here = np.asarray(render.render_view(scene, views.answerer, (320, 240)), dtype=np.int64)
    there = np.asarray(Image.open(tmp_path / "view.png").convert("RGB"), dtype=np.int64)
    assert there.std() > 20, "the installed SimLab drew a blank view"
    assert np.abs(here - there).mean() < 0.5  # the same room as the checkout draws
