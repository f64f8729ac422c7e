"""A person playing a role: :class:`HumanAgent` for the worker thread and :class:`RoleWindow` for the screen.

The agent runs in the live session's worker thread: ``act`` hands the observation to the GUI (through the
session's ``needsHuman`` signal) and blocks until the GUI calls :meth:`HumanAgent.submit` with a
:class:`~simlab.core.world.Reply`. The reply then goes through ``world.step`` like any other agent's, so a
person's turns are recorded exactly as a model's.

The role window shows exactly what a model playing the role is sent at that turn, no more: the instructions
(the family protocol's system prompt for the role), the observation's text and its pictures (the very pictures,
scaled only to fit). What became of a reply is told as a model is told it, in the next observation's text,
never in a line of its own: a result event may carry what the engine judged against the hidden target (a
mistake). Below them the reply form the family declares for the role at this observation
(:meth:`~simlab.core.family.WorldFamily.reply_form`): message and reasoning boxes, the action's fields,
presets that fill them, answer buttons. Nothing here knows any family.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLayout,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from simlab.core.family import ReplyForm, WorldFamily
from simlab.core.world import Observation, Reply
from simlab.gui.agent_panels import ImageView, pil_to_pixmap
from simlab.gui.forms import ActionForm
from simlab.gui.layouts import take_widgets, widgets_in

IMAGE_SIZE = 340  # a picture in the role window is scaled to fit a square this big, in pixels


class HumanStopped(Exception):
    """Raised in the worker when the session stops while it waits for a person."""


class HumanAgent:
    """The Agent protocol for a person: ``act`` asks the GUI (via ``ask``) and waits for :meth:`submit`."""

    def __init__(self, role: str, ask: Callable[[str, Observation], None] | None = None) -> None:
        self.role = role
        self.ask = ask  # set by the live session: hands the observation to the GUI thread
        self._replies: queue.Queue[Reply | None] = queue.Queue()

    def reset(self, seed: int, role: str, task: Mapping[str, Any]) -> None:
        """A person never reads the task (it may hold the target)."""
        self.role = role

    def act(self, observation: Observation) -> Reply:
        """Show ``observation`` to the person and block (in the worker thread) until they reply."""
        assert self.ask is not None, "a HumanAgent needs a live session to ask through"
        self.ask(self.role, observation)
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


class RoleWindow(QWidget):
    """What one role sees and can do. ``submitted(Reply)`` fires on Send (or on an answer button)."""

    submitted = Signal(object)  # Reply

    def __init__(
        self,
        role: str,
        family: WorldFamily,
        parent: QWidget | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.role, self.family = role, family
        self.settings = dict(settings if settings is not None else family.default_settings)
        self.form: ReplyForm | None = None
        self.observation: Observation | None = None
        self.setWindowTitle(f"SimLab - you play {role}")
        self.resize(1100, 820)
        self.header = QLabel()
        self.header.setStyleSheet("font-size: 15px; font-weight: bold")
        self.pictures_box = QWidget()
        self.pictures_box.setFixedWidth(IMAGE_SIZE)
        self.images = QVBoxLayout(self.pictures_box)
        self.images.setContentsMargins(0, 0, 0, 0)
        self.instructions = QPlainTextEdit(readOnly=True)
        self.instructions.setMaximumHeight(150)
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setMinimumHeight(220)
        self.reply_area = QWidget()  # the reply form: what can be sent, never anything more to read
        self.controls = QVBoxLayout(self.reply_area)
        self.controls.setContentsMargins(0, 0, 0, 0)
        told = QVBoxLayout()
        # a model gets these as its system prompt; a person needs them too (the turn's text does not repeat them)
        told.addWidget(QLabel("Your instructions (as a model is given them; the form below writes its reply format):"))
        told.addWidget(self.instructions)
        told.addWidget(QLabel("What you are told:"))
        told.addWidget(self.text, 1)
        top = QHBoxLayout()
        top.addWidget(self.pictures_box, 0, Qt.AlignmentFlag.AlignTop)
        top.addLayout(told, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.header)
        layout.addLayout(top, 1)
        layout.addWidget(self.reply_area)
        self._reset_controls()

    # ---- showing an observation ---------------------------------------------------------------------
    def show_observation(self, observation: Observation) -> None:
        """Show a new observation (on the GUI thread: lazy images are rendered here) and enable replying."""
        self.observation = observation
        self.header.setText(f"You are {self.role} - turn {observation.turn}: your move")
        self._show_images(observation)
        instructions = self.family.protocol(self.role, observation, self.settings).system
        if instructions != self.instructions.toPlainText():  # keep the person's scroll place when unchanged
            self.instructions.setPlainText(instructions)
        self.text.setPlainText(observation.text)
        self._reset_controls()
        self._build_controls(observation)
        self.setEnabled(True)
        self.show()
        self.raise_()
        self.activateWindow()

    def end(self, outcome: str) -> None:
        """The episode is over (finished, stopped or failed): say so, and nothing can be sent any more."""
        self.header.setText(f"You played {self.role}. The episode is over: {outcome}.")
        self._reset_controls()

    def _preset_filler(self, action: Mapping[str, Any]) -> Callable[[], None]:
        """A candidate button's slot: fill the move form with ``action``."""

        def fill() -> None:
            if self.move_form is not None:
                self.move_form.set_values(action)

        return fill

    def wait_for_others(self) -> None:
        """After Send: nothing to do until this role is asked again."""
        self.header.setText(f"You are {self.role} - waiting for the others...")
        self._reset_controls()

    def _show_images(self, observation: Observation) -> None:
        _clear(self.images)
        for name in observation.images:
            view = ImageView()  # keeps the picture as the model gets it; only its painting is scaled
            view.set_pixmap(pil_to_pixmap(observation.images[name]))
            view.set_max_height(IMAGE_SIZE)
            view.setToolTip(name)
            self.images.addWidget(view)
        self.images.addStretch(1)
        self.pictures_box.setVisible(bool(observation.images))  # no empty column beside a text-only observation

    # ---- controls ------------------------------------------------------------------------------------
    def _reset_controls(self) -> None:
        _clear(self.controls)
        self.message: QPlainTextEdit | None = None
        self.reasoning: QPlainTextEdit | None = None
        self.move_form: ActionForm | None = None
        self.send_button: QPushButton | None = None
        self.candidate_buttons: list[QPushButton] = []
        self.answer_buttons: dict[str, QPushButton] = {}

    def _build_controls(self, observation: Observation) -> None:
        """The family's reply form for this role and observation, as widgets."""
        self.form = form = self.family.reply_form(self.role, observation)
        if form.fields:
            a_move = any(f.kind != "flag" for f in form.fields)  # a lone tick box needs no heading
            self.move_form = ActionForm(form.fields, "Your move" if a_move else "")
        if form.presets:
            box = QGroupBox("Pick a verified candidate (fills the form)")
            column = QVBoxLayout(box)
            for label, action in form.presets:
                button = QPushButton(label)
                button.clicked.connect(self._preset_filler(action))
                column.addWidget(button)
                self.candidate_buttons.append(button)
            self.controls.addWidget(box)
        if self.move_form is not None:
            self.controls.addWidget(self.move_form)
        if form.message is not None:
            self.message = self._text_box(form.message, 80 if not form.fields else 50)
        if form.reasoning is not None:
            self.reasoning = self._text_box(form.reasoning, 50)
        if form.answers is not None:
            self._answer_buttons(form)
        if form.message is not None or form.fields:
            self._add_send()

    def _text_box(self, label: str, height: int) -> QPlainTextEdit:
        self.controls.addWidget(QLabel(label))
        editor = QPlainTextEdit()
        editor.setFixedHeight(height)
        self.controls.addWidget(editor)
        return editor

    def _answer_buttons(self, form: ReplyForm) -> None:
        assert form.answers is not None
        self.controls.addWidget(QLabel(f"{form.answers.label}:"))
        row = QHBoxLayout()
        for choice in form.answers.choices:
            button = QPushButton(choice)
            button.setMinimumHeight(40)
            button.clicked.connect(lambda _c=False, a=choice: self.send(form.answer(a)))
            row.addWidget(button)
            self.answer_buttons[choice] = button
        self.controls.addLayout(row)

    def _add_send(self) -> None:
        self.send_button = QPushButton("Send")
        self.send_button.setDefault(True)
        self.send_button.setMinimumHeight(36)
        self.send_button.clicked.connect(lambda _c=False: self.send(self.reply()))
        self.controls.addWidget(self.send_button)

    # ---- replying ------------------------------------------------------------------------------------
    def reply(self) -> Reply:
        """The reply the controls describe now."""
        assert self.form is not None, "no observation shown yet"
        message = self.message.toPlainText() if self.message is not None else ""
        reasoning = self.reasoning.toPlainText() if self.reasoning is not None else ""
        values = self.move_form.values() if self.move_form is not None else {}
        return self.form.reply(message, reasoning, values)

    def send(self, reply: Reply) -> None:
        """Send ``reply`` as this role's (Send and the answer buttons do) and wait for the others."""
        self.wait_for_others()
        self.submitted.emit(reply)

    def pictures(self) -> list[tuple[str, QPixmap]]:
        """The pictures the window shows now, in order: (name, the picture at the size the model gets it)."""
        views = widgets_in(self.images)
        return [(w.toolTip(), w.pixmap()) for w in views if isinstance(w, ImageView) and not w.pixmap().isNull()]

    def pixmaps_shown(self) -> int:
        """How many pictures the window shows now."""
        return len(self.pictures())

    def visible_text(self) -> str:
        """Every text the window shows now (for tests: what this role can read)."""
        parts = [self.windowTitle(), self.header.text(), self.instructions.toPlainText(), self.text.toPlainText()]
        parts += [w.text() for w in self.findChildren(QLabel) + self.findChildren(QPushButton)]
        parts += [w.title() for w in self.findChildren(QGroupBox)]
        return "\n".join(parts)


def _clear(layout: QLayout) -> None:
    for widget in take_widgets(layout):
        widget.setParent(None)  # gone from findChildren now, deleted later
        widget.deleteLater()
