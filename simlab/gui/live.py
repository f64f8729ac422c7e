"""Live episodes in the app: a world played by agents or people while the window watches it grow.

:class:`LiveSession` runs the AEC loop of :func:`simlab.runner.episode.run_episode` in a worker thread (model
calls never run on the GUI thread) and hands each batch of new events to the GUI thread through queued
signals; only the GUI thread appends them to the growing :class:`~simlab.core.episode.Episode`, so panels
never read a list another thread is writing. A role played by ``"human"`` gets a
:class:`~simlab.gui.human.HumanAgent`, which blocks the worker until its :class:`~simlab.gui.human.RoleWindow`
sends a reply. :class:`LiveController` ties a session to the main window (the playback follows the live end,
role windows, a Live toolbar) and :class:`NewEpisodeDialog` is Run > New Episode.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QSpinBox,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from simlab.core.episode import Episode
from simlab.core.errors import ConfigError, SimlabError
from simlab.core.events import Event
from simlab.core.plugins import AgentSpec
from simlab.core.seeding import stable_seed
from simlab.core.world import Agent, Observation, Reply, World
from simlab.gui.human import HumanAgent, HumanStopped, RoleWindow
from simlab.gui.playback import PlaybackModel
from simlab.runner.episode import episode_seed
from simlab.worlds import FAMILIES, get_family

if TYPE_CHECKING:
    from simlab.gui.main_window import MainWindow

HUMAN = "human"
MAX_STEPS = 10_000
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
        try:
            stopped = self._play()
            summary = self.session.world.summary()
            if stopped:
                summary = {**summary, "outcome": "abort", "stopped": True}
            self.over.emit(summary, stopped)
        except Exception as exc:  # an agent or the world failed: tell the GUI, never raise in a thread
            self.error.emit(f"{type(exc).__name__}: {exc}")

    def _play(self) -> bool:
        """The AEC loop; True when it stopped before the world finished."""
        s, world = self.session, self.session.world
        seed = s.episode.seed
        self.events.emit(world.reset(seed) if s.prefix is None else list(s.prefix[1]), [], 0)
        for role, agent in s.agents.items():
            agent.reset(stable_seed("agent", seed, role), role, world.task)
        steps = 0
        while not world.finished:
            if not s.control.wait_turn():
                return True
            role = world.agent_selection
            assert role is not None
            observation = world.observe(role)
            self.events.emit([observation.to_event()], [], steps)
            try:
                reply = s.agents[role].act(observation)
            except HumanStopped:
                return True
            s.act_threads.add(threading.get_ident())
            raw = [{"turn": observation.turn, "role": role, **dict(r)} for r in reply.raw]
            steps += 1
            self.events.emit(world.step(reply), raw, steps)
            if steps >= MAX_STEPS:
                raise RuntimeError(f"the world did not finish within {MAX_STEPS} steps")
        return False


# ---- the session ------------------------------------------------------------------------------------------


class LiveSession(QObject):
    """One episode played live, off the GUI thread. All signals are emitted on the GUI thread.

    ``agents`` are the built agents; every role in ``humans`` gets a :class:`HumanAgent` instead. ``specs``
    (role -> spec string, ``"human"`` for people) is recorded in the episode like ``run_episode`` does.
    """

    eventsAdded = Signal(list)  # the events just appended to ``episode.events``
    finished = Signal(object)  # the Episode, with its summary (outcome "abort" and "stopped" when stopped)
    needsHuman = Signal(str, object)  # role, Observation
    failed = Signal(str)
    stateChanged = Signal(str)  # "ready", "running", "paused", "waiting", "finished", "stopped", "failed"

    def __init__(
        self,
        world: World,
        agents: Mapping[str, Agent],
        episode_id: str,
        run_seed: int,
        specs: Mapping[str, str],
        humans: Sequence[str] = (),
        parent: QObject | None = None,
        prefix: tuple[int, list[Event]] | None = None,
    ) -> None:
        super().__init__(parent)
        self.world = world
        self.prefix = prefix  # (seed, events) of a fork: the world is already advanced, not to be reset
        self.control = _Control()
        self.act_threads: set[int] = set()  # threads agents' act ran on (never the GUI thread)
        self.steps = 0
        self.state = "ready"
        self._started = False
        self.waiting_for: str | None = None  # the role a person must answer for, while state is "waiting"
        self._worker = _Worker(self)
        self.humans = {role: HumanAgent(role, self._worker.ask.emit) for role in humans}
        self.agents: dict[str, Agent] = {**dict(agents), **self.humans}
        missing = [r for r in world.roles if r not in self.agents]
        if missing:
            raise ConfigError(f"no agent for role(s) {', '.join(missing)}")
        self.episode = Episode(
            episode_id=episode_id,
            world=world.family,
            seed=prefix[0] if prefix is not None else episode_seed(run_seed, episode_id),
            task=world.task,
            settings=world.settings,
            agents=dict(specs),
        )
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
        summary["agents"] = dict(self.episode.agents)
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
    task: str | None = None,
    settings: Mapping[str, Any] | None = None,
    parent: QObject | None = None,
) -> LiveSession:
    """A session on a task generated from ``seed`` (rooms: one question of ``task``). ``agents`` maps a role
    or role group to a spec (``"oracle"``, ``"scripted"``, ``"human"``...); roles not named get the world's
    defaults. Raises ConfigError for an unknown world, role, agent or setting."""
    family = get_family(world)
    settings = dict(settings or {})
    family.check_settings(settings)
    specs = default_specs(world)
    for key, spec in (agents or {}).items():
        for role in family.expand_role(key):
            specs[role] = spec.strip()
    humans = [role for role, spec in specs.items() if spec == HUMAN]
    others = {role: AgentSpec.parse(f"{role}={spec}") for role, spec in specs.items() if spec != HUMAN}
    from simlab.agents.resolve import make_agents

    built = make_agents(family, others, settings)
    task_json = family.generate(1, seed, {"task": task} if task else None)[0]
    episode_id = f"live-{task_json.get('id', world)}"
    return LiveSession(family.world(task_json, settings), built, episode_id, seed, specs, humans, parent)


def fork_session(episode: Episode, turn: int, agents: Mapping[str, str], parent: QObject | None = None) -> LiveSession:
    """A session that continues ``episode`` from ``turn`` (replayed exactly, see :mod:`simlab.runner.fork`)
    with other agents: ``agents`` maps roles or groups to specs, ``"human"`` included; unnamed roles keep
    the agents they had."""
    from simlab.agents.resolve import make_agents
    from simlab.runner.fork import fork_world

    family = get_family(episode.world)
    specs = dict(episode.agents) or default_specs(episode.world)
    for key, spec in agents.items():
        for role in family.expand_role(key):
            specs[role] = spec.strip()
    humans = [role for role, spec in specs.items() if spec == HUMAN]
    others = {role: AgentSpec.parse(f"{role}={spec}") for role, spec in specs.items() if spec != HUMAN}
    world, prefix = fork_world(episode, turn)
    built = make_agents(family, others, dict(episode.settings))
    fork_id = f"{episode.episode_id}-fork{turn}"
    session = LiveSession(world, built, fork_id, 0, specs, humans, parent, prefix=(episode.seed, prefix))
    session.episode.source = {"forked_from": episode.episode_id, "turn": turn}
    return session


def default_specs(world: str) -> dict[str, str]:
    """Role -> the world's default agent spec."""
    from simlab.agents.resolve import role_specs

    return {role: spec.spec() for role, spec in role_specs(get_family(world), []).items()}


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

    def __init__(self, window: MainWindow, session: LiveSession) -> None:
        super().__init__(window)
        self.window, self.session = window, session
        session.setParent(self)
        self.follower = LiveFollower(window.playback, session)
        self.role_windows: dict[str, RoleWindow] = {}
        self.toolbar = self._make_toolbar()
        session.needsHuman.connect(self.ask_human)
        session.stateChanged.connect(self._on_state)
        session.finished.connect(self._on_finished)
        session.failed.connect(lambda text: window.show_error(f"The live episode failed:\n{text}"))
        if session.humans:  # the window is the experimenter's view: do not put the target in a player's sight
            window.world.target_mode.setCurrentText("Hidden")
        self._on_state(session.state)

    def _make_toolbar(self) -> QToolBar:
        old = self.window.findChild(QToolBar, "toolbar-live")
        if old is not None:
            self.window.removeToolBar(old)
            old.deleteLater()
        bar = QToolBar("Live", self.window)
        bar.setObjectName("toolbar-live")
        self.state_label = QLabel()
        bar.addWidget(QLabel(f" Live {self.session.episode.episode_id}: "))
        bar.addWidget(self.state_label)
        self.live_actions = {
            "pause": bar.addAction("Pause", self.session.pause),
            "resume": bar.addAction("Resume", self.session.resume),
            "step": bar.addAction("Step One Action", self.session.step_once),
            "stop": bar.addAction("Stop", self.session.stop),
            "save": bar.addAction("Save Episode...", self._ask_save),
        }
        self.window.addToolBar(bar)
        return bar

    def ask_human(self, role: str, observation: Observation) -> None:
        """Show (or bring back) the role window of ``role`` with its new observation."""
        if role not in self.role_windows:
            win = RoleWindow(role, self.window)
            win.submitted.connect(lambda reply, r=role: self.session.submit(r, reply))
            self.role_windows[role] = win
        self.role_windows[role].show_observation(observation)

    def _on_state(self, state: str) -> None:
        over = state in ("finished", "stopped", "failed")
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
        self.window.statusBar().showMessage(f"Live episode {episode.episode_id} ended: {outcome}", 10000)
        for win in self.role_windows.values():
            win.header.setText(f"You played {win.role}. The episode is over: {outcome}.")

    def _ask_save(self) -> None:
        name = f"{self.session.episode.episode_id}.json"
        path, _ = QFileDialog.getSaveFileName(self.window, "Save episode", name, "Episodes (*.json)")
        if path:
            self.save(path)

    def save(self, path: str | Path) -> bool:
        """Write the (finished or stopped) episode as an episode file."""
        from simlab.core.recording import save_episode

        try:
            save_episode(path, self.session.episode)
        except (OSError, SimlabError) as exc:
            return self.window.show_error(f"Could not write {path}: {exc}")
        return True

    def close(self) -> None:
        """Stop the session and close its role windows (the window is closing or another session starts)."""
        self.session.stop()
        self.session.wait(5000)
        for win in self.role_windows.values():
            win.close()


