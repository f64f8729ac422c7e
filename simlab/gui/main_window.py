"""The SimLab window: an episode browser, the 3D world, agent panels, dialogue, plots, the timeline, a
comparison with other runs and the runs' analysis figures.

Every panel is a dock that follows one :class:`PlaybackModel`; the window owns opening runs and episodes,
menus, shortcuts, exports, recent files, drag and drop and the saved layout. Several runs of one world family
can be open at once (File > Add Run..., or several folders on the command line): the browser lists them all,
each row known by (run, episode id), the *Compare* dock lines the open episode up with the same task in
another run, and the *Figures* dock draws the family's figures across the runs. Bad files never raise out of
here: the problem is shown in a message box and the status bar, and whatever did load stays open.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QRect, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QTabBar,
    QWidget,
)

from simlab.analysis.judgments import episode_judgments
from simlab.analysis.pairing import recorded_tasks
from simlab.core.episode import Episode
from simlab.core.errors import SimlabError
from simlab.core.exports import export_file
from simlab.core.reading import resolved
from simlab.core.recording import Run, load_episode, load_run_table
from simlab.gui.agent_panels import AgentPanels
from simlab.gui.background import collect_while_shown
from simlab.gui.browser import EpisodeBrowser, EpisodeKey
from simlab.gui.compare_view import CompareView
from simlab.gui.dialogue import DialoguePane
from simlab.gui.figures_view import FiguresPanel
from simlab.gui.fork_view import ForkDiffView, PlaybackLink, tile
from simlab.gui.icons import WINDOW_ICON, app_icon
from simlab.gui.layouts import fix_label_size
from simlab.gui.notes_view import TurnNotes, holds_link
from simlab.gui.playback import PlaybackModel
from simlab.gui.plots import MetricPlots
from simlab.gui.run_follow import RunFollower, progress_text
from simlab.gui.search_view import SearchPanel
from simlab.gui.sweep_plots import SweepPanel
from simlab.gui.timeline import TimelineWidget
from simlab.gui.validity_view import ValidityJob, ValidityLauncher
from simlab.gui.world_view import WorldView
from simlab.worlds import get_family

if TYPE_CHECKING:
    from simlab.core.family import WorldFamily
    from simlab.gui.live import LiveController, LiveSession

MAX_RECENT = 8
LAYOUT_VERSION = 3  # bump when the docks change, so an old saved layout is ignored rather than misapplied
TABBED_BEHIND = {"Compare": "Dialogue", "Figures": "Plots", "Sweep": "Plots", "Search": "Episodes"}
"""Docks that start as a tab behind another one (title -> the dock in front); a new tabbed panel goes here."""
DIRECT = Qt.FindChildOption.FindDirectChildrenOnly
TOOLBAR: tuple[str | None, ...] = (
    *("open_run", "add_run", "open_episode", None),
    *("first", "back", "play", "forward", "last", "next_error", None),
    *("export_png", "export_html"),
)
"""The toolbar's actions in order (None: a separator); each shows its icon ``assets/icons/NAME.svg``."""
TOOLBAR_ICONS: tuple[str, ...] = tuple(name for name in TOOLBAR if name)
SHORTCUTS: tuple[tuple[str, str], ...] = (
    ("Space", "Play / pause"),
    ("Left / Right", "Step back / forward one turn"),
    ("Home / End", "First / last turn"),
    ("Ctrl+E / Ctrl+Shift+E", "Next / previous turn with an error or a mistake (wrapping around)"),
    ("Ctrl+F", "Search the dialogue (Enter: next hit, Shift+Enter: previous)"),
    ("Ctrl+Shift+F", "Fork the episode from this turn with other agents (beside the original)"),
    ("Ctrl+Alt+F", "Search everything said in the open runs (the Search dock)"),
    ("Ctrl+B / Ctrl+T", "Bookmark this turn (again: remove it) / tag it (kept in RUN/notes.json)"),
    ("Ctrl+Shift+N", "Write a note on this turn"),
    ("Ctrl+L", "Copy a link to this turn (the gui command line and a simlab:// URL)"),
    ("Ctrl+N", "New live episode (agents or you in any role)"),
    ("Ctrl+O", "Open a run folder (in place of those open)"),
    ("Ctrl+Alt+O", "Add a run folder beside those open (compare runs)"),
    ("Ctrl+Shift+O", "Open an episode file"),
    ("Ctrl+S", "Export the window as PNG"),
    ("Ctrl+H", "Export the episode as an HTML transcript"),
    ("Enter / double-click", "Open the selected episode in the browser"),
    ("3D view", "Drag: turn; wheel: zoom; Shift+drag: pan (VTK's own letter keys are off)"),
    ("F1", "This list"),
)


