"""The CRAFT game master: who speaks when, what each role sees, the builder's move, the scores.

One game turn (paper 4.1-4.3, 5.1): 1-3 distinct directors, chosen and ordered from the seed, each give
private reasoning and a public message; then the builder makes one move (place, remove or clarify), the
engine runs it, and its result joins the shared history ("placed ...", "FAILED: ..."). Directors see that
history (the last ``history_keep`` entries once it exceeds ``history_limit``) and what was already said this
turn; the builder sees only this turn's messages, the board and what its condition (``builder``) adds: up to
``oracle_n`` verified candidate moves sampled from (structure, turn), nothing, ``simulate`` calls answered by
the engine within its turn, or the whole target (docs/BLOCKS.md, "Builder conditions").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from simlab.core import events as ev
from simlab.core.events import Event
from simlab.core.family import Settings
from simlab.core.seeding import rng, stable_seed
from simlab.core.world import LazyImages, Observation, Reply, World
from simlab.worlds.blocks import metrics, oracle, simulation, views
from simlab.worlds.blocks.model import Action, Board, Cell, Move, MoveError, MoveResult
from simlab.worlds.blocks.personas import PAPER_RUN, reference_archetype, structure_index

DIRECTORS: tuple[str, ...] = views.DIRECTORS
BUILDER = "builder"
PALETTE: dict[str, tuple[int, int, int]] = {
    "D1": (128, 77, 204),  # purple
    "D2": (13, 150, 155),  # teal
    "D3": (214, 72, 150),  # pink
    BUILDER: (69, 90, 100),  # slate: apart from every block colour
}
"""The one colour of each role: walls and eyes in 3D, agent panels, dialogue, exports."""
ARCHETYPES: dict[str, str] = {  # paper table 3
    "assertive": "Confident and direct; forms hypotheses quickly and shares them, updates when others provide "
    "compelling evidence.",
    "cautious": "Methodical and verification-focused; synthesizes others' observations before adding interpretation.",
    "observant": "Notices patterns and anomalies; flags inconsistencies and connects information across directors.",
    "skeptical": "Questions assumptions including its own; probes claims to ensure group correctness, comfortable "
    "with uncertainty.",
    "synthesizer": "Integrates all directors' observations into a coherent picture; reconciles contradictions and "
    "drives shared understanding.",
}
PAPER_TURNS = 20
MISTAKES = ("wrong-position", "wrong-colour", "wrong-span")
"""Taxonomy classes of a move the engine accepted that works against the target (marked as mistakes)."""
BuilderCondition = Literal["oracle", "no_oracle", "tools", "full_information"]


class BlocksSettings(Settings):
    """The CRAFT protocol's options (docs/BLOCKS.md)."""

    turns: int = Field(20, ge=1, le=10_000, description="turn budget of an episode (the paper's 20)")
    interior: Literal["paper", "reference"] = Field(
        "paper",
        description="paper: D2 sees the tops of (1,1) and (2,1); reference: nobody sees the interior (CRAFT's code)",
    )
    builder: BuilderCondition = Field(
        "oracle",
        description="what the builder is given besides the board and this turn's messages (docs/BLOCKS.md, "
        "Builder conditions): oracle: up to oracle_n verified candidate moves (the paper); no_oracle: nothing; "
        "tools: no candidates, but up to max_simulations simulate calls per turn answered by the engine; "
        "full_information: no candidates, but the whole target structure",
    )
    oracle_candidates: bool | None = Field(
        None,
        description="the older switch for the same choice (null: follow builder): true is builder=oracle, false "
        "builder=no_oracle; given alone it sets builder, given with builder it must agree; recorded as null",
    )
    oracle_n: int = Field(5, ge=0, le=100, description="how many candidate moves the builder is shown")
    max_simulations: int = Field(
        3, ge=1, le=20, description="builder=tools: simulate calls per turn (the reference's max_simulations)"
    )
    simulate_feedback: simulation.Feedback = Field(
        "reference",
        description="builder=tools: what a simulation answers: reference: legality, the resulting stacks and, as "
        "CRAFT's simulate_move, whether the block is right for the target there and the progress; engine: "
        "legality and the resulting stacks only (nothing of the target)",
    )
    personas: Literal["simlab", "reference"] = Field(
        "simlab",
        description="simlab: each director's archetype from a stable hash of (structure id, repeat, director); "
        "reference: CRAFT's own draw per (structure index, run, director), table 3's uneven assignment "
        "(run persona_run + repeat; personas.py)",
    )
    persona_run: int = Field(
        PAPER_RUN, ge=0, le=1_000_000, description="personas=reference: the reference's run (3: the run table 3 counts)"
    )
    speakers: tuple[int, int] = Field(
        (1, 3), description="fewest and most directors speaking per turn, drawn uniformly (the paper: mean 2)"
    )
    history_limit: int = Field(50, ge=0, le=100_000, description="once the shared history is longer than this ...")
    history_keep: int = Field(40, ge=0, le=100_000, description="... directors see only its last this-many entries")
    start_board: dict[str, Any] | None = Field(None, description="a board JSON to start from instead of empty")

    @field_validator("speakers")
    @classmethod
    def _speakers(cls, value: tuple[int, int]) -> tuple[int, int]:
        if not 1 <= value[0] <= value[1] <= len(DIRECTORS):
            raise ValueError(f"expected [min, max] with 1 <= min <= max <= {len(DIRECTORS)}")
        return value

    @field_validator("start_board")
    @classmethod
    def _start_board(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            try:
                Board.from_json(value)
            except (ValueError, TypeError, AttributeError) as exc:
                raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _builder_condition(self) -> BlocksSettings:
        """``builder`` says the condition; the older ``oracle_candidates``, when given, must say the same or
        (alone: configs and recordings made before builder) sets it. Afterwards it is null: one setting holds
        the choice, so a full settings dict (a form, a fork) that changes builder is never contradicted by it."""
        if self.oracle_candidates is not None:
            wanted: BuilderCondition = "oracle" if self.oracle_candidates else "no_oracle"
            if "builder" not in self.model_fields_set:
                self.builder = wanted
            elif (self.builder == "oracle") != self.oracle_candidates:
                shown = "shows" if self.builder == "oracle" else "shows no"
                raise _field_error(
                    "builder",
                    self.builder,
                    f"builder {self.builder!r} {shown} candidates, but oracle_candidates is "
                    f"{str(self.oracle_candidates).lower()} (the older switch: true is builder=oracle, false "
                    "builder=no_oracle); give builder alone",
                )
        self.oracle_candidates = None
        return self


def _field_error(name: str, value: Any, message: str) -> ValidationError:
    """A validation error that names the field ``name`` (a model validator's own errors name none)."""
    detail = InitErrorDetails(type=PydanticCustomError("contradiction", message), loc=(name,), input=value)
    return ValidationError.from_exception_data(BlocksSettings.__name__, [detail])


def persona(structure_id: str, repeat: int, director: str) -> str:
    """The archetype of a director, from a stable hash of (structure, run, director) as in the paper."""
    names = sorted(ARCHETYPES)
    return names[stable_seed("persona", structure_id, repeat, director) % len(names)]


class BlocksWorld(World):
    """Three directors and a builder rebuild a target structure on a 3x3 grid.

    With ``builder="tools"`` the builder may answer with a simulate call instead of a move: the world answers
    it (:mod:`~simlab.worlds.blocks.simulation`) and asks the builder again in the same turn, with the answers so
    far in its observation, until it makes a move; a call past ``max_simulations`` ends its turn without one.
    """

    family = "blocks"
    roles = (*DIRECTORS, BUILDER)

    def __init__(self, task: Mapping[str, Any], settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(task, BlocksSettings.checked(settings))
        self.target = Board.from_json(task["board"])
        self.board = Board()
        self.reachable = views.reachable_board(self.target, self.settings["interior"])
        self._views: dict[str, views.WallView] = {
            d: views.director_view(self.target, d, self.settings["interior"]) for d in views.DIRECTORS
        }
        self.history: list[dict[str, Any]] = []
        self.turn_log: list[dict[str, Any]] = []
        self._queue: list[str] = []
        self._said: list[dict[str, Any]] = []
        self._candidates: list[Move] = []
        self._simulations: list[dict[str, Any]] = []  # this turn's simulate answers, shown to the builder
        self.simulate_calls = 0
        self._seen: set[tuple[Cell, int]] = set().union(
            *(views.visible_cell_layers(self.target, d, self.settings["interior"]) for d in DIRECTORS)
        )
        self._seed = 0

    # ---- AEC protocol --------------------------------------------------------------------------------
    def reset(self, seed: int) -> list[Event]:
        self._seed = seed
        start = self.settings.get("start_board")
        self.board = Board.from_json(start) if start else Board()
        self.history, self.turn_log, self._said = [], [], []
        self.turn, self.simulate_calls = 0, 0
        out = [ev.state(0, {"board": self.board.to_json()}), ev.score(0, self._scores())]
        if not self.finished:
            self._begin_turn()
        return out

    @property
    def agent_selection(self) -> str | None:
        return None if self.finished else self._queue[0]

    @property
    def done(self) -> bool:
        return oracle.is_complete(self.board, self.target)

    @property
    def truncated(self) -> bool:
        return not self.done and self.turn > int(self.settings["turns"])

    def observe(self, role: str) -> Observation:
        if role == BUILDER:
            return self._observe_builder()
        if role in DIRECTORS:
            return self._observe_director(role)
        raise ValueError(f"blocks has no role {role!r}")

    def step(self, reply: Reply) -> list[Event]:
        role = self.agent_selection
        if role is None:
            raise RuntimeError("the episode is over; nothing may act")
        if role == BUILDER and simulation.is_simulation(reply.action) and self._simulation_refused() is None:
            assert reply.action is not None
            return self._simulate(reply.action)  # the builder's turn goes on
        self._queue.pop(0)
        out = self._director_step(role, reply) if role in DIRECTORS else self._builder_step(reply)
        if role == BUILDER:
            self.turn += 1
            if not self.finished:
                self._begin_turn()
        return out

    # ---- turns ----------------------------------------------------------------------------------------
    def _begin_turn(self) -> None:
        if self.turn == 0:
            self.turn = 1
        low, high = self.settings["speakers"]
        r = rng(self._seed, "speakers", self.turn)
        self._queue = [*r.sample(DIRECTORS, r.randint(int(low), int(high))), BUILDER]
        self._said = []
        self._oracle = oracle.oracle_moves(self.board, self.target)
        n = int(self.settings["oracle_n"])
        self._candidates = oracle.sample_moves(self._oracle, n, self.task_id(), self.turn)
        self._simulations = []

    def _director_step(self, role: str, reply: Reply) -> list[Event]:
        out: list[Event] = []
        if reply.message is None or not reply.message.strip():
            out.append(ev.protocol_error(self.turn, role, "no_message", "the director gave no public message"))
            return out
        entry = {"turn": self.turn, "role": role, "text": reply.message}
        self._said.append(entry)
        self.history.append(entry)
        out.append(ev.message(self.turn, role, reply.message))
        return out

    def _simulations_left(self) -> int:
        return int(self.settings["max_simulations"]) - len(self._simulations)

    def _simulation_refused(self) -> str | None:
        """Why the builder may not simulate now, or None when it may."""
        if self.settings["builder"] != "tools":
            return f"simulate calls belong to builder=tools, and this builder is {self.settings['builder']!r}"
        if self._simulations_left() <= 0:
            return f"the {self.settings['max_simulations']} simulate calls of this turn are used up"
        return None

    def _simulate(self, action: Mapping[str, Any]) -> list[Event]:
        """Answer one simulate call; the board, the history and the turn stay as they are."""
        self.simulate_calls += 1
        move, problem = simulation.read_simulated(action)
        feedback = self.settings["simulate_feedback"]
        answer = simulation.answer(self.board, self.target, move, problem, feedback, self._seen)
        self._simulations.append(answer)
        if move is None:  # recorded as given, so a fork feeds the same reply back
            call = Event("action", self.turn, BUILDER, {"action": _as_json(action), "text": "SIMULATE (unreadable)"})
        else:
            data = {"action": simulation.simulate_action(move), "text": f"SIMULATE {move.describe()}"}
            call = Event("action", self.turn, BUILDER, data)
        return [call, Event("result", self.turn, "engine", answer)]

    def _builder_step(self, reply: Reply) -> list[Event]:
        out: list[Event] = []
        refused = self._simulation_refused() if simulation.is_simulation(reply.action) else None
        move, problem = (None, refused) if refused is not None else _read_move(reply.action)
        if problem is not None:
            if reply.action is not None:  # recorded as given, so a fork feeds the same reply back
                text = "a simulate call it may not make" if refused else "an unreadable move"
                out.append(Event("action", self.turn, BUILDER, {"action": _as_json(reply.action), "text": text}))
            out.append(ev.protocol_error(self.turn, BUILDER, "simulate_refused" if refused else "bad_move", problem))
            result = MoveResult(False, f"not a move: {problem}", MoveError.NOT_A_MOVE)
        elif move is not None and move.action is Action.CLARIFY:
            question = reply.message or move.text or "Could you clarify?"
            self.history.append({"turn": self.turn, "role": BUILDER, "text": question})
            out.append(Event("action", self.turn, BUILDER, {"action": move.to_json(), "text": move.describe()}))
            out.append(ev.message(self.turn, BUILDER, question))
            result = MoveResult(True, "asked for clarification")
        else:
            assert move is not None
            out.append(Event("action", self.turn, BUILDER, {"action": move.to_json(), "text": move.describe()}))
            result = self.board.apply(move)
        out.extend(self._after_move(move, result))
        return out

    def _after_move(self, move: Move | None, result: MoveResult) -> list[Event]:
        is_move = move is not None and move.action is not Action.CLARIFY
        if is_move or result.error is MoveError.NOT_A_MOVE:
            text = result.message if result.ok else f"FAILED: {result.message}"
            self.history.append({"turn": self.turn, "role": "engine", "text": text})
        scores = self._scores()
        record = turn_record(self.turn, move, result.ok, result.error, self._oracle, scores["overall_progress"])
        self.turn_log.append(record)
        data = {**result.to_json(), "taxonomy": record["taxonomy"], "oracle": [m.to_json() for m in self._oracle]}
        if record["taxonomy"] in MISTAKES:  # the engine took the move, but no oracle move is like it
            data["mistake"] = record["taxonomy"]
        data["candidates"] = [m.to_json() for m in self._candidates]
        out = [Event("result", self.turn, "engine", data)]
        if is_move and result.ok:
            out.append(ev.state(self.turn, {"board": self.board.to_json()}))
        out.append(ev.score(self.turn, scores))
        return out

    def _scores(self) -> dict[str, float]:
        scores = metrics.progress(self.board, self.target)
        scores["completion_reachable"] = _reachable_completion(self.board, self.reachable)
        return scores

    # ---- observations ---------------------------------------------------------------------------------
    def _visible_history(self) -> list[dict[str, Any]]:
        limit, keep = int(self.settings["history_limit"]), int(self.settings["history_keep"])
        return self.history[-keep:] if len(self.history) > limit else list(self.history)

    def _persona(self, director: str) -> str:
        """The director's archetype under the ``personas`` setting."""
        repeat = int(self.settings["repeat"])
        if self.settings["personas"] == "reference":
            run = int(self.settings["persona_run"]) + repeat
            return reference_archetype(structure_index(self.task), director, run)
        return persona(self.task_id(), repeat, director)

    def _observe_director(self, role: str) -> Observation:
        view = self._views[role]
        name = self._persona(role)
        history = self._visible_history()
        data = {
            "director": role,
            "view": view.to_json(),
            "board": self.board.to_json(),
            "history_size": len(history),  # the last N shared entries; they are recorded as events already
            "this_turn": list(self._said),
            "persona": name,
            "interior": self.settings["interior"],
        }
        head = [
            f"You are director {role}, personality: {name} ({ARCHETYPES[name]})",
            f"Your private view of the target (nobody else sees it):\n{view.to_text()}",
            f"The current board:\n{views.board_text(self.board)}",
        ]
        tail = [
            "Said so far this turn:\n" + _lines(self._said),
            f"Turn {self.turn} of {self.settings['turns']}. "
            "Reply with <think>your private reasoning</think> then <message>your public message</message>.",
        ]
        text = "\n\n".join([*head, "Conversation so far:\n" + _lines(history), *tail])
        recorded = "\n\n".join([*head, f"Conversation so far: the last {len(history)} shared entries.", *tail])
        images = LazyImages({"wall": lambda: _wall_image(view.to_json())})
        shared = tuple(_lines([entry]) for entry in history)  # one line per entry, as the text holds them
        return Observation(role, self.turn, text, images, data, recorded, {"wall": ""}, shared)

    def _observe_builder(self) -> Observation:
        data: dict[str, Any] = {"board": self.board.to_json(), "messages": list(self._said)}
        parts = [
            f"The current board:\n{views.board_text(self.board)}",
            "The directors said this turn:\n" + _lines(self._said),
        ]
        condition = self.settings["builder"]
        if condition == "oracle":
            data["candidates"] = [m.to_json() for m in self._candidates]
            listing = "\n".join(m.reply_line() for m in self._candidates) or "(none this turn)"
            parts.append(f"Verified candidate moves (copy one whole line to play it):\n{listing}")
        elif condition == "full_information":
            data["target"] = self.target.to_json()
            parts.append(_target_text(self.target))
        if condition == "tools":
            data["simulations"] = [dict(a) for a in self._simulations]
            data["simulations_left"] = self._simulations_left()
            parts.extend(self._tool_parts())
        else:
            parts.append("Reply with one move: PLACE, REMOVE or CLARIFY.")
        board = self.board.to_json()
        images = LazyImages({"board": lambda: _board_image(board)})
        return Observation(BUILDER, self.turn, "\n\n".join(parts), images, data, image_texts={"board": ""})

    def _tool_parts(self) -> list[str]:
        """The tools condition's part of the builder's prompt: this turn's simulations and what may follow."""
        parts = []
        if self._simulations:
            lines = [f"{k}. {a['message']}" for k, a in enumerate(self._simulations, 1)]
            parts.append("Your simulations this turn (none changed the board):\n" + "\n".join(lines))
        left = self._simulations_left()
        if left > 0:
            parts.append(
                f"You may dry-run a move first: reply SIMULATE:<move line>, e.g. SIMULATE:PLACE:gs:(0,1):0 "
                f"({left} of {self.settings['max_simulations']} simulations left this turn). Or reply with one "
                "move: PLACE, REMOVE or CLARIFY."
            )
        else:
            parts.append("No simulations left this turn. Reply with one move: PLACE, REMOVE or CLARIFY.")
        return parts

    # ---- results --------------------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        out = summarize(self.task, self.turn_log, self._scores(), self.done)
        out["metrics"]["hidden_blocks"] = len(views.hidden_cells(self.target, self.settings["interior"]))
        if self.settings["builder"] == "tools":
            out["metrics"]["simulate_calls"] = self.simulate_calls
        return out


def summarize(
    task: Mapping[str, Any], log: list[dict[str, Any]], final: Mapping[str, float], done: bool
) -> dict[str, Any]:
    """The episode summary from its per-turn log (``action``, ``ok``, ``taxonomy``, ``oracle`` moves,
    ``communication_failure``) and the final scores. Shared by live runs and imported CRAFT logs.

    Table 1's turn-20 columns (docs/BLOCKS.md): ``overall_progress_t20`` and ``fail`` (1 when the builder's
    move at turn 20 was rejected, 0 when executed, None when that turn holds no move attempt). Its
    all-turn columns: ``remove_rate`` (REMOVE), ``oracle_remove_rate`` (table 8's Orc_Remove) and
    ``remove_gap`` (Gap, their difference).
    """
    available = [t for t in log if t["oracle"]]
    out: dict[str, float | None] = dict(final)
    out["turns_used"] = len(log)
    # The paper reports turn 20; with a longer budget it is read off the log, an earlier finish (or a log
    # without that turn) carries the last turn.
    at_paper_turn = next((t for t in log if t["turn"] == PAPER_TURNS), log[-1] if log else None)
    if at_paper_turn is None:  # no turn played: the start board's scores, and no move to fail
        out[f"overall_progress_t{PAPER_TURNS}"], out["fail"] = final["overall_progress"], None
    else:
        out[f"overall_progress_t{PAPER_TURNS}"] = at_paper_turn["progress"]
        out["fail"] = metrics.failed_move(at_paper_turn["action"], at_paper_turn["ok"])
    out["oracle_availability"] = _rate(len(available), len(log))
    out["communication_failure_rate"] = _rate(sum(t["communication_failure"] for t in available), len(available))
    out["remove_rate"] = metrics.remove_rate([t["action"] for t in log])
    out["oracle_remove_rate"] = metrics.oracle_remove_rate([t["oracle"] for t in log])
    out["remove_gap"] = metrics.remove_gap([(t["action"], t["oracle"]) for t in log])
    for label in metrics.TAXONOMY[1:]:  # rates over oracle-available turns, so "no-oracle" is always 0 there
        out[f"tax_{label}"] = _rate(sum(t["taxonomy"] == label for t in available), len(available))
    return {
        "world": "blocks",
        "task_id": str(task.get("id", "")),
        "group": task.get("tier"),
        "outcome": "success" if done else "failure",
        "score": final["overall_progress"],
        "turns": len(log),
        "errors": sum(not t["ok"] for t in log),
        "metrics": out,
    }


def turn_record(
    turn: int, move: Move | None, ok: bool, error: MoveError | None, oracle_set: list[Move], progress: float
) -> dict[str, Any]:
    """One entry of the per-turn log that :func:`summarize` reads (``progress``: overall progress after it)."""
    return {
        "turn": turn,
        "progress": progress,
        "action": move.action.value if move is not None else None,
        "ok": ok,
        "taxonomy": metrics.classify_turn(move, ok, error, oracle_set),
        "oracle": oracle_set,
        "communication_failure": metrics.is_communication_failure(oracle_set, move, ok),
    }


def _read_move(action: Mapping[str, Any] | None) -> tuple[Move | None, str | None]:
    if action is None:
        return None, "the builder's reply held no move"
    try:
        return Move.from_json(action), None
    except ValueError as exc:
        return None, str(exc)


def _as_json(value: Any) -> Any:
    """``value`` as strict JSON (what a recording can hold); what is not (NaN, objects) as its text."""
    try:
        return json.loads(json.dumps(value, default=str, allow_nan=False))
    except ValueError:
        return str(value)


def _rate(num: float, den: int) -> float | None:
    return num / den if den else None


def _target_text(target: Board) -> str:
    """The full-information builder's target: every stack, the interior that no director sees included."""
    stacks = views.board_text(target).split("\n", 1)[1]  # the listing without its "Current board" heading
    return f"The target structure (row 0 is far, column 0 is left; stacks bottom to top):\n{stacks}"


def _lines(entries: list[dict[str, Any]]) -> str:
    return "\n".join(f"[turn {e['turn']}] {e['role']}: {e['text']}" for e in entries) or "(nothing yet)"


def _reachable_completion(board: Board, reachable: Board) -> float:
    """Share of the blocks directors can get built (:func:`views.reachable_board`) that are right now."""
    cells = [(c, k) for c in reachable.stacks for k in range(reachable.height(c))]
    right = sum(1 for c, k in cells if board.at(c, k) == reachable.at(c, k))
    return right / len(cells) if cells else 1.0


def _wall_image(view_json: Mapping[str, Any]) -> Any:
    from simlab.worlds.blocks.images import wall_image  # Pillow is only needed when someone looks

    return wall_image(view_json)


def _board_image(board_json: Mapping[str, Any]) -> Any:
    from simlab.worlds.blocks.images import board_image

    return board_image(board_json)
