"""Live episodes in the app: a world played by agents or people while the window watches it grow.

:class:`LiveSession` steps the runner's episode driver (:class:`~simlab.runner.episode.EpisodeRun`, the same
one the CLI and batch runs use) in a worker thread, so model calls never run on the GUI thread, and hands
each batch of new events to the GUI thread through queued signals; only the GUI thread appends them to its
growing :class:`~simlab.core.episode.Episode`, so panels never read a list another thread is writing. A role
played by ``"human"`` gets a :class:`~simlab.gui.human.HumanAgent`, which blocks the worker until its
:class:`~simlab.gui.human.RoleWindow` sends a reply. :class:`LiveController` ties a session to the main
window (the playback follows the live end, role windows, a Live toolbar) and :class:`NewEpisodeDialog` is
Run > New Episode.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QSpinBox,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from simlab.agents.resolve import make_agents, role_specs
from simlab.core.episode import Episode
from simlab.core.errors import ConfigError, SimlabError
from simlab.core.events import Event
from simlab.core.family import WorldFamily
from simlab.core.plugins import AgentSpec, discover
from simlab.core.world import Agent, Observation, Reply
from simlab.gui.background import collector_paused
from simlab.gui.forms import SettingsForm
from simlab.gui.human import HumanAgent, HumanStopped, RoleWindow
from simlab.gui.playback import PlaybackModel
from simlab.gui.window_host import LiveHost
from simlab.runner.episode import EpisodeRun
from simlab.runner.fork import fork_run
from simlab.worlds import family_names, get_family

HUMAN = "human"
REFRESH_MS = 30  # events arriving closer together than this redraw the panels once


# ---- pause / step / stop, shared with the worker -------------------------------------------------------------


class _Control:
    """Run, pause, single-step and stop, as a condition the worker waits on before each agent action."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.paused = False
        self.stopped = False
        self.budget = 0  # actions allowed while paused (step_once)

    def wait_turn(self) -> bool:
        """Block until the worker may play one action; False when the session is stopping."""
        with self._cond:
            self._cond.wait_for(lambda: self.stopped or not self.paused or self.budget > 0)
            if self.stopped:
                return False
            if self.paused:
                self.budget -= 1
            return True

    def set(self, paused: bool | None = None, budget: int | None = None, stopped: bool | None = None) -> None:
        with self._cond:
            self.paused = self.paused if paused is None else paused
            self.budget = self.budget if budget is None else budget
            self.stopped = self.stopped if stopped is None else stopped
            self._cond.notify_all()


class _Worker(QThread):
    """Plays the episode. Every signal is connected queued, so its slots run on the GUI thread."""

    events = Signal(list, list, int)  # new events, new raw records, actions played so far
    ask = Signal(str, object)  # role, Observation
    over = Signal(object, bool)  # summary, stopped early
    error = Signal(str)

    def __init__(self, session: LiveSession) -> None:
        super().__init__()
        self.session = session
        self.thread_ident: int | None = None

    def run(self) -> None:
        self.thread_ident = threading.get_ident()
        # See gui/background.py: a collection in this thread could free a window's widgets here and deadlock
        # the GUI thread (seen: the fork test hung, this thread collecting while the GUI thread deleted a menu).
        with collector_paused():
            try:
                stopped = self._play()
                self.over.emit(self.session.playing.finish(stopped=stopped).summary, stopped)
            except Exception as exc:  # an agent or the world failed: tell the GUI, never raise in a thread
                self.error.emit(f"{type(exc).__name__}: {exc}")

    def _play(self) -> bool:
        """The runner's episode loop, one action per permit of the controls; True when stopped early."""
        s, playing = self.session, self.session.playing
        self.events.emit(playing.start()[s.replayed :], [], 0)  # a fork's replayed turns are shown already
        while not playing.finished:
            if not s.control.wait_turn():
                return True
            try:
                events, raw = playing.step(lambda seen: self.events.emit([seen], [], playing.steps))
            except HumanStopped:
                return True
            s.act_threads.add(threading.get_ident())
            self.events.emit(events, raw, playing.steps)
        return False


# ---- the session ------------------------------------------------------------------------------------------


