"""Rendering with no GUI toolkit: the generic 3D scene (:mod:`~simlab.render.scene`), image helpers, the one
event formatter and palette (:mod:`~simlab.render.formatting`), and the exports (turn sheet, HTML transcript,
GIF/MP4) that draw whatever an episode's family declares. Family-specific pictures live in the family."""
