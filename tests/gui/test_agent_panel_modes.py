"""The agent panels' two picture modes: "as sent" shows exactly what each agent was given (the recorded
observation's pictures, byte for byte the world's own, nothing drawn on them, or "No pictures were sent"),
"annotated" adds the researcher's pictures, each marked NOT SENT on the picture itself."""

from __future__ import annotations

import io
import itertools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QSettings
from PySide6.QtGui import QImage

from simlab.agents.resolve import make_agents, role_specs
from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.core.world import Observation
from simlab.gui.agent_panels import ANNOTATED, AS_SENT, MODE_KEY, NO_PICTURES, AgentPanel, AgentPanels
from simlab.gui.playback import PlaybackModel
from simlab.render.episode_pictures import MARKED, NEVER_GIVEN, NOT_SENT_RGB, marked_not_sent
from simlab.render.images import to_png_bytes
from simlab.runner.episode import run_episode
from simlab.worlds import family_names, get_family
from simlab.worlds.rooms.observations import ANSWERER, BOTH_VIEWS, HELPER, HELPER_VIEW
from simlab.worlds.rooms.scene import agent_view, question_card
from tests.gui.model_run import record_model_run

SMALL = {  # a short episode of each family, its pictures small where the settings say how big they are
    "blocks": {"turns": 4},
    "rooms": {"image_width": 320, "image_height": 240},
}
RECORDED = itertools.count()


class Recording:
    """An episode and, for each of its observation events in order, the PNG of every picture the world's own
    ``observe`` gave at that moment (what a model shown pictures was sent)."""

    def __init__(self, episode: Episode, given: list[dict[str, bytes]]) -> None:
        self.episode = episode
        self.given = given
        self.observations = [e for e in episode.events if e.kind == "observation"]

    def shown(self, role: str, turn: int) -> tuple[Event, dict[str, bytes]] | None:
        """The observation a panel of ``role`` shows at ``turn`` (its latest), with the world's pictures."""
        found = [k for k, e in enumerate(self.observations) if e.role == role and e.turn <= turn]
        return (self.observations[found[-1]], self.given[found[-1]]) if found else None


def record(
    name: str, settings: Mapping[str, Any] | None = None, text_only: Sequence[str] = (), groups: Sequence[str] = ()
) -> Recording:
    """Play one episode of family ``name`` with its default agents (``text_only`` roles given words, not
    pictures, as a text-only model is), keeping the pictures of every observation as the world drew them."""
    family = get_family(name)
    task = family.tasks.generate(1, 0, None, groups)[0]
    world_settings = family.check_settings({**SMALL.get(name, {}), **(settings or {})})
    specs = role_specs(family, [])
    players = make_agents(family, specs, world_settings)
    for role in text_only:
        players[role].text_only = True  # what the episode driver reads: the recording keeps no picture names
    world = family.world(task, world_settings)
    given: list[dict[str, bytes]] = []
    observe = world.observe

    def observing(role: str) -> Observation:
        observation = observe(role)
        given.append({n: to_png_bytes(observation.images[n]) for n in observation.images})
        return observation

    world.observe = observing  # type: ignore[method-assign]
    episode_id = f"{name}-{next(RECORDED)}"  # renderers cache per episode id: one id per recording
    episode = run_episode(world, players, episode_id, 0, {r: s.spec() for r, s in specs.items()})
    return Recording(episode, given)


@pytest.fixture
def open_panels(qtbot) -> Callable[..., tuple[AgentPanels, PlaybackModel]]:
    """``open_panels(episode, settings=None) -> (panels, playback)`` showing ``episode``, wide enough for any
    family's panels side by side."""

    def make(episode: Episode, settings: QSettings | None = None) -> tuple[AgentPanels, PlaybackModel]:
        playback = PlaybackModel()
        widget = AgentPanels(playback, settings=settings)
        qtbot.addWidget(widget)
        widget.resize(1200, 900)
        widget.show()
        playback.set_episode(episode)
        return widget, playback

    return make


def pixels(image: QImage | Image.Image) -> np.ndarray:
    """RGB pixels of a Qt or PIL image."""
    if isinstance(image, QImage):
        rgb = image.convertToFormat(QImage.Format.Format_RGB888)
        row = np.frombuffer(rgb.constBits(), np.uint8).reshape(rgb.height(), rgb.bytesPerLine())
        return row[:, : rgb.width() * 3].reshape(rgb.height(), rgb.width(), 3).copy()
    return np.asarray(image.convert("RGB"))


def banded(image: Image.Image) -> bool:
    """Whether ``image`` starts with the NOT SENT band (its top-left corner in the band's colour)."""
    return image.convert("RGB").getpixel((1, 1)) == NOT_SENT_RGB


