"""A benchmark's validity report in the app: what a world family's simple baselines score on it, per group.

:class:`ValidityDialog` shows a :class:`~simlab.analysis.validity.ValidityReport` as ``python main.py validity
BENCH`` prints it: a row per group, ``mean [low, high]`` per baseline (chance first), the cells whose CI lies
wholly above or below chance's expected accuracy tinted, then the facts, the legend and the notes. It copies
the table as the command's text and saves the command's JSON (``--format json``), replacing only a previous
validity report, never a recording or any other file.

:class:`ValidityLauncher` is a window's "Validity Report..." entry: it asks for a benchmark folder, reads it
with the family's task loader and computes the report in a thread (a big benchmark takes seconds and the
window keeps painting), then opens the dialog or says what was wrong. Nothing here knows a world family: it
is offered where the family declares ``validity``.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from simlab.analysis.stats import Summary
from simlab.analysis.validity import VALIDITY_FORMAT, ValidityReport, compute_validity
from simlab.analysis.validity import cell as cell_text  # the CLI table's cell, so both read the same
from simlab.core.errors import ConfigError, SimlabError
from simlab.core.exports import export_file
from simlab.core.family import WorldFamily
from simlab.core.recording import read_json, write_json_atomic
from simlab.gui.background import collector_paused

# Neither colour says "good": a blind prior above chance is a flaw of the benchmark, the oracle above it is
# not. Blue and orange stay apart for the common colour-vision deficiencies.
ABOVE = QColor("#cfe2fb")
BELOW = QColor("#fbdcc2")
REPORT_MAX_BYTES = 16 * 2**20  # a previous report is small; anything bigger is not one and is not read
TABLE_HEAD = ("group", "n", "chance")
TIE = 1e-9  # a solver left to guess scores chance exactly: summed in another order, it must not "differ"


def versus_chance(summary: Summary, chance: Summary) -> int:
    """+1 when ``summary``'s CI lies wholly above chance's expected accuracy, -1 wholly below, else 0. One
    question (or none) gives no interval to judge, so it is never said to differ; nor does a bound that meets
    chance but for float rounding (:data:`TIE`)."""
    low, high, expected = summary.ci_low, summary.ci_high, chance.mean
    if summary.n < 2 or low is None or high is None or expected is None:
        return 0
    return 1 if low > expected + TIE else -1 if high < expected - TIE else 0


def refuse_overwriting(path: Path) -> None:
    """ConfigError unless ``path`` is free or holds a previous validity report: a recording, a benchmark or any
    other file is never replaced by a report (:func:`save_report` then asks the export guard, which keeps
    reports out of run folders too)."""
    if path.exists() and not path.is_dir():  # a folder is the guard's to refuse, saying so
        try:
            previous = read_json(path, REPORT_MAX_BYTES)
        except (SimlabError, OSError):
            previous = None
        if not isinstance(previous, dict) or previous.get("format") != VALIDITY_FORMAT:
            raise ConfigError(
                f"{path} exists and is not a validity report (format {VALIDITY_FORMAT!r}); it is left as it is: "
                "choose another file"
            )


def save_report(report: ValidityReport, path: Path) -> Path:
    """Write ``report.to_json()`` to ``path`` atomically (see :func:`refuse_overwriting`), as an export
    (:func:`~simlab.core.exports.export_file`); returns ``path``."""
    refuse_overwriting(path)
    return export_file(path, lambda out: write_json_atomic(out, report.to_json(), indent=2), replaces=VALIDITY_FORMAT)


class ValidityDialog(QDialog):
    """A validity report: the table (tinted where a baseline differs from chance), facts, legend and notes."""

    def __init__(self, report: ValidityReport, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.report = report
        self.setWindowTitle(f"Validity report - {report.source}")
        self.facts = _selectable(QLabel(_facts_text(report)))
        self.table = self._make_table()
        self.notes = QTextBrowser()
        self.notes.setHtml(_notes_html(report))
        self.message = _selectable(QLabel(""))
        layout = QVBoxLayout(self)
        layout.addWidget(self.facts)
        layout.addWidget(self.table)
        layout.addWidget(self.notes, 1)
        layout.addWidget(self.message)
        layout.addWidget(self._make_buttons())
        self._fit()

    # ---- building ---------------------------------------------------------------------------------------
    def _make_table(self) -> QTableWidget:
        report = self.report
        columns = [*TABLE_HEAD, *report.baselines]
        table = QTableWidget(len(report.groups), len(columns))
        for k, column in enumerate(columns):
            head = QTableWidgetItem(column)
            head.setToolTip(report.legend.get(column, ""))
            table.setHorizontalHeaderItem(k, head)
        table.verticalHeader().hide()
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        numbers = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)  # decimals line up down a column
        for r, (group, row) in enumerate(report.groups.items()):
            chance = report.chance[group]
            label = QTableWidgetItem(group)
            label.setToolTip(_extra_text(report.extra.get(group, {})))
            table.setItem(r, 0, label)
            table.setItem(r, 1, _number(str(chance.n), numbers))
            table.setItem(r, 2, self._cell(chance, "chance", numbers))
            for c, baseline in enumerate(report.baselines, start=len(TABLE_HEAD)):
                table.setItem(r, c, self._cell(row[baseline], baseline, numbers, chance))
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        for c in range(len(TABLE_HEAD) - 1, len(columns)):  # spare width goes evenly to the numbers' columns
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.Stretch)
        return table

    def _cell(self, summary: Summary, baseline: str, font: QFont, chance: Summary | None = None) -> QTableWidgetItem:
        """A baseline's cell; given ``chance``, tinted with a tooltip saying so where it differs from chance."""
        item = _number(cell_text(summary), font)
        lines = [f"{baseline}: {self.report.legend.get(baseline, '')}", _summary_text(summary)]
        side = versus_chance(summary, chance) if chance is not None else 0
        if side and chance is not None:
            item.setBackground(ABOVE if side > 0 else BELOW)
            where = "above" if side > 0 else "below"
            lines.insert(0, f"differs from chance: the 95% CI lies {where} chance's {chance.mean:.2f}")
        item.setToolTip("\n".join(lines))
        return item

    def _make_buttons(self) -> QDialogButtonBox:
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self.copy_button = QPushButton("&Copy Table")
        self.copy_button.setToolTip("Copy the report as `python main.py validity` prints it")
        self.copy_button.clicked.connect(self.copy_table)
        self.save_button = QPushButton("&Save JSON...")
        self.save_button.setToolTip("Write the report as `python main.py validity --format json` does")
        self.save_button.clicked.connect(lambda: self.ask_save())
        for button in (self.copy_button, self.save_button):
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
        return buttons

    def _fit(self) -> None:
        """Wide enough for the whole table and tall enough for it and every note, as far as the screen allows
        (then the notes scroll)."""
        table = self.table
        header, frame = table.horizontalHeader(), 2 * table.frameWidth()
        columns = range(table.columnCount())
        width = sum(max(table.sizeHintForColumn(c), header.sectionSizeHint(c)) for c in columns) + frame + 60
        rows = header.sizeHint().height() + table.verticalHeader().length() + frame
        table.setFixedHeight(rows)
        area = self.screen().availableGeometry()
        width = min(max(width, 720), area.width() - 40)
        self.notes.document().setTextWidth(width - 40)
        notes = int(self.notes.document().size().height()) + 2 * self.notes.frameWidth()
        self.notes.setMinimumHeight(notes)  # the layout then says how tall the whole dialog wants to be
        height = self.sizeHint().height()
        self.notes.setMinimumHeight(min(notes, 160))  # on a short screen the notes scroll, the table stays
        self.resize(width, min(height, area.height() - 80))

    # ---- what the buttons do ----------------------------------------------------------------------------
    def copy_table(self) -> str:
        """Put the report's text (the command's table, legend and notes) on the clipboard; returns it."""
        text = self.report.to_table()
        QGuiApplication.clipboard().setText(text)
        self._say("Copied the table")
        return text

    def ask_save(self, path: Path | None = None) -> Path | None:
        """Save the JSON to ``path`` (asked for when None); a refusal or failure is said under the table."""
        if path is None:
            source = Path(self.report.source)
            suggested = str(source.with_name(f"{source.name}_validity.json"))
            chosen, _filter = QFileDialog.getSaveFileName(self, "Save the validity report", suggested, "JSON (*.json)")
            if not chosen:
                return None
            path = Path(chosen)
        try:
            written = save_report(self.report, path)
        except (SimlabError, OSError) as exc:
            self._say(f"Not saved: {exc}", error=True)
            return None
        self._say(f"Wrote {written}")
        return written

    def _say(self, text: str, error: bool = False) -> None:
        self.message.setStyleSheet("color: #c62828" if error else "")
        self.message.setText(text)

    # ---- reading the table (tests, scripts) --------------------------------------------------------------
    def rows(self) -> list[list[str]]:
        """The table's text, header first, as the dialog shows it."""
        table = self.table
        cells = [[table.horizontalHeaderItem(c) for c in range(table.columnCount())]]
        cells += [[table.item(r, c) for c in range(table.columnCount())] for r in range(table.rowCount())]
        return [[item.text() if item is not None else "" for item in row] for row in cells]


