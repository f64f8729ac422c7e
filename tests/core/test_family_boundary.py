"""A world family is one folder: outside ``simlab/worlds/NAME/`` no shipped module imports it (the registry names
it by a string), and running or listing worlds needs none of their renderers.

Tests and benchmarks may reach into a family to test or measure it; the rule is about the code SimLab ships.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.test_import_boundary import _imported_modules, _parse, _python_files

REPO = Path(__file__).resolve().parents[2]
WORLDS = REPO / "simlab" / "worlds"
FAMILIES = sorted(p.name for p in WORLDS.iterdir() if (p / "family.py").is_file())
SHIPPED = (REPO / "simlab", REPO / "plugins", REPO / "tools")
REGISTRY = WORLDS / "__init__.py"


def _names_family(name: str, module: str) -> bool:
    return module == f"simlab.worlds.{name}" or module.startswith(f"simlab.worlds.{name}.")


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    return [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def family_leaks(name: str, files: list[Path], root: Path = REPO) -> list[str]:
    """Every place outside the family's folder that imports it, or names its modules in a string (a lazy
    import by name), except the registry."""
    home = WORLDS / name
    bad = []
    for path in files:
        if home in path.parents or path == REGISTRY:
            continue
        tree = _parse(path)
        imports = _imported_modules(tree)
        imports += [
            (node.lineno, f"{node.module}.{alias.name}")
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "simlab.worlds"
            for alias in node.names
        ]
        bad += [f"{path.relative_to(root)}:{line}: imports {m}" for line, m in imports if _names_family(name, m)]
        bad += [
            f"{path.relative_to(root)}:{line}: names {text!r}"
            for line, text in _strings(tree)
            if f"simlab.worlds.{name}." in text or f"simlab/worlds/{name}/" in text
        ]
    return bad


def test_the_bundled_families_are_found():
    assert {"blocks", "rooms"} <= set(FAMILIES)


@pytest.mark.parametrize("name", FAMILIES)
def test_nothing_outside_a_family_imports_it(name):
    leaks = family_leaks(name, [*_python_files(*SHIPPED), REPO / "main.py"])
    assert not leaks, f"{name} is used outside its folder:\n" + "\n".join(leaks)


def test_the_leak_scan_sees_every_way_in(tmp_path):
    """The scan itself: a plain import, a from-import, an import of the package's module by name and a lazy
    import by string are all caught; the registry's strings are not."""
    leaky = tmp_path / "leaky.py"
    leaky.write_text(
        "import simlab.worlds.blocks.model\n"
        "from simlab.worlds.blocks.images import wall_image\n"
        "from simlab.worlds import blocks\n"
        "TARGET = 'simlab.worlds.blocks.scene:CAMERAS'\n"
        "from simlab.worlds import get_family\n",
        encoding="utf-8",
    )
    found = family_leaks("blocks", [leaky], root=tmp_path)
    assert [line.split(":")[1] for line in found] == ["1", "2", "3", "4"]
    assert not family_leaks("blocks", [REGISTRY])


HEAVY = ("vtk", "vtkmodules", "pyvista", "PySide6", "pyqtgraph", "openai")


def _heavy_modules_after(code: str) -> list[str]:
    probe = f"{code}\nimport sys\nprint(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


def test_listing_families_and_running_episodes_loads_no_renderer_gui_or_model_client(tmp_path):
    """Families are declared without their views (loaded by name when something is drawn)."""
    code = (
        "from pathlib import Path\n"
        "from simlab.worlds import family_names, get_family\n"
        "from simlab.runner.batch import RunConfig, run\n"
        "families = [get_family(n) for n in family_names()]\n"
        f"run(RunConfig('blocks', episodes=1, settings={{'turns': 2}}), Path({str(tmp_path)!r}) / 'r')\n"
    )
    assert _heavy_modules_after(code) == []


def test_rooms_scenes_and_views_are_made_without_vtk_when_no_pixel_is_counted():
    """The rooms visibility module imported its renderer back (a cycle), so making rooms needed VTK."""
    code = (
        "from simlab.worlds.rooms import cameras, generator, visibility\n"
        "scene = generator.generate_scene(0, 0)\n"
        "assert cameras.sample_views(scene, 0, {'pixel_filter': False}) is not None\n"
    )
    assert _heavy_modules_after(code) == []
