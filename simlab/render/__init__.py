"""Rendering: deterministic PIL pictures of worlds (no GUI toolkit needed).

:mod:`simlab.render.blocks_images` draws the CRAFT block world: a director's wall and the builder's board.
"""