class LiveSession(QObject):
    """One episode played live, off the GUI thread, by the runner's own driver (:class:`EpisodeRun`). All
    signals are emitted on the GUI thread. ``humans`` are the person's agents among ``playing``'s agents."""

    eventsAdded = Signal(list)  # the events just appended to ``episode.events``
    finished = Signal(object)  # the Episode, with its summary (outcome "abort" and "stopped" when stopped)
    needsHuman = Signal(str, object)  # role, Observation
    failed = Signal(str)
    stateChanged = Signal(str)  # "ready", "running", "paused", "waiting", "finished", "stopped", "failed"

    def __init__(self, playing: EpisodeRun, humans: Mapping[str, HumanAgent], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.playing = playing  # played by the worker thread only
        self.control = _Control()
        self.act_threads: set[int] = set()  # threads agents' act ran on (never the GUI thread)
        self.steps = 0
        self.state = "ready"
        self._started = False
        self.waiting_for: str | None = None  # the role a person must answer for, while state is "waiting"
        self._worker = _Worker(self)
        self.humans = dict(humans)
        for human in self.humans.values():
            human.ask = self._worker.ask.emit
        recorded = playing.episode
        # The GUI thread's own copy, grown from the worker's signals: panels never read a list being written.
        self.episode = Episode(
            recorded.episode_id,
            recorded.world,
            recorded.seed,
            recorded.task,
            recorded.settings,
            dict(recorded.agents),
            source=dict(recorded.source),
        )
        # A fork's replayed turns are known now: shown at once, so its window opens on the turn it forks at
        # instead of an empty episode redrawn when the worker hands them over.
        prefix = playing.resume_from[1] if playing.resume_from is not None else []
        self.replayed = len(prefix)
        self.episode.events.extend(prefix)
        queued = Qt.ConnectionType.QueuedConnection
        self._worker.events.connect(self._on_events, queued)
        self._worker.ask.connect(self._on_ask, queued)
        self._worker.over.connect(self._on_over, queued)
        self._worker.error.connect(self._on_error, queued)

    # ---- controls (GUI thread) ----------------------------------------------------------------------
    def start(self) -> None:
        """Start playing (once)."""
        if not self._started:
            self._started = True
            self._set_state("paused" if self.control.paused else "running")
            self._worker.start()

    def pause(self) -> None:
        """Hold before the next agent action (a person already asked may still answer)."""
        self.control.set(paused=True, budget=0)
        self._set_state("paused")

    def resume(self) -> None:
        self.control.set(paused=False, budget=0)
        self._set_state("running")

    def step_once(self) -> None:
        """Play exactly one more agent action, then hold."""
        self.control.set(paused=True, budget=1)
        self._set_state("paused")
        self.start()

    def stop(self) -> None:
        """End the episode where it is; ``finished`` still fires with what was recorded (outcome abort)."""
        self.control.set(stopped=True)
        for human in self.humans.values():
            human.cancel()

    def submit(self, role: str, reply: Reply) -> None:
        """A person's reply for ``role``."""
        self.humans[role].submit(reply)
        if self.state == "waiting":
            self._set_state("paused" if self.control.paused else "running")

    def wait(self, msecs: int = 5000) -> bool:
        """Wait for the worker thread to end (tests, closing the window)."""
        return self._worker.wait(msecs)

    @property
    def worker_thread_id(self) -> int | None:
        return self._worker.thread_ident

    @property
    def running(self) -> bool:
        return self._worker.isRunning()

    # ---- from the worker (queued: GUI thread) ---------------------------------------------------------
    @Slot(list, list, int)
    def _on_events(self, events: list[Event], raw: list[dict[str, Any]], steps: int) -> None:
        self.episode.events.extend(events)
        self.episode.raw.extend(raw)
        self.steps = steps
        self.eventsAdded.emit(events)

    @Slot(str, object)
    def _on_ask(self, role: str, observation: Observation) -> None:
        self.waiting_for = role
        self._set_state("waiting")
        self.needsHuman.emit(role, observation)

    @Slot(object, bool)
    def _on_over(self, summary: dict[str, Any], stopped: bool) -> None:
        self.episode.summary = summary
        self._set_state("stopped" if stopped else "finished")
        self.finished.emit(self.episode)

    @Slot(str)
    def _on_error(self, text: str) -> None:
        self._set_state("failed")
        self.failed.emit(text)

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.stateChanged.emit(state)


def make_session(
    world: str,
    seed: int,
    agents: Mapping[str, str] | None = None,
    groups: Sequence[str] = (),
    settings: Mapping[str, Any] | None = None,
    parent: QObject | None = None,
) -> LiveSession:
    """A session on a task generated from ``seed`` (of ``groups`` only, when given). ``agents`` maps a role
    or role group to a spec (``"oracle"``, ``"scripted"``, ``"human"``...); roles not named get the world's
    defaults. Raises ConfigError for an unknown world, role, agent or setting."""
    plan = SessionPlan.of(world, seed, agents, groups, settings)
    return plan.session(generate_task(world, seed, groups), parent)


def generate_task(world: str, seed: int, groups: Sequence[str] = ()) -> dict[str, Any]:
    """The task ``seed`` makes (of ``groups`` only, when given), with the family's default generate options.
    Slow for some families (a rooms task renders both agents' views): the dialog runs it in a thread."""
    family = get_family(world)
    task = family.tasks.generate(1, seed, family.generate_options(), family.check_groups(groups))
    if not task:
        raise ConfigError(f"world {world!r} made no task from seed {seed}")
    return task[0]


@dataclass(frozen=True)
class SessionPlan:
    """A live episode ready but for its task: the family, its checked settings and its agents, built (people
    get a :class:`~simlab.gui.human.HumanAgent`). One plan makes one session."""

    family: WorldFamily
    seed: int
    settings: dict[str, Any]
    specs: dict[str, AgentSpec]
    agents: dict[str, Agent]
    humans: dict[str, HumanAgent]

    @classmethod
    def of(
        cls,
        world: str,
        seed: int,
        agents: Mapping[str, str] | None = None,
        groups: Sequence[str] = (),
        settings: Mapping[str, Any] | None = None,
    ) -> SessionPlan:
        """Check and build everything but the task (ConfigError naming the world, role, agent, group or
        setting)."""
        family = get_family(world)
        family.check_groups(groups)
        checked = family.check_settings(settings or {})
        specs = role_specs(family, _parsed(agents or {}))
        built, humans = _agents(family, specs, checked)
        return cls(family, seed, checked, specs, built, humans)

    def session(self, task: Mapping[str, Any], parent: QObject | None = None) -> LiveSession:
        """The session playing ``task``."""
        episode_id = f"live-{task.get('id', self.family.name)}"
        recorded = {role: spec.spec() for role, spec in self.specs.items()}
        world = self.family.world(dict(task), self.settings)
        playing = EpisodeRun(world, {**self.agents, **self.humans}, episode_id, self.seed, recorded)
        return LiveSession(playing, self.humans, parent)


class TaskMaker(QObject):
    """Generates one task in a thread of its own so the window keeps painting meanwhile; ``made`` (the task) or
    ``failed`` (why) arrive on the GUI thread. A result nobody wants any more (the dialog was cancelled) is
    dropped: a thread cannot be stopped, and generation always ends."""

    made = Signal(object)
    failed = Signal(str)

    def start(self, world: str, seed: int, groups: Sequence[str]) -> None:
        """Generate the task in a thread; ``made`` or ``failed`` follows."""
        threading.Thread(target=self._run, args=(world, seed, list(groups)), daemon=True, name="task-maker").start()

    def _run(self, world: str, seed: int, groups: list[str]) -> None:
        try:
            task = generate_task(world, seed, groups)
        except (SimlabError, ValueError) as exc:
            self.failed.emit(str(exc))
        except Exception as exc:  # a family's bug must reach the person as a message, not kill a thread quietly
            self.failed.emit(f"generating a {world} task failed: {type(exc).__name__}: {exc}")
        else:
            self.made.emit(task)


def fork_session(episode: Episode, turn: int, agents: Mapping[str, str], parent: QObject | None = None) -> LiveSession:
    """A session that continues ``episode`` from ``turn`` (replayed exactly, see :mod:`simlab.runner.fork`)
    with other agents: ``agents`` maps roles or groups to specs, ``"human"`` included; unnamed roles keep
    the agents they had."""
    family = get_family(episode.world)
    specs = role_specs(family, _parsed(agents), base=episode.agents)
    built, humans = _agents(family, specs, dict(episode.settings))
    recorded = {role: spec.spec() for role, spec in specs.items()}
    return LiveSession(fork_run(episode, turn, {**built, **humans}, recorded), humans, parent)


def _parsed(agents: Mapping[str, str]) -> list[AgentSpec]:
    return [AgentSpec.parse(f"{key}={spec}") for key, spec in agents.items()]


def _agents(
    family: WorldFamily, specs: Mapping[str, AgentSpec], settings: Mapping[str, Any]
) -> tuple[dict[str, Agent], dict[str, HumanAgent]]:
    """(the built agents, a person's agent for every role whose spec is ``human``)."""
    humans = {role: HumanAgent(role) for role, spec in specs.items() if spec.name == HUMAN}
    others = {role: spec for role, spec in specs.items() if spec.name != HUMAN}
    return make_agents(family, others, settings), humans


def default_specs(world: str) -> dict[str, str]:
    """Role -> the world's default agent spec."""
    return {role: spec.spec() for role, spec in role_specs(get_family(world), []).items()}


def agent_choices(family: WorldFamily, role: str) -> list[str]:
    """The agents that can play ``role``: the family's built-in agents that take it (each factory is asked),
    ``human``, then every plugin agent type with its argument to fill in (``openai:MODEL``)."""
    settings = {**family.default_settings, "world": family.name, "agent": {}}
    out = []
    for name, factory in family.agents.items():
        try:
            factory(role, None, settings)
        except (ValueError, TypeError, SimlabError):
            continue  # this agent plays other roles (a director-only agent for the builder)
        out.append(name)
    out.append(HUMAN)
    out += [f"{name}:MODEL" for name in sorted(discover().agent_names())]
    return out


# ---- following a growing episode ---------------------------------------------------------------------------


class LiveFollower(QObject):
    """Keeps a :class:`PlaybackModel` on a growing episode: after new events the panels redraw (the episode is
    set again) and the playback moves to the new last turn when it was at the old one, else stays put."""

    def __init__(self, playback: PlaybackModel, session: LiveSession, delay_ms: int = REFRESH_MS) -> None:
        super().__init__(playback)
        self.playback, self.episode = playback, session.episode
        self._last = self.episode.last_turn
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self.refresh)
        session.eventsAdded.connect(lambda _events: self._timer.isActive() or self._timer.start())
        session.finished.connect(lambda _episode: self.refresh())
        playback.set_episode(self.episode)

    def refresh(self) -> None:
        """Redraw every panel on the grown episode; follow the live end when the user is at it."""
        self._timer.stop()
        if self.playback.episode is not self.episode:
            return  # the user opened another episode: leave it alone
        turn = self.playback.turn
        follow = turn >= self._last
        self.playback.set_episode(self.episode)
        self.playback.seek(self.episode.last_turn if follow else turn)
        self._last = self.episode.last_turn


