"""The one interactive 3D view (pyvistaqt): the world at the playback's turn, drawn from the family's scene.

It listens to the playback model and redraws the scene items the family's views give for the turn. Camera
presets come from the family too; hovering an item that carries a tooltip (a failed move's engine reason, a
block's code and cells) shows it after the mouse rests, so picking never runs on every mouse move. A family
with no 3D scene is shown by its turn pictures instead, in the same place.

Beside the scene, the family's layers are a checkable list with their legend (what each colour means), and a
click on an item (a press and release without a drag) shows what the family's inspector says of it: what it
is, who sees it and why, with the rays or sight lines that decide it drawn while it stays selected.
"""

from __future__ import annotations

import html
from typing import Any

import vtk
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QColor, QCursor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSplitter,
    QStackedLayout,
    QToolButton,
    QToolTip,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)
from pyvistaqt import QtInteractor

from simlab.core.episode import Episode
from simlab.core.family import RGB, FamilyViews, Inspection, Layer
from simlab.gui.agent_panels import pil_to_pixmap
from simlab.gui.playback import PlaybackModel
from simlab.render.episode_pictures import side_by_side, views_of
from simlab.render.scene import CameraPose, SceneItem, add_items, set_camera

BLIND_TEXT = (
    "The world view is hidden while a person plays: it shows what their role may not see (the target, the other "
    "agents' views). It comes back when the episode ends."
)
HIDDEN = "Hidden"
HOVER_DELAY_MS = 250
CLICK_SLOP_PX = 4  # a press and release closer than this is a click, farther a camera drag
SELECT_HINT = "Click an object in the view to see what it is, who sees it and why."


