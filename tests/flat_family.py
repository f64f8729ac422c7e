"""A world family with no 3D scene, for tests: the blocks world under another name, drawn only by its 2D
pictures (as the puzzles family will be). Registered by the ``flat_family`` fixture of tests/conftest.py."""

from __future__ import annotations

import dataclasses

from simlab.worlds.blocks.family import FAMILY as BLOCKS
from simlab.worlds.blocks.presentation import VIEWS as BLOCKS_VIEWS
from simlab.worlds.blocks.world import BlocksWorld

NAME = "flatblocks"


class FlatBlocksWorld(BlocksWorld):
    family = NAME


VIEWS = dataclasses.replace(BLOCKS_VIEWS, scene=None, cameras=lambda _episode: {})
FAMILY = dataclasses.replace(BLOCKS, name=NAME, world=FlatBlocksWorld, views="tests.flat_family:VIEWS")
