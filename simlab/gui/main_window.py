"""The SimLab window: an episode browser, the 3D world, agent panels, dialogue, plots and the timeline.

Every panel is a dock that follows one :class:`PlaybackModel`; the window owns opening runs and episodes,
menus, shortcuts, exports, recent files, drag and drop and the saved layout. Bad files never raise out of
here: the problem is shown in a message box and the status bar, and whatever did load stays open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QRect, QSettings, Qt, QTimer, QUrl
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QStyle,
    QWidget,
)

from simlab.core.episode import Episode
from simlab.core.errors import SimlabError
from simlab.core.recording import Run, load_episode, load_run
from simlab.gui.agent_panels import AgentPanels
from simlab.gui.browser import EpisodeBrowser
from simlab.gui.dialogue import DialoguePane
from simlab.gui.fork_view import ForkDiffView, PlaybackLink, tile
from simlab.gui.playback import PlaybackModel
from simlab.gui.plots import MetricPlots
from simlab.gui.timeline import TimelineWidget
from simlab.gui.world_view import WorldView

if TYPE_CHECKING:
    from simlab.gui.live import LiveController, LiveSession

MAX_RECENT = 8
LAYOUT_VERSION = 1  # bump when the docks change, so an old saved layout is ignored rather than misapplied
_SP = QStyle.StandardPixmap
TOOLBAR_ICONS: dict[str, QStyle.StandardPixmap] = {
    "open_run": _SP.SP_DirOpenIcon,
    "open_episode": _SP.SP_FileIcon,
    "first": _SP.SP_MediaSkipBackward,
    "back": _SP.SP_MediaSeekBackward,
    "play": _SP.SP_MediaPlay,
    "forward": _SP.SP_MediaSeekForward,
    "last": _SP.SP_MediaSkipForward,
    "next_error": _SP.SP_MessageBoxWarning,
    "export_png": _SP.SP_DialogSaveButton,
    "export_html": _SP.SP_FileDialogDetailedView,
}
SHORTCUTS: tuple[tuple[str, str], ...] = (
    ("Space", "Play / pause"),
    ("Left / Right", "Step back / forward one turn"),
    ("Home / End", "First / last turn"),
    ("Ctrl+E / Ctrl+Shift+E", "Next / previous turn with an error or a mistake (wrapping around)"),
    ("Ctrl+F", "Search the dialogue (Enter: next hit, Shift+Enter: previous)"),
    ("Ctrl+Shift+F", "Fork the episode from this turn with other agents (beside the original)"),
    ("Ctrl+N", "New live episode (agents or you in any role)"),
    ("Ctrl+O", "Open a run folder"),
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
        self.setAcceptDrops(True)
        self.settings = settings or QSettings("SimLab", "SimLab")
        self.playback = PlaybackModel(self)
        self.playback.notice.connect(lambda text: self.statusBar().showMessage(text, 5000))
        self.run: Run | None = None
        self.forks: list[MainWindow] = []  # windows showing forks of this window's episodes
        self.remembers_layout = True  # closing saves the geometry and docks for the next start
        self.forks_fit = True  # whether this window and its forks last fitted side by side
        self.last_error = ""
        self.players: frozenset[str] | None = None  # roles people are playing live (see set_players)
        self.world = WorldView(self.playback)
        self.setCentralWidget(self.world)
        self.browser = EpisodeBrowser()
        self.timeline = TimelineWidget(self.playback)
        self.dialogue = DialoguePane(self.playback)
        self.plots = MetricPlots(self.playback)
        self.agents = AgentPanels(self.playback)
        self.status_label = QLabel()
        self.statusBar().addPermanentWidget(self.status_label)
        self.docks = self._make_docks()
        self._default_state = self.saveState()
        self._make_actions()
        self.browser.episodeActivated.connect(self.open_episode_id)
        self.playback.turnChanged.connect(lambda _t: self._update_status())
        self.playback.episodeChanged.connect(lambda _e: self._update_status())
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
        self.resizeDocks([docks["Episodes"], docks["Agents"]], [390, 520], Qt.Orientation.Horizontal)
        self.resizeDocks([docks["Timeline"], docks["Dialogue"]], [60, 320], Qt.Orientation.Vertical)
        self.resizeDocks([docks["Dialogue"], docks["Plots"]], [700, 500], Qt.Orientation.Horizontal)
        return docks

    def _panels(self) -> dict[str, QWidget]:
        return {
            "Episodes": self.browser,
            "Agents": self.agents,
            "Timeline": self.timeline,
            "Dialogue": self.dialogue,
            "Plots": self.plots,
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
        if state is not None:
            self.restoreState(state, LAYOUT_VERSION)
        self.fit_to_screen()

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
        """Put every dock back where it starts."""
        self.restoreState(self._default_state)
        for dock in self.docks.values():
            dock.show()

    def closeEvent(self, event: object) -> None:
        if self.remembers_layout:
            self.settings.setValue("window/geometry", self.saveGeometry())
            self.settings.setValue("window/state", self.saveState(LAYOUT_VERSION))
        self.playback.pause()
        self._end_live()
        self.world.close_view()
        super().closeEvent(event)  # type: ignore[arg-type]

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
            "reset_layout": self._action("&Reset Layout", self.reset_layout),
            "help": self._action("&Keyboard Shortcuts", self.show_shortcuts, "F1"),
            "about": self._action("&About SimLab", self._about),
            "new_episode": self._action("&New Episode...", self._ask_new_episode, "Ctrl+N"),
            "fork": self._action("&Fork from This Turn...", self._ask_fork, "Ctrl+Shift+F"),
        }
        self._make_menus()
        self._make_toolbar()

    def _make_menus(self) -> None:
        a = self.actions_by_name
        file_menu = self.menuBar().addMenu("&File")
        for name in ("open_run", "open_episode"):
            file_menu.addAction(a[name])
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self._refresh_recent()
        file_menu.addSeparator()
        for name in ("export_png", "export_html", "export_anim"):
            file_menu.addAction(a[name])
        panel_menu = file_menu.addMenu("Export Panel as PNG")
        for title, dock in self.docks.items():
            panel_menu.addAction(title, lambda d=dock: self._ask_export_png(d.widget()))
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
        run_menu = self.menuBar().addMenu("&Run")
        run_menu.addAction(a["new_episode"])
        run_menu.addAction(a["fork"])
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction(a["help"])
        help_menu.addAction(a["about"])

    def _make_toolbar(self) -> None:
        bar = self.addToolBar("Main")
        bar.setObjectName("toolbar-main")
        a = self.actions_by_name
        for name, icon in TOOLBAR_ICONS.items():
            a[name].setIcon(self.style().standardIcon(icon))
            keys = a[name].shortcut().toString()
            a[name].setToolTip(a[name].text().replace("&", "") + (f" ({keys})" if keys else ""))
        self.playback.playingChanged.connect(self._on_playing)
        for name in ("open_run", "open_episode", None, "first", "back", "play", "forward", "last", "next_error"):
            bar.addSeparator() if name is None else bar.addAction(a[name])
        bar.addSeparator()
        bar.addAction(a["export_png"])
        bar.addAction(a["export_html"])

    def _on_playing(self, playing: bool) -> None:
        icon = QStyle.StandardPixmap.SP_MediaPause if playing else QStyle.StandardPixmap.SP_MediaPlay
        self.actions_by_name["play"].setIcon(self.style().standardIcon(icon))

    # ---- opening -----------------------------------------------------------------------------------------
    def open_path(self, path: str | Path) -> bool:
        """Open a run folder or an episode file; False (and a message) when it cannot be read."""
        path = Path(path)
        return self.open_run(path) if path.is_dir() else self.open_episode_file(path)

    def open_run(self, path: Path) -> bool:
        try:
            run = load_run(path)
        except SimlabError as exc:
            return self.show_error(f"Could not open the run:\n{exc}")
        self.run = run
        self._end_live()
        self.browser.set_run(run.summaries, run.problems)
        self._remember(path)
        self.playback.set_episode(None)
        self.statusBar().showMessage(f"Opened {path} ({len(run.summaries)} episodes)", 5000)
        if run.problems:
            self.statusBar().showMessage(f"{len(run.problems)} index line(s) could not be read; see the browser")
        return True

    def open_episode_id(self, episode_id: str) -> bool:
        """Load one episode of the open run (only now is its file read)."""
        if self.run is None:
            return False
        try:
            episode = self.run.load_episode(episode_id)
        except (SimlabError, KeyError) as exc:
            return self.show_error(f"Could not open episode {episode_id}:\n{exc}")
        return self._show_episode(episode)

    def open_episode_file(self, path: Path) -> bool:
        try:
            episode = load_episode(path)
        except SimlabError as exc:
            return self.show_error(f"Could not open the episode:\n{exc}")
        self.run = None
        self._end_live()
        self.browser.set_run([episode.summary | {"episode_id": episode.episode_id, "file": path.name}], [])
        self._remember(path)
        return self._show_episode(episode)

    def _show_episode(self, episode: Episode) -> bool:
        self.playback.set_episode(episode)
        self.browser.select_episode(episode.episode_id)
        return True

    def _end_live(self) -> None:
        """Another run or episode is opened: a live session shown here stops, and its state goes with it."""
        live = getattr(self, "live", None)
        if live is not None:
            live.close()
            self.live = None
        self.set_players(None)

    def set_players(self, roles: Iterable[str] | None) -> None:
        """While people play ``roles``, the window shows only what those roles were given: their agent panels,
        no world view, no plots (progress against the target), no private reasoning, no raw model calls.
        None shows everything again (the episode ended, or another run is opened)."""
        playing = roles is not None
        self.agents.show_only(roles)
        self.world.hide_for_players(playing)
        self.plots.hide_for_players(playing)
        if playing:
            self.dialogue.set_show_reasoning(False)
        self.dialogue.reasoning_box.setEnabled(not playing)
        self.dialogue.tabs.setTabEnabled(1, not playing)  # the Raw tab: every role's model requests
        self.players = frozenset(roles) if playing else None

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
        items = [str(path.resolve()), *[p for p in self.recent() if p != str(path.resolve())]][:MAX_RECENT]
        self.settings.setValue("recent", items)
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        for item in self.recent():
            self.recent_menu.addAction(item, lambda p=item: self.open_path(p))
        self.recent_menu.setEnabled(bool(self.recent()))

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        urls: list[QUrl] = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            self.open_path(urls[0].toLocalFile())
            event.acceptProposedAction()

    # ---- exports ---------------------------------------------------------------------------------------
    def export_png(self, path: str | Path, widget: QWidget | None = None) -> bool:
        """Save a picture of the window (or one panel); the 3D view is rendered before grabbing."""
        self.world.plotter.render()
        target = widget or self
        ok = getattr(target, "grab_whole", target.grab)().save(str(path))  # a scrolled grid (Agents) grabs it all
        return ok or self.show_error(f"Could not write {path}")

    def export_html(self, path: str | Path) -> bool:
        from simlab.render.transcript import episode_html

        if self.playback.episode is None:
            return self.show_error("Open an episode first: the transcript is of one episode")
        try:
            Path(path).write_text(episode_html(self.playback.episode), encoding="utf-8")
        except OSError as exc:
            return self.show_error(f"Could not write {path}: {exc.strerror}")
        return True

    def export_animation(self, path: str | Path, first: int, last: int) -> bool:
        from simlab.render.animation import write_animation

        if self.playback.episode is None:
            return self.show_error("Open an episode first: the animation is of one episode")
        try:
            write_animation(self.playback.episode, first, last, path)
        except (SimlabError, OSError) as exc:
            return self.show_error(f"Could not write {path}: {exc}")
        return True

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
        path, _ = QFileDialog.getSaveFileName(self, "Export animation", "episode.gif", "GIF (*.gif);;MP4 (*.mp4)")
        if ok and path:
            self.export_animation(path, first, last)

    def _ask_open_run(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open run folder")
        if path:
            self.open_path(path)

    def _ask_open_episode(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open episode", "", "Episodes (*.json)")
        if path:
            self.open_path(path)

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

        try:
            agents = {}
            for item in (part.strip() for part in specs_text.split(",")):
                role, sep, spec = item.partition("=")
                if item and (not sep or not role.strip() or not spec.strip()):
                    raise ValueError(f"{item!r}: expected ROLE=SPEC (for example builder=oracle)")
                if item:
                    agents[role.strip()] = spec.strip()
            session = fork_session(self.playback.episode, self.playback.turn, agents)
        except (SimlabError, ValueError) as exc:
            self.show_error(f"Could not fork:\n{exc}")
            return None
        original, turn = self.playback.episode, self.playback.turn
        twin = MainWindow(self.settings)
        twin.remembers_layout = False  # its narrow, browser-less layout is not the one to open with next time
        twin.setWindowTitle(f"SimLab - fork of {original.episode_id} at turn {turn}")
        twin.show()
        twin.start_live(session)
        link = PlaybackLink(self.playback, twin.playback, twin)
        twin.show_fork_diff(ForkDiffView(original, twin.playback, turn, link))
        self.forks = [w for w in self.forks if w.isVisible()] + [twin]
        self.tile_forks()
        QTimer.singleShot(0, self.tile_forks)  # again once the new window's docks have their real minimum sizes
        return twin

    def tile_forks(self) -> bool:
        """This window and its open forks side by side on its screen; False (and a status message) when they
        do not fit."""
        windows = [self, *(w for w in self.forks if w.isVisible())]
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

        self.live = start_live(self, session)
        return self.live

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

    def status_text(self) -> str:
        run = self.run.path.name if self.run is not None else "-"
        episode = self.playback.episode
        if episode is None:
            return f"run {run} | no episode open"
        return f"run {run} | episode {episode.episode_id} | turn {self.playback.turn} of {self.playback.last_turn}"

    def _update_status(self) -> None:
        self.status_label.setText(self.status_text())
