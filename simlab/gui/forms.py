"""Forms made from what a family declares, so no widget is hand-made per family (napari does this with magicgui).

* :class:`SettingsForm` shows a pydantic settings model: a spin box per integer (its bounds from the
  field's constraints), a check box per flag, a combo box per choice, a line per text, and a JSON line for
  anything else; :meth:`SettingsForm.values` returns the fields the user changed.
* :class:`ActionForm` shows the fields of a :class:`~simlab.core.family.ReplyForm`: choices, numbers, cells,
  flags and optional fields, each shown only while its ``when`` condition holds; :meth:`ActionForm.values`
  feeds :meth:`ReplyForm.action`.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QWidget,
)

from simlab.core.errors import ConfigError
from simlab.core.family import FormField

SPIN_LIMIT = 1_000_000


def _base(annotation: Any) -> tuple[Any, bool]:
    """(the annotation without ``None``, whether ``None`` is allowed)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return (args[0] if len(args) == 1 else annotation), True
    return annotation, False


def _bounds(field: Any) -> tuple[float, float]:
    """The ``ge``/``le`` (or ``gt``/``lt``) bounds pydantic keeps in a field's metadata."""
    low, high = float(-SPIN_LIMIT), float(SPIN_LIMIT)
    for item in field.metadata:
        ge, le = getattr(item, "ge", None), getattr(item, "le", None)
        low = float(ge) if ge is not None else low
        high = float(le) if le is not None else high
    return low, high


class SettingsForm(QGroupBox):
    """One editor per field of a settings model, starting at the defaults."""

    def __init__(
        self, model: type[BaseModel], title: str, skip: Sequence[str] = (), parent: QWidget | None = None
    ) -> None:
        super().__init__(title, parent)
        self.model = model
        self.editors: dict[str, QWidget] = {}
        layout = QFormLayout(self)
        for name, field in model.model_fields.items():
            if name in skip:
                continue
            editor = self._editor(field)
            editor.setToolTip(field.description or name)
            editor.setObjectName(f"setting-{name}")
            self.editors[name] = editor
            layout.addRow(name.replace("_", " "), editor)

    @staticmethod
    def _editor(field: Any) -> QWidget:
        kind, _optional = _base(field.annotation)
        default = field.default
        if kind is bool:
            box = QCheckBox()
            box.setChecked(bool(default))
            return box
        if typing.get_origin(kind) is typing.Literal:
            combo = QComboBox()
            combo.addItems([str(c) for c in typing.get_args(kind)])
            combo.setCurrentText(str(default))
            return combo
        if kind in (int, float):
            low, high = _bounds(field)
            if kind is int:
                whole = QSpinBox()
                whole.setRange(int(low), int(high))
                whole.setValue(int(default))
                return whole
            spin = QDoubleSpinBox()
            spin.setRange(low, high)
            spin.setValue(float(default))
            return spin
        line = QLineEdit("" if default is None else default if kind is str else json.dumps(default))
        line.setPlaceholderText("(none)" if default is None else "")
        return line

    def values(self) -> dict[str, Any]:
        """The settings whose editor differs from the default; ConfigError for a JSON line that is not JSON."""
        out: dict[str, Any] = {}
        for name, editor in self.editors.items():
            field = self.model.model_fields[name]
            value = self._value(name, editor, field)
            if value != json.loads(json.dumps(field.default)):  # a tuple default compares as its JSON list
                out[name] = value
        return out

    @staticmethod
    def _value(name: str, editor: QWidget, field: Any) -> Any:
        if isinstance(editor, QCheckBox):
            return editor.isChecked()
        if isinstance(editor, QComboBox):
            return editor.currentText()
        if isinstance(editor, (QSpinBox, QDoubleSpinBox)):
            return editor.value()
        assert isinstance(editor, QLineEdit)
        text = editor.text().strip()
        kind, optional = _base(field.annotation)
        if not text:
            return None if optional else ""
        if kind is str:
            return text
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise ConfigError(f"setting {name!r}: expected JSON, got {text!r}") from None

    def set_value(self, name: str, value: Any) -> None:
        """Put ``value`` in the editor of ``name`` (tests, restoring a form)."""
        editor = self.editors[name]
        if isinstance(editor, QCheckBox):
            editor.setChecked(bool(value))
        elif isinstance(editor, QComboBox):
            editor.setCurrentText(str(value))
        elif isinstance(editor, (QSpinBox, QDoubleSpinBox)):
            editor.setValue(value)
        elif isinstance(editor, QLineEdit):
            editor.setText(value if isinstance(value, str) else json.dumps(value))