# ---- Run > New Episode --------------------------------------------------------------------------------------


class NewEpisodeDialog(QDialog):
    """Choose a world, a task seed (and a rooms task) and an agent spec per role; ``session`` after accept."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New live episode")
        self.session: LiveSession | None = None
        self.world = QComboBox()
        self.world.addItems(sorted(FAMILIES))
        self.seed = QSpinBox()
        self.seed.setRange(0, 1_000_000)
        self.task = QComboBox()
        self.turns = QSpinBox()
        self.turns.setRange(1, 100)
        self.turns.setValue(20)
        self.form = QFormLayout()
        self.role_edits: dict[str, QLineEdit] = {}
        layout = QVBoxLayout(self)
        top = QFormLayout()
        top.addRow("World", self.world)
        top.addRow("Task seed", self.seed)
        top.addRow("Rooms question", self.task)
        top.addRow("Blocks turns", self.turns)
        layout.addLayout(top)
        layout.addWidget(QLabel('Agent per role (NAME[:ARG]; type "human" to play that role yourself):'))
        layout.addLayout(self.form)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.world.currentTextChanged.connect(self._on_world)
        self._on_world(self.world.currentText())

    def _on_world(self, world: str) -> None:
        from simlab.worlds.rooms.tasks import TASKS

        while self.form.rowCount():
            self.form.removeRow(0)
        self.role_edits = {role: QLineEdit(spec) for role, spec in default_specs(world).items()}
        for role, edit in self.role_edits.items():
            self.form.addRow(role, edit)
        self.task.clear()
        if world == "rooms":
            self.task.addItems(list(TASKS))
        self.task.setEnabled(world == "rooms")
        self.turns.setEnabled(world == "blocks")

    def make_session(self) -> LiveSession:
        """The session the dialog describes (ConfigError when a spec or setting is wrong)."""
        world = self.world.currentText()
        settings = {"turns": self.turns.value()} if world == "blocks" else {}
        agents = {role: edit.text() for role, edit in self.role_edits.items()}
        task = self.task.currentText() if world == "rooms" else None
        return make_session(world, self.seed.value(), agents, task, settings)

    def accept(self) -> None:
        try:
            self.session = self.make_session()
        except (SimlabError, ValueError) as exc:
            QMessageBox.warning(self, "New live episode", str(exc))
            return
        super().accept()


def start_live(window: MainWindow, session: LiveSession) -> LiveController:
    """Show ``session`` in ``window`` (stopping a live session already shown there) and start it."""
    previous = getattr(window, "live", None)
    if isinstance(previous, LiveController):
        previous.close()
    controller = LiveController(window, session)
    session.start()
    return controller
