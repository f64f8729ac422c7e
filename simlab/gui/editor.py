"""The scene and view editor: ``python main.py edit FILE|FAMILY`` opens a family's document in this window.

Everything is an edit of the headless document (:mod:`simlab.core.editing`); the window only turns gestures
into the document's operations and pushes the edits they return on a ``QUndoStack`` (one
:class:`EditCommand` each; the steps of one drag merge into one undo step), then redraws what the document
says: the 3D scene, the entity list with warnings, the selected entity's form and facts, each agent's
pictures and a summary. Mouse, in the 3D view: press on an entity and drag to move it (the floor under the
mouse is where it goes), click to select; with a palette entry chosen as the tool, a click places it where
the mouse is and a drag lays it across the cells it crosses. Elsewhere the mouse turns the camera as usual.

Nothing is lost: unsaved changes are written beside the file (``.NAME.autosave``, or in the app's data
folder for a document never saved) two seconds after each edit, offered back when the file is opened again,
and closing with unsaved changes asks first.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, QStandardPaths, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QMouseEvent, QUndoCommand, QUndoStack
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from simlab.core.editing import Edit, EditorDocument, Proposal, write_json
from simlab.core.errors import SimlabError
from simlab.gui.background import collect_while_shown, collection_in_gui_thread
from simlab.gui.editor_panels import EntityList, PalettePanel, PicturesPanel, PropertiesPanel, ProposalDialog
from simlab.gui.qt_app import application
from simlab.gui.scene_canvas import CLICK_SLOP_PX, SceneCanvas
from simlab.gui.validity_view import ValidityJob, ValidityLauncher
from simlab.worlds import get_family, open_document

AUTOSAVE_MS = 2000
DRAFT_SCALE = 3.0  # a drag's frames of the 3D view have a ninth of its pixels: llvmpipe's cost is per pixel drawn
DRAFT_REST_MS = 250  # the mouse held still this long in a drag: the views at full quality until it moves again


class EditCommand(QUndoCommand):
    """One document edit on the undo stack; edits of one gesture merge (``merge_key`` -> the command id)."""

    def __init__(self, window: EditorWindow, edit: Edit) -> None:
        super().__init__(edit.text)
        self.window, self.edit = window, edit

    def id(self) -> int:
        key = self.edit.merge_key
        return zlib.crc32(key.encode()) & 0x7FFFFFFF if key is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        joined = self.edit.merged(other.edit) if isinstance(other, EditCommand) else None
        if joined is None:
            return False
        self.edit = joined
        self.setText(joined.text)
        return True

    def redo(self) -> None:
        self.edit.redo(self.window.document)
        self.window.edited(self.edit.select)

    def undo(self) -> None:
        self.edit.undo(self.window.document)
        self.window.edited(None)


class EditorWindow(QMainWindow):
    """A family's document in 3D with its entity list, palette, properties and agents' pictures."""

    def __init__(self, document: EditorDocument) -> None:
        super().__init__()
        self.document = document
        self.selected: str | None = None
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._update_title)
        self.canvas = SceneCanvas(self)
        self.entity_list = EntityList()
        self.add_panel = PalettePanel()
        self.properties = PropertiesPanel()
        self.pictures = PicturesPanel()
        self.summary = QLabel("")
        self._camera_row = QHBoxLayout()
        self._drag: _Drag | None = None
        self._dragging = False
        self._gestures = 0
        collect_while_shown(self)  # see gui/background.py: for a script that shows it without run_editor
        self._autosave = QTimer(self, singleShot=True, interval=AUTOSAVE_MS)
        self._autosave.timeout.connect(self.autosave)
        self._rest = QTimer(self, singleShot=True, interval=DRAFT_REST_MS)
        self._rest.timeout.connect(lambda: self._draft(False))
        has_validity = get_family(document.family).validity is not None
        self.validity = ValidityLauncher(self, self.say) if has_validity else None
        self._build()
        self.canvas.widget.installEventFilter(self._mouse)
        self.resize(1500, 950)
        self.refresh()
        cameras = self.document.cameras()
        if cameras:  # the free three-quarter view frames everything; an agent's eye is a close-up
            self.canvas.set_camera(cameras.get("free") or next(iter(cameras.values())))

    # ---- building ----------------------------------------------------------------------------------
    def _build(self) -> None:
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Camera:"))
        bar.addLayout(self._camera_row)
        bar.addStretch(1)
        column.addLayout(bar)
        # its own wrapped line: on the camera bar, a long summary set the 3D view's minimum width and squeezed
        # the side docks to a sliver
        self.summary.setWordWrap(True)
        column.addWidget(self.summary)
        column.addWidget(self.canvas.widget, 1)
        self.setCentralWidget(central)
        self._mouse = _MouseFilter(self)
        self.docks = {
            "Scene": self._dock("Scene", self.entity_list, Qt.DockWidgetArea.LeftDockWidgetArea),
            "Add": self._dock("Add", self.add_panel, Qt.DockWidgetArea.LeftDockWidgetArea),
            "Properties": self._dock("Properties", self.properties, Qt.DockWidgetArea.RightDockWidgetArea),
            "Agents' views": self._dock("Agents' views", self.pictures, Qt.DockWidgetArea.RightDockWidgetArea),
        }
        self.entity_list.chosen.connect(self.select)
        self.add_panel.add_requested.connect(self.add)
        self.properties.applied.connect(self.apply_values)
        self._make_actions()
        self.add_panel.fill(self.document.palette())
        self._camera_buttons()

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"editor-{title}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _make_actions(self) -> None:
        bar = self.addToolBar("Edit")
        bar.setObjectName("editor-toolbar")
        menu = self.menuBar().addMenu("&File")
        for text, slot, keys in (
            ("&Save", self.ask_save, QKeySequence.StandardKey.Save),
            ("Save &As...", self.ask_save_as, QKeySequence.StandardKey.SaveAs),
        ):
            action = menu.addAction(text, slot)
            action.setShortcut(keys)
            bar.addAction(action)
        edit_menu = self.menuBar().addMenu("&Edit")
        undo = self.undo_stack.createUndoAction(self, "&Undo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self.undo_stack.createRedoAction(self, "&Redo")
        redo.setShortcut(QKeySequence.StandardKey.Redo)
        self.delete_action = QAction("&Delete", self)
        self.delete_action.setShortcut(QKeySequence.StandardKey.Delete)
        self.delete_action.triggered.connect(lambda: self.on_selected(self.document.remove))
        self.duplicate_action = QAction("D&uplicate", self)
        self.duplicate_action.setShortcut(QKeySequence("Ctrl+D"))
        self.duplicate_action.triggered.connect(lambda: self.on_selected(self.document.duplicate))
        for action in (undo, redo, self.delete_action, self.duplicate_action):
            edit_menu.addAction(action)
            bar.addAction(action)
        world = self.menuBar().addMenu("&World")
        for doc_action in self.document.actions():
            action = world.addAction(doc_action.name, self._action_runner(doc_action.name))
            action.setToolTip(doc_action.help)
            bar.addAction(action)
        play = world.addAction("&Play This...", self.ask_play)
        play.setToolTip("Start a live episode on what you authored, with agents of your choice")
        bar.addAction(play)
        if self.validity is not None:  # only a family that can judge its benchmarks offers it
            report = world.addAction("&Validity Report...", self.ask_validity)
            report.setToolTip("What simple baselines score on a benchmark folder, per group (`validity BENCH`)")

    def _camera_buttons(self) -> None:
        for name, pose in self.document.cameras().items():
            button = QToolButton()
            button.setText(name)
            button.clicked.connect(lambda _checked=False, p=pose: self.canvas.set_camera(p))
            self._camera_row.addWidget(button)

    # ---- edits -------------------------------------------------------------------------------------
    def push(self, edit: Edit | None) -> bool:
        """Apply ``edit`` through the undo stack (None: nothing to do)."""
        if edit is None:
            return False
        self.undo_stack.push(EditCommand(self, edit))
        return True

    def push_op(self, operation: Any, *args: Any, **kwargs: Any) -> bool:
        """Run a document operation and push its edit; an EditError is said in the status bar, nothing changes."""
        try:
            return self.push(operation(*args, **kwargs))
        except (SimlabError, ValueError) as exc:
            self.say(str(exc), error=True)
            return False

    def on_selected(self, operation: Any) -> bool:
        """Run ``operation`` (delete, duplicate) on the selected entity, if any."""
        if self.selected is None:
            self.say("Select something first", error=True)
            return False
        return self.push_op(operation, self.selected)

    def add(self, name: str) -> bool:
        """Add palette entry ``name`` where the document finds room."""
        return self.push_op(self.document.add, name)

    def apply_values(self, values: dict[str, Any]) -> bool:
        """Set the selected entity's fields (the Properties form's Apply)."""
        return self.selected is not None and self.push_op(self.document.set_values, self.selected, values)

    def select(self, entity: str | None) -> None:
        """Select ``entity`` (None clears the selection)."""
        self.selected = entity if entity and self.document.state(entity) is not None else None
        self.refresh()

    def edited(self, select: str | None) -> None:
        """After an edit was done or undone: keep the selection valid, redraw, schedule an autosave."""
        if select is not None:
            self.selected = select
        elif self.selected is not None and self.document.state(self.selected) is None:
            self.selected = None
        self.refresh()
        self._autosave.start()

    def begin_drag(self) -> None:
        """A drag has started moving something: until :meth:`end_drag` an edit redraws only the views and the
        counts (exact at every step), the views as drafts while the mouse moves."""
        self._dragging = True

    def end_drag(self) -> None:
        """The drag is over: the views at full quality, the panels it left alone redrawn."""
        self._dragging = False
        self._rest.stop()
        self._draft(False)
        self.refresh()

    def _draft(self, on: bool) -> None:
        """Draw the 3D view and the agents' live views as drafts (fewer pixels) or at full quality."""
        self.canvas.set_draft(DRAFT_SCALE if on else 1)
        self.pictures.set_draft(on)

    # ---- drawing -----------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Redraw everything the document shows; during a drag only the views (drafts) and the counts, the rest
        when the mouse is released."""
        doc = self.document
        if self._dragging:  # drafts while the mouse moves; full quality once it rests
            self._draft(True)
            self._rest.start()
        self.canvas.show(doc.scene_items(self.selected))
        live = doc.agent_views()
        if live:  # drawn here from the scene, only what changed: no off-screen render per edit
            self.pictures.show_live(doc.agent_scene(), live)
        self.summary.setText(doc.summary())
        if self._dragging:
            return
        entities = doc.entities()
        self.entity_list.fill(entities, self.selected)
        if self.selected is None:
            self.properties.clear_entity()
        else:
            label = next((e.label for e in entities if e.id == self.selected), self.selected)
            facts = doc.inspect(self.selected)
            self.properties.show_entity(label, doc.fields(self.selected), doc.values(self.selected), facts)
        if not live:
            self.pictures.show_pictures(doc.pictures())
        self._update_title()

    def _update_title(self, clean: bool | None = None) -> None:
        """``clean`` comes with the stack's signal (asking the stack then is unsafe: it may be going away)."""
        name = self.document.path.name if self.document.path is not None else f"untitled {self.document.family}"
        mark = "" if (self.undo_stack.isClean() if clean is None else clean) else " *"
        self.setWindowTitle(f"SimLab editor - {name}{mark}")

    def say(self, text: str, error: bool = False) -> None:
        """A message in the status bar (red for a refused edit)."""
        self.statusBar().setStyleSheet("color: #c62828" if error else "")
        self.statusBar().showMessage(text, 10000)

    # ---- files -------------------------------------------------------------------------------------
    @property
    def dirty(self) -> bool:
        return not self.undo_stack.isClean()

    def save(self, path: Path | None = None) -> Path | None:
        """Save the document (to ``path``, else its own file); the autosave goes."""
        old_autosave = self.autosave_path()
        try:
            written = self.document.save(path)
        except (SimlabError, OSError) as exc:
            self.say(f"Could not save: {exc}", error=True)
            return None
        self.undo_stack.setClean()
        for stale in {path for path in (old_autosave, self.autosave_path()) if path is not None}:
            stale.unlink(missing_ok=True)
        self.say(f"Saved {written}")
        return written

    def ask_save(self) -> Path | None:
        return self.save() if self.document.path is not None else self.ask_save_as()

    def ask_save_as(self) -> Path | None:
        kind = get_family(self.document.family).load_editor()
        path, _filter = QFileDialog.getSaveFileName(self, "Save as", "", kind.file_filter if kind else "")
        return self.save(Path(path)) if path else None

    def autosave_path(self) -> Path | None:
        """Where unsaved changes are kept: beside the file, or in the app's data folder for an untitled one."""
        own = self.document.autosave_path()
        if own is not None:
            return own
        folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
        return Path(folder or Path.home() / ".simlab") / "autosave" / f"untitled-{self.document.family}.json"

    def autosave(self) -> Path | None:
        """Write unsaved changes beside the file (nothing when there are none)."""
        path = self.autosave_path()
        if not self.dirty or path is None:
            return None
        try:
            write_json(path, self.document.to_json())
        except (SimlabError, OSError) as exc:
            self.say(f"Could not autosave to {path}: {exc}", error=True)
            return None
        return path

    def closeEvent(self, event: Any) -> None:
        if self.dirty:
            button = QMessageBox.StandardButton
            answer = QMessageBox.question(
                self,
                "Unsaved changes",
                "Save the changes before closing?",
                button.Save | button.Discard | button.Cancel,
            )
            if answer == button.Cancel or (answer == button.Save and self.ask_save() is None):
                event.ignore()
                return
            if answer == button.Discard:
                path = self.autosave_path()
                if path is not None:
                    path.unlink(missing_ok=True)
        self._autosave.stop()
        self.pictures.close_views()
        self.canvas.close()
        super().closeEvent(event)

    # ---- actions -----------------------------------------------------------------------------------
    def _action_runner(self, name: str) -> Callable[[], object]:
        """The World menu's slot for the document action ``name``."""
        return lambda: self.run_action(name)

    def run_action(self, name: str) -> ProposalDialog | None:
        """Run a document action: a proposal opens for review (returned, so tests can drive it); a sentence
        goes to the status bar."""
        try:
            result = self.document.run(name)
        except (SimlabError, ValueError) as exc:
            self.say(str(exc), error=True)
            return None
        if isinstance(result, Proposal):
            dialog = ProposalDialog(result, self)
            dialog.accepted.connect(lambda: self._save_proposal(dialog))
            dialog.open()
            return dialog
        self.say(result)
        return None

    def _save_proposal(self, dialog: ProposalDialog, path: Path | None = None) -> Path | None:
        if path is None:
            chosen, _filter = QFileDialog.getSaveFileName(self, dialog.proposal.title, "", dialog.proposal.suffix)
            if not chosen:
                return None
            path = Path(chosen)
        return self.save_proposal(dialog, path)

    def save_proposal(self, dialog: ProposalDialog, path: Path) -> Path | None:
        """Save the proposals kept in ``dialog`` to ``path``."""
        try:
            written = dialog.proposal.save(dialog.kept(), path)
        except (SimlabError, OSError, ValueError) as exc:
            self.say(f"Could not save: {exc}", error=True)
            return None
        self.say(f"Wrote {len(dialog.kept())} to {written}")
        if self.validity is not None:  # "Validity Report..." then starts at the benchmark just written
            self.validity.last_folder = written if written.is_dir() else written.parent
        return written

    def ask_validity(self, folder: Path | None = None) -> ValidityJob | None:
        """The family's validity report of a benchmark ``folder`` (asked for when None, starting at the one
        last saved), computed off the GUI thread and shown in a dialog; returns the job (None: not started)."""
        if self.validity is None:
            self.say(f"The {self.document.family} world has no validity report", error=True)
            return None
        return self.validity.ask(get_family(self.document.family), folder)

    def ask_play(self) -> None:
        from simlab.gui.editor_play import PlayDialog  # the main window's modules load only when someone plays

        PlayDialog(self.document, self).open()