class ActionForm(QGroupBox):
    """The action fields of a reply form; fields whose ``when`` does not hold are disabled."""

    def __init__(self, fields: Sequence[FormField], title: str = "", parent: QWidget | None = None) -> None:
        super().__init__(title, parent)
        self.fields = list(fields)
        self.editors: dict[str, list[QWidget]] = {}
        self.toggles: dict[str, QCheckBox] = {}
        layout = QFormLayout(self)
        for spec in self.fields:
            parts = self._editors(spec)
            self.editors[spec.name] = parts
            label: str | QWidget = spec.label
            if spec.optional:
                toggle = QCheckBox(spec.label)
                toggle.toggled.connect(lambda _on: self._enable())
                self.toggles[spec.name] = toggle
                label = toggle
            holder = QWidget()
            row = QHBoxLayout(holder)
            row.setContentsMargins(0, 0, 0, 0)
            for part in parts:
                row.addWidget(part)
            row.addStretch(1)
            holder.setObjectName(f"field-{spec.name}")
            layout.addRow(label, holder)
        self._enable()

    def _editors(self, spec: FormField) -> list[QWidget]:
        if spec.kind == "choice":
            combo = QComboBox()
            combo.addItems(list(spec.choices))
            combo.currentTextChanged.connect(lambda _t: self._enable())
            return [combo]
        if spec.kind == "number":
            number = QDoubleSpinBox()
            number.setDecimals(2)
            number.setSingleStep(0.05)
            number.setRange(spec.low, spec.high)
            return [number]
        if spec.kind in ("int", "cell"):
            spins: list[QWidget] = []
            for _ in range(2 if spec.kind == "cell" else 1):
                spin = QSpinBox()
                spin.setRange(spec.low, spec.high)
                spins.append(spin)
            return spins
        if spec.kind == "flag":
            return [QCheckBox()]
        if spec.kind == "code":
            editor = QPlainTextEdit()
            editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
            editor.setMinimumSize(420, 120)
            return [editor]
        return [QLineEdit()]

    def _raw(self, spec: FormField) -> Any:
        read = [_read_part(part) for part in self.editors[spec.name]]
        if spec.kind == "cell":
            return read
        if spec.kind == "flag":
            return spec.value if read[0] else None
        return read[0]

    def values(self) -> dict[str, Any]:
        """Field name -> value for every shown field (an unticked optional field is left out)."""
        out: dict[str, Any] = {}
        for spec in self.fields:
            if spec.optional and not self.toggles[spec.name].isChecked():
                continue
            out[spec.name] = self._raw(spec)
        return out

    def set_values(self, values: Mapping[str, Any]) -> None:
        """Fill the fields from an action object (a preset such as a verified candidate move)."""
        for spec in self.fields:
            value = values.get(spec.name)
            if spec.optional:
                self.toggles[spec.name].setChecked(value is not None)
            if value is None:
                continue
            parts = self.editors[spec.name]
            if spec.kind == "cell":
                pairs = list(zip(parts, value, strict=False))
            else:
                pairs = [(parts[0], value == spec.value if spec.kind == "flag" else value)]
            for part, shown in pairs:
                _write_part(part, shown)
        self._enable()

    def _enable(self) -> None:
        current = {s.name: self._raw(s) for s in self.fields if s.kind == "choice"}
        for spec in self.fields:
            shown = spec.when is None or current.get(spec.when[0]) in spec.when[1]
            toggle = self.toggles.get(spec.name)
            if toggle is not None:
                toggle.setEnabled(shown)
            for part in self.editors[spec.name]:
                part.setEnabled(shown and (toggle is None or toggle.isChecked()))


def _read_part(part: QWidget) -> Any:
    """What one editor of a form field holds: the chosen text, the number, the tick, or the stripped text
    (None when empty)."""
    if isinstance(part, QComboBox):
        return part.currentText()
    if isinstance(part, QSpinBox | QDoubleSpinBox):
        return part.value()
    if isinstance(part, QCheckBox):
        return part.isChecked()
    if isinstance(part, QPlainTextEdit):
        return part.toPlainText().strip() or None
    if isinstance(part, QLineEdit):
        return part.text().strip() or None
    raise TypeError(f"no reader for a {type(part).__name__} in a form")


def _write_part(part: QWidget, value: Any) -> None:
    """Show ``value`` in one editor of a form field (the inverse of :func:`_read_part`)."""
    if isinstance(part, QComboBox):
        part.setCurrentText(str(value))
    elif isinstance(part, QSpinBox):
        part.setValue(int(value))
    elif isinstance(part, QDoubleSpinBox):
        part.setValue(float(value))
    elif isinstance(part, QCheckBox):
        part.setChecked(bool(value))
    elif isinstance(part, QPlainTextEdit):
        part.setPlainText(str(value))
    elif isinstance(part, QLineEdit):
        part.setText(str(value))
    else:
        raise TypeError(f"no writer for a {type(part).__name__} in a form")
