"""The conformance suite every world (and world plugin) must pass, like PettingZoo's api_test and seed_test.

Use it from a test::

    from simlab.testing import check_world
    def test_my_world():
        check_world("blocks")

Each check raises AssertionError with a message saying what the world did wrong. Like PettingZoo's
``api_test``, ``seed_test`` and ``render_test``, they are shipped with the library so a family written
outside this repository runs exactly the checks the bundled ones do.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from simlab.agents.resolve import make_agents, role_specs
from simlab.core.episode import Episode
from simlab.core.events import EVENT_KINDS
from simlab.core.plugins import AgentSpec
from simlab.core.recording import load_episode, save_episode
from simlab.core.records import check_summary
from simlab.core.world import Observation, World
from simlab.runner.episode import run_episode
from simlab.testing.fuzz import reply_fuzz_test, task_file_fuzz_test, task_fuzz_test
from simlab.testing.judges import judge_test
from simlab.testing.reasoning import reasoning_test
from simlab.worlds import WorldFamily, get_family

__all__ = [
    "api_test",
    "check_world",
    "cross_process_test",
    "document_snapshot",
    "editor_test",
    "entity_states",
    "episode_digest",
    "judge_test",
    "reasoning_test",
    "recording_round_trip_test",
    "render_test",
    "reply_fuzz_test",
    "scene_test",
    "seed_test",
    "task_file_fuzz_test",
    "task_fuzz_test",
]


def check_world(
    family: str | WorldFamily,
    agents: Sequence[str] = (),
    n_tasks: int = 2,
    seeds: Sequence[int] = (0, 1),
    settings: Mapping[str, Any] | None = None,
) -> None:
    """Run every check on ``n_tasks`` generated tasks with the given agent specs (defaults otherwise)."""
    fam = get_family(family) if isinstance(family, str) else family
    tasks = fam.tasks.generate(n_tasks, seeds[0])
    assert tasks, f"{fam.name}: generate({n_tasks}, {seeds[0]}) returned no tasks"
    for task in tasks:
        fam.tasks.validate(task)
        api_test(fam, task, agents, settings)
        seed_test(fam, task, agents, seeds, settings)
        recording_round_trip_test(fam, task, agents, settings)
    cross_process_test(fam, tasks[0], agents, settings)
    episode = play(fam, tasks[0], agents, seeds[0], settings)
    turns_test(fam, episode)
    render_test(fam, episode)
    scene_test(fam, episode)
    editor_test(fam)
    judge_test(fam, [episode])
    task_fuzz_test(fam, tasks[0])
    reply_fuzz_test(fam, episode)
    reasoning_test(fam, tasks[0], settings)


def play(
    fam: WorldFamily, task: Mapping[str, Any], agents: Sequence[str], seed: int, settings: Mapping[str, Any] | None
) -> Episode:
    """One full episode of ``task`` with the given agent specs and run seed."""
    world_settings = fam.check_settings(settings or {})
    specs = role_specs(fam, [AgentSpec.parse(a) for a in agents])
    players = make_agents(fam, specs, world_settings)
    recorded = {role: spec.spec() for role, spec in specs.items()}
    return run_episode(fam.world(task, world_settings), players, f"{task.get('id', 'task')}-check", seed, recorded)


def api_test(
    fam: WorldFamily, task: Mapping[str, Any], agents: Sequence[str] = (), settings: Mapping[str, Any] | None = None
) -> None:
    """Drive the AEC loop by hand and check the protocol's promises at every step."""
    world_settings = fam.check_settings(settings or {})
    world = fam.world(task, world_settings)
    specs = role_specs(fam, [AgentSpec.parse(a) for a in agents])
    players = make_agents(fam, specs, world_settings)
    events = world.reset(0)
    for name, agent in players.items():
        agent.reset(0, name, world.task)
    _check_events(events, fam.name, "reset")
    last_turn = 0
    for _ in range(100_000):
        if world.finished:
            break
        role = world.agent_selection
        assert role is not None and role in fam.roles, f"{fam.name}: agent_selection {role!r} is not one of {fam.roles}"
        first, again = world.observe(role), world.observe(role)
        _same_observation(first, again, fam.name)
        assert first.role == role and first.text.strip(), f"{fam.name}: observation for {role} is empty or mislabelled"
        new = world.step(players[role].act(first))
        _check_events(new, fam.name, f"step of {role}")
        turns = [e.turn for e in new]
        assert all(t >= last_turn for t in turns), f"{fam.name}: events went back in time ({turns} after {last_turn})"
        last_turn = max([last_turn, *turns])
    else:
        raise AssertionError(f"{fam.name}: the episode never finished")
    assert world.agent_selection is None, f"{fam.name}: agent_selection must be None once finished"
    try:
        world.step(players[fam.roles[0]].act(world.observe(fam.roles[0])))
    except (RuntimeError, ValueError):
        pass
    else:
        raise AssertionError(f"{fam.name}: step() after the end must raise")
    _check_summary(world, fam.name)