# ---- the window side ------------------------------------------------------------------------------------


class LiveController(QObject):
    """A live session shown in the main window: playback following, role windows, a Live toolbar."""

    def __init__(self, host: LiveHost, session: LiveSession) -> None:
        super().__init__(host.window())
        self.host, self.session = host, session
        session.setParent(self)
        self.follower = LiveFollower(host.playback, session)
        self.role_windows: dict[str, RoleWindow] = {}
        self.toolbar = self._make_toolbar()
        session.needsHuman.connect(self.ask_human)
        session.stateChanged.connect(self._on_state)
        session.finished.connect(self._on_finished)
        session.failed.connect(lambda text: host.show_error(f"The live episode failed:\n{text}"))
        if session.humans:  # a person at this screen sees only what their roles were given, until the end
            host.set_players(session.humans)
        self._on_state(session.state)

    def _make_toolbar(self) -> QToolBar:
        old = self.host.window().findChild(QToolBar, "toolbar-live")
        if old is not None:
            self.host.removeToolBar(old)
            old.deleteLater()
        bar = QToolBar("Live", self.host.window())
        bar.setObjectName("toolbar-live")
        self.state_label = QLabel()
        bar.addWidget(QLabel(f" {self.session.episode.episode_id}: "))  # a live id says "live-" itself
        bar.addWidget(self.state_label)
        self.live_actions = {
            "pause": bar.addAction("Pause", self.session.pause),
            "resume": bar.addAction("Resume", self.session.resume),
            "step": bar.addAction("Step One Action", self.session.step_once),
            "stop": bar.addAction("Stop", self.session.stop),
            "save": bar.addAction("Save Episode...", self._ask_save),
        }
        self.host.addToolBar(bar)
        return bar

    def ask_human(self, role: str, observation: Observation) -> None:
        """Show (or bring back) the role window of ``role`` with its new observation: all it is told, as a
        model in the role is sent it."""
        if role not in self.role_windows:
            episode = self.session.episode
            win = RoleWindow(role, get_family(episode.world), self.host.window(), episode.settings)
            win.submitted.connect(lambda reply, r=role: self.session.submit(r, reply))
            self.role_windows[role] = win
        self.role_windows[role].show_observation(observation)

    def _on_state(self, state: str) -> None:
        over = state in ("finished", "stopped", "failed")
        if over and self.session.humans:
            self.host.set_players(None)  # the episode is over: the whole world may be seen
        if over:
            outcome = str(self.session.episode.summary.get("outcome") or state)
            for win in self.role_windows.values():
                win.end(outcome)
        who = f" for {self.session.waiting_for}" if state == "waiting" else ""
        self.state_label.setText(f"{state}{who}, {self.session.steps} actions ")
        a = self.live_actions
        a["pause"].setEnabled(not over and state != "paused")
        a["resume"].setEnabled(not over and state == "paused")
        a["step"].setEnabled(not over)
        a["stop"].setEnabled(not over)
        a["save"].setEnabled(over and state != "failed")

    def _on_finished(self, episode: Episode) -> None:
        outcome = episode.summary.get("outcome", "?")
        self.host.statusBar().showMessage(f"Episode {episode.episode_id} ended: {outcome}", 10000)
        for win in self.role_windows.values():
            win.end(outcome)

    def _ask_save(self) -> None:
        name = f"{self.session.episode.episode_id}.json"
        path, _ = QFileDialog.getSaveFileName(self.host.window(), "Save episode", name, "Episodes (*.json)")
        if path:
            self.save(path)

    def save(self, path: str | Path) -> bool:
        """Write the (finished or stopped) episode as an episode file, never over a recording (the guard every
        export uses)."""
        from simlab.core.exports import export_file
        from simlab.core.recording import save_episode

        try:
            export_file(Path(path), lambda out: save_episode(out, self.session.episode))
        except (OSError, SimlabError) as exc:
            return self.host.show_error(f"Could not write {path}: {exc}")
        return True

    def close(self) -> None:
        """Stop the session, close its role windows and take its toolbar away (the window is closing, another
        run is opened or another session starts): nothing of it stays in the window."""
        self.session.stop()
        self.session.wait(5000)
        for win in self.role_windows.values():
            win.close()
        self.host.removeToolBar(self.toolbar)
        self.toolbar.deleteLater()
        self.host.set_players(None)


