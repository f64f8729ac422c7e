"""A person playing a role: :class:`HumanAgent` for the worker thread and :class:`RoleWindow` for the screen.

The agent runs in the live session's worker thread: ``act`` hands the observation to the GUI (through the
session's ``needsHuman`` signal) and blocks until the GUI calls :meth:`HumanAgent.submit` with a
:class:`~simlab.core.world.Reply`. The reply then goes through ``world.step`` like any other agent's, so a
person's turns are recorded exactly as a model's.

The role window shows only what that role is given: the observation's own pictures and text (never the task,
the target or other roles' private reasoning), a message box and the role's actions.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from simlab.core.world import Observation, Reply
from simlab.gui.agent_panels import pil_to_pixmap
from simlab.worlds.blocks.model import BLOCK_CODES, Move

IMAGE_SIZE = 340  # longest side of a picture in the role window, in pixels
BLOCKS_DIRECTORS = ("D1", "D2", "D3")


class HumanStopped(Exception):
    """Raised in the worker when the session stops while it waits for a person."""


class HumanAgent:
    """The Agent protocol for a person: ``act`` asks the GUI (via ``ask``) and waits for :meth:`submit`."""

    def __init__(self, role: str, ask: Callable[[str, Observation], None]) -> None:
        self.role = role
        self._ask = ask
        self._replies: queue.Queue[Reply | None] = queue.Queue()

    def reset(self, seed: int, role: str, task: Mapping[str, Any]) -> None:
        """A person never reads the task (it may hold the target)."""
        self.role = role

    def act(self, observation: Observation) -> Reply:
        """Show ``observation`` to the person and block (in the worker thread) until they reply."""
        self._ask(self.role, observation)
        reply = self._replies.get()
        if reply is None:
            raise HumanStopped(self.role)
        return reply

    def submit(self, reply: Reply) -> None:
        """Called from the GUI thread with the person's reply."""
        self._replies.put(reply)

    def cancel(self) -> None:
        """Wake a waiting ``act`` so the worker can stop."""
        self._replies.put(None)


# ---- the role window ------------------------------------------------------------------------------------