def _same_observation(a: Observation, b: Observation, name: str) -> None:
    assert (a.text, dict(a.data), sorted(a.images)) == (b.text, dict(b.data), sorted(b.images)), (
        f"{name}: observe() is not a pure query (two calls differ)"
    )


def _check_events(events: Sequence[Any], name: str, where: str) -> None:
    for e in events:
        assert e.kind in EVENT_KINDS, f"{name}: {where} produced unknown event kind {e.kind!r}"
        json.dumps(e.to_json(), allow_nan=False)  # events must be strict JSON


def _check_summary(world: World, name: str) -> None:
    summary = world.summary()
    try:
        check_summary(summary, name)
    except ValueError as exc:
        raise AssertionError(str(exc)) from None
    assert summary["world"] == name, f"{name}: the summary names world {summary['world']!r}"
    json.dumps(summary, allow_nan=False)


def turns_test(fam: WorldFamily, episode: Episode) -> None:
    """The summary's turn count is the episode's last turn: the browser and the timeline say the same."""
    turns = episode.summary["turns"]
    assert turns == episode.last_turn, (
        f"{fam.name}: the summary says {turns} turns, the events end at turn {episode.last_turn}"
    )


def episode_digest(episode: Episode) -> str:
    """A hash of everything an episode recorded, to compare runs across processes."""
    text = json.dumps(episode.to_json(), sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def seed_test(
    fam: WorldFamily,
    task: Mapping[str, Any],
    agents: Sequence[str] = (),
    seeds: Sequence[int] = (0, 1),
    settings: Mapping[str, Any] | None = None,
) -> None:
    """Every seed gives the same episode each time it is played (like PettingZoo's ``seed_test``, this does not
    ask different seeds to differ: a world and agents with no randomness are allowed to play alike)."""
    for seed in seeds:
        a, b = (play(fam, task, agents, seed, settings) for _ in range(2))
        assert a.seed == b.seed, f"{fam.name}: two runs with seed {seed} recorded different episode seeds"
        assert episode_digest(a) == episode_digest(b), f"{fam.name}: two runs with seed {seed} differ"


def recording_round_trip_test(
    fam: WorldFamily, task: Mapping[str, Any], agents: Sequence[str] = (), settings: Mapping[str, Any] | None = None
) -> None:
    """Write an episode, read it back: identical; playback queries agree with the recorded events."""
    episode = play(fam, task, agents, 0, settings)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "episode.json"
        save_episode(path, episode)
        loaded = load_episode(path)
    assert loaded.to_json() == episode.to_json(), f"{fam.name}: the episode changed through save and load"
    by_turn = [e for t in range(episode.last_turn + 1) for e in episode.events_of_turn(t)]
    assert len(by_turn) == len(episode.events), f"{fam.name}: events_of_turn does not partition the events"
    states = [e for e in episode.events if e.kind == "state"]
    if states:
        assert loaded.state_at(episode.last_turn) == states[-1].data["state"], f"{fam.name}: state_at(last) is wrong"


_CHILD = """
import json, sys
from simlab.testing import episode_digest, play
from simlab.worlds import get_family
fam = get_family(sys.argv[1])
task, agents, settings = json.loads(sys.argv[2]), json.loads(sys.argv[3]), json.loads(sys.argv[4])
print(episode_digest(play(fam, task, agents, 0, settings)))
"""


def cross_process_test(
    fam: WorldFamily, task: Mapping[str, Any], agents: Sequence[str] = (), settings: Mapping[str, Any] | None = None
) -> None:
    """Two fresh interpreters with different PYTHONHASHSEED record byte-identical episodes."""
    digests = set()
    for hash_seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        args = [sys.executable, "-c", _CHILD, fam.name, json.dumps(task), json.dumps(list(agents))]
        out = subprocess.run([*args, json.dumps(dict(settings or {}))], env=env, capture_output=True, text=True)
        assert out.returncode == 0, f"{fam.name}: child process failed:\n{out.stderr[-2000:]}"
        digests.add(out.stdout.strip())
    assert len(digests) == 1, f"{fam.name}: episodes differ between processes with different PYTHONHASHSEED"


# ---- rendering ---------------------------------------------------------------------------------------------


def _not_blank(image: Any, what: str) -> None:
    import numpy as np

    pixels = np.asarray(image.convert("RGB"), dtype=float)
    assert pixels.size and pixels.std() > 2.0, f"{what} is blank ({image.size[0]}x{image.size[1]}, one flat colour)"


def render_test(fam: WorldFamily, episode: Episode, max_frames: int = 4) -> None:
    """Everything the family draws renders and is not blank: the pictures of every recorded observation
    (re-rendered from the recording, named as recorded), the turn sheet of the first and last turn, the HTML
    transcript (pictures inline, every message named) and a GIF of the first turns."""
    from PIL import GifImagePlugin, Image

    from simlab.render.animation import write_animation
    from simlab.render.transcript import episode_html
    from simlab.render.turn_sheet import turn_sheet

    views = fam.load_views()
    for event in episode.events:
        if event.kind == "observation":
            pictures = views.observation_images(event.data, episode, event.turn)
            names = list(event.data.get("images") or [])
            assert set(names) <= set(pictures), f"{fam.name}: {event.role}'s pictures {names} gave {sorted(pictures)}"
            for name, picture in pictures.items():
                _not_blank(picture, f"{fam.name}: {event.role}'s picture {name!r} at turn {event.turn}")
    for turn in sorted({0, episode.last_turn}):
        _not_blank(turn_sheet(episode, turn, (800, 500)), f"{fam.name}: the turn sheet of turn {turn}")
    page = episode_html(episode)
    for message in (e for e in episode.events if e.kind == "message"):
        assert html.escape(str(message.data.get("text", "")), quote=True) in page, (
            f"{fam.name}: the transcript leaves out {message.role}'s message at turn {message.turn}"
        )
    if views.scene is not None or views.turn_pictures(episode, 0):
        assert page.count("<img") >= episode.last_turn + 1, f"{fam.name}: the transcript has a turn without a picture"
    last = min(episode.last_turn, max_frames - 1)
    with tempfile.TemporaryDirectory() as tmp:
        path = write_animation(episode, 0, last, Path(tmp) / "episode.gif", size=(320, 240))
        with Image.open(path) as opened:
            assert isinstance(opened, GifImagePlugin.GifImageFile), f"{fam.name}: {path.name} is not a GIF"
            gif = opened
            assert gif.n_frames == last + 1, f"{fam.name}: the GIF has {gif.n_frames} frames for turns 0..{last}"
            for frame in range(gif.n_frames):
                gif.seek(frame)
                _not_blank(gif.convert("RGB"), f"{fam.name}: GIF frame {frame}")


def scene_test(fam: WorldFamily, episode: Episode) -> None:
    """The 3D scene keeps its promises at every turn: item keys are unique, layers have unique names and some
    kinds, which the scene draws (one episode need not show every kind: a perfect robot leaves no
    differences), and the inspector answers a click on every item with a tooltip (an
    :class:`~simlab.core.family.Inspection` or None, never an exception) and inspects at least one."""
    views = fam.load_views()
    if views.scene is None:
        assert not views.layers and views.inspect is None, f"{fam.name}: layers or an inspector without a scene"
        return
    drawn: set[str] = set()
    inspected = 0
    for turn in range(episode.last_turn + 1):
        items = views.scene(episode, turn, overlay=True, style=(views.overlay_styles or ("",))[0])
        keys = [item.key for item in items]
        assert len(keys) == len(set(keys)), f"{fam.name}: turn {turn} draws a key twice"
        drawn.update(item.kind for item in items)
        inspect = views.inspect
        for item in items:
            found = inspect(episode, turn, item.key) if inspect is not None and item.tooltip else None
            inspected += found is not None
            assert found is None or found.title, f"{fam.name}: inspecting {item.key!r} at turn {turn} gave no title"
    names = [layer.name for layer in views.layers]
    assert len(names) == len(set(names)) and all(layer.kinds for layer in views.layers), f"{fam.name}: layers {names}"
    layered = {kind for layer in views.layers for kind in layer.kinds}
    assert not layered or layered & drawn, f"{fam.name}: no layer names a kind the scene draws ({sorted(drawn)})"
    assert views.inspect is None or inspected, f"{fam.name}: the inspector says nothing of any item"


def editor_test(fam: WorldFamily) -> None:
    """A family's editor keeps its promises: a new document saves to a file its editor recognises and opens
    again equal; every palette entry is added or refused with an EditError, and undo puts the document back
    as it was; what the document can play is a task the family validates."""
    from simlab.core.editing import EditError, History

    kind = fam.load_editor()
    if kind is None:
        return
    document = kind.new({})
    history = History(document)
    for entry in document.palette():
        before = entity_states(document)
        try:
            history.push(document.add(entry.name))
        except EditError:
            continue
        assert entity_states(document) != before, f"{fam.name}: adding {entry.name!r} changed nothing"
        history.undo()
        assert entity_states(document) == before, f"{fam.name}: undoing the add of {entry.name!r} left a change"
        history.redo()
    with contextlib.suppress(EditError):  # a document that cannot be played yet says so: it does not crash
        fam.tasks.validate(document.playable())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "document.json"
        document.save(path)
        assert kind.can_open(path), f"{fam.name}: the editor does not recognise the file it saved"
        again = kind.open(path)
        assert entity_states(again) == entity_states(document), f"{fam.name}: a saved document opens different"


def entity_states(document: Any) -> list[tuple[str, Any]]:
    """Every entity of an editor document with its JSON, in list order: what "the same document" compares."""
    return [(entity.id, document.state(entity.id)) for entity in document.entities()]


def document_snapshot(document: Any) -> tuple[list[tuple[str, Any]], dict[str, bytes]]:
    """An editor document's entities (:func:`entity_states`) and the pixels of its agents' pictures: equal
    snapshots before and after a refused edit show that nothing changed, neither the document nor what it
    draws."""
    pictures = {name: image.tobytes() for name, image in document.pictures().items()}
    return entity_states(document), pictures
