"""The pictures of an episode that exports and the agent panels show, from whatever its family declares (no
family named here).

A family's :class:`~simlab.core.family.FamilyViews` gives an optional 3D scene with camera presets, the 2D
pictures of each turn and those shown once; :func:`main_picture` is the big picture of a turn (the 3D scene,
or for a family without one its turn pictures side by side), used by the turn sheet and the animations.

:func:`agent_pictures` are what the agent panels show of one recorded observation: "as sent", exactly the
pictures it gave its role (those its ``images`` name, in the order a model got them, checked against the
sha256 a model call recorded), or "annotated", the family's researcher pictures in place of or after them,
each marked NOT SENT on the picture itself (:func:`marked_not_sent`), so no copy of it passes for what an
agent saw.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from PIL import Image, ImageDraw

from simlab.core.episode import Episode
from simlab.core.errors import ConfigError, FormatError, SimlabError
from simlab.core.events import Event
from simlab.core.family import RGB, FamilyViews
from simlab.render.images import BACKGROUND, fit, text_font, to_png_bytes

GAP = 12
NOT_SENT_RGB: RGB = (176, 18, 38)
NOT_SENT = "NOT SENT TO THE AGENT"
MARKED = "marks drawn for the researcher on the picture it got"
NEVER_GIVEN = "drawn for the researcher; the agent never got this picture"


def views_of(episode: Episode) -> FamilyViews | None:
    """The views of the episode's family, or None for a world this SimLab does not know."""
    from simlab.worlds import get_family

    try:
        return get_family(episode.world).load_views()
    except ConfigError:
        return None


DAMAGED = (TypeError, ValueError, KeyError, IndexError, AttributeError)
"""What a family's drawing code raises on recorded data of the wrong shape (a damaged or hand-edited file)."""


@contextmanager
def drawing(episode: Episode, what: str) -> Iterator[None]:
    """Around a family's drawing of ``episode``: data of the wrong shape is a FormatError naming the episode
    and what was being drawn (the command line exits 2 with it, the app says it), never an internal error."""
    try:
        yield
    except SimlabError:
        raise
    except DAMAGED as exc:
        why = f"recorded data that cannot be drawn ({what}: {type(exc).__name__}: {exc})"
        raise FormatError(f"episode {episode.episode_id}", "", why) from exc


def scene_picture(
    episode: Episode, turn: int, size: tuple[int, int], camera: str | None = None, overlay: bool = True
) -> Image.Image | None:
    """The 3D scene after ``turn`` from ``camera`` (default: the family's), or None without a 3D scene."""
    from simlab.render.scene import render_items

    views = views_of(episode)
    if views is None or views.scene is None:
        return None
    cameras = views.cameras(episode)
    name = camera or views.default_camera
    if name not in cameras:
        raise SimlabError(f"unknown camera {name!r}; expected one of {', '.join(cameras)}")
    with drawing(episode, f"the 3D scene of turn {turn}"):
        items = views.scene(episode, turn, overlay=overlay)
    return render_items(items, cameras[name], size)


def turn_pictures(episode: Episode, turn: int) -> dict[str, Image.Image]:
    """The family's 2D pictures of ``turn`` (empty for an unknown world)."""
    views = views_of(episode)
    if views is None:
        return {}
    with drawing(episode, f"the pictures of turn {turn}"):
        return views.turn_pictures(episode, turn)


def once_pictures(episode: Episode) -> dict[str, Image.Image]:
    """The family's pictures shown once per episode (empty for an unknown world)."""
    views = views_of(episode)
    if views is None:
        return {}
    with drawing(episode, "the episode's pictures"):
        return views.episode_pictures(episode)


