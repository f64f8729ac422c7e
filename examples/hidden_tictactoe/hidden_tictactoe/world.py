"""The game master of hidden tic-tac-toe: whose turn it is, what each role sees, what a move does, the scores.

One turn: the seer speaks (a message, and private reasoning if it likes), then the player either marks a
cell (action ``{"cell": [i, j]}``) or asks (a message with no action). The engine's verdict on a move joins the
shared history. The episode ends when the player completes a line (success), has stepped on ``lives`` mines
(failure) or has used ``turns`` turns (truncated; failure).

Observations give live models ``text`` (the board drawn in characters, the history), scripted agents
``data`` (the same as JSON) and both a picture of the board (``images``, drawn only when someone looks).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import Field
from simlab.core import events as ev
from simlab.core.events import Event
from simlab.core.family import Settings
from simlab.core.world import LazyImages, Observation, Reply, World

from hidden_tictactoe.board import (
    Cell,
    Layout,
    Verdict,
    cell_text,
    cells_json,
    cells_text,
    completed_line,
    grid_text,
    judge,
    parse_cell,
)
from hidden_tictactoe.roles import PLAYER, ROLES, SEER

LEGEND = "X your marks, O the opponent's, * a mine already stepped on, . empty"
SEER_LEGEND = "X the player's marks, O the opponent's, M a hidden mine, + a cell of the safe line, * a mine stepped on"


class TicTacToeSettings(Settings):
    """The game's options (``--set turns=6``)."""

    turns: int = Field(8, ge=1, le=10_000, description="turn budget of an episode (3 turns is a perfect game)")
    lives: int = Field(2, ge=1, le=9, description="the game is lost once the player has stepped on this many mines")


