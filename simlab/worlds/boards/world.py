"""The cobot game master: a programmer who sees the target guides a robot whose code builds the board.

A round (paper section 3; the reference's loop) is one programmer message and the robot's answer. The
programmer sends an instruction, or ``DONE`` to end. The robot answers JSON: ``code`` (run by our own
interpreter on a copy of the board, all or nothing), a ``clarification`` question or an ``acknowledgement``
(both forwarded to the programmer). A reply that cannot be read, or code that fails, goes back to the robot
with the reference's error message, in the same round; ``max_failures`` such failures in a row abort the
episode. The episode ends on DONE, after ``rounds`` rounds, or on an abort; it is a success only when the
board then matches the target exactly (shape, colour, cell and stacking order).

In the single-agent condition the robot sees the target itself and nobody else acts: its first successful
code turn ends a single-turn episode; in multi-turn it may go on and ends with an acknowledgement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from simlab.core import events as ev
from simlab.core.events import Event
from simlab.core.family import Settings
from simlab.core.world import LazyImages, Observation, Reply, World
from simlab.worlds.boards import metrics
from simlab.worlds.boards.api import Execution, execute
from simlab.worlds.boards.model import ERROR_KINDS, Board, Rules
from simlab.worlds.boards.replies import PARSE_ERROR
from simlab.worlds.boards.targets import Target
from simlab.worlds.boards.text import difference_grid, listing

PROGRAMMER = "programmer"
ROBOT = "robot"
ROLES = (PROGRAMMER, ROBOT)
PALETTE: dict[str, tuple[int, int, int]] = {
    PROGRAMMER: (123, 63, 181),  # violet: apart from the four piece colours
    ROBOT: (69, 90, 100),  # slate
}
DONE = "DONE"
MAX_SHOWN = 4000  # characters of the robot's code or text an action event repeats for the dialogue


class BoardsSettings(Settings):
    """The cobot conditions (paper tables 1-4) and the game master's limits (docs/BOARDS.md)."""

    agents: Literal["two", "single"] = Field(
        "two", description="two: a programmer guides the robot; single: the robot sees the target and works alone"
    )
    dialogue: Literal["multi", "single"] = Field(
        "multi", description="multi: instructions round by round; single: everything in one message and one reply"
    )
    target_view: Literal["text", "image", "layers"] = Field(
        "text", description="how the target is given: the text listing, one top-down image, or layer-wise images"
    )
    state_view: Literal["text", "image"] = Field("text", description="how the current board is given")
    difference_grid: bool = Field(True, description="a text-mode programmer also gets the difference grid")
    rounds: int = Field(10, ge=1, le=1000, description="round limit (the reference's 10)")
    max_failures: int = Field(
        3, ge=1, le=100, description="consecutive robot failures (format or code) that abort (the paper's 3)"
    )
    messages: Literal["v2", "v1"] = Field(
        "v2", description="rule messages: v2 descriptive (cocottr), v1 'Placement not possible' (cocoreconstruct)"
    )
    rule_set: Literal["current", "alternate"] = Field(
        "current", description="current rules, or the older set: same shape one or two levels below, no colour rule"
    )


