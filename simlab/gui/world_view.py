"""The app's 3D world view: the world at the playback's turn, drawn from the family's scene on a SceneCanvas.

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
from concurrent.futures import Future
from functools import partial

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QColor, QIcon, QImage, QPainter, QPaintEvent, QPixmap, QRegion
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSplitter,
    QStackedLayout,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from simlab.core.episode import Episode
from simlab.core.family import RGB, FamilyViews, Inspection, Layer
from simlab.gui import frame_thread
from simlab.gui.dialogue import pil_to_qimage
from simlab.gui.layouts import settle, take_widgets, widgets_in
from simlab.gui.playback import PlaybackModel
from simlab.gui.scene_canvas import SceneCanvas
from simlab.render.episode_pictures import side_by_side, views_of
from simlab.render.scene import CameraPose, SceneItem

BLIND_TEXT = (
    "The world view is hidden while a person plays: it shows what their role may not see (the target, the other "
    "agents' views). It comes back when the episode ends."
)
HIDDEN = "Hidden"
TurnPictureKey = tuple[str, int, int, tuple[int, int]]  # episode, its events so far, turn, size: see _picture_key
SELECT_HINT = "Click an object in the view to see what it is, who sees it and why."


class WorldView(QWidget):
    """The 3D world at the current turn, with camera presets and a target toggle."""

    def __init__(self, playback: PlaybackModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.playback = playback
        self.views: FamilyViews | None = None
        self.canvas = SceneCanvas(self)
        self.plotter = self.canvas.plotter
        self._camera_row = QHBoxLayout()
        self.target_mode = QComboBox()  # the family's overlay: each way it is drawn, then Hidden
        self.target_mode.currentTextChanged.connect(lambda _text: self.redraw())
        self.message = QLabel("")
        self.picture = PictureView()  # a family without a 3D scene: its turn pictures
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
        # the next turn's pictures, drawn before they are asked for
        self._ahead: frame_thread.Ahead[TurnPictureKey, QImage] = frame_thread.Ahead()
        self._after_frame = frame_thread.AfterFrame(self)  # the next turn's asked for once a step is painted
        self._layout(self._camera_row)
        self.canvas.clicked.connect(self._on_click)
        playback.episodeChanged.connect(self._on_episode)
        playback.turnChanged.connect(self._on_turn)  # connected first of all: its 3D render starts the step

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
        self._ahead.drop()  # another episode's next turn (or another family's): no one will ask for it
        views = self.views = views_of(episode) if episode is not None else None
        has_scene = views is not None and views.scene is not None
        controls = has_scene and not self.hidden_for_players  # no camera or overlay to choose while hidden
        self.cameras = dict(views.cameras(episode)) if controls and views is not None and episode is not None else {}
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
        settle(self, [self.side, self.splitter])  # before the scene is drawn: the 3D view renders once at its new size
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
        shown = widgets_in(self._camera_row)
        if [button.text() for button in shown if isinstance(button, QToolButton)] == list(self.cameras):
            # The same presets (another episode of the family): new buttons would be laid out twice, first
            # without them, so the 3D view would be resized and rendered three times instead of once.
            return
        for widget in take_widgets(self._camera_row):
            widget.hide()  # out of sight now: deleteLater waits for the event loop
            widget.deleteLater()
        for name in self.cameras:
            button = QToolButton()  # compact: the bar must fit a window tiled beside a fork
            button.setText(name)
            button.setToolTip(f"View from {name}")
            button.clicked.connect(lambda _checked=False, n=name: self.set_camera(n))
            self._camera_row.addWidget(button)
            button.show()  # now, not when the event loop gets to it: the row settles at its height at once

    def hide_for_players(self, hidden: bool) -> None:
        """While a person plays, show nothing of the world (it shows what their role may not see: the target,
        the other agents' views); afterwards the scene or pictures come back as they were."""
        self.hidden_for_players = hidden
        if hidden:  # empty the 3D view's last frame too: a grab of the window must not show it either
            self.redraw()  # the view renders the empty scene at its next paint (a grab's too)
        self._on_episode(self.playback.episode)

    def _on_turn(self, _turn: int) -> None:
        """Draw the turn, and render a 3D scene now: the rendering overlaps the other panels' updates. Beside the
        GUI thread when the family's panels draw their pictures without VTK (nothing else in a step uses it)."""
        self.redraw()
        beside = self.views is not None and self.views.images_without_vtk
        self.canvas.widget.render_ahead(beside)  # not shown (a family without a scene, a person playing): nothing

    def redraw(self) -> None:
        """Draw the scene of the current turn (nothing when there is no episode or no views for it).

        Only items that changed since the last turn are removed and added: a step usually moves one block,
        and re-adding every actor costs more than rendering the frame."""
        episode = self.playback.episode
        items: list[SceneItem] = []
        self.inspection = None
        if self.hidden_for_players:
            pass  # nothing of the world is drawn: the actors on screen are removed below
        elif episode is not None and self.views is not None and self.views.scene is None:
            self._draw_pictures(episode)
        elif episode is not None and self.views is not None and self.views.scene is not None:
            items = self._scene_items(episode, self.views)
        self.canvas.show(items)
        if self.inspection is None:
            self._selected = ""  # nothing there to inspect (or nothing drawn): the selection is cleared
        self.selection.setText(_inspection_html(self.inspection) if self.inspection is not None else SELECT_HINT)

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
        """A family without a 3D scene: its pictures of the turn, side by side, fitted to the view; drawn on the
        frame thread while the other panels update (the view's paint waits for them). The next turn's are drawn
        there once this turn's frame is painted, before a step asks for them: stepping on, the picture is mostly
        made already."""
        assert self.views is not None
        turn, views, size = self.playback.turn, self.views, self._picture_size()
        picture = self._ahead.take(_picture_key(episode, turn, size))
        if picture is None:
            picture = frame_thread.submit(partial(_turn_picture, views, episode, turn, size))
        self.picture.show_soon(picture)
        self._after_frame.call(self._draw_ahead)

    def _picture_size(self) -> tuple[int, int]:
        return max(320, self.picture.width()), max(240, self.picture.height())

    def _draw_ahead(self) -> None:
        """Have the frame thread draw the turn after the one shown, if any and the view shows pictures."""
        episode, views, turn, size = self.playback.episode, self.views, self.playback.turn, self._picture_size()
        hidden = self.hidden_for_players or not self.picture.isVisible()
        if episode is None or views is None or views.scene is not None or hidden or turn >= episode.last_turn:
            self._ahead.want({})  # none coming: those asked for before are dropped
            return
        job = partial(_turn_picture, views, episode, turn + 1, size)
        self._ahead.want({_picture_key(episode, turn + 1, size): job})

    def set_camera(self, name: str) -> None:
        """Move the camera to a preset of the current family."""
        if name in self.cameras:
            self.canvas.set_camera(self.cameras[name])

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

    def _layer_rows(self) -> list[QTreeWidgetItem]:
        rows = (self.layer_list.topLevelItem(k) for k in range(self.layer_list.topLevelItemCount()))
        return [row for row in rows if row is not None]

    def layer_names(self) -> list[str]:
        """The family's layers, in list order."""
        return [row.text(0) for row in self._layer_rows()]

    def set_layer_visible(self, name: str, visible: bool) -> None:
        """Tick or untick a layer, as a click on its box does (KeyError for a layer the family lacks)."""
        for row in self._layer_rows():
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

    @property
    def items(self) -> list[SceneItem]:
        """The scene items drawn now."""
        return self.canvas.items

    def key_at(self, x: int, y: int) -> str:
        """The key of the item under display point (x, y) in VTK's pixel coordinates, or ''."""
        return self.canvas.key_at(x, y)

    def tooltip_at(self, x: int, y: int) -> str:
        """The tooltip of the item under display point (x, y) in VTK's pixel coordinates, or ''."""
        return self.canvas.tooltip_at(x, y)

    def _on_click(self, key: str, _x: int, _y: int) -> None:
        """A click selects the item under the mouse, or clears the selection over empty space."""
        if self.views is not None and self.views.inspect is not None:
            self.select(key)

    def count(self, kind: str) -> int:
        """How many drawn items are of ``kind`` (``block``, ``failed``, ``highlight``...)."""
        return self.canvas.count(kind)

    def close_view(self) -> None:
        """Release the render window and its GL context."""
        self.canvas.close()


class PictureView(QWidget):
    """A picture centred on white, for a family without a 3D scene. A new picture only repaints the view: a
    QLabel asks its layout for a new size at every ``setPixmap``, which laid the whole window out again at every
    step. Its size follows the layout alone (the pictures are drawn to fit it).

    It paints every pixel, but is not marked opaque: Qt paints opaque widgets before the rest of a frame, and
    this one's paint waits for its picture (:meth:`show_soon`), which the frame thread makes while the rest is
    painted."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._image = QImage()
        self._coming: Future[QImage] | None = None
        self._error = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)

    def image(self) -> QImage:
        """The picture shown (waiting for one still being made)."""
        self._settle()
        return self._image

    def show_soon(self, image: Future[QImage]) -> None:
        """Show the picture ``image`` will hold once made, centred (cropped evenly when larger than the view):
        the next paint waits for it. A later call replaces it; the replaced one is not made if not begun (a
        held step key queues no pictures no one will see)."""
        if self._coming is not None:
            self._coming.cancel()
        self._coming = image
        self.update()

    def _settle(self) -> None:
        """Take the picture being made, once made; a failure to draw it is shown in its place."""
        coming, self._coming = self._coming, None
        if coming is None:
            return
        error = coming.exception()  # not raised here: its traceback would hold the paint's frame (and painter)
        if error is None:
            self._image, self._error = coming.result(), ""
        else:  # a recording the family cannot draw: said in the view
            self._image, self._error = QImage(), f"The pictures of this turn could not be drawn: {error}"

    def paintEvent(self, event: QPaintEvent) -> None:
        self._settle()
        painter = QPainter(self)
        size = self._image.deviceIndependentSize().toSize()
        left, top = self.width() - size.width(), self.height() - size.height()
        drawn = QRect(QPoint(int(left / 2), int(top / 2)), size)  # int(): truncated as Qt's centring does
        # only around the picture: it is opaque (the family's pictures side by side on white), and filling the
        # whole view under it too cost 0.5 ms a step
        painter.setClipRegion(QRegion(self.rect()).subtracted(QRegion(drawn)))
        painter.fillRect(self.rect(), Qt.GlobalColor.white)
        painter.setClipping(False)
        if self._error:
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self._error)
        painter.drawImage(drawn.topLeft(), self._image)


def _picture_key(episode: Episode, turn: int, size: tuple[int, int]) -> TurnPictureKey:
    """What a turn's picture is drawn from: the episode as long as it is now (a live one grows, its pictures with
    it), the turn and the size."""
    return episode.episode_id, len(episode.events), turn, size


def _turn_picture(views: FamilyViews, episode: Episode, turn: int, size: tuple[int, int]) -> QImage:
    """The family's pictures of ``turn`` side by side in one picture of ``size``, in the raster engine's own
    format (painted without a conversion: side by side on white, it is opaque). Runs on the frame thread."""
    return pil_to_qimage(side_by_side(list(views.turn_pictures(episode, turn).values()), size))


def _swatch(rgb: RGB, size: int = 12) -> QIcon:
    pixmap = QPixmap(size, size)
    pixmap.fill(QColor(*rgb))
    return QIcon(pixmap)


def _inspection_html(found: Inspection) -> str:
    """The inspector's facts as rich text; every piece is escaped (ids and names come from recordings)."""
    lines = "".join(f"<li>{html.escape(line)}</li>" for line in found.lines)
    return f"<b>{html.escape(found.title)}</b><ul style='margin-left:-20px'>{lines}</ul>"