class _Drag:
    """A gesture in progress: the entity moved (or the tool laid) and the world points so far."""

    def __init__(self, entity: str | None, tool: str | None, start: tuple[int, int], gesture: str) -> None:
        self.entity, self.tool, self.start, self.gesture = entity, tool, start, gesture
        self.points: list[tuple[float, float, float]] = []
        self.keys: list[str] = []
        self.moved = False


class _MouseFilter(QObject):
    """The editor's mouse in the 3D view: drags move entities or lay tools; anything else goes to VTK."""

    def __init__(self, window: EditorWindow) -> None:
        super().__init__(window)
        self.window = window

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.MouseButtonPress and isinstance(event, QMouseEvent):
            return self._press(event)
        if kind == QEvent.Type.MouseMove and isinstance(event, QMouseEvent) and self.window._drag is not None:
            self._move(event)
            return True
        if kind == QEvent.Type.MouseButtonRelease and isinstance(event, QMouseEvent) and self.window._drag is not None:
            self._release(event)
            return True
        return False

    def _press(self, event: QMouseEvent) -> bool:
        if event.button() != Qt.MouseButton.LeftButton:
            return False
        win = self.window
        x, y = win.canvas.display_point(event.position().toPoint())
        tool = win.add_panel.tool
        key = win.canvas.key_at(x, y)
        entity = win.document.entity_of(key) if key else None
        if tool is None and entity is None:
            return False  # empty space: VTK turns the camera
        win._gestures += 1
        win._drag = _Drag(entity, tool, (x, y), f"drag-{win._gestures}")
        self._record(x, y)
        return True

    def _record(self, x: int, y: int) -> None:
        drag, canvas = self.window._drag, self.window.canvas
        assert drag is not None
        hit = canvas.surface_point(x, y) if drag.tool is not None else None
        point = hit[1] if hit is not None else canvas.plane_point(x, y)
        if point is not None:
            drag.points.append(point)
            drag.keys.append(hit[0] if hit is not None else "")

    def _move(self, event: QMouseEvent) -> None:
        win, drag = self.window, self.window._drag
        assert drag is not None
        x, y = win.canvas.display_point(event.position().toPoint())
        if not drag.moved and abs(x - drag.start[0]) + abs(y - drag.start[1]) > CLICK_SLOP_PX:
            drag.moved = True
            if drag.tool is None:
                win.begin_drag()
        self._record(x, y)
        if drag.moved and drag.tool is None and drag.entity is not None and drag.points:
            win.push_op(win.document.move, drag.entity, drag.points[-1], drag.gesture)

    def _release(self, event: QMouseEvent) -> None:
        win, drag = self.window, self.window._drag
        win._drag = None
        assert drag is not None
        if drag.moved and drag.tool is None:
            win.end_drag()  # the list, form and facts were left alone during the drag
        if drag.tool is not None and drag.points:
            if drag.moved:
                win.push_op(win.document.stroke, drag.points, drag.tool)
            else:
                win.push_op(win.document.click, drag.keys[0], drag.points[0], drag.tool)
        elif not drag.moved:
            win.select(drag.entity)


