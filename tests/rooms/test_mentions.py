"""The mention resolver against hand-labelled messages, and its rules one by one."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from simlab.worlds.rooms.mentions import message_mentions, resolve
from simlab.worlds.rooms.model import Scene
from simlab.worlds.rooms.visibility import ViewPair
from tests.rooms.handmade import living_room

FIXTURE = Path(__file__).parent / "fixtures" / "labelled_mentions.json"
LABELLED = json.loads(FIXTURE.read_text(encoding="utf-8"))
MESSAGES = LABELLED["messages"]
IN_REACH = [m for m in MESSAGES if "out_of_reach" not in m]
OUT_OF_REACH = [m for m in MESSAGES if "out_of_reach" in m]


@cache
def scene_and_views(name: str) -> tuple[Scene, ViewPair]:
    entry = LABELLED["scenes"][name]
    return Scene.from_json(entry["scene"]), ViewPair.from_json(entry["views"])


def resolved(message):
    scene, views = scene_and_views(message["scene"])
    return message_mentions(scene, views, message["role"], message["text"])


def test_the_fixture_is_big_enough_and_mixed():
    sources = {m["source"].split()[0] for m in MESSAGES}
    assert len(MESSAGES) >= 40 and {"written", "live-model-replies.json", "oracle"} <= sources
    assert len(OUT_OF_REACH) <= 4  # the few the rules cannot reach, each with its reason


@pytest.mark.parametrize("message", IN_REACH, ids=[f"{k}" for k in range(len(IN_REACH))])
def test_every_labelled_message_in_reach_resolves_to_its_label(message):
    found = resolved(message)
    assert (list(found.objects), found.count) == (message["ids"], message["count"]), message["text"][:120]


def test_the_cases_out_of_reach_still_miss_their_label():
    """If one starts to pass, move it into reach (drop its out_of_reach) so it is pinned."""
    for message in OUT_OF_REACH:
        found = resolved(message)
        assert (list(found.objects), found.count) != (message["ids"], message["count"]), message["text"]


def test_the_oracle_helpers_report_outlines_exactly_what_it_sees():
    report = next(m for m in MESSAGES if m["text"].startswith("HELPER_VIEW") and m["scene"] == "room_0000")
    _scene, views = scene_and_views("room_0000")
    found = resolved(report)
    assert list(found.objects) == views.helper_visible and found.count == 8  # was 17 outlined, 9 unseen


@pytest.mark.parametrize(
    ("text", "ids", "count"),
    [
        ("I see no cabinets.", [], 0),
        ("No, the cabinet.", ["cabinet_0"], 1),
        ("There isn’t a lamp.", [], 0),
        ("I dont see any chairs", [], 0),
        ("Without a lamp, the room is dark.", [], 0),
        ("I don't see a lamp and the sofa is gray.", ["sofa_0"], 1),
    ],
)
def test_negation_rules(text, ids, count):
    scene, views = living_room()
    found = message_mentions(scene, views, "answerer", text)
    assert (list(found.objects), found.count) == (ids, count)


def test_the_speaker_decides_an_ambiguous_phrase():
    scene, views = living_room()
    assert message_mentions(scene, views, "answerer", "a chair").objects == ("chair_0", "chair_1")
    assert message_mentions(scene, views, "helper", "a chair").objects == ("chair_1", "chair_2")
    assert resolve(scene, "a chair").objects == ("chair_0", "chair_1", "chair_2")  # nobody speaking: all of them
    assert resolve(scene, "a chair").count == 1


def test_a_misnamed_colour_is_ignored_and_numbers_count():
    scene, _views = living_room()
    assert resolve(scene, "the purple chair").objects == ("chair_0", "chair_1", "chair_2")
    assert resolve(scene, "a pair of chairs").count == 2
    assert resolve(scene, "all the chairs").count == 3
    assert resolve(scene, "the red chair. The chair is by the sofa.").count == 2


@pytest.mark.parametrize(
    "text",
    ["", "   ", "\x00\ud7ff\ufffd" * 50, "[" * 100_000, "{" * 100_000 + "}", "🪑" * 1000, "chair " * 170_000],
)
def test_bad_input_never_crashes(text):
    scene, views = living_room()
    found = message_mentions(scene, views, "helper", text)
    assert found.count <= len(scene.objects)


def test_results_are_sorted_and_repeatable():
    message = next(m for m in MESSAGES if m["text"].startswith("HELPER_VIEW"))
    first, again = resolved(message), resolved(message)
    assert first == again and list(first.objects) == sorted(first.objects)