# ---- Run > New Episode --------------------------------------------------------------------------------------


class NewEpisodeDialog(QDialog):
    """Choose a world, a task seed (and its group), the world's settings and an agent spec per role; the
    settings form is made from the family's typed settings, so every family gets its own without a line
    here. ``session`` after accept."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New live episode")
        self.session: LiveSession | None = None
        self.world = QComboBox()
        self.world.addItems(family_names())
        self.seed = QSpinBox()
        self.seed.setRange(0, 1_000_000)
        self.group = QComboBox()
        self.group_label = QLabel("Group")
        self.settings_box = QVBoxLayout()
        self.settings_form: SettingsForm | None = None
        self.form = QFormLayout()
        self.role_edits: dict[str, QComboBox] = {}
        layout = QVBoxLayout(self)
        top = QFormLayout()
        top.addRow("World", self.world)
        top.addRow("Task seed", self.seed)
        top.addRow(self.group_label, self.group)
        layout.addLayout(top)
        layout.addLayout(self.settings_box)
        layout.addWidget(QLabel('Agent per role (pick one, or type NAME[:ARG]; "human" plays that role yourself):'))
        layout.addLayout(self.form)
        self.status = QLabel("")
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)  # busy: how long generation takes is not known
        self.progress.hide()
        layout.addWidget(self.status)
        layout.addWidget(self.progress)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.plan: SessionPlan | None = None
        self.maker = TaskMaker()  # no parent: it outlives a dialog closed while its thread still works
        self.maker.made.connect(self._on_made)
        self.maker.failed.connect(self._on_failed)
        self.world.currentTextChanged.connect(self._on_world)
        self._on_world(self.world.currentText())

    def _on_world(self, world: str) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        if self.settings_form is not None:
            self.settings_box.removeWidget(self.settings_form)
            self.settings_form.hide()
            self.settings_form.deleteLater()
            self.settings_form = None
        try:
            family = get_family(world)
        except SimlabError as exc:
            QMessageBox.warning(self, "New live episode", str(exc))
            return
        self.role_edits = {role: agent_combo(family, role, spec) for role, spec in default_specs(world).items()}
        for role, edit in self.role_edits.items():
            self.form.addRow(role, edit)
        self.group.clear()
        self.group.addItems(["any", *family.tasks.groups])
        self.group.setEnabled(bool(family.tasks.groups))
        self.group_label.setText(family.tasks.group_label.capitalize())
        self.settings_form = SettingsForm(family.settings, f"{family.name} settings", skip=("repeat",))
        self.settings_box.addWidget(self.settings_form)

    def _inputs(self) -> tuple[str, int, dict[str, str], list[str], dict[str, Any]]:
        settings = self.settings_form.values() if self.settings_form is not None else {}
        agents = {role: edit.currentText().strip() for role, edit in self.role_edits.items()}
        group = self.group.currentText()
        return self.world.currentText(), self.seed.value(), agents, [] if group in ("", "any") else [group], settings

    def make_session(self) -> LiveSession:
        """The session the dialog describes, made here and now (ConfigError when a spec or setting is wrong)."""
        return make_session(*self._inputs())

    def accept(self) -> None:
        """Check the form at once, then generate the task in a thread (the window keeps painting; a rooms task
        takes a second or two) and close with the session when it is made."""
        if self.progress.isVisibleTo(self):
            return  # a task is being made: OK is disabled, and a second start would make two sessions
        world, seed, agents, groups, settings = self._inputs()
        try:
            self.plan = SessionPlan.of(world, seed, agents, groups, settings)
        except (SimlabError, ValueError) as exc:
            QMessageBox.warning(self, "New live episode", str(exc))
            return
        self._generating(True, f"Generating the {world} task of seed {seed}...")
        self.maker.start(world, seed, groups)

    def _on_made(self, task: dict[str, Any]) -> None:
        if not self.isVisible() or self.plan is None:
            return  # cancelled meanwhile
        try:
            self.session = self.plan.session(task)
        except (SimlabError, ValueError) as exc:
            self._on_failed(str(exc))
            return
        self._generating(False, "")
        super().accept()

    def _on_failed(self, text: str) -> None:
        self._generating(False, "")
        if self.isVisible():
            QMessageBox.warning(self, "New live episode", text)

    def _generating(self, busy: bool, text: str) -> None:
        self.progress.setVisible(busy)
        self.status.setText(text)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not busy)
        form = [self.settings_form] if self.settings_form is not None else []
        for widget in (self.world, self.seed, self.group, *form, *self.role_edits.values()):
            widget.setEnabled(not busy)  # the plan is made: a change now would be silently ignored


class AgentsDialog(QDialog):
    """Who plays each role: an editable list per role of the agents that can (``specs`` prefilled), a note
    above them, OK and Cancel."""

    def __init__(self, title: str, family: WorldFamily, specs: Mapping[str, str], note: str, parent: QWidget | None):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.role_edits = {role: agent_combo(family, role, spec) for role, spec in specs.items()}
        form = QFormLayout()
        for role, edit in self.role_edits.items():
            form.addRow(role, edit)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(note))
        layout.addLayout(form)
        layout.addWidget(buttons)

    def agents(self) -> dict[str, str]:
        """Role -> the spec chosen for it."""
        return {role: edit.currentText().strip() for role, edit in self.role_edits.items()}


class ForkDialog(AgentsDialog):
    """Who plays each role from a turn on: the episode's agents prefilled, the valid ones offered."""

    def __init__(self, episode: Episode, turn: int, parent: QWidget | None = None) -> None:
        note = f"Agents from turn {turn} on (pick one, or type NAME[:ARG]; human plays it yourself):"
        title = f"Fork {episode.episode_id} from turn {turn}"
        super().__init__(title, get_family(episode.world), episode.agents, note, parent)

    def specs_text(self) -> str:
        """``ROLE=SPEC, ...`` as the window's ``fork`` takes it."""
        return ", ".join(f"{role}={spec}" for role, spec in self.agents().items())


def agent_combo(family: WorldFamily, role: str, spec: str) -> QComboBox:
    """An editable list of the agents that can play ``role``, on ``spec``; a typed spec (with an argument)
    is checked when the dialog is accepted."""
    combo = QComboBox()
    combo.setEditable(True)
    combo.addItems(agent_choices(family, role))
    combo.setCurrentText(spec)
    combo.setToolTip(f"Who plays {role}: a built-in agent, human (you), or a plugin agent with its argument")
    return combo


def start_live(window: LiveHost, session: LiveSession) -> LiveController:
    """Show ``session`` in ``window`` (stopping a live session already shown there) and start it."""
    previous = getattr(window, "live", None)
    if isinstance(previous, LiveController):
        previous.close()
    controller = LiveController(window, session)
    session.start()
    return controller
