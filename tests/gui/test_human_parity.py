"""The app shows only what is true: a person playing a role is shown exactly what a model in that role is sent
at that turn (the role's system prompt, the observation's text and its pictures), no more, for every registered
world family; and while people play, the main window shows no mistake the engine judged against the hidden
target, in the dialogue or on the timeline."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from PIL import Image
from PySide6.QtGui import QImage, QPixmap, QTextDocumentFragment
from PySide6.QtWidgets import QCheckBox, QGroupBox, QLabel, QPushButton, QToolBar, QWidget

from simlab.core.events import Event
from simlab.core.family import ReplyForm, WorldFamily
from simlab.core.world import Observation, Reply
from simlab.gui.human import RoleWindow
from simlab.gui.live import LiveSession, SessionPlan, generate_task
from simlab.gui.main_window import MainWindow
from simlab.render.formatting import event_line
from simlab.runner.episode import EpisodeRun
from simlab.worlds import family_names, get_family
from simlab.worlds.blocks.model import COLORS
from simlab.worlds.boards.text import EMPTY_LISTING

SEED = 0
ASKS = 3  # the person's turns checked per role: a reply's outcome is told by the second, and it stays fast
WAIT_MS = 20_000
HEADINGS = (
    "Your instructions (as a model is given them; the form below writes its reply format):",
    "What you are told:",
)
REPLY_AREA_WORDS = {"", "Send", "Your move", "Pick a verified candidate (fills the form)"}  # the app's, not told


@functools.cache
def task_of(name: str) -> dict[str, Any]:
    """The task of ``SEED`` (made once: a rooms task renders both agents' views)."""
    return generate_task(name, SEED)


def asks_of(session: LiveSession) -> list[tuple[str, Observation]]:
    asks: list[tuple[str, Observation]] = []
    session.needsHuman.connect(lambda role, observation: asks.append((role, observation)))
    return asks


class Shadow:
    """The default (scripted) agent of the role a person plays, in a run of its own: what it was given and
    what it replied, turn by turn, to hand the person's window the same replies."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.seen: list[tuple[Observation, Reply]] = []

    def reset(self, seed: int, role: str, task: Mapping[str, Any]) -> None:
        self.agent.reset(seed, role, task)

    def act(self, observation: Observation) -> Reply:
        reply = self.agent.act(observation)
        self.seen.append((observation, reply))
        return reply


def scripted_run(name: str, role: str, episode_id: str) -> tuple[EpisodeRun, Shadow]:
    """The episode a person's session should follow: the same task, seed, id and agents, all scripted."""
    plan = SessionPlan.of(name, SEED)
    shadow = Shadow(plan.agents[role])
    world = plan.family.world(task_of(name), plan.settings)
    specs = {r: spec.spec() for r, spec in plan.specs.items()}
    playing = EpisodeRun(world, {**plan.agents, role: shadow}, episode_id, SEED, specs)
    playing.start()
    return playing, shadow


def same_pixels(pixmap: QPixmap, image: Image.Image) -> bool:
    shown = pixmap.toImage().convertToFormat(QImage.Format.Format_RGBA8888)
    sent = image.convert("RGBA")
    return (shown.width(), shown.height()) == sent.size and bytes(shown.constBits()) == sent.tobytes()


def texts_in(widget: QWidget) -> set[str]:
    """Every text ``widget``'s labels, buttons, boxes and tick boxes show."""
    out = {w.text() for w in widget.findChildren(QLabel) + widget.findChildren(QPushButton)}
    out |= {w.text() for w in widget.findChildren(QCheckBox)}
    return out | {w.title() for w in widget.findChildren(QGroupBox)}


def form_words(form: ReplyForm) -> set[str]:
    """The words the family's reply form puts on the screen."""
    words = {form.message or "", form.reasoning or "", *(label for label, _action in form.presets)}
    words |= {f.label for f in form.fields}
    if form.answers is not None:
        words |= {f"{form.answers.label}:", *form.answers.choices}
    return words


def assert_shows_exactly(win: RoleWindow, family: WorldFamily, observation: Observation, settings: Any) -> None:
    """The role window shows the model's instructions, text and pictures at this turn, and nothing more."""
    role = observation.role
    assert win.isVisible()
    assert win.instructions.toPlainText() == family.protocol(role, observation, settings).system
    assert win.text.toPlainText() == observation.text
    shown = win.pictures()
    assert [name for name, _pixmap in shown] == list(observation.images)
    for name, pixmap in shown:
        assert same_pixels(pixmap, observation.images[name]), f"{family.name} {role}: picture {name} differs"
    labels = [w for w in win.findChildren(QLabel) if w.isVisibleTo(win) and not win.reply_area.isAncestorOf(w)]
    outside = sorted(w.text() for w in labels)
    assert outside == sorted([f"You are {role} - turn {observation.turn}: your move", *HEADINGS])
    extra = texts_in(win.reply_area) - form_words(family.reply_form(role, observation)) - REPLY_AREA_WORDS
    assert not extra, f"{family.name} {role}: the reply form shows {extra}"


def play_as_person(window: MainWindow, qtbot, name: str, role: str) -> None:
    """A person plays ``role`` with the scripted agent's replies; at each of their turns the window shows what
    the scripted run's model would be sent, and the episode is the scripted one."""
    family = get_family(name)
    session = SessionPlan.of(name, SEED, {role: "human"}).session(task_of(name))
    asks = asks_of(session)
    scripted, shadow = scripted_run(name, role, session.episode.episode_id)
    controller = window.start_live(session)
    for k in range(ASKS):
        while len(shadow.seen) <= k and not scripted.finished:
            scripted.step()
        if len(shadow.seen) <= k:
            break  # the scripted episode ended first
        qtbot.waitUntil(lambda k=k: len(asks) > k, timeout=WAIT_MS)
        observation, reply = shadow.seen[k]
        asked = asks[k][1]  # what the session's world gave the person: the scripted run's, to the letter
        assert asked.text == observation.text and list(asked.images) == list(observation.images)
        win = controller.role_windows[role]
        assert_shows_exactly(win, family, asked, session.episode.settings)
        win.send(reply)
    assert shadow.seen, f"{name}: {role} never played"
    if scripted.finished:  # the others end the episode after the person's last reply: the session plays it out
        qtbot.waitUntil(lambda: session.state == "finished", timeout=WAIT_MS)
    else:
        session.stop()
        qtbot.waitUntil(lambda: session.state in ("stopped", "finished"), timeout=WAIT_MS)
    played, expected = session.episode.events, scripted.episode.events
    assert played[: len(expected)] == expected, f"{name}: the person's episode left the scripted one"


@pytest.mark.parametrize("name", family_names())
def test_a_person_is_shown_exactly_what_a_model_in_their_role_is_sent(name, window, qtbot):
    for role in get_family(name).roles:
        play_as_person(window, qtbot, name, role)


# ---- the main window while people play -----------------------------------------------------------------------


def wrong_colour(observation: Observation) -> Reply:
    """A verified candidate's place and size in another colour: the engine takes it, the target says no."""
    move = dict(next(m for m in observation.data["candidates"] if m["action"] == "place"))
    taken = {m["block"] for m in observation.data["candidates"] if m.get("cell") == move["cell"]}
    move["block"] = next(c[0] + move["block"][1] for c in COLORS if c[0] + move["block"][1] not in taken)
    return Reply(action=move)


def stray_washer(observation: Observation) -> Reply:
    """Code that runs but puts a piece where the target has none."""
    assert EMPTY_LISTING in observation.text and "\nNone" not in observation.text  # an empty board, in words
    return Reply(action={"status": "code", "details": "put(board, 'washer', 'red', 1, 1)"})


@pytest.mark.parametrize(
    ("world", "role", "settings", "bad_reply", "mistake"),
    [
        ("blocks", "builder", {"turns": 4}, wrong_colour, "wrong-colour"),
        ("boards", "robot", {}, stray_washer, "wrong-place"),
    ],
)
def test_while_a_person_plays_a_mistake_judged_against_the_target_is_shown_nowhere(
    window, qtbot, world: str, role: str, settings: dict[str, Any], bad_reply: Callable[..., Reply], mistake: str
):
    session = SessionPlan.of(world, SEED, {role: "human"}, (), settings).session(task_of(world))
    asks = asks_of(session)
    controller = window.start_live(session)
    qtbot.waitUntil(lambda: len(asks) == 1, timeout=WAIT_MS)
    bar = window.findChild(QToolBar, "toolbar-live")
    assert not any("Live live" in label.text() for label in bar.findChildren(QLabel))  # the id says it once
    person = controller.role_windows[role]
    person.send(bad_reply(asks[0][1]))
    qtbot.waitUntil(lambda: len(asks) == 2, timeout=WAIT_MS)
    result = next(e for e in session.episode.events if e.kind == "result")
    assert result.data["ok"] and result.data["mistake"] == mistake  # the engine took it; only the target objects
    assert mistake not in person.visible_text() and "MISTAKE" not in person.visible_text()
    dialogue = window.dialogue.browser
    qtbot.waitUntil(lambda: result.data["message"] in dialogue.toPlainText(), timeout=WAIT_MS)
    assert mistake not in dialogue.toPlainText() and "MISTAKE" not in dialogue.toPlainText()
    window.playback.seek(result.turn)
    shown = window.agents.panel(role).sheet.content  # the person's own panel: what was done, its result as told
    own = QTextDocumentFragment.fromHtml(shown.message).toPlainText()
    assert result.data["message"][:20] in own and "MISTAKE" not in own and mistake not in own
    scrubber = window.timeline.scrubber
    assert result.turn not in scrubber.error_turns() and "score" not in scrubber.tooltip_for_turn(result.turn)
    actions = window.actions_by_name
    jumps = (window.timeline.error_button, actions["next_error"], actions["previous_error"])
    assert not any(j.isEnabled() for j in jumps)  # a jump to a mistake would tell where it is
    session.stop()
    qtbot.waitUntil(lambda: session.state == "stopped", timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "MISTAKE" in dialogue.toPlainText(), timeout=WAIT_MS)  # over: the researcher's view
    assert dialogue.toPlainText().count(mistake) == 1 and result.turn in scrubber.error_turns()
    assert actions["next_error"].isEnabled()


def test_a_mistake_is_named_once_and_not_at_all_as_told():
    event = Event(
        "result", 3, None, {"ok": True, "message": "placed", "mistake": "wrong-colour", "taxonomy": "wrong-colour"}
    )
    assert event_line(event).plain() == "MISTAKE [wrong-colour]: placed"
    assert event_line(event, as_told=True).plain() == "ok: placed"
    tagged = Event("result", 3, None, {"ok": True, "message": "placed", "taxonomy": "correct"})
    assert event_line(tagged).plain() == "ok: placed [correct]" and event_line(tagged, as_told=True).plain() == (
        "ok: placed"
    )


def test_an_empty_boards_board_is_said_in_words_to_both_roles():
    family = get_family("boards")
    world = family.world(task_of("boards"), family.check_settings({}))
    world.reset(SEED)
    for role in family.roles:
        text = world.observe(role).text
        assert EMPTY_LISTING in text and "None" not in text.splitlines(), role


def test_while_a_person_plays_the_dialogue_shows_only_what_their_role_is_told(window, qtbot):
    """A boards programmer played by a person sees the robot's messages, never its code or its results."""
    session = SessionPlan.of("boards", SEED, {"programmer": "human"}, (), {}).session(task_of("boards"))
    asks = asks_of(session)
    window.start_live(session)
    qtbot.waitUntil(lambda: len(asks) == 1, timeout=WAIT_MS)
    window.live.role_windows["programmer"].send(Reply(message="Place a red washer in row 1, column 1."))
    qtbot.waitUntil(lambda: len(asks) == 2, timeout=WAIT_MS)
    code = next(e for e in session.episode.events if e.kind == "action" and e.role == "robot")
    browser = window.dialogue.browser
    qtbot.waitUntil(lambda: "Place a red washer in row 1, column 1." in browser.toPlainText(), timeout=WAIT_MS)
    assert str(code.data.get("text") or code.data["action"].get("details")) not in browser.toPlainText()
    session.stop()
    qtbot.waitUntil(lambda: session.state == "stopped", timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "put(board" in window.dialogue.browser.toPlainText(), timeout=WAIT_MS)
