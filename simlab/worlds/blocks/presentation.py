"""How the blocks world is drawn in the app and in exports (the family's :class:`FamilyViews`).

The 3D view shows the board after a turn with the target as its overlay (ghosts or wireframes), the three
directors' walls and eyes, and the turn's move; the agent panels re-render a director's wall or the
builder's board from the recorded observation, as sent (annotated: the picture a text-only agent was given
in words); exports add the builder's board per turn and each director's wall once.
"""

from __future__ import annotations

from PIL import Image

from simlab.core.episode import Episode
from simlab.core.family import FamilyViews, from_observation
from simlab.worlds.blocks.images import annotated_images, board_image, observation_images, wall_image
from simlab.worlds.blocks.inspection import LAYERS, inspect_item
from simlab.worlds.blocks.scene import CAMERAS, blocks_scene, board_json_at, director_walls


def turn_pictures(episode: Episode, turn: int) -> dict[str, Image.Image]:
    """The builder's board after ``turn``, the target's blocks still missing marked."""
    return {"board": board_image(board_json_at(episode, turn), 96, target_json=episode.task.get("board"))}


def episode_pictures(episode: Episode) -> dict[str, Image.Image]:
    """Each director's wall: the target as that director sees it."""
    target = episode.task.get("board")
    return {f"{d}'s wall": wall_image(view, 72, target_json=target) for d, view in director_walls(episode).items()}


def persona(episode: Episode, role: str) -> str:
    """A director's personality (the paper's archetype), as its observations name it; "" for the builder."""
    for event in episode.events:
        if event.kind == "observation" and event.role == role:
            return str((event.data.get("data") or {}).get("persona") or "")
    return ""


VIEWS = FamilyViews(
    observation_images=from_observation(observation_images),
    images_without_vtk=True,  # Pillow's drawing: the app draws a step's next turn's on its frame thread
    turn_pictures=turn_pictures,
    scene=blocks_scene,
    cameras=lambda _episode: CAMERAS,
    default_camera="free",
    overlay_label="Target",
    episode_pictures=episode_pictures,
    role_note=persona,
    layers=LAYERS,
    inspect=inspect_item,
    annotated_images=from_observation(annotated_images),
)
