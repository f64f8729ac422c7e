"""How the rooms world is drawn in the app and in exports (the family's :class:`FamilyViews`).

The 3D view shows the room with both agents' frustums and, as its overlay, who sees what (tints and corner
rays); the agent panels and exports show each agent's camera picture with the objects named at the turn
outlined, and the Answerer's question card (the answer given and the right one, once answered).
"""

from __future__ import annotations

from simlab.core.family import FamilyViews
from simlab.worlds.rooms.scene import episode_pictures, observation_pictures, rooms_cameras, rooms_scene, turn_pictures

VIEWS = FamilyViews(
    observation_images=observation_pictures,
    turn_pictures=turn_pictures,
    scene=rooms_scene,
    cameras=rooms_cameras,
    default_camera="free",
    overlay_label="Visibility",
    overlay_styles=("shown",),
    overlay_help="Who sees what: objects tinted Answerer-only, Helper-only or shared, and the rays from each eye "
    "to their box corners (green seen, red blocked, grey outside the view)",
    images_follow_turn=True,
    episode_pictures=episode_pictures,
)
