"""The editor window's panels, each drawn from what the document says (no family is named here).

* :class:`EntityList`: every entity grouped (objects, cameras, blocks), a warning sign and tooltip on those
  with a warning; selecting a row selects the entity.
* :class:`PalettePanel`: what can be added; a double click adds one, a single click makes it the tool that a
  click in the 3D view places.
* :class:`PropertiesPanel`: the selected entity's fields (an :class:`~simlab.gui.forms.ActionForm` built from
  the document's :class:`~simlab.core.family.FormField`), Apply, and the facts the document gives about it.
* :class:`PicturesPanel`: what each agent would be shown now: pictures, or live views of the scene from each
  agent's camera.
* :class:`ProposalDialog`: an action's proposals (questions made for a room) to keep or discard, then save.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image
from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from simlab.core.editing import Entity, PaletteEntry, Proposal
from simlab.core.family import FormField
from simlab.gui.agent_panels import ImageView, pil_to_pixmap
from simlab.gui.forms import ActionForm
from simlab.gui.layouts import take_widgets
from simlab.gui.scene_canvas import SceneCanvas
from simlab.render.scene import CameraPose, SceneItem

WARNING_SIGN = "\u26a0"
LIVE_VIEW_SIZE = (400, 300)  # the agents' 4:3 pictures
LIVE_DRAFT_SCALE = 2.5  # a drag's frames of an agent's live view have a sixth of its pixels (160x120: legible)
MOUSE_EVENTS = (
    QEvent.Type.MouseButtonPress,
    QEvent.Type.MouseButtonRelease,
    QEvent.Type.MouseButtonDblClick,
    QEvent.Type.MouseMove,
    QEvent.Type.Wheel,
)


class EntityList(QTreeWidget):
    """The document's entities by group; ``chosen`` carries the id of the row the person picks."""

    chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderHidden(True)
        self.itemSelectionChanged.connect(self._on_selection)
        self._rows: dict[str, QTreeWidgetItem] = {}

    def fill(self, entities: Sequence[Entity], selected: str | None) -> None:
        """Show ``entities`` (groups in first-seen order) with ``selected`` highlighted."""
        self.blockSignals(True)
        self.clear()
        self._rows = {}
        groups: dict[str, QTreeWidgetItem] = {}
        for entity in entities:
            group = groups.get(entity.group)
            if group is None:
                group = groups[entity.group] = QTreeWidgetItem([entity.group])
                group.setFlags(Qt.ItemFlag.ItemIsEnabled)
                self.addTopLevelItem(group)
                group.setExpanded(True)
            label = f"{WARNING_SIGN} {entity.label}" if entity.warning else entity.label
            row = QTreeWidgetItem([label])
            row.setData(0, Qt.ItemDataRole.UserRole, entity.id)
            row.setToolTip(0, entity.warning or entity.id)
            if entity.warning:
                row.setForeground(0, Qt.GlobalColor.darkRed)
            group.addChild(row)
            self._rows[entity.id] = row
        if selected in self._rows:
            self._rows[selected].setSelected(True)
            self.scrollToItem(self._rows[selected])
        self.blockSignals(False)

    def warned(self) -> list[str]:
        """The ids of the entities shown with a warning."""
        return [entity for entity, row in self._rows.items() if row.text(0).startswith(WARNING_SIGN)]

    def _on_selection(self) -> None:
        rows = self.selectedItems()
        entity = rows[0].data(0, Qt.ItemDataRole.UserRole) if rows else None
        if entity:
            self.chosen.emit(str(entity))


