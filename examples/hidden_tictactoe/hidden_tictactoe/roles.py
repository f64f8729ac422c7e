"""The two roles and their colours: the names every module of the game uses, from the rules to the pictures.

Apart from ``world.py`` so the pictures (``images.py``, ``scene.py``), which the game master draws with, take
the colours from here and the game's modules import one another one way only.
"""

SEER = "seer"
PLAYER = "player"
ROLES: tuple[str, ...] = (SEER, PLAYER)
PALETTE: dict[str, tuple[int, int, int]] = {SEER: (123, 63, 181), PLAYER: (0, 121, 107)}
"""The one colour of each role in every view (purple seer, teal player)."""