def assert_as_sent(panel: AgentPanel, observation: Event, given: Mapping[str, bytes]) -> None:
    """``panel`` shows exactly ``observation``'s recorded pictures, each the PNG the world gave, on screen
    untouched; or says no picture was sent."""
    pictures = panel.pictures()
    names = list(observation.data["images"])
    assert sorted(p.name for p in pictures) == sorted(names), f"{panel.role} at turn {observation.turn}"
    for picture, pixmap in zip(pictures, panel.pixmaps(), strict=True):
        assert picture.sent and not banded(picture.image)
        assert to_png_bytes(picture.image) == given[picture.name], f"{panel.role}'s {picture.name} is not as sent"
        assert np.array_equal(pixels(pixmap.toImage()), pixels(decoded(given[picture.name])))
    assert (NO_PICTURES in panel.notes()) == (not names)


def decoded(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png))


def every_panel(
    widget: AgentPanels, playback: PlaybackModel, recording: Recording
) -> Iterator[tuple[AgentPanel, Event, dict[str, bytes]]]:
    """Each turn of the episode, each panel with the observation it shows and the world's pictures of it."""
    for turn in range(recording.episode.last_turn + 1):
        playback.seek(turn)
        for role in widget.roles():
            shown = recording.shown(role, turn)
            if shown is not None:
                yield widget.panel(role), *shown


# ---- as sent ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", family_names())
def test_as_sent_panels_show_exactly_the_pictures_the_world_gave(name, open_panels):
    recording = record(name)
    widget, playback = open_panels(recording.episode)
    assert widget.mode == AS_SENT  # the default
    checked = 0
    for panel, observation, given in every_panel(widget, playback, recording):
        assert_as_sent(panel, observation, given)
        checked += len(observation.data["images"])
    assert checked or name == "boards", f"{name}: no picture was checked"  # boards' default conditions are text


@pytest.mark.parametrize("name", family_names())
def test_a_text_only_agent_was_sent_no_pictures_and_annotated_draws_them_marked(name, open_panels):
    family = get_family(name)
    recording = record(name, text_only=family.roles)
    widget, playback = open_panels(recording.episode)
    for panel, observation, given in every_panel(widget, playback, recording):
        assert observation.data["images"] == [] and panel.pictures() == []
        assert_as_sent(panel, observation, given)
    widget.set_mode(ANNOTATED)
    drawn = 0
    for panel, _observation, _given in every_panel(widget, playback, recording):
        assert panel.notes() == NO_PICTURES  # still true: the pictures below were never sent
        for picture, caption in zip(panel.pictures(), panel.captions(), strict=True):
            assert not picture.sent and banded(picture.image) and "NOT SENT" in caption
            drawn += 1
    # a family that declares no annotations (the example tic-tac-toe) draws none: what it shows is all sent
    assert (drawn > 0) == (family.load_views().annotated_images is not None)


# ---- rooms ----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rooms_recording() -> Recording:
    return record("rooms")


def test_the_rooms_answerer_is_never_shown_the_answer_as_sent(open_panels, rooms_recording):
    """The question card (with the answer given and the right one) and the named objects' outlines are drawn
    for the researcher: as sent, the Answerer's panel holds its camera picture alone, as the world drew it."""
    widget, playback = open_panels(rooms_recording.episode)
    seen = 0
    for panel, observation, given in every_panel(widget, playback, rooms_recording):
        assert_as_sent(panel, observation, given)
        if panel.role == ANSWERER:  # through the answer turn and after it
            assert [p.name for p in panel.pictures()] == ["view"] and "question" not in given
            assert panel.pictures()[0].image.size == (320, 240)  # the episode's image size, as the model got it
            seen += 1
    assert seen == rooms_recording.episode.last_turn


def test_rooms_annotated_outlines_and_the_question_card_are_marked_not_sent(open_panels, rooms_recording):
    episode = rooms_recording.episode
    widget, playback = open_panels(episode)
    widget.set_mode(ANNOTATED)
    for turn in range(2, episode.last_turn + 1):  # from turn 2 the Helper has named objects; the card follows
        playback.seek(turn)
        answerer = widget.panel(ANSWERER)
        pictures = {p.name: p for p in answerer.pictures()}
        assert list(pictures) == ["view", "question"] and not any(p.sent for p in pictures.values())
        card = marked_not_sent(question_card(episode, turn), NEVER_GIVEN)
        assert np.array_equal(pixels(pictures["question"].image), pixels(card))
        outlined = marked_not_sent(agent_view(episode, ANSWERER, turn), MARKED)
        assert np.array_equal(pixels(pictures["view"].image), pixels(outlined))
        assert answerer.captions() == ["view \u00b7 NOT SENT", "question \u00b7 NOT SENT"]
        assert [p.name for p in widget.panel(HELPER).pictures()] == ["view"]
    widget.set_mode(AS_SENT)
    assert [p.name for p in widget.panel(ANSWERER).pictures()] == ["view"]