class PalettePanel(QListWidget):
    """The palette: a double click adds the entry; a single click makes it the tool (click again to drop it)."""

    add_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.itemDoubleClicked.connect(lambda item: self.add_requested.emit(item.data(Qt.ItemDataRole.UserRole)))

    def fill(self, entries: Sequence[PaletteEntry]) -> None:
        """The entries under one heading per group (groups in first-seen order)."""
        self.clear()
        groups: dict[str, list[PaletteEntry]] = {}
        for entry in entries:
            groups.setdefault(entry.group, []).append(entry)
        for group, members in groups.items():
            heading = QListWidgetItem(group)
            heading.setFlags(Qt.ItemFlag.NoItemFlags)
            font = heading.font()
            font.setBold(True)
            heading.setFont(font)
            self.addItem(heading)
            for entry in members:
                row = QListWidgetItem(f"  {entry.name}")
                row.setData(Qt.ItemDataRole.UserRole, entry.name)
                row.setToolTip(entry.help or entry.name)
                self.addItem(row)

    @property
    def tool(self) -> str | None:
        """The entry chosen as the tool, or None."""
        item = self.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None and item.isSelected() else None

    def choose(self, name: str | None) -> None:
        """Make ``name`` the tool (None: no tool)."""
        self.clearSelection()
        for k in range(self.count()):
            item = self.item(k)
            if name is not None and item.data(Qt.ItemDataRole.UserRole) == name:
                self.setCurrentItem(item)
                item.setSelected(True)