def side_by_side(images: list[Image.Image], size: tuple[int, int]) -> Image.Image:
    """``images`` scaled into equal columns of one picture of ``size``, centred."""
    canvas = Image.new("RGB", size, BACKGROUND)
    if not images:
        return canvas
    column = (size[0] - GAP * (len(images) - 1)) // len(images)
    for k, image in enumerate(images):
        small = fit(image, column, size[1])
        canvas.paste(small, (k * (column + GAP) + (column - small.width) // 2, (size[1] - small.height) // 2))
    return canvas


def main_picture(
    episode: Episode, turn: int, size: tuple[int, int], camera: str | None = None
) -> tuple[Image.Image, bool]:
    """The big picture of ``turn``: the 3D scene, or the turn pictures side by side for a family without one.
    The flag says whether it was the 3D scene (the turn pictures are then still to be shown)."""
    scene = scene_picture(episode, turn, size, camera)
    if scene is not None:
        return scene, True
    return side_by_side(list(turn_pictures(episode, turn).values()), size), False


# ---- what an agent was given ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentPicture:
    """One picture of an agent panel. ``sent``: exactly the picture the agent was given (False: drawn for the
    researcher and marked NOT SENT on it); ``verified``: its PNG has the sha256 the model call recorded (False:
    this re-drawing differs from what was sent; None: no record to check, as for a scripted role)."""

    name: str
    image: Image.Image
    sent: bool = True
    verified: bool | None = None


@dataclass(frozen=True)
class AgentPictures:
    """The pictures shown for one observation, with the names it recorded as sent (none: it sent no picture)
    and those of them the family cannot re-draw."""

    pictures: tuple[AgentPicture, ...]
    sent: tuple[str, ...]
    missing: tuple[str, ...] = ()


def agent_pictures(
    views: FamilyViews | None,
    observation: Event,
    episode: Episode,
    turn: int,
    annotated: bool = False,
    digests: Mapping[str, str] | None = None,
) -> AgentPictures:
    """The pictures of a recorded ``observation`` as an agent panel shows them at the playback's ``turn``
    (none re-drawn without ``views``: a world this SimLab does not know).

    As sent: those the observation names, re-drawn by the family's ``observation_images``, in the order of
    ``digests`` (name -> sha256 of the PNG a model was sent, in the order it got them) and checked against
    them. ``annotated``: the family's ``annotated_images`` at ``turn`` too, each in place of the sent picture
    of its name or after them, marked NOT SENT."""
    digests = digests or {}
    data = observation.data
    names = [str(name) for name in data.get("images") or []]
    drawn = views.observation_images(data, episode, observation.turn) if names and views is not None else {}
    order = [n for n in digests if n in names] + [n for n in drawn if n in names and n not in digests]
    pictures = {n: AgentPicture(n, drawn[n], True, _same(drawn[n], digests.get(n))) for n in order if n in drawn}
    if annotated and views is not None and views.annotated_images is not None:
        for name, image in views.annotated_images(data, episode, turn).items():
            words = MARKED if name in names else NEVER_GIVEN
            pictures[name] = AgentPicture(name, marked_not_sent(image, words), sent=False)
    missing = tuple(n for n in names if n not in drawn)
    return AgentPictures(tuple(pictures.values()), tuple(names), missing)


def _same(image: Image.Image, digest: str | None) -> bool | None:
    """Whether ``image``'s PNG has the sha256 ``digest`` (None: no digest to compare with)."""
    return hashlib.sha256(to_png_bytes(image)).hexdigest() == digest if digest else None


def marked_not_sent(image: Image.Image, words: str) -> Image.Image:
    """``image`` under a band that says in bold it was NOT SENT to the agent, and ``words`` (why it is not
    what the agent saw); the band's text scales with the picture, so it stays legible wherever it is shown."""
    size = max(12, image.width // 22)
    big, small = _fitting(NOT_SENT, size, image.width), _fitting(words, size * 3 // 4, image.width)
    band = big * 2 + small * 3 // 2
    out = Image.new("RGB", (image.width, image.height + band), NOT_SENT_RGB)
    out.paste(image.convert("RGB"), (0, band))
    draw = ImageDraw.Draw(out)
    draw.text((big // 2, big // 3), NOT_SENT, fill="white", font=text_font(big), stroke_width=1, stroke_fill="white")
    draw.text((big // 2, big * 3 // 2), words, fill="white", font=text_font(small))
    return out


def _fitting(text: str, size: int, width: int) -> int:
    """The largest font size up to ``size`` at which ``text`` fits across ``width`` with a margin each side."""
    while size > 8 and text_font(size).getlength(text) > width - size:
        size -= 1
    return size
