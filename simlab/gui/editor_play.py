"""Play what the editor authored: choose who plays each role, then watch a live episode in a main window."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

from simlab.core.editing import EditorDocument
from simlab.core.errors import SimlabError
from simlab.gui.live import AgentsDialog, SessionPlan, default_specs
from simlab.gui.main_window import MainWindow
from simlab.worlds import get_family


class PlayDialog(AgentsDialog):
    """An agent per role (the family's defaults first); OK starts the episode on the document's task in a main
    window (``main_window`` afterwards). It needs only the document, not the editor window (its ``parent``)."""

    def __init__(self, document: EditorDocument, parent: QWidget) -> None:
        family = get_family(document.family)
        note = 'Who plays each role ("human" plays it yourself):'
        super().__init__(f"Play this {family.name} world", family, default_specs(family.name), note, parent)
        self.document = document
        self.main_window: MainWindow | None = None

    def accept(self) -> None:
        """Build the session on the document's task and show it in a new main window."""
        document = self.document
        try:
            task = document.playable()
            session = SessionPlan.of(document.family, 0, self.agents()).session(task)
        except (SimlabError, ValueError) as exc:
            QMessageBox.warning(self, self.windowTitle(), str(exc))
            return
        self.main_window = MainWindow()
        self.main_window.remembers_layout = False  # a window opened from the editor: not the layout to start with
        self.main_window.show()
        self.main_window.start_live(session)
        super().accept()