class PropertiesPanel(QWidget):
    """The selected entity's form and facts; ``applied`` carries the values when Apply is pressed."""

    applied = Signal(dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("Nothing selected")
        self.title.setWordWrap(True)
        self.form: ActionForm | None = None
        self.apply_button = QPushButton("Apply")
        self.apply_button.clicked.connect(lambda: self.applied.emit(self.form.values() if self.form else {}))
        self.facts = QLabel("")
        self.facts.setWordWrap(True)
        self.facts.setTextFormat(Qt.TextFormat.RichText)
        self.facts.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self._layout = QVBoxLayout(self)
        self._layout.addWidget(self.title)
        self._layout.addWidget(self.apply_button)
        self._layout.addWidget(self.facts, 1)
        self._fields: tuple[FormField, ...] = ()

    def show_entity(
        self, label: str, fields: tuple[FormField, ...], values: Mapping[str, Any], facts: Sequence[str]
    ) -> None:
        """Show the form of an entity (rebuilt only when its fields change) filled with ``values``."""
        self.title.setText(f"<b>{html.escape(label)}</b>")
        if fields != self._fields or self.form is None:
            if self.form is not None:
                self._layout.removeWidget(self.form)
                self.form.hide()  # out of sight now: deleteLater waits for the event loop
                self.form.deleteLater()
            self.form = ActionForm(fields)
            self._layout.insertWidget(1, self.form)
            self._fields = fields
        self.form.set_values(values)
        self.form.setVisible(bool(fields))
        self.apply_button.setVisible(bool(fields))
        self.facts.setText("<br>".join(html.escape(line) for line in facts))

    def clear_entity(self) -> None:
        self.title.setText("Nothing selected: click an entity in the view or the list")
        if self.form is not None:
            self.form.hide()
        self.apply_button.hide()
        self.facts.setText("")


class PicturesPanel(QScrollArea):
    """What each agent would be shown now, captioned: pictures two to a row, or live 3D views (an agent's
    camera drawn from the scene items as they change, only what changed redrawn) one under the other."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self._body = QWidget()
        self._grid = QGridLayout(self._body)
        self._grid.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.setWidget(self._body)
        self.views: dict[str, ImageView] = {}
        self.live: dict[str, SceneCanvas] = {}
        self._poses: dict[str, CameraPose] = {}
        self._seen: dict[str, dict[str, tuple[SceneItem, bool]]] = {}  # caption -> key -> (item, in its view?)
        self._still = _StillMouse(self)

    def show_pictures(self, pictures: Mapping[str, Image.Image]) -> None:
        """Show ``pictures`` (caption -> image)."""
        if list(pictures) != list(self.views):
            self._clear()
            for k, caption in enumerate(pictures):
                self._grid.addWidget(QLabel(f"<b>{html.escape(caption)}</b>"), 2 * (k // 2), k % 2)
                view = self.views[caption] = ImageView()
                self._grid.addWidget(view, 2 * (k // 2) + 1, k % 2)
        for caption, image in pictures.items():
            self.views[caption].set_pixmap(pil_to_pixmap(image))

    def show_live(self, items: list[SceneItem], poses: Mapping[str, CameraPose]) -> None:
        """Draw ``items`` from each camera of ``poses`` (caption -> pose) in a view of the agents' aspect."""
        if list(poses) != list(self.live):
            self._clear()
            for k, caption in enumerate(poses):
                self._grid.addWidget(QLabel(f"<b>{html.escape(caption)}</b>"), 2 * k, 0)
                canvas = self.live[caption] = SceneCanvas(self._body)
                canvas.widget.setFixedSize(*LIVE_VIEW_SIZE)
                canvas.widget.installEventFilter(self._still)
                self._grid.addWidget(canvas.widget, 2 * k + 1, 0)
        for caption, pose in poses.items():
            canvas = self.live[caption]
            if self._poses.get(caption) != pose:
                canvas.set_camera(pose)
                self._poses[caption] = pose
                self._seen[caption] = {}  # the verdicts were of the camera before
            canvas.show(self._in_view(caption, items))  # an edit out of this agent's sight does not repaint it

    def _in_view(self, caption: str, items: list[SceneItem]) -> list[SceneItem]:
        """The live view ``caption``'s :meth:`~simlab.gui.scene_canvas.SceneCanvas.in_view` of ``items``, each
        item's verdict kept while the item and the camera stay (a drag step asks again for the moved items only;
        an item's mesh never changes once made)."""
        seen = self._seen.setdefault(caption, {})
        fresh = [item for item in items if item.key not in seen or seen[item.key][0] is not item]
        if fresh:
            inside = {id(item) for item in self.live[caption].in_view(fresh)}
            seen.update((item.key, (item, id(item) in inside)) for item in fresh)
        return [item for item in items if seen[item.key][1]]

    def set_draft(self, on: bool) -> None:
        """Draw the live views as drafts at reduced resolution (while something is dragged), or at full."""
        for canvas in self.live.values():
            canvas.set_draft(LIVE_DRAFT_SCALE if on else 1)

    def close_views(self) -> None:
        """Release the live views' render windows (before the window goes)."""
        for canvas in self.live.values():
            canvas.close()

    def _clear(self) -> None:
        self.close_views()
        for widget in take_widgets(self._grid):
            widget.hide()
            widget.deleteLater()
        self.views, self.live, self._poses = {}, {}, {}


class _StillMouse(QObject):
    """An agent's view is where the agent stands: the mouse does not turn or zoom it."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        return event.type() in MOUSE_EVENTS


class ProposalDialog(QDialog):
    """An action's proposals, each with a box to keep it (all kept at first)."""

    def __init__(self, proposal: Proposal, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(proposal.title)
        self.proposal = proposal
        self.items = QListWidget()
        for item_id, text in proposal.items:
            row = QListWidgetItem(text)
            row.setData(Qt.ItemDataRole.UserRole, item_id)
            row.setFlags(row.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            row.setCheckState(Qt.CheckState.Checked)
            self.items.addItem(row)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"{len(proposal.items)} proposed: untick those to discard, then save the rest."))
        layout.addWidget(self.items, 1)
        layout.addWidget(buttons)
        self.resize(760, 520)

    def kept(self) -> list[str]:
        """The ids of the ticked proposals, in order."""
        rows = (self.items.item(k) for k in range(self.items.count()))
        return [str(r.data(Qt.ItemDataRole.UserRole)) for r in rows if r.checkState() == Qt.CheckState.Checked]

    def set_kept(self, ids: Sequence[str]) -> None:
        """Tick exactly ``ids`` (tests, scripts)."""
        for k in range(self.items.count()):
            row = self.items.item(k)
            keep = row.data(Qt.ItemDataRole.UserRole) in ids
            row.setCheckState(Qt.CheckState.Checked if keep else Qt.CheckState.Unchecked)
