"""Build hook (everything else is in pyproject.toml): the wheel carries the checkout's top-level ``assets/``
and ``scenes/`` as ``simlab/_assets`` and ``simlab/_scenes``, where :mod:`simlab.core.assets` looks first in
an installed SimLab."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = ("assets", "scenes")  # data folders beside the package, copied into it


class BuildPyWithAssets(build_py):
    """``build_py`` that also copies the shipped data folders into the built package (an editable install
    reads the checkout's own folders instead, so it copies nothing)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for folder in SHIPPED:
            target = Path(self.build_lib) / "simlab" / f"_{folder}"
            shutil.copytree(ROOT / folder, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))


setup(cmdclass={"build_py": BuildPyWithAssets})
