"""A fork beside its original: linked playback, a turn-by-turn diff of the two continuations, and window tiling.

:class:`PlaybackLink` keeps two playbacks on the same turn (step one, both step; a turn one of them has not
reached shows its last). :class:`ForkDiffView` is the fork window's *Fork diff* dock: the summaries side by
side, then every turn from the fork's turn, the original's lines above the fork's, the turns that differ
tinted and the first of them named; a click on a turn seeks the playback (and, linked, both).
:func:`tile` places windows side by side on the screen's available area without overlap.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QObject, QRect, QUrl
from PySide6.QtWidgets import QCheckBox, QTextBrowser, QVBoxLayout, QWidget

from simlab.analysis.episode_diff import EpisodeDiff, TurnDiff, value_text
from simlab.analysis.fork_diff import fork_diff
from simlab.core.episode import Episode
from simlab.core.family import hex_colour
from simlab.gui.playback import PlaybackModel
from simlab.render.formatting import MUTED_RGB, esc

DIFFERENT = "#ffe0b2"  # the tint of what differs
MUTED = hex_colour(MUTED_RGB)
TURN_SCHEME = "turn"


class PlaybackLink(QObject):
    """Two playbacks that follow each other's turn while ``enabled`` and while each still shows the episode it
    showed when linked (opening another episode in either window unlinks them)."""

    def __init__(self, a: PlaybackModel, b: PlaybackModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.a, self.b = a, b
        self._episodes = (a.episode, b.episode)
        self.enabled = True
        self._busy = False  # a seek we made comes back through the other's signal: ignore it
        a.turnChanged.connect(lambda turn: self._follow(self.b, turn))
        b.turnChanged.connect(lambda turn: self._follow(self.a, turn))

    def _follow(self, other: PlaybackModel, turn: int) -> None:
        same = self.a.episode is self._episodes[0] and self.b.episode is self._episodes[1]  # identity: no deep ==
        if not self.enabled or self._busy or not same:
            return
        self._busy = True
        try:
            other.seek(min(turn, other.last_turn))
        finally:
            self._busy = False


class ForkDiffView(QWidget):
    """The fork's continuation against the original's, refreshed as the fork grows: the summaries side by side,
    then each turn's lines, the original's above the fork's, turns that differ tinted. A click on a turn's
    heading seeks the playback there (and, linked, the original too)."""

    def __init__(self, original: Episode, fork_playback: PlaybackModel, from_turn: int, link: PlaybackLink) -> None:
        super().__init__()
        self.original, self.playback, self.from_turn, self.link = original, fork_playback, from_turn, link
        self.diff: EpisodeDiff | None = None
        self.linked = QCheckBox("Linked playback")
        self.linked.setToolTip("Stepping one window steps the original and its forks too")
        self.linked.setChecked(True)
        self.linked.toggled.connect(self._set_linked)
        self.view = QTextBrowser()
        self.view.setOpenLinks(False)
        self.view.anchorClicked.connect(self._on_link)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.linked)
        layout.addWidget(self.view, 1)
        fork_playback.episodeChanged.connect(lambda _episode: self.refresh())
        self.refresh()

    def refresh(self) -> None:
        """Recompute the diff on the fork as it is now (a live fork grows)."""
        fork = self.playback.episode
        if fork is None:
            return
        self.diff = fork_diff(self.original, fork, self.from_turn)
        self.view.setHtml(diff_html(self.diff, self.original.episode_id))

    def headline(self) -> str:
        """The diff's first sentence, as plain text."""
        return _headline(self.diff) if self.diff is not None else ""

    def _on_link(self, url: QUrl) -> None:
        if url.scheme() == TURN_SCHEME:
            self.playback.seek(int(url.path()))

    def _set_linked(self, on: bool) -> None:
        self.link.enabled = on


def diff_html(diff: EpisodeDiff, original_id: str) -> str:
    """The diff as rich text: headline, the summaries table (differences tinted), then every turn."""
    rows = "".join(
        f"<tr style='background:{DIFFERENT if a != b else 'white'}'><td>{esc(name)}</td>"
        f"<td>{esc(value_text(a))}</td><td>{esc(value_text(b))}</td></tr>"
        for name, a, b in diff.outcome
    )
    table = f"<table cellpadding='2'><tr><th></th><th>original</th><th>fork</th></tr>{rows}</table>"
    turns = "".join(_turn_html(turn) for turn in diff.turns)
    head = f"<p><b>{esc(_headline(diff))}</b><br><span style='color:{MUTED}'>original: {esc(original_id)}</span></p>"
    return head + table + turns


def _turn_html(turn: TurnDiff) -> str:
    link = f"<a href='{TURN_SCHEME}:{turn.turn}'><b>Turn {turn.turn}</b></a>"
    if turn.same:
        return f"<p style='margin-top:8px'>{link} (the same)</p>{_lines_html(turn.a, MUTED)}"
    heading = f"<p style='background:{DIFFERENT};margin-top:8px'>{link}</p>"
    original, fork = _lines_html(turn.a, "black"), _lines_html(turn.b, "black")
    return f"{heading}<p><i>original</i></p>{original}<p><i>fork</i></p>{fork}"


def _lines_html(lines: tuple[str, ...], colour: str) -> str:
    body = "<br>".join(esc(line) for line in lines) or "<i>nothing</i>"
    return f"<p style='color:{colour};margin-left:10px'>{body}</p>"


def tile(windows: Sequence[QWidget], available: QRect) -> bool:
    """Place ``windows`` side by side across ``available`` (a screen's free area), the original first and
    each fork to its right, frames included. Widths share the screen, none below its window's minimum; returns
    False when the minimums do not fit side by side (the last windows then overlap, staying on screen)."""
    frames = [w.frameGeometry().size() - w.geometry().size() for w in windows]  # title bars and borders
    least = [w.minimumSizeHint().width() + f.width() for w, f in zip(windows, frames, strict=True)]
    widths = share(available.width(), least)
    fits = sum(widths) <= available.width()
    x = available.x()
    for window, frame, width in zip(windows, frames, widths, strict=True):
        x = min(x, available.right() + 1 - width)  # overflowing windows are pulled back on screen
        window.move(x, available.y())
        window.resize(width - frame.width(), available.height() - frame.height())
        x += width
    return fits


def share(total: int, least: Sequence[int]) -> list[int]:
    """Widths for windows needing at least ``least`` that add up to ``total`` when they can: an equal share,
    raised to a window's minimum where that is more, the rest split among the others."""
    widths = list(least)
    flexible = list(range(len(least)))
    while flexible:
        room = total - sum(least[k] for k in range(len(least)) if k not in flexible)
        each = room // len(flexible)
        fixed = [k for k in flexible if least[k] > each]
        if not fixed:
            for k in flexible:
                widths[k] = max(each, least[k])
            break
        flexible = [k for k in flexible if k not in fixed]
    return widths


def _headline(diff: EpisodeDiff) -> str:
    first = diff.first_difference
    if first is None:
        return f"Forked at turn {diff.from_turn}: the continuations are the same so far."
    return (
        f"Forked at turn {diff.from_turn}: the continuations first differ at turn {first}; "
        f"{diff.differing} of {len(diff.turns)} turns differ (tinted)."
    )