class ValidityJob(QObject):
    """One validity report computed in a thread of its own; its signals reach the window on the GUI thread."""

    done = Signal(object)  # the ValidityReport
    failed = Signal(str)  # why not, naming the file

    def __init__(self, family: WorldFamily, source: Path, seed: int = 0) -> None:
        super().__init__()
        self.family, self.source, self.seed = family, source, seed

    def start(self) -> None:
        """Compute it; the thread holds the job until it has said how it went."""
        threading.Thread(target=self._run, daemon=True, name="validity").start()

    def _run(self) -> None:
        with collector_paused():  # see gui/background.py: a collection here could deadlock the GUI thread
            self._compute()

    def _compute(self) -> None:
        try:
            report = compute_validity(self.family, self.source, self.seed)
        except (SimlabError, OSError, ValueError, KeyError) as exc:
            self.failed.emit(f"Could not read the benchmark {self.source}: {exc}")
        except Exception as exc:  # a family's bug must reach the person as a message, not end a thread quietly
            self.failed.emit(
                f"The {self.family.name} validity report of {self.source} failed: {type(exc).__name__}: {exc}"
            )
        else:
            self.done.emit(report)


class ValidityLauncher(QObject):
    """A window's "Validity Report..." entry: asks for a benchmark folder (starting at :attr:`last_folder`),
    computes the family's report off the GUI thread and opens a :class:`ValidityDialog` on the window.
    ``say(text, error)`` tells the person what is happening and what went wrong."""

    opened = Signal(object)  # the ValidityDialog shown
    failed = Signal(str)  # why there is none

    def __init__(self, window: QWidget, say: Callable[[str, bool], object]) -> None:
        super().__init__(window)
        self.window, self.say = window, say
        self.last_folder: Path | None = None
        self.job: ValidityJob | None = None

    def ask(self, family: WorldFamily, folder: Path | None = None) -> ValidityJob | None:
        """Compute the report of ``folder`` (asked for when None); returns the job, None when nothing started."""
        if self.job is not None:
            self.say(f"Still computing the validity report of {self.job.source}", False)
            return None
        if folder is None:
            start = str(self.last_folder or "")
            chosen = QFileDialog.getExistingDirectory(self.window, "Benchmark folder for the validity report", start)
            if not chosen:
                return None
            folder = Path(chosen)
        self.last_folder = folder
        job = ValidityJob(family, folder)
        job.done.connect(self._done)
        job.failed.connect(self._failed)
        self.job = job
        self.say(f"Computing the validity report of {folder}...", False)
        job.start()
        return job

    def _done(self, report: ValidityReport) -> None:
        self.job = None
        dialog = ValidityDialog(report, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        self.say(f"Validity report of {report.source}", False)
        self.opened.emit(dialog)

    def _failed(self, why: str) -> None:
        self.job = None
        self.say(why, True)
        self.failed.emit(why)


# ---- text ----------------------------------------------------------------------------------------------------


def _selectable(label: QLabel) -> QLabel:
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setWordWrap(True)
    return label


def _number(text: str, font: QFont) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFont(font)
    item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
    return item


def _facts_text(report: ValidityReport) -> str:
    facts = [f"{name}: {value}" for name, value in report.facts.items()]
    return " | ".join([f"benchmark: {report.source}", *facts])


def _summary_text(summary: Summary) -> str:
    if summary.mean is None:
        return f"n = {summary.n}: no questions"
    sem = f", SEM {summary.sem:.3f}" if summary.sem is not None else ""
    return f"n = {summary.n}, mean {summary.mean:.3f}{sem}, 95% CI [{summary.ci_low:.3f}, {summary.ci_high:.3f}]"


def _extra_text(extra: Mapping[str, object]) -> str:
    return "\n".join(f"{name}: {_compact(value)}" for name, value in extra.items())


def _compact(value: object) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


def _notes_html(report: ValidityReport) -> str:
    """How to read the tints, then the legend and the notes, as the command prints them after its table."""
    swatch = '<span style="background:{};">&nbsp;{}&nbsp;</span>'
    head = (
        "Each cell: mean accuracy per question [95% bootstrap CI]. Differs from chance (the CI excludes chance's "
        f"expected accuracy): {swatch.format(ABOVE.name(), 'above')} {swatch.format(BELOW.name(), 'below')}. "
        "Hover a cell for its n and SEM, a group for its facts."
    )
    legend = "".join(f"<li><b>{html.escape(k)}</b>: {html.escape(v)}</li>" for k, v in report.legend.items())
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in report.notes)
    parts = [f"<p>{head}</p>", f"<p><b>Legend</b></p><ul>{legend}</ul>"]
    if notes:
        parts.append(f"<p><b>Notes</b></p><ul>{notes}</ul>")
    return "".join(parts)
