import json

import pytest

from simlab.core import events as ev
from simlab.core.episode import EPISODE_FORMAT, EPISODE_VERSION, Episode
from simlab.core.events import EVENT_KINDS, Event


def _episode() -> Episode:
    events = [
        ev.state(0, {"board": "t0"}),
        ev.score(0, {"progress": 0.0, "iou": 0.0}),
        ev.message(1, "D1", "place red"),
        Event("action", 1, "builder", {"action": {"action": "clarify"}}),
        ev.score(1, {"progress": 0.25}),
        ev.state(2, {"board": "t2"}),
        ev.score(2, {"progress": 0.5, "iou": 0.4}),
        ev.reasoning(3, "D2", "hmm"),
        ev.protocol_error(4, "builder", "bad_move", "no move"),
        ev.state(5, {"board": "t5"}),
        ev.score(5, {"progress": 1.0}),
    ]
    return Episode(
        episode_id="ep-1",
        world="blocks",
        seed=42,
        task={"id": "s1", "board": {}},
        settings={"turns": 5},
        agents={"D1": "oracle", "builder": "scripted"},
        events=events,
        raw=[{"turn": 1, "role": "D1", "request": "x"}],
        summary={"outcome": "success", "score": 1.0},
        source={"importer": "test"},
    )


@pytest.mark.parametrize("kind", EVENT_KINDS)
def test_event_json_round_trip(kind):
    e = Event(kind, 3, "D1", {"text": "hi", "n": [1, 2]})
    back = Event.from_json(json.loads(json.dumps(e.to_json())))
    assert back == e


def test_event_without_role_omits_it_and_round_trips():
    e = ev.state(0, {"board": {}})
    assert "role" not in e.to_json()
    assert Event.from_json(e.to_json()).role is None


def test_unknown_event_kind_is_rejected():
    with pytest.raises(ValueError, match="unknown event kind 'teleport'"):
        Event("teleport", 1)
    with pytest.raises(ValueError, match="teleport"):
        Event.from_json({"kind": "teleport", "turn": 1})


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        ({"kind": "message", "turn": -1}, "turn"),
        ({"kind": "message", "turn": "3"}, "turn"),
        ({"kind": "message", "turn": True}, "turn"),
        ({"kind": "message"}, "turn"),
        ({"kind": "message", "turn": 1, "role": 5}, "role"),
        ({"kind": "message", "turn": 1, "data": [1]}, "data"),
    ],
)
def test_event_from_json_error_names_the_field(obj, field):
    with pytest.raises(ValueError, match=f"field '{field}'"):
        Event.from_json(obj)


def test_event_from_json_rejects_non_objects():
    with pytest.raises(ValueError, match="expected an event object, got list"):
        Event.from_json([1, 2])


def test_event_from_json_missing_kind_names_the_field():
    with pytest.raises(ValueError, match="field 'kind'"):
        Event.from_json({"turn": 1})


def test_episode_json_round_trip():
    episode = _episode()
    obj = json.loads(json.dumps(episode.to_json(), allow_nan=False))
    assert obj["format"] == EPISODE_FORMAT
    assert obj["version"] == EPISODE_VERSION
    back = Episode.from_json(obj)
    assert back == episode
    assert back.to_json() == episode.to_json()


def test_episode_without_source_omits_it():
    episode = _episode()
    episode.source = {}
    assert "source" not in episode.to_json()
    assert Episode.from_json(episode.to_json()).source == {}


@pytest.mark.parametrize("name", ["episode_id", "world", "seed", "task"])
def test_episode_from_json_names_a_missing_header_field(name):
    obj = _episode().to_json()
    del obj[name]
    with pytest.raises(ValueError, match=f"field '{name}'"):
        Episode.from_json(obj)


def test_episode_from_json_names_the_bad_event_index():
    obj = _episode().to_json()
    obj["events"][3]["turn"] = -2
    with pytest.raises(ValueError, match=r"events\[3\]: field 'turn'"):
        Episode.from_json(obj)


def test_episode_from_json_rejects_events_that_are_not_a_list():
    obj = _episode().to_json()
    obj["events"] = {"0": {}}
    with pytest.raises(ValueError, match="field 'events'"):
        Episode.from_json(obj)


@pytest.mark.parametrize(
    ("turn", "board"), [(0, "t0"), (1, "t0"), (2, "t2"), (3, "t2"), (4, "t2"), (5, "t5"), (99, "t5")]
)
def test_state_at_is_the_latest_state_at_or_before_the_turn(turn, board):
    assert _episode().state_at(turn) == {"board": board}


def test_state_at_before_any_state_is_none():
    episode = Episode("e", "blocks", 0, {}, events=[ev.message(1, "D1", "x"), ev.state(2, {"board": "b"})])
    assert episode.state_at(0) is None
    assert episode.state_at(1) is None
    assert episode.state_at(2) == {"board": "b"}


def test_metrics_at_carries_the_latest_score_forward():
    episode = _episode()
    assert episode.metrics_at(0) == {"progress": 0.0, "iou": 0.0}
    assert episode.metrics_at(1) == {"progress": 0.25}
    assert episode.metrics_at(4) == {"progress": 0.5, "iou": 0.4}
    assert episode.metrics_at(5) == {"progress": 1.0}


def test_metric_series_has_one_value_per_turn_carried_forward():
    episode = _episode()
    assert episode.last_turn == 5
    assert episode.metric_series("progress") == [0.0, 0.25, 0.5, 0.5, 0.5, 1.0]
    # iou is missing from the turn-1 and turn-5 scores: the last known value is carried on
    assert episode.metric_series("iou") == [0.0, 0.0, 0.4, 0.4, 0.4, 0.4]
    assert episode.metric_series("nope") == [None] * 6


def test_events_of_turn_filters_by_turn_in_order():
    episode = _episode()
    assert [e.kind for e in episode.events_of_turn(1)] == ["message", "action", "score"]
    assert [e.kind for e in episode.events_of_turn(4)] == ["protocol_error"]
    assert episode.events_of_turn(7) == []
    assert sum(len(episode.events_of_turn(t)) for t in range(episode.last_turn + 1)) == len(episode.events)


def test_messages_returns_only_message_events():
    assert [e.data["text"] for e in _episode().messages()] == ["place red"]


def test_the_last_turn_follows_events_appended_or_replaced():
    episode = _episode()
    assert episode.last_turn == 5
    episode.events.append(ev.message(7, "D1", "one more"))  # a live episode goes on
    assert episode.last_turn == 7
    episode.events = [e for e in episode.events if e.turn <= 2]  # another list altogether
    assert episode.last_turn == 2
    assert episode == _episode_until(2)  # what is kept of it is not part of the episode


def _episode_until(turn: int) -> Episode:
    episode = _episode()
    episode.events = [e for e in episode.events if e.turn <= turn]
    return episode


def test_empty_episode_has_last_turn_zero():
    episode = Episode("e", "blocks", 0, {})
    assert episode.last_turn == 0
    assert episode.state_at(3) is None
    assert episode.metric_series("x") == [None]
