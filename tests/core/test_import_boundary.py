import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SIMLAB = REPO / "simlab"
GUI_ONLY = ("PySide6", "pyvistaqt", "pyqtgraph")


def _python_files(*roots: Path, skip: Path | None = None) -> list[Path]:
    files = [p for root in roots if root.is_dir() for p in sorted(root.rglob("*.py"))]
    return [p for p in files if skip is None or skip not in p.parents]


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Name, ast.Attribute))
            and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def _parse(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_the_scan_finds_the_package():
    files = _python_files(SIMLAB, skip=SIMLAB / "gui")
    assert SIMLAB / "cli.py" in files
    assert SIMLAB / "core" / "recording.py" in files
    assert not [p for p in files if "gui" in p.relative_to(SIMLAB).parts]


def test_the_scan_sees_gui_imports():
    tree = ast.parse(
        "import PySide6.QtWidgets\nfrom pyqtgraph import PlotWidget\nimportlib.import_module('pyvistaqt')\n"
    )
    assert [name for _, name in _imported_modules(tree)] == ["PySide6.QtWidgets", "pyqtgraph", "pyvistaqt"]


def test_only_simlab_gui_imports_gui_toolkits():
    bad = []
    for path in _python_files(SIMLAB, skip=SIMLAB / "gui"):
        for lineno, name in _imported_modules(_parse(path)):
            if name.split(".")[0] in GUI_ONLY:
                bad.append(f"{path.relative_to(REPO)}:{lineno}: imports {name}")
    assert not bad, "GUI toolkits imported outside simlab/gui:\n" + "\n".join(bad)


def test_headless_modules_load_no_gui_toolkit_in_a_fresh_interpreter():
    code = (
        "import simlab.cli, simlab.worlds.blocks.family, simlab.runner.batch, simlab.testing; import sys; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyvistaqt', 'pyqtgraph')); "
        "assert not bad, bad"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]


def test_no_eval_or_exec_calls():
    bad = []
    for path in _python_files(SIMLAB, REPO / "plugins"):
        for node in ast.walk(_parse(path)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("eval", "exec"):
                bad.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.func.id}(")
    assert not bad, "eval/exec calls:\n" + "\n".join(bad)
