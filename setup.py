"""Build hook (everything else is in pyproject.toml): the wheel carries the checkout's top-level ``assets/``
as ``simlab/_assets``, where :func:`simlab.core.assets.asset_path` looks first in an installed SimLab."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ASSETS = Path(__file__).resolve().parent / "assets"


class BuildPyWithAssets(build_py):
    """``build_py`` that also copies ``assets/`` into the built package (an editable install reads the
    checkout's own folder instead, so it copies nothing)."""

    def run(self) -> None:
        super().run()
        if not getattr(self, "editable_mode", False):
            shutil.copytree(ASSETS, Path(self.build_lib) / "simlab" / "_assets", dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildPyWithAssets})