class MoveForm(QGroupBox):
    """A blocks builder's move: action, block, cell, layer and an optional second cell (``span_to``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Your move", parent)
        self.action = QComboBox()
        self.action.addItems(["place", "remove", "clarify"])
        self.block = QComboBox()
        self.block.addItems(list(BLOCK_CODES))
        self.i, self.j, self.layer = _spin(0, 2), _spin(0, 2), _spin(0, 2)
        self.span = QCheckBox("spans to")
        self.span_i, self.span_j = _spin(0, 2), _spin(0, 2)
        form = QFormLayout(self)
        form.addRow("Action", self.action)
        form.addRow("Block", self.block)
        form.addRow("Cell (i, j)", _row(self.i, self.j))
        form.addRow("Layer", self.layer)
        form.addRow(self.span, _row(self.span_i, self.span_j))
        self.action.currentTextChanged.connect(lambda _t: self._enable())
        self.span.toggled.connect(lambda _on: self._enable())
        self._enable()

    def _enable(self) -> None:
        action = self.action.currentText()
        for widget in (self.i, self.j, self.layer, self.span):
            widget.setEnabled(action != "clarify")
        self.block.setEnabled(action == "place")
        for widget in (self.span_i, self.span_j):
            widget.setEnabled(action != "clarify" and self.span.isChecked())

    def set_move(self, move: Mapping[str, Any]) -> None:
        """Fill the form from a Move JSON (a candidate)."""
        self.action.setCurrentText(str(move.get("action", "place")))
        if move.get("block"):
            self.block.setCurrentText(str(move["block"]))
        cell = move.get("cell") or [0, 0]
        self.i.setValue(int(cell[0]))
        self.j.setValue(int(cell[1]))
        self.layer.setValue(int(move.get("layer") or 0))
        span = move.get("span_to")
        self.span.setChecked(span is not None)
        if span is not None:
            self.span_i.setValue(int(span[0]))
            self.span_j.setValue(int(span[1]))

    def move_json(self, text: str = "") -> dict[str, Any]:
        """The Move JSON the form describes (``text`` is the question of a clarify)."""
        action = self.action.currentText()
        if action == "clarify":
            return Move.clarify(text or "Could you clarify?").to_json()
        out: dict[str, Any] = {"action": action, "cell": [self.i.value(), self.j.value()], "layer": self.layer.value()}
        if action == "place":
            out["block"] = self.block.currentText()
        if self.span.isChecked():
            out["span_to"] = [self.span_i.value(), self.span_j.value()]
        return out


class RoleWindow(QWidget):
    """What one role sees and can do. ``submitted(Reply)`` fires on Send (or on an answer button)."""

    submitted = Signal(object)  # Reply

    def __init__(self, role: str, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.role = role
        self.observation: Observation | None = None
        self.setWindowTitle(f"SimLab - you play {role}")
        self.resize(1100, 820)
        self.header = QLabel()
        self.header.setStyleSheet("font-size: 15px; font-weight: bold")
        self.images = QVBoxLayout()
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setMinimumHeight(220)
        self.controls = QVBoxLayout()
        told = QVBoxLayout()
        told.addWidget(QLabel("What you are told:"))
        told.addWidget(self.text, 1)
        top = QHBoxLayout()
        top.addLayout(self.images)
        top.addLayout(told, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.header)
        layout.addLayout(top, 1)
        layout.addLayout(self.controls)
        self._reset_controls()

    # ---- showing an observation ---------------------------------------------------------------------
    def show_observation(self, observation: Observation) -> None:
        """Show a new observation (on the GUI thread: lazy images are rendered here) and enable replying."""
        self.observation = observation
        self.header.setText(f"You are {self.role} - turn {observation.turn}: your move")
        self._show_images(observation)
        self.text.setPlainText(observation.text)
        self._reset_controls()
        self._build_controls(observation)
        self.setEnabled(True)
        self.show()
        self.raise_()
        self.activateWindow()

    def wait_for_others(self) -> None:
        """After Send: nothing to do until this role is asked again."""
        self.header.setText(f"You are {self.role} - waiting for the others...")
        self._reset_controls()

    def _show_images(self, observation: Observation) -> None:
        _clear(self.images)
        for name in observation.images:
            label = QLabel()
            pixmap = pil_to_pixmap(observation.images[name])
            label.setPixmap(
                pixmap.scaled(
                    IMAGE_SIZE,
                    IMAGE_SIZE,
                    Qt.AspectRatioMode.KeepAspectRatio,
                    Qt.TransformationMode.SmoothTransformation,
                )
            )
            label.setToolTip(name)
            self.images.addWidget(label, 0, Qt.AlignmentFlag.AlignTop)
        self.images.addStretch(1)

    # ---- controls ------------------------------------------------------------------------------------
    def _reset_controls(self) -> None:
        _clear(self.controls)
        self.message: QPlainTextEdit | None = None
        self.reasoning: QPlainTextEdit | None = None
        self.move_form: MoveForm | None = None
        self.end_box: QCheckBox | None = None
        self.send_button: QPushButton | None = None
        self.candidate_buttons: list[QPushButton] = []
        self.answer_buttons: dict[str, QPushButton] = {}

    def _build_controls(self, observation: Observation) -> None:
        data = observation.data
        if self.role == "builder" and "board" in data:
            self._builder_controls(data.get("candidates") or [])
        elif self.role in BLOCKS_DIRECTORS:
            self._message_controls("Your public message (everyone sees it):", reasoning=True)
            self._add_send()
        elif data.get("phase") == "answer":
            self._answer_controls([str(x) for x in data.get("letters") or []])
        else:
            self._message_controls(f"Your message to the {'Helper' if self.role == 'answerer' else 'Answerer'}:")
            if self.role == "answerer":
                self.end_box = QCheckBox("End the conversation after this message (then give your answer)")
                self.controls.addWidget(self.end_box)
            self._add_send()

    def _message_controls(self, label: str, reasoning: bool = False) -> None:
        self.controls.addWidget(QLabel(label))
        self.message = _editor(80)
        self.controls.addWidget(self.message)
        if reasoning:
            self.controls.addWidget(QLabel("Private reasoning (optional; recorded, never shown to the others):"))
            self.reasoning = _editor(50)
            self.controls.addWidget(self.reasoning)

    def _builder_controls(self, candidates: list[Mapping[str, Any]]) -> None:
        self.move_form = MoveForm()
        if candidates:
            box = QGroupBox("Pick a verified candidate (fills the form)")
            row = QVBoxLayout(box)
            for move in candidates:
                button = QPushButton(Move.from_json(move).describe())
                button.clicked.connect(lambda _c=False, m=move: self.move_form and self.move_form.set_move(m))
                row.addWidget(button)
                self.candidate_buttons.append(button)
            self.controls.addWidget(box)
        self.controls.addWidget(self.move_form)
        self.controls.addWidget(QLabel("Message (optional; a clarify's question):"))
        self.message = _editor(50)
        self.controls.addWidget(self.message)
        self._add_send()

    def _answer_controls(self, letters: list[str]) -> None:
        self.controls.addWidget(QLabel("The conversation is over. Your final answer:"))
        row = QHBoxLayout()
        for letter in letters:
            button = QPushButton(letter)
            button.setMinimumHeight(40)
            button.clicked.connect(lambda _c=False, a=letter: self._send(Reply(message=a)))
            row.addWidget(button)
            self.answer_buttons[letter] = button
        self.controls.addLayout(row)

    def _add_send(self) -> None:
        self.send_button = QPushButton("Send")
        self.send_button.setDefault(True)
        self.send_button.setMinimumHeight(36)
        self.send_button.clicked.connect(lambda _c=False: self._send(self.reply()))
        self.controls.addWidget(self.send_button)

    # ---- replying ------------------------------------------------------------------------------------
    def reply(self) -> Reply:
        """The reply the controls describe now."""
        message = self.message.toPlainText().strip() if self.message is not None else ""
        reasoning = self.reasoning.toPlainText().strip() if self.reasoning is not None else ""
        action: dict[str, Any] | None = None
        if self.move_form is not None:
            action = self.move_form.move_json(message)
        elif self.end_box is not None and self.end_box.isChecked():
            action = {"action": "end"}
        return Reply(message=message or None, reasoning=reasoning or None, action=action)

    def _send(self, reply: Reply) -> None:
        self.wait_for_others()
        self.submitted.emit(reply)

    def pixmaps_shown(self) -> int:
        """How many pictures the window shows now."""
        labels = (self.images.itemAt(k).widget() for k in range(self.images.count()))
        return sum(1 for w in labels if isinstance(w, QLabel) and w.pixmap() is not None and not w.pixmap().isNull())

    def visible_text(self) -> str:
        """Every text the window shows now (for tests: what this role can read)."""
        parts = [self.windowTitle(), self.header.text(), self.text.toPlainText()]
        parts += [w.text() for w in self.findChildren(QLabel) + self.findChildren(QPushButton)]
        parts += [w.title() for w in self.findChildren(QGroupBox)]
        return "\n".join(parts)


def _spin(low: int, high: int) -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    return box


def _row(*widgets: QWidget) -> QWidget:
    holder = QWidget()
    row = QHBoxLayout(holder)
    row.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        row.addWidget(widget)
    row.addStretch(1)
    return holder


def _editor(height: int) -> QPlainTextEdit:
    editor = QPlainTextEdit()
    editor.setFixedHeight(height)
    return editor


def _clear(layout: QHBoxLayout | QVBoxLayout) -> None:
    while layout.count():
        item = layout.takeAt(0)
        widget = item.widget()
        if widget is not None:
            widget.setParent(None)  # gone from findChildren now, deleted later
            widget.deleteLater()
        elif item.layout() is not None:
            _clear(item.layout())  # type: ignore[arg-type]
