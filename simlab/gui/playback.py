"""The one playback model every panel follows (Rerun's timeline): which episode, which turn, playing or not.

Panels never decide what turn it is: they connect to :attr:`PlaybackModel.turnChanged` and
:attr:`PlaybackModel.episodeChanged` and redraw. Playing uses a single-shot timer restarted after each step
has been drawn, so when drawing is slower than the speed asks, turns are skipped in time rather than queued.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from simlab.core.episode import Episode
from simlab.core.playback import next_error_turn, previous_error_turn


class PlaybackModel(QObject):
    """Current episode and turn, play state, speed (turns per second) and loop."""

    episodeChanged = Signal(object)  # Episode | None
    turnChanged = Signal(int)
    playingChanged = Signal(bool)
    notice = Signal(str)  # something the user should read in the status bar (an error search that wrapped)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._episode: Episode | None = None
        self._turn = 0
        self.speed = 2.0
        self.loop = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._tick)

    # ---- state ---------------------------------------------------------------------------------------
    @property
    def episode(self) -> Episode | None:
        return self._episode

    @property
    def turn(self) -> int:
        return self._turn

    @property
    def last_turn(self) -> int:
        return self._episode.last_turn if self._episode is not None else 0

    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    def set_episode(self, episode: Episode | None) -> None:
        """Show another episode (or none), from turn 0, paused."""
        self.pause()
        self._episode = episode
        self._turn = 0
        self.episodeChanged.emit(episode)
        self.turnChanged.emit(0)

    # ---- navigation ----------------------------------------------------------------------------------
    def seek(self, turn: int) -> None:
        """Go to ``turn`` (clamped to the episode); emits turnChanged only when the turn changes."""
        turn = max(0, min(int(turn), self.last_turn))
        if turn != self._turn:
            self._turn = turn
            self.turnChanged.emit(turn)

    def step(self, delta: int = 1) -> None:
        self.seek(self._turn + delta)

    def first(self) -> None:
        self.seek(0)

    def last(self) -> None:
        self.seek(self.last_turn)

    def next_error(self) -> bool:
        """Jump to the next turn with an engine error, a mistake or a protocol error, wrapping to the first
        after the last (with a notice); False when the episode has none."""
        return self._to_error(forward=True)

    def previous_error(self) -> bool:
        """Jump to the previous error turn, wrapping to the last before the first; False when there is none."""
        return self._to_error(forward=False)

    def _to_error(self, forward: bool) -> bool:
        if self._episode is None:
            return False
        find = next_error_turn if forward else previous_error_turn
        turn = find(self._episode, self._turn)
        if turn is None:
            turn = find(self._episode, -1 if forward else self.last_turn + 1)
            if turn is None:
                self.notice.emit("No errors or mistakes in this episode")
                return False
            if turn != self._turn:
                self.notice.emit(f"Wrapped to the {'first' if forward else 'last'} error (turn {turn})")
        self.seek(turn)
        return True

    # ---- playing -------------------------------------------------------------------------------------
    def play(self) -> None:
        if self._episode is None or self.playing:
            return
        if self._turn >= self.last_turn:
            self.seek(0)
        self._timer.start(self._interval_ms())
        self.playingChanged.emit(True)

    def pause(self) -> None:
        if self.playing:
            self._timer.stop()
            self.playingChanged.emit(False)

    def toggle_play(self) -> None:
        self.pause() if self.playing else self.play()

    def set_speed(self, turns_per_second: float) -> None:
        self.speed = max(0.1, float(turns_per_second))

    def _interval_ms(self) -> int:
        return max(1, round(1000 / self.speed))

    def _tick(self) -> None:
        if self._turn >= self.last_turn:
            if not self.loop:
                self.playingChanged.emit(False)
                return
            self.seek(0)
        else:
            self.step(1)  # every panel redraws synchronously here, before the next tick is scheduled
        self._timer.start(self._interval_ms())