class BoardsWorld(World):
    """A programmer and a robot build a target board."""

    family = "boards"
    roles = ROLES

    def __init__(self, task: Mapping[str, Any], settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(task, BoardsSettings.checked(settings))
        self.target_spec = Target.from_json(task)
        self.target = self.target_spec.board()
        self.rules = Rules(self.settings["messages"], self.settings["rule_set"])
        self.single = self.settings["agents"] == "single"
        self.rounds = 1 if self.settings["dialogue"] == "single" else int(self.settings["rounds"])
        self._fresh()

    def _fresh(self) -> None:
        self.board = Board(self.target.rows, self.target.cols)
        self.before_turns: list[Board] = []
        self.history: list[dict[str, Any]] = []
        self.phase = ROBOT if self.single else PROGRAMMER
        self.instruction = ""
        self.feedback = ""
        self.failures = 0
        self.ended = False
        self.aborted: str | None = None
        self.done_said = False
        self.log: dict[str, int] = dict.fromkeys(
            ("robot_replies", "code_turns", "code_errors", "format_errors", "clarifications", "acknowledgements"), 0
        )
        self.corrections = 0
        self._needs_correction = False
        self.error_kinds: list[str] = []

    # ---- AEC protocol --------------------------------------------------------------------------------
    def reset(self, seed: int) -> list[Event]:
        self._fresh()
        self.turn = 1
        return [ev.state(0, {"board": self.board.to_json()}), ev.score(0, metrics.progress(self.board, self.target))]

    @property
    def agent_selection(self) -> str | None:
        return None if self.finished else self.phase

    @property
    def done(self) -> bool:
        return self.ended

    @property
    def truncated(self) -> bool:
        return not self.ended and self.turn > self.rounds

    def observe(self, role: str) -> Observation:
        if role == PROGRAMMER:
            return self._observe_programmer()
        if role == ROBOT:
            return self._observe_robot()
        raise ValueError(f"boards has no role {role!r}")

    def step(self, reply: Reply) -> list[Event]:
        role = self.agent_selection
        if role is None:
            raise RuntimeError("the episode is over; nothing may act")
        return self._programmer_step(reply) if role == PROGRAMMER else self._robot_step(reply)

    # ---- the programmer ------------------------------------------------------------------------------
    def _programmer_step(self, reply: Reply) -> list[Event]:
        text = (reply.message or "").strip()
        if not text:
            self._abort("format")
            return [ev.protocol_error(self.turn, PROGRAMMER, "programmer_format", "the programmer sent no message")]
        out = [ev.message(self.turn, PROGRAMMER, text)]
        if text == DONE:
            self.done_said, self.ended = True, True
            return out
        if self._needs_correction:
            self.corrections += 1
        self.history.append({"turn": self.turn, "role": PROGRAMMER, "text": text})
        self.instruction, self.feedback, self.phase = text, "", ROBOT
        return out

    # ---- the robot -------------------------------------------------------------------------------------
    def _robot_step(self, reply: Reply) -> list[Event]:
        self.log["robot_replies"] += 1
        action = dict(reply.action or {})
        status, details = action.get("status"), action.get("details")
        out = [Event("action", self.turn, ROBOT, {"action": action, "text": _describe(action)})]
        if status == "code" and isinstance(details, str):
            return out + self._run_code(details)
        if status in ("clarification", "acknowledgement") and isinstance(details, str) and details.strip():
            return out + self._robot_says(str(status), details.strip())
        problem = str(action.get("error") or "the reply held no status and details")
        self.log["format_errors"] += 1
        out.append(ev.protocol_error(self.turn, ROBOT, "robot_format", problem))
        return out + self._failed("format", PARSE_ERROR.format(error=problem), {"ok": False, "error": "format"})

    def _robot_says(self, status: str, text: str) -> list[Event]:
        if self.single and status == "clarification":
            problem = "there is nobody to ask: write code, or acknowledge when the board is done"
            self.log["format_errors"] += 1
            return self._failed("format", PARSE_ERROR.format(error=problem), {"ok": False, "error": "format"})
        self.log["clarifications" if status == "clarification" else "acknowledgements"] += 1
        self.failures = 0
        out = [ev.message(self.turn, ROBOT, text)]
        out.append(Event("result", self.turn, "engine", {"ok": True, "message": f"the robot sent a {status}"}))
        self.history.append({"turn": self.turn, "role": ROBOT, "text": text})
        if self.single:  # the lone robot's acknowledgement says it is done
            self.ended = True
            return out
        self._next_round()
        return out

    def _run_code(self, source: str) -> list[Event]:
        self.log["code_turns"] += 1
        before = metrics.distance(self.board, self.target)
        run = execute(self.board, source, self.rules, self.before_turns)
        data = _result(run, source)
        if not run.ok:
            self.log["code_errors"] += 1
            return self._failed(ERROR_KINDS.get(run.code or "", "code"), run.feedback(), data)
        self.failures = 0
        placed_on = self.board
        self.board, self.before_turns = run.board, list(run.before_turns)
        after = metrics.distance(self.board, self.target)
        mistakes = metrics.placement_mistakes(placed_on, self.board, self.target)
        # The paper (A.3.3): "Correction instructions occur when the Programmer observes the updated Robot grid
        # and attempts to revise an incorrect or incomplete action": incorrect = a piece put down against the
        # target, incomplete = the board no closer to it; either way while the board still differs.
        self._needs_correction = after > 0 and (bool(mistakes) or after >= before)
        if mistakes:  # a piece put down where the target holds another colour, another piece or nothing
            data["mistake"], data["mistakes"] = ", ".join(dict.fromkeys(mistakes)), mistakes
        elif after > before:  # the code ran, but the board is further from the target than before (a removal)
            data["mistake"] = "the board moved away from the target"
        out = [Event("result", self.turn, "engine", data), ev.state(self.turn, {"board": self.board.to_json()})]
        out.append(ev.score(self.turn, metrics.progress(self.board, self.target)))
        note = f"(the robot ran its code: {len(run.calls)} call{'s' if len(run.calls) != 1 else ''})"
        self.history.append({"turn": self.turn, "role": "engine", "text": note})
        if self.single and self.settings["dialogue"] == "single":
            self.ended = True
        else:
            self._next_round()
        return out

    def _failed(self, kind: str, feedback: str, data: dict[str, Any]) -> list[Event]:
        """A failed robot reply: its feedback for the retry, and the abort once ``max_failures`` in a row."""
        self.failures += 1
        self.error_kinds.append(kind)
        self.feedback = feedback
        out = [Event("result", self.turn, "engine", {**data, "feedback": feedback, "failures": self.failures})]
        if self.failures >= int(self.settings["max_failures"]):
            self._abort(kind)
            message = f"{self.failures} failed robot replies in a row (last: {kind})"
            out.append(ev.protocol_error(self.turn, ROBOT, "aborted", message))
        return out

    def _next_round(self) -> None:
        self.turn += 1
        self.phase = ROBOT if self.single else PROGRAMMER

    def _abort(self, cause: str) -> None:
        self.aborted, self.ended = cause, True

    # ---- observations ---------------------------------------------------------------------------------
    def _observe_programmer(self) -> Observation:
        parts, images, words = self._target_parts()
        parts += self._state_parts(images, words)
        if self.settings["target_view"] == "text" and self.settings["difference_grid"]:
            parts.append(difference_grid(self.target, self.board))
        shared = self._shared()
        parts.append("Conversation so far:\n" + ("\n".join(shared) or "(nothing yet)"))
        parts.append(
            self._round_line() + f" Give the robot your next instruction, or reply {DONE} when the robot's "
            "board matches the target."
        )
        data = {"board": self.board.to_json(), "target": self.target.to_json(), "round": self.turn}
        return Observation(PROGRAMMER, self.turn, "\n\n".join(parts), LazyImages(images), data, None, words, shared)

    def _observe_robot(self) -> Observation:
        parts: list[str] = [f"grid_size: {self.board.rows}x{self.board.cols}"]
        images: dict[str, Any] = {}
        words: dict[str, str] = {}
        if self.single:
            target_parts, images, words = self._target_parts()
            parts += target_parts
        shared = self._shared()
        if self.history and self.history[-1]["role"] == PROGRAMMER:
            shared = shared[:-1]  # this round's instruction follows on its own
        if not self.single:
            parts.append("Conversation so far:\n" + ("\n".join(shared) or "(nothing yet)"))
            parts.append(f"The programmer's instruction:\n{self.instruction}")
        parts += self._state_parts(images, words)
        if self.feedback:
            parts.append(f"Your previous reply this round failed:\n{self.feedback}")
        parts.append(
            self._round_line() + ' Reply with one JSON object: {"status": "code" | "clarification" | '
            '"acknowledgement", "details": "..."}.'
        )
        data = {"board": self.board.to_json(), "instruction": self.instruction, "feedback": self.feedback}
        if self.single:
            data["target"] = self.target.to_json()
        return Observation(ROBOT, self.turn, "\n\n".join(parts), LazyImages(images), data, None, words, shared)

    def _target_parts(self) -> tuple[list[str], dict[str, Any], dict[str, str]]:
        """The target as this condition gives it: text, or pictures (with their words for text-only models)."""
        view, target = self.settings["target_view"], self.target.to_json()
        if view == "text":
            return [f"The target board:\n{listing(self.target)}"], {}, {}
        images: dict[str, Any] = {"target": lambda: _image("target_image", target)}
        words = {"target": listing(self.target)}
        if view == "layers":
            for k in range(1, self.target.top_level() + 1):
                images[f"target_level_{k}"] = lambda k=k: _image("target_image", target, k)
                words[f"target_level_{k}"] = listing(self.target.up_to(k))
        images["legend"] = lambda: _image("legend_image")
        words["legend"] = ""
        return [], images, words  # the model agent says which pictures it attaches, or puts them in words

    def _state_parts(self, images: dict[str, Any], words: dict[str, str]) -> list[str]:
        if self.settings["state_view"] == "text":
            return [f"The robot's board now:\n{listing(self.board)}"]
        board = self.board.to_json()
        images["board"] = lambda: _image("board_image", board)
        words["board"] = listing(self.board)
        images.setdefault("legend", lambda: _image("legend_image"))
        words.setdefault("legend", "")
        return []

    def _shared(self) -> tuple[str, ...]:
        return tuple(f"[round {e['turn']}] {e['role']}: {e['text']}" for e in self.history)

    def _round_line(self) -> str:
        return f"Round {self.turn} of {self.rounds}."

    # ---- results --------------------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        match = self.board == self.target
        outcome = "abort" if self.aborted else "success" if match else "failure"
        failed = metrics.failure_types(self.board, self.target) if outcome == "failure" else {}
        final = metrics.progress(self.board, self.target)
        out: dict[str, float | None] = {
            "success": float(outcome == "success"),
            "abort": float(outcome == "abort"),
            "done_said": float(self.done_said),
            "rounds": float(min(self.turn, self.rounds)),
            **{k: float(v) for k, v in self.log.items()},
            "clarified": float(self.log["clarifications"] > 0),
            # the paper's "success within clarifying / correcting episodes": a mean over the episodes that did
            "success_when_clarified": float(outcome == "success") if self.log["clarifications"] else None,
            "corrections": float(self.corrections),
            "corrected": float(self.corrections > 0),
            "success_when_corrected": float(outcome == "success") if self.corrections else None,
            "correct_pieces": final["correct_pieces"],
            "components": float(self.target_spec.components),
        }
        out.update({f"fail_{t}": float(failed.get(t, False)) for t in metrics.FAILURE_TYPES})
        return {
            "world": self.family,
            "task_id": self.task_id(),
            "group": str(self.target_spec.components),
            "outcome": outcome,
            "score": float(outcome == "success"),
            "turns": min(self.turn, self.rounds),
            "errors": self.log["code_errors"] + self.log["format_errors"],
            "metrics": out,
            "abort_cause": self.aborted,
            "done_said": self.done_said,
        }


def _result(run: Execution, source: str) -> dict[str, Any]:
    """The engine's result event of a code turn; a failure names the statement that failed and why."""
    data: dict[str, Any] = {"ok": run.ok, "calls": list(run.calls)}
    if run.ok:
        data["message"] = f"ran {len(run.calls)} call{'s' if len(run.calls) != 1 else ''}"
        return data
    lines = source.splitlines()
    statement = lines[run.line - 1].strip() if run.line and run.line <= len(lines) else ""
    where = f"line {run.line}" + (f" `{statement[:120]}`" if statement else "") + ": " if run.line else ""
    data.update(error=run.code, message=f"{where}{run.message}", line=run.line)
    return data


def _describe(action: Mapping[str, Any]) -> str:
    """The action's line in the dialogue: the code in full; a question or acknowledgement only by its kind,
    since its text follows as the robot's message."""
    status = action.get("status")
    if status == "code":
        return f"code: {str(action.get('details', ''))[:MAX_SHOWN]}"
    if status in ("clarification", "acknowledgement"):
        return "asks for clarification" if status == "clarification" else "acknowledges"
    return "an unreadable reply"


def _image(name: str, *args: Any) -> Any:
    from simlab.worlds.boards import images  # Pillow is only needed when someone looks

    return getattr(images, name)(*args)
