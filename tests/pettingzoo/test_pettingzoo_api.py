"""Every registered world family (the bundled ones and any installed) is a PettingZoo environment that
PettingZoo's own checks accept: ``api_test``, ``seed_test`` and ``render_test`` of every render mode, imported
from the pettingzoo package; ``parallel_api_test`` and ``parallel_seed_test`` for the families whose roles all
act once per cycle, and a clear refusal of a parallel form for the others."""

from __future__ import annotations

import contextlib
import functools
import io
from collections.abc import Iterator
from typing import Any

import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, render_test, seed_test

from simlab.core.errors import ConfigError
from simlab.pettingzoo import SimLabEnv, env, parallel_env
from simlab.worlds import family_names

SMALL: dict[str, dict[str, Any]] = {
    "blocks": {"turns": 4},
    "rooms": {"image_width": 64, "image_height": 48, "max_rounds": 3},  # rendering views is the slow part
    "boards": {"rounds": 3, "target_view": "layers", "state_view": "image"},  # every picture a role can get
    "puzzles": {"turns": 4},
}
"""Short episodes, so each check plays whole ones fast; families not named play their defaults."""
CYCLES = 200  # more than any of these episodes lasts: the checks see them end


@functools.cache
def _task(name: str) -> dict[str, Any]:
    from simlab.worlds import get_family

    return get_family(name).tasks.generate(1, 0)[0]


def make(name: str, render_mode: str | None = None) -> SimLabEnv:
    return env(name, task=_task(name), settings=SMALL.get(name), render_mode=render_mode)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """PettingZoo's checks print their progress, and the ``human`` render mode prints the turn."""
    with contextlib.redirect_stdout(io.StringIO()):
        yield


@pytest.mark.parametrize("name", family_names())
def test_pettingzoos_api_test_passes(name):
    with quiet():
        api_test(make(name), num_cycles=CYCLES)


@pytest.mark.parametrize("name", family_names())
def test_pettingzoos_seed_test_passes(name):
    with quiet():
        seed_test(lambda: make(name), num_cycles=CYCLES)


@pytest.mark.parametrize("name", family_names())
def test_pettingzoos_render_test_passes_in_every_mode(name):
    modes = make(name).metadata["render_modes"]
    assert set(modes) == {"human", "ansi", "rgb_array"}
    with quiet():
        render_test(functools.partial(make, name))


@pytest.mark.parametrize("name", family_names())
def test_pettingzoos_parallel_tests_pass_where_a_parallel_form_applies(name):
    if not make(name).declared.parallel:
        with pytest.raises(ConfigError, match="no parallel form"):
            parallel_env(name, task=_task(name), settings=SMALL.get(name))
        return
    with quiet():
        parallel_api_test(parallel_env(name, task=_task(name), settings=SMALL.get(name)), num_cycles=CYCLES)
        parallel_seed_test(lambda: parallel_env(name, task=_task(name), settings=SMALL.get(name)), num_cycles=CYCLES)


def test_the_example_world_is_the_one_with_a_parallel_form():
    """Seer then player every turn: the only family whose roles all act once per cycle in role order."""
    assert [name for name in family_names() if make(name).declared.parallel] == ["tictactoe"]