class WorldView(QWidget):
    """The 3D world at the current turn, with camera presets and a target toggle."""

    def __init__(self, playback: PlaybackModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.playback = playback
        self.views: FamilyViews | None = None
        self.items: list[SceneItem] = []
        self._tooltips: dict[str, str] = {}
        self._shown: dict[str, tuple[tuple[Any, ...], Any]] = {}  # key -> (signature, actor) on screen
        self.plotter = QtInteractor(self, auto_update=False)
        self.plotter.set_background("white")
        self._camera_row = QHBoxLayout()
        self.target_mode = QComboBox()  # the family's overlay: each way it is drawn, then Hidden
        self.target_mode.currentTextChanged.connect(lambda _text: self.redraw())
        self.message = QLabel("")
        self.picture = QLabel()  # a family without a 3D scene: its turn pictures
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture.setStyleSheet("background: white")
        self.picture.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.overlay_label = QLabel("Target:")
        self.blind = QLabel(BLIND_TEXT)  # while a person plays: the world as a whole is not theirs to see
        self.blind.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.blind.setWordWrap(True)
        self.hidden_for_players = False
        self.cameras: dict[str, CameraPose] = {}
        self.layer_list = QTreeWidget()  # the family's layers, each with its legend
        self.layer_list.setHeaderHidden(True)
        self.layer_list.setRootIsDecorated(False)
        self.layer_list.itemChanged.connect(self._on_layer_toggled)
        self.selection = QLabel(SELECT_HINT)  # what the inspector says of the clicked item
        self.selection.setWordWrap(True)
        self.selection.setTextFormat(Qt.TextFormat.RichText)
        self.selection.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.selection.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.side = self._side_panel()
        self._layers_off: set[str] = set()  # layer names switched off, kept across episodes
        self._layers_seen: set[str] = set()  # layer names shown before: their tick is the person's choice
        self._selected = ""  # the key of the inspected item, "" when nothing is selected
        self.inspection: Inspection | None = None
        self._keys: dict[str, str] = {}  # actor address -> item key, for clicks
        self._press: tuple[int, int] | None = None
        self._layout(self._camera_row)
        self._hover = QTimer(self, singleShot=True, interval=HOVER_DELAY_MS, timeout=self._show_tooltip)
        self.plotter.iren.add_observer("MouseMoveEvent", lambda *_args: self._hover.start())
        self.plotter.iren.add_observer("LeftButtonPressEvent", self._on_press)
        self.plotter.iren.add_observer("LeftButtonReleaseEvent", self._on_release)
        self._vtk_keys = _SwallowVtkKeys(self)
        self.plotter.interactor.installEventFilter(self._vtk_keys)
        playback.episodeChanged.connect(self._on_episode)
        playback.turnChanged.connect(lambda _turn: self.redraw())

    def _layout(self, cameras: QHBoxLayout) -> None:
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Camera:"))
        bar.addLayout(cameras)
        bar.addStretch(1)
        bar.addWidget(self.message)
        bar.addWidget(self.overlay_label)
        bar.addWidget(self.target_mode)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        shown = QWidget()
        self.stack = QStackedLayout(shown)
        self.stack.addWidget(self.plotter.interactor)
        self.stack.addWidget(self.picture)
        self.stack.addWidget(self.blind)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(shown)
        self.splitter.addWidget(self.side)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setCollapsible(0, False)
        self.splitter.setSizes([1000, 230])
        layout.addWidget(self.splitter, 1)

    def _side_panel(self) -> QWidget:
        """The layer list (with its legend) above the selection's facts; collapsible with the splitter."""
        side = QWidget()
        column = QVBoxLayout(side)
        column.setContentsMargins(4, 0, 0, 0)
        heading = QLabel("<b>Layers</b>")
        heading.setToolTip("Switch what the view draws; the swatches say what each colour means")
        column.addWidget(heading)
        column.addWidget(self.layer_list)
        column.addWidget(QLabel("<b>Selected</b>"))
        column.addWidget(self.selection, 1)
        side.setMinimumWidth(170)
        return side

    # ---- following the playback ----------------------------------------------------------------------
    def _on_episode(self, episode: Episode | None) -> None:
        self.views = views_of(episode) if episode is not None else None
        has_scene = self.views is not None and self.views.scene is not None
        controls = has_scene and not self.hidden_for_players  # no camera or overlay to choose while hidden
        self.cameras = dict(self.views.cameras(episode)) if controls and episode is not None else {}
        self.overlay_label.setText(f"{self.views.overlay_label}:" if self.views is not None else "Target:")
        self._overlay_modes()
        styles = controls and self.views is not None and bool(self.views.overlay_styles)
        self.overlay_label.setVisible(styles)
        self.target_mode.setVisible(styles)
        self._fill_layers(self.views.layers if controls and self.views is not None else ())
        inspectable = controls and self.views is not None and self.views.inspect is not None
        self.side.setVisible(bool(self.layer_list.topLevelItemCount()) or inspectable)
        self._selected = ""  # a new episode: the old selection's key may name nothing in it
        shown = self.plotter.interactor if has_scene or self.views is None else self.picture
        self.stack.setCurrentWidget(self.blind if self.hidden_for_players else shown)
        self._rebuild_camera_buttons()
        if self.hidden_for_players:
            self.message.setText("")
        elif episode is not None and self.views is None:
            self.message.setText(f"SimLab does not know world {episode.world!r}: nothing to draw")
        elif episode is not None and not has_scene:
            self.message.setText(f"{episode.world} has no 3D scene: its pictures of the turn")
        else:
            self.message.setText("")
        self.redraw()
        if controls and self.views is not None:
            self.set_camera(self.views.default_camera)

    def _overlay_modes(self) -> None:
        """The family's overlay styles (and Hidden) in the combo box, keeping the choice when it still exists."""
        styles = [s.capitalize() for s in self.views.overlay_styles] if self.views is not None else []
        modes = [*styles, HIDDEN] if styles else []  # nothing to choose before an episode is open
        if [self.target_mode.itemText(k) for k in range(self.target_mode.count())] == modes:
            return
        current = self.target_mode.currentText()
        self.target_mode.blockSignals(True)
        self.target_mode.clear()
        self.target_mode.addItems(modes)
        if modes:
            self.target_mode.setCurrentText(current if current in modes else modes[0])
        self.target_mode.blockSignals(False)
        self.target_mode.setToolTip(self.views.overlay_help if self.views is not None else "")

    def _rebuild_camera_buttons(self) -> None:
        while self._camera_row.count():
            widget = self._camera_row.takeAt(0).widget()
            if widget is not None:
                widget.hide()  # out of sight now: deleteLater waits for the event loop
                widget.deleteLater()
        for name in self.cameras:
            button = QToolButton()  # compact: the bar must fit a window tiled beside a fork
            button.setText(name)
            button.setToolTip(f"View from {name}")
            button.clicked.connect(lambda _checked=False, n=name: self.set_camera(n))
            self._camera_row.addWidget(button)

    def hide_for_players(self, hidden: bool) -> None:
        """While a person plays, show nothing of the world (it shows what their role may not see: the target,
        the other agents' views); afterwards the scene or pictures come back as they were."""
        self.hidden_for_players = hidden
        if hidden:  # empty the 3D view's last frame too: a grab of the window must not show it either
            self.redraw()
            self.plotter.render()
        self._on_episode(self.playback.episode)

    def redraw(self) -> None:
        """Draw the scene of the current turn (nothing when there is no episode or no views for it).

        Only items that changed since the last turn are removed and added: a step usually moves one block,
        and re-adding every actor costs more than rendering the frame."""
        episode = self.playback.episode
        self.items = []
        self.inspection = None
        if self.hidden_for_players:
            pass  # nothing of the world is drawn: the actors on screen are removed below
        elif episode is not None and self.views is not None and self.views.scene is None:
            self._draw_pictures(episode)
        elif episode is not None and self.views is not None and self.views.scene is not None:
            self.items = self._scene_items(episode, self.views)
        wanted = {item.key: (_signature(item), item) for item in self.items}
        for key in [k for k, (sig, _a) in self._shown.items() if wanted.get(k, (None,))[0] != sig]:
            self.plotter.remove_actor(self._shown.pop(key)[1], render=False)
        fresh = [item for key, (_sig, item) in wanted.items() if key not in self._shown]
        for key, actor in add_items(self.plotter, fresh).items():
            self._shown[key] = (wanted[key][0], actor)
        self._tooltips = {
            _address(a): wanted[k][1].tooltip for k, (_s, a) in self._shown.items() if wanted[k][1].tooltip
        }
        self._keys = {_address(a): k for k, (_s, a) in self._shown.items() if wanted[k][1].tooltip}
        if self.inspection is None:
            self._selected = ""  # nothing there to inspect (or nothing drawn): the selection is cleared
        self.selection.setText(_inspection_html(self.inspection) if self.inspection is not None else SELECT_HINT)
        # Ask Qt for a repaint: paintGL renders the scene once. pyvistaqt's render() would render now and
        # again in the paint it triggers (measured: two 33 ms renders per step under Xvfb).
        QWidget.update(self.plotter.interactor)

    def _scene_items(self, episode: Episode, views: FamilyViews) -> list[SceneItem]:
        """The family's items at the turn, without the layers switched off, plus the selection's own."""
        assert views.scene is not None
        mode = self.target_mode.currentText()
        style = mode.lower() if mode != HIDDEN and views.overlay_styles else (views.overlay_styles or ("",))[0]
        items = views.scene(episode, self.playback.turn, overlay=mode != HIDDEN, style=style)
        off = {kind for layer in views.layers if layer.name in self._layers_off for kind in layer.kinds}
        self.inspection = self._inspect(episode, views)
        if self.inspection is not None:
            off.update(self.inspection.hides)
        items = [item for item in items if item.kind not in off]
        return items + list(self.inspection.items if self.inspection is not None else ())

    def _inspect(self, episode: Episode, views: FamilyViews) -> Inspection | None:
        """What the family says of the selected item at this turn (it may change with the turn)."""
        if not self._selected or views.inspect is None:
            return None
        return views.inspect(episode, self.playback.turn, self._selected)

    def _draw_pictures(self, episode: Episode) -> None:
        """A family without a 3D scene: its pictures of the turn, side by side, fitted to the view."""
        assert self.views is not None
        pictures = list(self.views.turn_pictures(episode, self.playback.turn).values())
        size = (max(320, self.picture.width()), max(240, self.picture.height()))
        self.picture.setPixmap(pil_to_pixmap(side_by_side(pictures, size)))

    def set_camera(self, name: str) -> None:
        """Move the camera to a preset of the current family."""
        if name in self.cameras:
            set_camera(self.plotter, self.cameras[name])
            QWidget.update(self.plotter.interactor)

    # ---- layers and selection --------------------------------------------------------------------------
    def _fill_layers(self, layers: tuple[Layer, ...]) -> None:
        """One checkable row per layer, its legend entries (a swatch and what the colour means) under it."""
        self.layer_list.blockSignals(True)
        self.layer_list.clear()
        for layer in layers:
            row = QTreeWidgetItem([layer.name])
            row.setData(0, Qt.ItemDataRole.UserRole, layer.name)
            row.setFlags(row.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            on = layer.visible if layer.name not in self._layers_seen else layer.name not in self._layers_off
            row.setCheckState(0, Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
            row.setToolTip(0, layer.help)
            for label, rgb in layer.legend:
                entry = QTreeWidgetItem([label])
                entry.setIcon(0, _swatch(rgb))
                entry.setFlags(Qt.ItemFlag.ItemIsEnabled)
                row.addChild(entry)
            self.layer_list.addTopLevelItem(row)
            row.setExpanded(True)
            self._layers_seen.add(layer.name)
            if not on:
                self._layers_off.add(layer.name)
        self.layer_list.blockSignals(False)
        rows = sum(1 + len(layer.legend) for layer in layers)  # tall enough for every row: no scrolling
        self.layer_list.setFixedHeight(rows * max(self.layer_list.sizeHintForRow(0), 16) + 6)

    def _on_layer_toggled(self, row: QTreeWidgetItem, _column: int) -> None:
        name = row.data(0, Qt.ItemDataRole.UserRole)
        if name is None:
            return  # a legend entry
        if row.checkState(0) == Qt.CheckState.Checked:
            self._layers_off.discard(name)
        else:
            self._layers_off.add(name)
        self.redraw()

    def layer_names(self) -> list[str]:
        """The family's layers, in list order."""
        rows = (self.layer_list.topLevelItem(k) for k in range(self.layer_list.topLevelItemCount()))
        return [row.text(0) for row in rows]

    def set_layer_visible(self, name: str, visible: bool) -> None:
        """Tick or untick a layer, as a click on its box does (KeyError for a layer the family lacks)."""
        for k in range(self.layer_list.topLevelItemCount()):
            row = self.layer_list.topLevelItem(k)
            if row.text(0) == name:
                row.setCheckState(0, Qt.CheckState.Checked if visible else Qt.CheckState.Unchecked)
                return
        raise KeyError(name)

    def select(self, key: str) -> Inspection | None:
        """Inspect the item ``key`` ("" clears the selection); returns what the family says of it (None when
        it names nothing inspectable, which clears the selection)."""
        self._selected = key
        self.redraw()
        return self.inspection

    def key_at(self, x: int, y: int) -> str:
        """The key of the item under display point (x, y) in VTK's pixel coordinates, or ''."""
        actor = self._pick(x, y)
        return self._keys.get(_address(actor), "") if actor is not None else ""

    def _on_press(self, *_args: Any) -> None:
        self._press = self.plotter.iren.get_event_position()

    def _on_release(self, *_args: Any) -> None:
        """A click (no drag) selects the item under the mouse, or clears the selection over empty space."""
        x, y = self.plotter.iren.get_event_position()
        press, self._press = self._press, None
        if press is None or abs(x - press[0]) + abs(y - press[1]) > CLICK_SLOP_PX:
            return
        if self.views is not None and self.views.inspect is not None:
            self.select(self.key_at(x, y))

    def count(self, kind: str) -> int:
        """How many drawn items are of ``kind`` (``block``, ``failed``, ``highlight``...)."""
        return sum(1 for item in self.items if item.kind == kind)

    # ---- hover tooltips --------------------------------------------------------------------------------
    def tooltip_at(self, x: int, y: int) -> str:
        """The tooltip of the item under display point (x, y) in VTK's pixel coordinates, or ''."""
        actor = self._pick(x, y)
        return self._tooltips.get(_address(actor), "") if actor is not None else ""

    def _pick(self, x: int, y: int) -> Any:
        picker = vtk.vtkPropPicker()
        picker.Pick(x, y, 0, self.plotter.renderer)
        return picker.GetActor()

    def _show_tooltip(self) -> None:
        x, y = self.plotter.iren.get_event_position()
        text = self.tooltip_at(x, y)
        if text:
            QToolTip.showText(QCursor.pos(), text, self.plotter.interactor)
        else:
            QToolTip.hideText()

    def close_view(self) -> None:
        """Release the render window before Qt deletes the widget (pyvistaqt needs this order)."""
        self._hover.stop()
        self.plotter.close()


def _swatch(rgb: RGB, size: int = 12) -> QIcon:
    pixmap = QPixmap(size, size)
    pixmap.fill(QColor(*rgb))
    return QIcon(pixmap)


def _inspection_html(found: Inspection) -> str:
    """The inspector's facts as rich text; every piece is escaped (ids and names come from recordings)."""
    lines = "".join(f"<li>{html.escape(line)}</li>" for line in found.lines)
    return f"<b>{html.escape(found.title)}</b><ul style='margin-left:-20px'>{lines}</ul>"


def _signature(item: SceneItem) -> tuple[Any, ...]:
    """What makes an item look the way it does; an item whose signature is unchanged stays on screen."""
    look = (item.kind, item.color, item.opacity, item.style, item.tooltip, item.line_width, item.edged, item.culled)
    return (*look, item.mesh.bounds)


def _address(actor: Any) -> str:
    # Pickers hand back a fresh Python wrapper of the same VTK actor, so match on the C++ object.
    return actor.GetAddressAsString("vtkObject")


class _SwallowVtkKeys(QObject):
    """Keeps VTK's own one-letter keys away from the 3D view: ``w`` would turn every block to wireframe (they
    then look like target ghosts), ``3`` switches to red/blue stereo, ``e``/``q`` close the render window,
    ``p``/``f``/``j``/``t``/``r``/``u`` pick, fly, change the style or reset. The app's shortcuts (F1) still work:
    Qt matches them before the widget gets the key."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            key = event  # a QKeyEvent
            chord = (
                Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.MetaModifier
            )
            plain = not (key.modifiers() & chord)  # type: ignore[attr-defined]
            if plain and key.text() and key.text().isprintable():  # type: ignore[attr-defined]
                return True
        return False
