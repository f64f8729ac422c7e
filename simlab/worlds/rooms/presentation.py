"""How the rooms world is drawn in the app and in exports (the family's :class:`FamilyViews`).

The 3D view shows the room with both agents' frustums and who sees what (tints and corner rays), each a
layer of its own, and a click on an object says who sees it and why; the agent panels show each agent's
pictures as it was sent them and, annotated, its camera picture with the objects named at the turn outlined
and the Answerer's question card (the answer given and the right one, once answered), as exports do.
"""

from __future__ import annotations

from simlab.core.family import FamilyViews
from simlab.worlds.rooms.inspection import LAYERS, inspect_item
from simlab.worlds.rooms.scene import (
    annotated_pictures,
    episode_pictures,
    rooms_cameras,
    rooms_scene,
    sent_pictures,
    turn_pictures,
)

VIEWS = FamilyViews(
    observation_images=sent_pictures,
    turn_pictures=turn_pictures,
    scene=rooms_scene,
    cameras=rooms_cameras,
    default_camera="free",
    overlay_label="Visibility",
    overlay_styles=(),  # the layer list switches the tints and rays, each on its own
    images_follow_turn=True,
    episode_pictures=episode_pictures,
    layers=LAYERS,
    inspect=inspect_item,
    annotated_images=annotated_pictures,
)