@pytest.mark.parametrize(
    ("settings", "groups", "sent", "annotated"),
    [
        ({"condition": BOTH_VIEWS}, (), ["view", HELPER_VIEW], {"view": False, HELPER_VIEW: False}),
        ({}, ("mapping",), ["view", "map"], {"view": False, "map": True}),  # the map as given: nothing on it
    ],
)
def test_rooms_pictures_beyond_the_view_are_as_sent_too(open_panels, settings, groups, sent, annotated):
    """The Helper's view in both-views and the cognitive-mapping map: as sent, in the order the model got
    them, without the captions and outlines annotated mode draws on them."""
    recording = record("rooms", settings, groups=groups)
    widget, playback = open_panels(recording.episode)
    for panel, observation, given in every_panel(widget, playback, recording):
        assert_as_sent(panel, observation, given)
        if panel.role == ANSWERER:
            assert [p.name for p in panel.pictures()] == sent
    widget.set_mode(ANNOTATED)
    shown = {p.name: p.sent for p in widget.panel(ANSWERER).pictures()}
    assert shown == {**annotated, "question": False}


# ---- boards -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target_view", "state_view", "sent", "drawn"),
    [
        ("text", "text", [], ["board", "target"]),
        ("image", "text", ["legend", "target"], ["board"]),
        ("text", "image", ["board", "legend"], ["target"]),
        ("layers", "image", None, []),
    ],
)
def test_boards_text_conditions_send_no_pictures_and_annotated_draws_them(
    open_panels, target_view, state_view, sent, drawn
):
    recording = record("boards", {"target_view": target_view, "state_view": state_view})
    widget, playback = open_panels(recording.episode)
    for panel, observation, given in every_panel(widget, playback, recording):
        assert_as_sent(panel, observation, given)
    playback.seek(1)
    programmer = widget.panel("programmer")
    names = [p.name for p in programmer.pictures()]
    assert ("target_level_1" in names) if sent is None else (sorted(names) == sent)  # layers: one picture a level
    assert (programmer.notes() == NO_PICTURES) == (sent == [])
    widget.set_mode(ANNOTATED)
    not_sent = [p.name for p in programmer.pictures() if not p.sent]
    assert sorted(not_sent) == drawn
    assert all(banded(p.image) for p in programmer.pictures() if not p.sent)
    assert all(not banded(p.image) for p in programmer.pictures() if p.sent)


# ---- what was sent to a model, checked --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def model_episode(tmp_path_factory) -> Episode:
    with pytest.MonkeyPatch.context() as monkeypatch:
        return record_model_run(tmp_path_factory.mktemp("model") / "run", monkeypatch)


def test_a_picture_a_model_was_sent_is_checked_against_its_sha256(open_panels, model_episode):
    widget, playback = open_panels(model_episode)
    call = next(r for r in model_episode.raw if r["role"] == "D1")
    playback.seek(call["turn"])
    panel = widget.panel("D1")
    assert [(p.name, p.verified) for p in panel.pictures()] == [("wall", True)]
    assert panel.captions() == ["wall \u00b7 as sent (sha256 checked)"]


def test_a_picture_that_differs_from_the_png_sent_says_so(open_panels, model_episode):
    tampered = Episode.from_json(json.loads(json.dumps(model_episode.to_json())))
    call = next(r for r in tampered.raw if r["role"] == "D1")
    for message in call["request"]["messages"]:
        for part in message["content"] if isinstance(message["content"], list) else []:
            if part.get("type") == "image":
                part["sha256"] = "0" * 64
    widget, playback = open_panels(tampered)
    playback.seek(call["turn"])
    panel = widget.panel("D1")
    assert [(p.name, p.verified) for p in panel.pictures()] == [("wall", False)]
    assert panel.captions() == ["wall \u00b7 differs from the PNG sent"]


# ---- the switch ---------------------------------------------------------------------------------------------------


def test_the_switch_is_remembered_and_a_person_playing_sees_pictures_as_sent(open_panels, rooms_recording, tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    widget, playback = open_panels(rooms_recording.episode, settings)
    playback.seek(2)
    assert widget.mode == AS_SENT and widget.mode_buttons[AS_SENT].isChecked()
    widget.mode_buttons[ANNOTATED].click()
    assert widget.mode == ANNOTATED and settings.value(MODE_KEY) == ANNOTATED
    assert "question" in [p.name for p in widget.panel(ANSWERER).pictures()]
    assert open_panels(rooms_recording.episode, settings)[0].mode == ANNOTATED  # the next window starts so
    widget.show_only({ANSWERER})
    assert widget.mode == AS_SENT and not widget.mode_bar.isEnabled()
    assert [p.name for p in widget.panel(ANSWERER).pictures()] == ["view"]
    widget.show_only(None)
    assert widget.mode == ANNOTATED and widget.mode_bar.isEnabled()