class HiddenTicTacToe(World):
    """A seer and a player on a 3x3 board with hidden mines."""

    family = "tictactoe"
    roles = ROLES

    def __init__(self, task: Mapping[str, Any], settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(task, TicTacToeSettings.checked(settings))
        self.layout = Layout.from_task(task)
        self.marks: list[Cell] = []
        self.revealed: list[Cell] = []
        self.history: list[dict[str, Any]] = []
        self.log: list[dict[str, Any]] = []
        self.silences = 0
        self.phase = SEER

    # ---- AEC protocol --------------------------------------------------------------------------------
    def reset(self, seed: int) -> list[Event]:
        """A fresh board at turn 1, the seer to speak; the set-up events are the state and scores of turn 0."""
        self.marks, self.revealed, self.history, self.log, self.silences = [], [], [], [], 0
        self.phase, self.turn = SEER, 0
        out = [ev.state(0, self._snapshot()), ev.score(0, self._scores())]
        self.turn = 1
        return out

    @property
    def agent_selection(self) -> str | None:
        return None if self.finished else self.phase

    @property
    def won(self) -> bool:
        return completed_line(self.marks) is not None

    @property
    def lost(self) -> bool:
        return len(self.revealed) >= int(self.settings["lives"])

    @property
    def done(self) -> bool:
        return self.won or self.lost

    @property
    def truncated(self) -> bool:
        return not self.done and self.turn > int(self.settings["turns"])

    def observe(self, role: str) -> Observation:
        if role == SEER:
            return self._observe_seer()
        if role == PLAYER:
            return self._observe_player()
        raise ValueError(f"tictactoe has no role {role!r}")

    def step(self, reply: Reply) -> list[Event]:
        role = self.agent_selection
        if role is None:
            raise RuntimeError("the episode is over; nothing may act")
        out: list[Event] = []
        if role == SEER:
            out += self._seer_step(reply)
            self.phase = PLAYER
            return out
        out += self._player_step(reply)
        self.phase, self.turn = SEER, self.turn + 1
        return out

    # ---- steps ----------------------------------------------------------------------------------------
    def _say(self, role: str, text: str) -> Event:
        self.history.append({"turn": self.turn, "role": role, "text": text})
        return ev.message(self.turn, role, text)

    def _seer_step(self, reply: Reply) -> list[Event]:
        text = (reply.message or "").strip()
        if not text:
            self.silences += 1
            return [ev.protocol_error(self.turn, SEER, "no_message", "the seer said nothing")]
        return [self._say(SEER, text)]

    def _player_step(self, reply: Reply) -> list[Event]:
        text = (reply.message or "").strip()
        out = [self._say(PLAYER, text)] if text else []
        if reply.action is not None:
            out += self._move(reply.action)
        elif not text:
            out.append(ev.protocol_error(self.turn, PLAYER, "no_reply", "the player neither moved nor asked"))
            self.log.append({"turn": self.turn, "kind": "none", "ok": False})
        else:
            self.log.append({"turn": self.turn, "kind": "ask", "ok": True})
        return [*out, ev.score(self.turn, self._scores())]

    def _move(self, action: Mapping[str, Any]) -> list[Event]:
        try:
            cell = parse_cell(action.get("cell") if isinstance(action, Mapping) else None)
        except ValueError as exc:
            return self._unreadable(action, str(exc))
        verdict = judge(self.layout, self.marks, self.revealed, cell)
        self._apply(cell, verdict)
        data = {"action": {"cell": [cell[0], cell[1]]}, "text": f"marks {cell_text(cell)}"}
        out = [Event("action", self.turn, PLAYER, data), Event("result", self.turn, "engine", verdict.to_json(cell))]
        return out + ([ev.state(self.turn, self._snapshot())] if verdict.ok or verdict.error == "mine" else [])

    def _unreadable(self, action: Any, problem: str) -> list[Event]:
        """A move that names no cell: the raw action is recorded too, so a fork replays the same reply."""
        self.log.append({"turn": self.turn, "kind": "move", "ok": False, "error": "bad_move"})
        recorded = json.loads(json.dumps(action, default=str))
        move = Event("action", self.turn, PLAYER, {"action": recorded, "text": "an unreadable move"})
        return [move, ev.protocol_error(self.turn, PLAYER, "bad_move", problem)]

    def _apply(self, cell: Cell, verdict: Verdict) -> None:
        if verdict.ok:
            self.marks.append(cell)
        elif verdict.error == "mine":
            self.revealed.append(cell)
        self.log.append({"turn": self.turn, "kind": "move", "ok": verdict.ok, "error": verdict.error})
        text = verdict.message if verdict.ok else f"FAILED: {verdict.message}"
        self.history.append({"turn": self.turn, "role": "engine", "text": text})

    # ---- state and scores -----------------------------------------------------------------------------
    def _snapshot(self) -> dict[str, Any]:
        return {"marks": cells_json(self.marks), "revealed": cells_json(self.revealed), "lives_left": self._lives()}

    def _lives(self) -> int:
        return max(0, int(self.settings["lives"]) - len(self.revealed))

    def _scores(self) -> dict[str, float]:
        on_line = sum(1 for c in self.layout.target if c in self.marks)
        return {
            "progress": 1.0 if self.won else on_line / 3,
            "marks": float(len(self.marks)),
            "mines_hit": float(len(self.revealed)),
            "lives_left": float(self._lives()),
        }

    # ---- observations ---------------------------------------------------------------------------------
    def _common(self, role: str) -> dict[str, Any]:
        return {
            "role": role,
            "turn": self.turn,
            "turns": int(self.settings["turns"]),
            "blocked": cells_json(self.layout.blocked),
            **self._snapshot(),
        }

    def _history_lines(self) -> tuple[str, ...]:
        return tuple(f"[turn {h['turn']}] {h['role']}: {h['text']}" for h in self.history)

    def _history_text(self) -> str:
        return "Conversation so far:\n" + ("\n".join(self._history_lines()) or "(nothing yet)")

    def _observation(self, role: str, head: list[str], tail: str, data: dict[str, Any]) -> Observation:
        """Text with the whole history for models; the recording keeps only its size (it is already events)."""
        text = "\n\n".join([*head, self._history_text(), tail])
        recorded = "\n\n".join([*head, f"Conversation so far: the {len(self.history)} entries recorded above.", tail])
        data = {**data, "history_size": len(self.history)}
        frozen = json.loads(json.dumps(data))
        images = LazyImages({"board": lambda: _board_picture(frozen)})
        # The board is drawn in characters in the text already; the history can be cut from the oldest.
        return Observation(role, self.turn, text, images, data, recorded, {"board": ""}, self._history_lines())

    def _observe_seer(self) -> Observation:
        layout = self.layout
        data = {**self._common(SEER), "mines": cells_json(layout.mines), "line": layout.line}
        data["target"] = cells_json(layout.target)
        head = [
            "You are the seer. Only you can see the hidden mines.",
            f"The board ({SEER_LEGEND}):\n{grid_text(layout, self.marks, self.revealed, hidden=True)}",
            f"Hidden mines: {cells_text(layout.mines)}\nThe safe line: {layout.line}: {cells_text(layout.target)}",
            f"The player has {self._lives()} of {self.settings['lives']} lives left.",
        ]
        tail = f"Turn {self.turn} of {self.settings['turns']}. Write your message to the player."
        return self._observation(SEER, head, tail, data)

    def _observe_player(self) -> Observation:
        said = [h for h in self.history if h["turn"] == self.turn and h["role"] == SEER]
        data = {**self._common(PLAYER), "this_turn": [{"role": h["role"], "text": h["text"]} for h in said]}
        head = [
            "You are the player. Some empty cells hide mines you cannot see; the seer can.",
            f"The board ({LEGEND}):\n{grid_text(self.layout, self.marks, self.revealed, hidden=False)}",
            f"You have {self._lives()} of {self.settings['lives']} lives left.",
        ]
        tail = f"Turn {self.turn} of {self.settings['turns']}. Reply with one line: MOVE i,j or ASK your question."
        return self._observation(PLAYER, head, tail, data)

    # ---- results --------------------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        moves = [t for t in self.log if t["kind"] == "move"]
        words = [len(h["text"].split()) for h in self.history if h["role"] == SEER]
        metrics = {
            **self._scores(),
            "win": float(self.won),
            "turns_used": float(len(self.log)),
            "moves": float(len(moves)),
            "asks": float(sum(t["kind"] == "ask" for t in self.log)),
            "wasted_moves": float(sum(not t["ok"] and t.get("error") != "mine" for t in moves)),
            "seer_words": sum(words) / len(words) if words else 0.0,
        }
        return {
            "world": self.family,
            "task_id": self.task_id(),
            "group": self.task.get("group"),
            "outcome": "success" if self.won else "failure",
            "score": metrics["progress"],
            "turns": len(self.log),
            "errors": sum(not t["ok"] for t in self.log) + self.silences,
            "metrics": metrics,
        }


def _board_picture(data: Mapping[str, Any]) -> Any:
    from hidden_tictactoe.images import board_picture  # Pillow only when someone looks

    return board_picture(data)
