"""Notes, tags and bookmarks on turns in the app, and links to a turn.

:class:`TurnNotes` writes the researcher's marks on the open episode's turns through
:func:`simlab.core.notes.change_notes` (the file as it is on disk, so the command line and the app can note
in one run), shows them at once on the timeline (a diamond per marked turn) and in the dialogue (under the
turn's heading), and says so with :attr:`TurnNotes.changed`, which the search index follows. It also puts a
link to the turn on the clipboard (the ``gui`` command line and the ``simlab://`` URL, :mod:`simlab.core.links`)
and opens such a link, given or dropped on the window. Marks need a run: an episode file opened on its own,
or a live episode, has nowhere to keep them, and the actions say so.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QMimeData, QObject, QUrl, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QInputDialog, QLineEdit

from simlab.core.errors import SimlabError
from simlab.core.links import is_turn_url, parse_turn_url, turn_command, turn_url
from simlab.core.notes import Mark, RunNotes, change_notes, mark_words
from simlab.core.reading import resolved
from simlab.gui.browser import EpisodeKey
from simlab.gui.window_host import NotesHost

NO_RUN = "Notes and links are kept beside a run: open the episode from its run folder"


class TurnNotes(QObject):
    """The window's notes on turns: actions that change them, their marks on the timeline and in the dialogue,
    and links to turns. ``changed`` carries the run folder whose notes changed."""

    changed = Signal(object)

    def __init__(self, host: NotesHost) -> None:
        super().__init__(host.window())
        self.host = host
        self.marks: dict[int, Mark] = {}
        """The open episode's marks on its turns, as shown (turn -> mark)."""
        host.playback.episodeChanged.connect(lambda _episode: self.refresh())

    # ---- where ----------------------------------------------------------------------------------------
    def place(self) -> tuple[Path, str, int] | None:
        """(run folder, episode id, turn) the playback shows, when its episode was opened from a run."""
        host, episode = self.host, self.host.playback.episode
        key, run = host.current, host.run
        if key is None or run is None or episode is None or episode.episode_id != key.episode_id:
            return None
        return run.path, key.episode_id, host.playback.turn

    def refresh(self) -> None:
        """Read the open episode's marks from its run's notes and show them."""
        place = self.place()
        self.marks = {}
        if place is not None:
            try:
                self.marks = {m.turn: m for m in RunNotes.load(place[0]).marks_of(place[1]) if m.turn is not None}
            except SimlabError as exc:  # a damaged notes file must not stop the episode showing
                self.host.statusBar().showMessage(f"The run's notes could not be read: {exc}", 15000)
        self.host.timeline.scrubber.set_notes(self.marks)
        self.host.dialogue.set_notes(self.marks)

    # ---- changes ----------------------------------------------------------------------------------------
    def toggle_bookmark(self) -> bool:
        """Bookmark the turn shown, or remove its bookmark; False (and a message) when it cannot be noted."""
        return self._change(lambda notes, e, t: notes.toggle_bookmark(e, t), "bookmark")

    def set_tags(self, tags: list[str]) -> bool:
        """The turn's tags become exactly ``tags`` (each one word; a bad one is refused with its rule)."""

        def change(notes: RunNotes, episode_id: str, turn: int) -> None:
            mark = notes.get(episode_id, turn)
            for tag in mark.tags if mark is not None else []:
                notes.remove_tag(episode_id, turn, tag)
            for tag in tags:
                notes.add_tag(episode_id, turn, tag)

        return self._change(change, "tags")

    def set_note(self, text: str) -> bool:
        """The turn's note ("" removes it)."""
        return self._change(lambda notes, e, t: notes.set_note(e, t, text), "note")

    def ask_tags(self) -> None:
        """Ask for the turn's tags, the present ones filled in (Ctrl+T)."""
        if not self._notable():
            return
        mark = self.marks.get(self.host.playback.turn)
        text, ok = QInputDialog.getText(
            self.host.window(),
            "Tag this turn",
            f"Tags of turn {self.host.playback.turn} (words separated by spaces; clear to remove):",
            QLineEdit.EchoMode.Normal,
            " ".join(mark.tags) if mark else "",
        )
        if ok:
            self.set_tags(text.split())

    def ask_note(self) -> None:
        """Ask for the turn's note, the present one filled in (Ctrl+Shift+N)."""
        if not self._notable():
            return
        turn = self.host.playback.turn
        mark = self.marks.get(turn)
        text, ok = QInputDialog.getMultiLineText(
            self.host.window(), "Note on this turn", f"Note on turn {turn}:", mark.note if mark else ""
        )
        if ok:
            self.set_note(text)

    def _notable(self) -> bool:
        """Whether the turn shown can be noted (else a message says why)."""
        return self.place() is not None or self.host.show_error(NO_RUN)

    def _change(self, change: Callable[[RunNotes, str, int], object], what: str) -> bool:
        place = self.place()
        if place is None:
            return self.host.show_error(NO_RUN)
        run_dir, episode_id, turn = place
        try:
            change_notes(run_dir, lambda notes: change(notes, episode_id, turn))
        except (SimlabError, OSError) as exc:
            return self.host.show_error(f"The {what} was not saved:\n{exc}")
        self.refresh()
        mark = self.marks.get(turn)
        said = mark_words(mark) if mark else "nothing noted"
        self.host.statusBar().showMessage(f"Turn {turn} of {episode_id}: {said} (kept in the run's notes)", 5000)
        self.changed.emit(run_dir)
        return True

    # ---- links ------------------------------------------------------------------------------------------
    def copy_link(self) -> bool:
        """Put a link to the turn shown on the clipboard: the command line that opens it and its ``simlab://``
        URL, a line each (the URL also as a URL, for programs that take one)."""
        place = self.place()
        if place is None:
            return self.host.show_error(NO_RUN)
        run_dir, episode_id, turn = place
        url = turn_url(run_dir, episode_id, turn)
        mime = QMimeData()
        mime.setText(f"{turn_command(Path(os.path.abspath(run_dir)), episode_id, turn)}\n{url}")
        mime.setUrls([QUrl.fromEncoded(url.encode())])
        QGuiApplication.clipboard().setMimeData(mime)
        self.host.statusBar().showMessage(f"Copied a link to turn {turn} of {episode_id}: {url}", 8000)
        return True

    def open_link(self, url: str) -> bool:
        """Open what a ``simlab://open`` link names: its run (the open one when it is open already), its episode
        at its turn. False, and a message, when the link or what it names cannot be opened."""
        try:
            link = parse_turn_url(url)
        except SimlabError as exc:
            return self.host.show_error(f"Could not open the link:\n{exc}")
        name = next((n for n, run in self.host.runs.items() if resolved(run.path) == resolved(link.run)), None)
        if name is None:
            if not self.host.open_path(link.run) or not self.host.runs:
                return False
            name = next(iter(self.host.runs))
        if link.episode is None:
            return True
        return self.open_turn(name, link.episode, link.turn or 0)

    def open_turn(self, run: str, episode_id: str, turn: int) -> bool:
        """Show episode ``episode_id`` of the open run ``run`` at ``turn`` (read only when not open already)."""
        if self.host.current != EpisodeKey(run, episode_id) and not self.host.open_episode_id(episode_id, run):
            return False
        self.host.playback.seek(turn)
        return True

    def open_dropped(self, mime: QMimeData) -> bool:
        """Open a ``simlab://`` link dropped on the window (as a URL or as text); False when none was dropped."""
        links = [bytes(url.toEncoded().data()).decode() for url in mime.urls() if url.scheme() == "simlab"]
        text = mime.text().strip() if mime.hasText() else ""
        links += [text] if not links and is_turn_url(text) else []
        return bool(links) and self.open_link(links[0])


def holds_link(mime: QMimeData) -> bool:
    """Whether ``mime`` holds a ``simlab://`` link (so the window accepts the drag)."""
    return any(url.scheme() == "simlab" for url in mime.urls()) or (mime.hasText() and is_turn_url(mime.text().strip()))
