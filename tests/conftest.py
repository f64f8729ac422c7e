"""Suite-wide set-up: pytest-xvfb starts Xvfb for the run (GUI and off-screen rendering tests need a display)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Close every X client while the X server still runs: pytest-xvfb stops Xvfb in its own unconfigure
    hook, and a VTK render window or a QApplication that outlives its display aborts the interpreter at exit
    with "The X11 connection broke" (exit status 1 after a green run). Only what a test imported is closed:
    importing VTK's rendering this late, in a worker that never rendered, crashed it."""
    if "pyvista.plotting" in sys.modules:  # pyvista itself loads its plotting (VTK's rendering) lazily
        from simlab.render.scene import close_plotters

        close_plotters()
        sys.modules["pyvista"].close_all()
    if "PySide6.QtWidgets" not in sys.modules:
        return
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is not None:
        for widget in QApplication.topLevelWidgets():
            widget.close()
        app.processEvents()
        app.shutdown()


@pytest.fixture(scope="session")
def record(tmp_path_factory: pytest.TempPathFactory):
    """``record(*agent_specs, episodes=1, turns=8, seed=0) -> run folder``: a blocks run recorded once per
    session for each set of arguments, shared by every test that asks for the same one."""
    from simlab.runner.batch import RunConfig, run

    made: dict[tuple, Path] = {}

    def make(*agents: str, episodes: int = 1, turns: int = 8, seed: int = 0) -> Path:
        key = (agents, episodes, turns, seed)
        if key not in made:
            out = tmp_path_factory.mktemp("recorded") / "run"
            run(RunConfig("blocks", seed=seed, episodes=episodes, agents=list(agents), settings={"turns": turns}), out)
            made[key] = out
        return made[key]

    return make


@pytest.fixture(scope="session")
def record_rooms(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A rooms run of three episodes (oracle Answerer and Helper), recorded once per session."""
    from simlab.runner.batch import RunConfig, run

    out = tmp_path_factory.mktemp("recorded-rooms") / "run"
    run(RunConfig("rooms", seed=0, episodes=3, agents=["answerer=oracle", "helper=oracle"]), out)
    return out


@pytest.fixture
def flat_family(monkeypatch: pytest.MonkeyPatch) -> str:
    """Registers ``flatblocks``, a family with no 3D scene (tests/flat_family.py), for one test."""
    import simlab.worlds
    from tests.flat_family import NAME

    monkeypatch.setitem(simlab.worlds.BUILTIN, NAME, "tests.flat_family:FAMILY")
    simlab.worlds.registered.cache_clear()
    simlab.worlds.get_family.cache_clear()
    yield NAME
    monkeypatch.undo()
    simlab.worlds.registered.cache_clear()
    simlab.worlds.get_family.cache_clear()


@pytest.fixture(scope="module", autouse=True)
def _release_offscreen_plotters():
    """Free the cached off-screen VTK windows after each module (each holds a GL context)."""
    yield
    from simlab.render.scene import close_plotters

    close_plotters()