class MainWindow(QMainWindow):
    """The app's window; ``open_path`` loads a run folder or an episode file."""

    def __init__(self, settings: QSettings | None = None) -> None:
        super().__init__()
        self.setWindowTitle("SimLab")
        self.setWindowIcon(app_icon(WINDOW_ICON))
        self.setAcceptDrops(True)
        self.settings = settings or QSettings("SimLab", "SimLab")
        self.playback = PlaybackModel(self)
        self.playback.notice.connect(lambda text: self.statusBar().showMessage(text, 5000))
        self.runs: dict[str, Run] = {}  # the open runs by the name the browser shows, in the order opened
        self.current: EpisodeKey | None = None  # the open episode's run and id, when it is from an open run
        self._opened: Episode | None = None  # the episode ``current`` names (a live one replaces it)
        self._figures_stale = False  # the runs changed while the Figures dock was hidden
        self._figures_shown_now = False  # a dock tabbed behind another still says isVisible(): track the signal
        self.forks: list[MainWindow] = []  # windows showing forks of this window's episodes
        self.remembers_layout = True  # closing saves the geometry and docks for the next start
        self.forks_fit = True  # whether this window and its forks last fitted side by side
        self._own_layout: tuple[QByteArray, QByteArray] | None = None  # geometry and docks before forks tiled it
        collect_while_shown(self)  # see gui/background.py: for a script that shows it without run_app
        self._size_when_shown = False  # the default layout is sized again once the window is shown
        self.last_error = ""
        self.players: frozenset[str] | None = None  # roles people are playing live (see set_players)
        self.live: LiveController | None = None  # the live session shown, while one plays
        self.world = WorldView(self.playback)
        self.setCentralWidget(self.world)
        self.browser = EpisodeBrowser()
        self.timeline = TimelineWidget(self.playback)
        self.dialogue = DialoguePane(self.playback)
        self.plots = MetricPlots(self.playback)
        self.agents = AgentPanels(self.playback, settings=self.settings)
        self.compare = CompareView(self.playback)
        self.figures = FiguresPanel()
        self.figures.turnDragged.connect(self.playback.seek)
        self.search = SearchPanel()
        self.sweep = SweepPanel()  # reads the runs' columns only while shown
        self.validity = ValidityLauncher(self, self._say)
        self.status_label = QLabel()
        self.progress_label = QLabel()  # a run still being played: its episodes so far and failures
        self.statusBar().addPermanentWidget(self.progress_label)
        self.statusBar().addPermanentWidget(self.status_label)
        self.follower = RunFollower(self)
        self.follower.grew.connect(self._run_grew)
        self.follower.failed.connect(lambda name, why: self.statusBar().showMessage(f"Run {name}: {why}", 10000))
        self.docks = self._make_docks()
        self.world.raise_()  # painted after the docks in a frame: its paint waits for the frame thread's work
        self._default_state = self.saveState()
        self._make_actions()
        self.browser.episodeActivated.connect(lambda run, episode_id: self.open_episode_id(episode_id, run))
        self.compare.openRequested.connect(self._open_compared)
        self.sweep.episodeRequested.connect(lambda run, episode_id: self.open_episode_id(episode_id, run))
        self.docks["Sweep"].visibilityChanged.connect(self.sweep.set_shown)
        self.docks["Search"].visibilityChanged.connect(self.search.set_shown)
        self.docks["Figures"].visibilityChanged.connect(self._figures_shown)
        self.playback.turnChanged.connect(lambda _t: self._turn_changed())
        self.playback.episodeChanged.connect(self._episode_changed)
        self.notes = TurnNotes(self)  # after the window's own episode slot: it reads which episode is open
        self.search.openRequested.connect(self.notes.open_turn)
        self.notes.changed.connect(self.search.notes_changed)
        self.notes.changed.connect(self.browser.notes_changed)
        self.browser.notesChanged.connect(self.search.notes_changed)
        self._restore_layout()
        self._update_status()

    # ---- layout ----------------------------------------------------------------------------------------
    def _make_docks(self) -> dict[str, QDockWidget]:
        docks = {title: self._dock(title, widget) for title, widget in self._panels().items()}
        left, right, bottom = (
            Qt.DockWidgetArea.LeftDockWidgetArea,
            Qt.DockWidgetArea.RightDockWidgetArea,
            Qt.DockWidgetArea.BottomDockWidgetArea,
        )
        self.addDockWidget(left, docks["Episodes"])
        self.addDockWidget(right, docks["Agents"])
        self.addDockWidget(bottom, docks["Timeline"])
        self.splitDockWidget(docks["Timeline"], docks["Dialogue"], Qt.Orientation.Vertical)
        self.splitDockWidget(docks["Dialogue"], docks["Plots"], Qt.Orientation.Horizontal)
        for title, front in TABBED_BEHIND.items():  # before the sizes: tabifying lays the docks out again
            self.tabifyDockWidget(docks[front], docks[title])
            docks[front].raise_()
            # laid out now: a second tab group made before the first was laid out got two tab bars in Qt 6.11,
            # the stray one drawn over the timeline
            layout = self.layout()
            if layout is not None:
                layout.activate()
        return docks

    def size_docks(self) -> None:
        """The default dock sizes for the window's size: the 3D view keeps the largest share (at 1366x768 too,
        where fixed sizes left it the smallest panel), the docks take what is left in proportion."""
        width, height = self.width(), self.height()
        docks = self.docks
        left, right = round(min(max(0.25 * width, 300), 390)), round(min(max(0.24 * width, 300), 520))
        dialogue = round(min(max(0.32 * height, 200), 320))
        self.resizeDocks([docks["Episodes"], docks["Agents"]], [left, right], Qt.Orientation.Horizontal)
        self.resizeDocks([docks["Timeline"], docks["Dialogue"]], [60, dialogue], Qt.Orientation.Vertical)
        self.resizeDocks(
            [docks["Dialogue"], docks["Plots"]], [7 * width // 12, 5 * width // 12], Qt.Orientation.Horizontal
        )

    def _panels(self) -> dict[str, QWidget]:
        return {
            "Episodes": self.browser,
            "Agents": self.agents,
            "Timeline": self.timeline,
            "Dialogue": self.dialogue,
            "Plots": self.plots,
            "Compare": self.compare,
            "Figures": self.figures,
            "Search": self.search,
            "Sweep": self.sweep,
        }

    def _dock(self, title: str, widget: QWidget) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title.lower()}")
        dock.setWidget(widget)
        return dock

    def _restore_layout(self) -> None:
        geometry, state = self.settings.value("window/geometry"), self.settings.value("window/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1600, 1000)
        self.fit_to_screen()
        if state is None or not self.restore_state(state, LAYOUT_VERSION):
            self.size_docks()  # no layout of the user's own: the default one, for this screen
            self._size_when_shown = True  # and again once shown: the dock areas take their sizes at first layout

    def restore_state(self, state: QByteArray, version: int = 0) -> bool:
        """``restoreState``, leaving shown only the dock tab bars the restored layout uses: Qt 6.11 keeps the
        ones of the layout it replaces shown too, drawn over the timeline and the 3D view."""
        shown = [bar for bar in self.findChildren(QTabBar, options=DIRECT) if not bar.isHidden()]
        for bar in shown:
            bar.hide()  # the restored layout shows the bars it uses
        if not self.restoreState(state, version):  # refused (another layout version): nothing changed
            for bar in shown:
                bar.show()
            return False
        return True

    def fit_to_screen(self, available: QRect | None = None) -> None:
        """Keep the whole window on the screen it opens on (a 1600x1000 default, or a geometry saved on a bigger
        screen, would put the Agents dock, the timeline's end and the status bar off a 1366x768 one)."""
        screen = self.screen()
        area = available if available is not None else (screen.availableGeometry() if screen is not None else None)
        if area is None or area.isEmpty():
            return
        frame = self.frameGeometry().size() - self.geometry().size()  # title bar and borders
        width = min(self.width(), area.width() - frame.width())
        height = min(self.height(), area.height() - frame.height())
        self.resize(max(width, 640), max(height, 480))
        x = min(max(self.x(), area.left()), area.right() - self.frameGeometry().width() + 1)
        y = min(max(self.y(), area.top()), area.bottom() - self.frameGeometry().height() + 1)
        self.move(max(x, area.left()), max(y, area.top()))

    def reset_layout(self) -> None:
        """Put every dock back where it starts, sized for the window as it is now."""
        self.restore_state(self._default_state)
        for dock in self.docks.values():
            dock.show()
        self.size_docks()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._size_when_shown:
            self._size_when_shown = False
            QTimer.singleShot(0, self.size_docks)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.remembers_layout:  # the user's own layout: never the narrow tiling forks made of it
            geometry, state = self._own_layout or (self.saveGeometry(), self.saveState(LAYOUT_VERSION))
            self.settings.setValue("window/geometry", geometry)
            self.settings.setValue("window/state", state)
        self.playback.pause()
        self.search.shutdown()
        self._end_live()
        self.world.close_view()
        super().closeEvent(event)

    # ---- actions, menus, toolbar -----------------------------------------------------------------------
    def _action(self, text: str, slot: Callable[[], object], shortcut: str | None = None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.setStatusTip(tip or text)
        action.triggered.connect(lambda _checked=False: slot())
        self.addAction(action)  # window-wide: works whichever panel has focus
        return action

    def _make_actions(self) -> None:
        pb = self.playback
        self.actions_by_name = {
            "open_run": self._action("Open &Run...", self._ask_open_run, "Ctrl+O"),
            "add_run": self._action(
                "&Add Run...", self._ask_add_run, "Ctrl+Alt+O", "Open another run beside those open, to compare"
            ),
            "close_run": self._action("&Close Run...", self._ask_close_run, tip="Close one of the open runs"),
            "open_episode": self._action("Open &Episode...", self._ask_open_episode, "Ctrl+Shift+O"),
            "export_png": self._action("Export Window as &PNG...", self._ask_export_png, "Ctrl+S"),
            "export_html": self._action("Export &HTML Transcript...", self._ask_export_html, "Ctrl+H"),
            "export_anim": self._action("Export &Animation (GIF/MP4)...", self._ask_export_animation),
            "quit": self._action("&Quit", self.close, "Ctrl+Q"),
            "play": self._action("&Play / Pause", pb.toggle_play, "Space"),
            "back": self._action("Step &Back", lambda: pb.step(-1), "Left"),
            "forward": self._action("Step &Forward", lambda: pb.step(1), "Right"),
            "first": self._action("&First Turn", pb.first, "Home"),
            "last": self._action("&Last Turn", pb.last, "End"),
            "next_error": self._action("Next &Error", pb.next_error, "Ctrl+E"),
            "previous_error": self._action("Pre&vious Error", pb.previous_error, "Ctrl+Shift+E"),
            "search": self._action("&Search Dialogue", self.dialogue.open_search, "Ctrl+F"),
            "search_run": self._action("Search &Everything Said...", self._show_search, "Ctrl+Alt+F"),
            "bookmark": self._action("&Bookmark This Turn", lambda: self.notes.toggle_bookmark(), "Ctrl+B"),
            "tag": self._action("&Tag This Turn...", lambda: self.notes.ask_tags(), "Ctrl+T"),
            "note": self._action("&Note on This Turn...", lambda: self.notes.ask_note(), "Ctrl+Shift+N"),
            "copy_link": self._action("Copy &Link to This Turn", lambda: self.notes.copy_link(), "Ctrl+L"),
            "reset_layout": self._action("&Reset Layout", self.reset_layout),
            "help": self._action("&Keyboard Shortcuts", self.show_shortcuts, "F1"),
            "about": self._action("&About SimLab", self._about),
            "new_episode": self._action("&New Episode...", self._ask_new_episode, "Ctrl+N"),
            "fork": self._action("&Fork from This Turn...", self._ask_fork, "Ctrl+Shift+F"),
            "validity": self._action(
                "&Validity Report...", self.ask_validity, tip="What simple baselines score on a benchmark folder"
            ),
        }
        self._make_menus()
        self._make_toolbar()

    def _make_menus(self) -> None:
        a = self.actions_by_name
        file_menu = self.menuBar().addMenu("&File")
        for name in ("open_run", "add_run", "open_episode"):
            file_menu.addAction(a[name])
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self._refresh_recent()
        file_menu.addSeparator()
        for name in ("export_png", "export_html", "export_anim"):
            file_menu.addAction(a[name])
        panel_menu = file_menu.addMenu("Export Panel as PNG")
        for title, dock in self.docks.items():
            panel_menu.addAction(title, partial(self._ask_export_dock_png, dock))
        panel_menu.addAction("3D World", lambda: self._ask_export_png(self.world))
        file_menu.addSeparator()
        file_menu.addAction(a["quit"])
        view_menu = self.menuBar().addMenu("&View")
        for dock in self.docks.values():
            view_menu.addAction(dock.toggleViewAction())
        view_menu.addSeparator()
        view_menu.addAction(a["reset_layout"])
        play_menu = self.menuBar().addMenu("&Playback")
        for name in ("play", "back", "forward", "first", "last", "previous_error", "next_error", "search"):
            play_menu.addAction(a[name])
        notes_menu = self.menuBar().addMenu("&Notes")
        for name in ("search_run", "bookmark", "tag", "note", "copy_link"):
            notes_menu.addAction(a[name])
        run_menu = self.menuBar().addMenu("&Run")
        run_menu.addAction(a["new_episode"])
        run_menu.addAction(a["fork"])
        run_menu.addAction(a["validity"])
        a["validity"].setEnabled(False)  # until a run of a family with a validity report is open
        run_menu.addSeparator()
        run_menu.addAction(a["close_run"])
        a["close_run"].setEnabled(False)
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction(a["help"])
        help_menu.addAction(a["about"])

    def _make_toolbar(self) -> None:
        bar = self.addToolBar("Main")
        bar.setObjectName("toolbar-main")
        a = self.actions_by_name
        for name in TOOLBAR_ICONS:
            a[name].setIcon(app_icon(name))
            keys = a[name].shortcut().toString()
            a[name].setToolTip(a[name].text().replace("&", "") + (f" ({keys})" if keys else ""))
        self.playback.playingChanged.connect(self._on_playing)
        for entry in TOOLBAR:
            if entry is None:
                bar.addSeparator()
            else:
                bar.addAction(a[entry])

    def _show_search(self) -> None:
        self.docks["Search"].show()
        self.docks["Search"].raise_()
        self.search.query_edit.setFocus()
        self.search.query_edit.selectAll()

    def _on_playing(self, playing: bool) -> None:
        self.actions_by_name["play"].setIcon(app_icon("pause" if playing else "play"))

    # ---- opening -----------------------------------------------------------------------------------------
    def open_path(self, path: str | Path) -> bool:
        """Open a run folder or an episode file in place of whatever is open; False (and a message) when it
        cannot be read."""
        path = Path(path)
        return self.open_run(path) if path.is_dir() else self.open_episode_file(path)

    @property
    def run(self) -> Run | None:
        """The run of the open episode, else the first open run; None when no run is open."""
        if self.current is not None and self.current.run in self.runs:
            return self.runs[self.current.run]
        return next(iter(self.runs.values()), None)

    def open_run(self, path: str | Path) -> bool:
        """Open one run folder in place of whatever is open."""
        return self.open_runs([path])

    def open_runs(self, paths: Sequence[str | Path]) -> bool:
        """Open run folders together in place of whatever is open (the browser is filled once). A folder that
        cannot be read, or is of another world family than the first, is said and left out; when none opens,
        what was open stays. True when every folder opened."""
        runs = self._read_runs(paths, {})
        if not runs:
            return False
        self._end_live()
        self.runs = runs
        self.playback.set_episode(None)
        self._runs_changed()
        return len(runs) == len(paths)

    def add_run(self, path: str | Path) -> bool:
        """Open a run folder beside the runs already open (it must be of their world family)."""
        runs = self._read_runs([path], self.runs)
        if not runs:
            return False
        before = len(self.runs)
        self.runs = {**self.runs, **runs}
        self._runs_changed()
        if before == 1:  # a second run: what there is to see now is the comparison
            self.docks["Compare"].raise_()
        return True

    def close_run(self, name: str) -> bool:
        """Close the open run ``name`` (its episode too, if one of its episodes is open); False when no run of
        that name is open."""
        if name not in self.runs:
            return False
        self.runs = {k: run for k, run in self.runs.items() if k != name}
        if self.current is not None and self.current.run == name:
            self.playback.set_episode(None)
        self._runs_changed()
        self.statusBar().showMessage(f"Closed run {name}", 5000)
        return True

    def _read_runs(self, paths: Sequence[str | Path], open_runs: dict[str, Run]) -> dict[str, Run]:
        """The runs in ``paths`` that can be read and go with ``open_runs``, by their new names; what cannot is
        said in one message."""
        runs: dict[str, Run] = {}
        problems = []
        for path in map(Path, paths):
            try:
                run = self._read_run(path, [*open_runs.values(), *runs.values()])
            except SimlabError as exc:
                problems.append(str(exc))
                continue
            runs[run_name(run.path, [*open_runs, *runs])] = run
            self._remember(path)
        self._say_opened(runs)
        if problems:
            self.show_error("\n\n".join(problems))
        return runs

    @staticmethod
    def _read_run(path: Path, open_runs: Sequence[Run]) -> Run:
        """The run in folder ``path``; SimlabError saying why when it is not a readable run, is open already or
        is of another world family than ``open_runs`` (runs are compared only within a family)."""
        if not path.is_dir():
            raise SimlabError(f"{path}: expected a run folder; an episode file opens on its own (Open Episode)")
        if any(resolved(run.path) == resolved(path) for run in open_runs):
            raise SimlabError(f"{path}: this run is open already")
        try:
            run = load_run_table(path)  # as columns: 100,000 episodes open in seconds, followed as they grow
        except SimlabError as exc:
            raise SimlabError(f"Could not open the run:\n{exc}") from None
        family, others = run_family(run), sorted({run_family(r) for r in open_runs})
        if others and others != [family]:
            raise SimlabError(
                f"Could not add {path}: it is a {family} run and the open runs are {', '.join(others)} runs. "
                "Runs of different world families are not compared: open it on its own (File > Open Run)."
            )
        return run

    def _say_opened(self, runs: dict[str, Run]) -> None:
        episodes = sum(len(run.summaries) for run in runs.values())
        problems = sum(run.problem_count for run in runs.values())
        if problems:
            self.statusBar().showMessage(f"{problems} index line(s) could not be read; see the browser")
        elif len(runs) == 1:
            run = next(iter(runs.values()))
            self.statusBar().showMessage(f"Opened {run.path} ({episodes} episodes)", 5000)
        elif runs:
            self.statusBar().showMessage(f"Opened {len(runs)} runs ({episodes} episodes)", 5000)

    def _runs_changed(self) -> None:
        """Every view of the open runs shows them as they are now."""
        self.browser.set_runs(
            [(name, run.summaries) for name, run in self.runs.items()],
            [problem for run in self.runs.values() for problem in run.problems],
            {name: recorded_tasks(run.config) for name, run in self.runs.items()},  # a task id of two tasks is marked
            {name: run.table() for name, run in self.runs.items()},
            {name: run.path for name, run in self.runs.items()},
        )
        self.follower.set_runs(self.runs)
        self.progress_label.setText(progress_text(self.runs))
        self.compare.set_runs(self.runs)
        self.search.set_runs(self.runs)
        self.sweep.set_runs(list(self.runs.items()))
        self._figures_stale = True
        if self._figures_shown_now:
            self._sync_figures()
        self.actions_by_name["close_run"].setEnabled(bool(self.runs))
        self.actions_by_name["validity"].setEnabled(self._validity_family() is not None)
        self.setWindowTitle(f"SimLab - {self.runs_text()}" if self.runs else "SimLab")
        self._update_status()

    def _run_grew(self, name: str) -> None:
        """Open run ``name`` gained episodes (it is still being played): the browser and the progress follow."""
        run = self.runs[name]
        self.browser.update_run(name, run.summaries, run.table(), [p for r in self.runs.values() for p in r.problems])
        try:  # the Compare dock reads other runs' summaries back from their indexes, which may have changed
            self.compare.set_runs(self.runs)
        except (SimlabError, OSError) as exc:
            self.show_error(f"Comparing the runs: {exc}")
        self.search.set_runs(self.runs)  # each reads the new episodes only while shown
        self.sweep.set_runs(list(self.runs.items()))
        self._figures_stale = True
        self.progress_label.setText(progress_text(self.runs))

    def _figures_shown(self, shown: bool) -> None:
        self._figures_shown_now = shown
        if shown:
            self._sync_figures()

    def _sync_figures(self) -> None:
        """Give the Figures dock the open runs (when they changed) and the open episode's place; only while it
        is shown, since it reads every episode of the runs."""
        if self._figures_stale:
            self._figures_stale = False
            self.figures.set_runs(list(self.runs.items()))
        key = self.current
        self.figures.set_cursor(key.run if key else None, key.episode_id if key else None, self.playback.turn)

    def open_episode_id(self, episode_id: str, run: str | None = None) -> bool:
        """Load episode ``episode_id`` of the open run named ``run`` (None: the first open run); only now is its
        file read."""
        name = run if run is not None else next(iter(self.runs), None)
        if name not in self.runs:
            return False
        try:
            episode = self.runs[name].load_episode(episode_id)
        except (SimlabError, KeyError) as exc:
            return self.show_error(f"Could not open episode {episode_id}:\n{exc}")
        return self._show_episode(episode, EpisodeKey(name, episode_id))

    def open_episode_file(self, path: Path) -> bool:
        try:
            episode = load_episode(path)
        except SimlabError as exc:
            return self.show_error(f"Could not open the episode:\n{exc}")
        self._end_live()
        self.runs = {}
        self._runs_changed()
        self.browser.set_run([episode.summary | {"episode_id": episode.episode_id, "file": path.name}], [])
        self._remember(path)
        return self._show_episode(episode, None)

    def _show_episode(self, episode: Episode, key: EpisodeKey | None) -> bool:
        self.current, self._opened = key, episode
        self.playback.set_episode(episode)
        self._show_judgments(episode, key)
        self.browser.select_episode(episode.episode_id, key.run if key is not None else "")
        return True

    def _show_judgments(self, episode: Episode, key: EpisodeKey | None) -> None:
        """Hand the dialogue pane what LLM judges said about the episode (its run's judgments file)."""
        run = self.runs.get(key.run) if key is not None else None
        if run is None:
            self.dialogue.set_judgments([], [])
            return
        try:
            judged = episode_judgments(run.path, episode.world, episode.episode_id)
        except (SimlabError, OSError, ValueError) as exc:  # a damaged file must not stop the episode opening
            self.statusBar().showMessage(f"Judgments of {episode.episode_id} could not be read: {exc}", 10000)
            judged = None
        self.dialogue.set_judgments(judged.judges if judged else [], judged.records if judged else [])

    def _episode_changed(self, episode: Episode | None) -> None:
        """The playback shows another episode: one opened from a run (``current``), or a live one or none."""
        if episode is None or episode is not self._opened:
            self.current, self._opened = None, None
        self.compare.show_episode(self.current.run if self.current is not None else None, episode)
        self._turn_changed()

    def _turn_changed(self) -> None:
        self._update_status()
        if self._figures_shown_now:
            self._sync_figures()

    def _end_live(self) -> None:
        """Another run or episode is opened: a live session shown here stops, and its state goes with it."""
        if self.live is not None:
            self.live.close()
            self.live = None
        self.set_players(None)

    def set_players(self, roles: Collection[str] | None) -> None:
        """While people play ``roles``, the window shows only what those roles were given: their agent panels,
        no world view, no plots (progress against the target), no private reasoning, no raw model calls, and
        results only as the engine tells the roles (no mistake judged against the target in the dialogue or
        on the timeline, no jumps to them). None shows everything again (the episode ended, or another run is
        opened)."""
        playing = roles is not None
        self.agents.show_only(roles)
        self.world.hide_for_players(playing)
        self.plots.hide_for_players(playing)
        if playing:
            self.dialogue.set_show_reasoning(False)
        self.dialogue.reasoning_box.setEnabled(not playing)
        self.dialogue.tabs.setTabEnabled(1, not playing)  # the Raw tab: every role's model requests
        self.dialogue.set_players(roles)
        self.timeline.set_as_told(playing)
        for name in ("next_error", "previous_error"):  # a jump to a turn says it held a mistake
            self.actions_by_name[name].setEnabled(not playing)
        self.players = frozenset(roles) if roles is not None else None

    def show_error(self, text: str) -> bool:
        """Tell the user without blocking the app (a window-modal box); returns False for callers."""
        self.last_error = text
        self.statusBar().showMessage(" ".join(text.split()), 15000)  # the reason, not only "Could not open"
        box = QMessageBox(QMessageBox.Icon.Warning, "SimLab", text, QMessageBox.StandardButton.Ok, self)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.open()
        return False

    # ---- recent files, drag and drop -----------------------------------------------------------------
    def recent(self) -> list[str]:
        value = self.settings.value("recent", [])
        return [str(v) for v in (value if isinstance(value, list) else [value] if value else [])]

    def _remember(self, path: Path) -> None:
        items = [str(resolved(path)), *[p for p in self.recent() if p != str(resolved(path))]][:MAX_RECENT]
        self.settings.setValue("recent", items)
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        for item in self.recent():
            self.recent_menu.addAction(item, partial(self.open_path, item))
        self.recent_menu.setEnabled(bool(self.recent()))

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() or holds_link(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        if self.notes.open_dropped(event.mimeData()):  # a simlab:// link to a turn
            event.acceptProposedAction()
            return
        paths = [url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()]
        if len(paths) > 1:  # several run folders dropped together open side by side
            self.open_runs(paths)
        elif paths:
            self.open_path(paths[0])
        if paths:
            event.acceptProposedAction()

    # ---- exports ---------------------------------------------------------------------------------------
    def export_png(self, path: str | Path, widget: QWidget | None = None) -> bool:
        """Save a picture of the window (or one panel); the grab paints the 3D view, which renders a changed scene."""
        target = widget or self
        picture = getattr(target, "grab_whole", target.grab)()  # a scrolled grid (Agents) grabs it all

        def write(out: Path) -> None:
            if not picture.save(str(out)):  # Qt says only that it failed (a format it does not know, a folder)
                raise OSError(f"{out}: the picture could not be written")

        return self._export(path, write)

    def export_html(self, path: str | Path) -> bool:
        """The open episode as an HTML transcript, with the run's notes on it (as ``replay --export html``)."""
        from simlab.core.notes import episode_marks
        from simlab.render.transcript import episode_html

        episode = self.playback.episode
        if episode is None:
            return self.show_error("Open an episode first: the transcript is of one episode")
        run_dir = self.run.path if self.current is not None and self.run is not None else None

        def write(out: Path) -> None:
            marks = episode_marks(run_dir, episode.episode_id)
            out.write_text(episode_html(episode, marks=marks), encoding="utf-8")

        return self._export(path, write)

    def export_animation(self, path: str | Path, first: int, last: int, dialogue: bool = False) -> bool:
        """Turns ``first``..``last`` as a GIF or MP4; ``dialogue`` puts each turn's dialogue and outcome beside
        the picture."""
        from simlab.render.animation import write_animation

        episode = self.playback.episode
        if episode is None:
            return self.show_error("Open an episode first: the animation is of one episode")
        return self._export(path, lambda out: write_animation(episode, first, last, out, dialogue=dialogue))

    def _export(self, path: str | Path, write: Callable[[Path], object]) -> bool:
        """``write`` the export to ``path`` unless that would replace a recording or land in a run folder, a
        system folder or behind a link (:func:`~simlab.core.exports.export_file`, as the command line; refused
        before anything is written); a refusal or a failure is said in a message."""
        try:
            export_file(Path(path), write)
        except (SimlabError, OSError) as exc:
            return self.show_error(f"Nothing was exported:\n{exc}")
        return True

    def _ask_export_dock_png(self, dock: QDockWidget) -> None:
        self._ask_export_png(dock.widget())

    def _ask_export_png(self, widget: QWidget | None = None) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export PNG", "simlab.png", "PNG images (*.png)")
        if path:
            self.export_png(path, widget)

    def _ask_export_html(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export transcript", "transcript.html", "HTML (*.html)")
        if path:
            self.export_html(path)

    def _ask_export_animation(self) -> None:
        last_turn = self.playback.last_turn
        first, ok = QInputDialog.getInt(self, "Animation", "First turn:", 0, 0, last_turn)
        if not ok:
            return
        last, ok = QInputDialog.getInt(self, "Animation", "Last turn:", last_turn, first, last_turn)
        if not ok:
            return
        choices = ["The picture only", "The picture with each turn's dialogue and outcome"]
        shown, ok = QInputDialog.getItem(self, "Animation", "Each frame shows:", choices, 1, False)
        path, _ = QFileDialog.getSaveFileName(self, "Export animation", "episode.gif", "GIF (*.gif);;MP4 (*.mp4)")
        if ok and path:
            self.export_animation(path, first, last, dialogue=shown == choices[1])

    def _ask_open_run(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open run folder")
        if path:
            self.open_path(path)

    def _ask_add_run(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Add a run folder (to compare)")
        if path:
            self.add_run(path)

    def _ask_close_run(self) -> None:
        names = list(self.runs)
        if len(names) > 1:
            here = names.index(self.current.run) if self.current is not None else 0
            name, ok = QInputDialog.getItem(self, "Close Run", "Run to close:", names, here, False)
            if not ok:
                return
            names = [name]
        if names:
            self.close_run(names[0])

    def _ask_open_episode(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open episode", "", "Episodes (*.json)")
        if path:
            self.open_path(path)

    # ---- a benchmark's validity --------------------------------------------------------------------------
    def _validity_family(self) -> WorldFamily | None:
        """The open run's world family when it declares a validity report, else None."""
        run = self.run
        if run is None:
            return None
        try:
            family = get_family(run_family(run))
        except SimlabError:  # a run of a family this SimLab does not have
            return None
        return family if family.validity is not None else None

    def ask_validity(self, folder: Path | None = None) -> ValidityJob | None:
        """The validity report of a benchmark ``folder`` (asked for when None) of the open run's world family,
        computed off the GUI thread and shown in a dialog; returns the job (None: not started)."""
        family = self._validity_family()
        if family is None:
            self.show_error("A validity report needs an open run of a world that has one: its baselines judge")
            return None
        return self.validity.ask(family, folder)

    def _say(self, text: str, error: bool) -> None:
        if error:
            self.show_error(text)
        else:
            self.statusBar().showMessage(text, 10000)

    # ---- live episodes -----------------------------------------------------------------------------------
    def _ask_new_episode(self) -> None:
        from simlab.gui.live import NewEpisodeDialog

        dialog = NewEpisodeDialog(self)
        if dialog.exec() and dialog.session is not None:
            self.start_live(dialog.session)

    def _ask_fork(self) -> None:
        episode = self.playback.episode
        if episode is None:
            self.show_error("Open an episode first: a fork continues one episode from its current turn")
            return
        from simlab.gui.live import ForkDialog

        dialog = ForkDialog(episode, self.playback.turn, self)
        if dialog.exec():
            self.fork(dialog.specs_text())

    def fork(self, specs_text: str) -> MainWindow | None:
        """Continue the open episode from the current turn with other agents, in a second window placed beside
        this one (the original stays here). ``specs_text`` is ``ROLE=SPEC, ROLE=SPEC...``."""
        from simlab.gui.live import fork_session

        original, turn = self.playback.episode, self.playback.turn
        if original is None:
            return None  # nothing open to fork (the action is disabled then)
        try:
            agents = {}
            for item in (part.strip() for part in specs_text.split(",")):
                role, sep, spec = item.partition("=")
                if item and (not sep or not role.strip() or not spec.strip()):
                    raise ValueError(f"{item!r}: expected ROLE=SPEC (for example builder=oracle)")
                if item:
                    agents[role.strip()] = spec.strip()
            session = fork_session(original, turn, agents)
        except (SimlabError, ValueError) as exc:
            self.show_error(f"Could not fork:\n{exc}")
            return None
        twin = self._twin()
        twin.setWindowTitle(f"SimLab - fork of {original.episode_id} at turn {turn}")
        twin.start_live(session)
        twin.playback.seek(turn)  # the replayed turns are there: show the one forked at, as the original does
        link = PlaybackLink(self.playback, twin.playback, twin)
        twin.show_fork_diff(ForkDiffView(original, twin.playback, turn, link))
        self._beside(twin)
        return twin

    def open_beside(self, run: str, episode_id: str) -> MainWindow | None:
        """Open episode ``episode_id`` of the open run ``run`` in a second window beside this one (the same runs
        open there), at this window's turn, the two playbacks linked (step one, both step)."""
        twin = self._twin()
        twin.runs = dict(self.runs)  # the runs as they are open here: no index is read again
        twin._runs_changed()
        if not twin.open_episode_id(episode_id, run):
            twin.close()
            return None
        twin.playback.seek(self.playback.turn)
        PlaybackLink(self.playback, twin.playback, twin)
        self._beside(twin)
        return twin

    def _open_compared(self, run: str, episode_id: str, new_window: bool) -> None:
        """The Compare dock asked for the other run's episode: here (at the same turn) or beside this window."""
        if new_window:
            self.open_beside(run, episode_id)
            return
        turn = self.playback.turn
        if self.open_episode_id(episode_id, run):
            self.playback.seek(turn)

    def _twin(self) -> MainWindow:
        """A second window for a fork or a compared episode, not shown yet (:meth:`_beside` shows it)."""
        twin = MainWindow(self.settings)
        twin.remembers_layout = False  # its narrow layout is not the one to open with next time
        return twin

    def _beside(self, twin: MainWindow) -> None:
        """Show ``twin`` tiled beside this window and the other windows it opened (this window's own layout is
        kept to be saved on closing: the tiling is for the forks' time only). It is placed before it is shown:
        each resize of a shown window renders its 3D view again."""
        if self._own_layout is None:
            self._own_layout = (self.saveGeometry(), self.saveState(LAYOUT_VERSION))
        self.forks = [w for w in self.forks if w.isVisible()] + [twin]
        self._tile([self, *self.forks])
        twin.show()
        QTimer.singleShot(0, self.tile_forks)  # again once the new window's frame and docks have their real sizes

    def tile_forks(self) -> bool:
        """This window and its open forks side by side on its screen; False (and a status message) when they
        do not fit."""
        return self._tile([self, *(w for w in self.forks if w.isVisible())])

    def _tile(self, windows: list[MainWindow]) -> bool:
        self.forks_fit = tile(windows, (self.screen() or windows[-1].screen()).availableGeometry())
        if not self.forks_fit:
            windows[-1].statusBar().showMessage("The windows do not fit side by side on this screen: the last overlap")
        return self.forks_fit

    def show_fork_diff(self, view: QWidget) -> None:
        """A fork's window: the diff against the original in front of the dialogue (a tab beside it); the episode
        browser goes (a fork window has no run) to leave the narrow window to the scene."""
        dock = self._dock("Fork diff", view)
        self.tabifyDockWidget(self.docks["Dialogue"], dock)
        dock.show()
        dock.raise_()
        self.docks["Episodes"].hide()
        self.docks["Fork diff"] = dock
        self.world.splitter.setSizes([1, 0])  # a narrow window: the 3D view first, the layer list a drag away

    def start_live(self, session: LiveSession) -> LiveController:
        """Show a live session in the window (panels follow it as it grows) and start it."""
        from simlab.gui.live import start_live

        live = self.live = start_live(self, session)
        return live

    # ---- help, status ----------------------------------------------------------------------------------
    def shortcuts_text(self) -> str:
        return "\n".join(f"{keys:<22} {what}" for keys, what in SHORTCUTS)

    def show_shortcuts(self) -> None:
        box = QMessageBox(QMessageBox.Icon.Information, "Keyboard shortcuts", "", QMessageBox.StandardButton.Ok, self)
        box.setText("<pre>" + self.shortcuts_text() + "</pre>")
        box.open()

    def _about(self) -> None:
        from simlab import __version__

        QMessageBox.about(self, "About SimLab", f"SimLab {__version__}: replay and inspect multi-agent episodes.")

    def runs_text(self) -> str:
        """The open run's name, or how many runs are open."""
        return next(iter(self.runs)) if len(self.runs) == 1 else f"{len(self.runs)} runs"

    def status_text(self, turn: int | None = None) -> str:
        """Where the window is: the run(s), the episode and the playback's turn (or ``turn``)."""
        several = len(self.runs) > 1
        if self.current is not None:
            where = f"run {self.current.run}" + (f" ({len(self.runs)} runs open)" if several else "")
        else:
            where = f"{len(self.runs)} runs open" if several else f"run {next(iter(self.runs), '-')}"
        episode = self.playback.episode
        if episode is None:
            return f"{where} | no episode open"
        turn = self.playback.turn if turn is None else turn
        return f"{where} | episode {episode.episode_id} | turn {turn} of {self.playback.last_turn}"

    def _update_status(self) -> None:
        fix_label_size(self.status_label, self.status_text(self.playback.last_turn))  # a step lays nothing out
        self.status_label.setText(self.status_text())


def run_family(run: Run) -> str:
    """The world family that played ``run``."""
    return str(run.config["world"])


def run_name(path: Path, taken: Collection[str]) -> str:
    """A name for the run in folder ``path`` that differs from ``taken``: the folder's name, else with as many
    parent folders as it takes (``a/run`` beside ``b/run``), else numbered."""
    parts = resolved(path).parts
    for k in range(1, len(parts) + 1):
        name = "/".join(parts[-k:]).lstrip("/")
        if name not in taken:
            return name
    k = 2
    while f"{path.name} ({k})" in taken:
        k += 1
    return f"{path.name} ({k})"