def run_editor(target: str | Path) -> int:
    """Open the editor on ``target`` (a file, or a family name for a new document) and run the event loop."""
    app = application()
    document = open_document(target)
    with collection_in_gui_thread(app):  # see gui/background.py
        window = EditorWindow(document)
        window.show()
        offer_autosave(window)
        return int(app.exec())


def offer_autosave(window: EditorWindow) -> bool:
    """When unsaved changes of this file were autosaved, offer them back; True when they were restored."""
    path = window.autosave_path()
    original = window.document.path
    if path is None or not path.exists() or (original is not None and path.stat().st_mtime < original.stat().st_mtime):
        return False
    answer = QMessageBox.question(window, "Unsaved changes", f"Restore the unsaved changes kept in {path}?")
    if answer != QMessageBox.StandardButton.Yes:
        return False
    return restore(window, path)


def restore(window: EditorWindow, autosave: Path) -> bool:
    """Load the autosaved document into ``window`` as unsaved changes of its file."""
    kind = get_family(window.document.family).load_editor()
    try:
        assert kind is not None  # the window edits a document of this family
        document = kind.open(autosave)
    except (SimlabError, OSError) as exc:
        window.say(f"Could not restore {autosave}: {exc}", error=True)
        return False
    document.path = window.document.path
    window.document = document
    window.undo_stack.clear()
    window.undo_stack.resetClean()  # there is nothing to undo, but the file on disk is not this
    window.selected = None
    window.refresh()
    return True
