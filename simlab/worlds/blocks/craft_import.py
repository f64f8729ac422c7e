"""Import game logs written by the CRAFT reference runner (csu-signal/CRAFT ``run_craft.py``).

A log is one JSON object ``{"experiment_info": {...}, "games": [{..., "turns": [...]}]}``. Boards are
per-cell code lists keyed ``"(i,j)"``; large blocks are listed in both cells and paired by ``spans``
(``{"layer": [[cell_a, cell_b], ...]}``). The reference writes ``Infinity`` for an unknown estimate, so
the reader accepts the non-standard constants.

The importer never stops at a missing or odd field: it records a human-readable note in
:attr:`CraftImport.skipped` and goes on. It turns the log into neutral typed records (:class:`CraftImport`,
:class:`CraftGame`, :class:`CraftTurn`) for the episode recorder, and :func:`recompute_metrics` checks the
logged progress metrics against :func:`simlab.worlds.blocks.metrics.progress_from_codes`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from simlab.core.errors import FormatError
from simlab.core.events import MAX_TURN
from simlab.core.reading import read_json
from simlab.worlds.blocks.metrics import METRIC_KEYS, move_error_from_text, progress_from_codes
from simlab.worlds.blocks.model import (
    CELLS,
    MAX_HEIGHT,
    Action,
    Board,
    Cell,
    Move,
    MoveError,
    adjacent,
    in_grid,
    is_large,
    parse_cell,
)

Codes = dict[Cell, list[str]]
Spans = list[tuple[int, Cell, Cell]]

# Reference metric names -> ours.
_LOGGED_METRICS: dict[str, str] = {
    "iou_score": "iou",
    "completion_percentage": "completion",
    "position_accuracy": "position_accuracy",
    "overall_progress": "overall_progress",
    "distance_score": "distance",
}


@dataclass(frozen=True)
class DirectorMessage:
    """One director's contribution to a turn: private reasoning and the public message."""

    role: str
    reasoning: str
    message: str


@dataclass
class CraftTurn:
    """One logged turn. Boards are given both as :class:`Board` (None when the codes are not a legal board)
    and as the raw per-cell codes; ``move`` is the attempted move, a CLARIFY carrying the question, or None."""

    number: int
    codes_before: Codes
    board_before: Board | None
    messages: list[DirectorMessage]
    oracle: list[Move]
    move: Move | None
    executed: bool
    error_text: str | None
    error: MoveError | None
    followed_oracle: bool | None
    logged_metrics: dict[str, float] | None
    codes_after: Codes | None
    board_after: Board | None
    after_source: str  # "snapshot", "next_turn", "final_structure" or "missing"
    logged: dict[str, Any] = field(default_factory=dict)  # what else the log says of the turn, kept as logged
    oracle_logged: bool = True  # False: the log holds no oracle moves at all (not an empty set)


@dataclass
class CraftGame:
    """One game: the target, the directors' archetypes and the turns."""

    structure_id: str
    target_codes: Codes
    target: Board | None
    archetypes: dict[str, str]
    complexity: str | None
    final_progress: float | None
    stopping_reason: str | None
    turns: list[CraftTurn]


@dataclass
class CraftImport:
    """A whole log file: models and settings from ``experiment_info``, the games and the skip notes."""

    path: str
    models: dict[str, str]
    settings: dict[str, Any]
    games: list[CraftGame]
    skipped: list[str] = field(default_factory=list)


class MetricCheck(NamedTuple):
    """One turn of :func:`recompute_metrics`: logged vs recomputed metrics and their largest difference."""

    game: str
    turn: int
    logged: dict[str, float]
    ours: dict[str, float]
    max_abs_diff: float


# ---- reading ---------------------------------------------------------------------------------------------


def read_craft_json(path: str | Path) -> Any:
    """Parse a CRAFT file (of either log format), accepting bare ``Infinity``/``-Infinity``/``NaN``, within
    the bounds of every file SimLab reads (:mod:`simlab.core.reading`). Raises FormatError (a ValueError)
    naming the file (and line and column, or field) when it is not JSON text."""
    return read_json(path, constants=True)


def read_craft_log(path: str | Path) -> dict[str, Any]:
    """A run log of the reference runner (one JSON object); FormatError naming the file otherwise."""
    data = read_craft_json(path)
    if not isinstance(data, dict):
        raise FormatError(Path(path), "top level", f"expected a JSON object, got {type(data).__name__}")
    return data


# ---- importing -------------------------------------------------------------------------------------------


def import_craft_log(path: str | Path) -> CraftImport:
    """Read and convert a reference log; see the module docstring."""
    return craft_log_from_data(path, read_craft_log(path))


def craft_log_from_data(path: str | Path, data: Mapping[str, Any]) -> CraftImport:
    """Convert a reference log already read (``data``, the file's JSON object)."""
    info = data.get("experiment_info")
    skipped: list[str] = []
    if not isinstance(info, Mapping):
        skipped.append("experiment_info missing: models and settings unknown")
        info = {}
    raw_models = info.get("models") or {}
    if not isinstance(raw_models, Mapping):
        skipped.append("experiment_info.models is not an object: models unknown")
        raw_models = {}
    models = {str(k): str(v) for k, v in raw_models.items()}
    settings = {k: _finite(v, f"experiment_info.{k}", skipped) for k, v in info.items() if k != "models"}
    games_raw = data.get("games")
    if not isinstance(games_raw, list):
        skipped.append("games missing: nothing imported")
        games_raw = []
    games = [_import_game(g, k, skipped) for k, g in enumerate(games_raw) if isinstance(g, Mapping)]
    return CraftImport(str(path), models, settings, games, skipped)


def _flag(value: Any) -> bool | None:
    """A logged yes/no: true or false as logged, anything else (null, a number, NaN) unknown."""
    return value if isinstance(value, bool) else None


def _finite(value: Any, where: str, skipped: list[str]) -> Any:
    """``value`` with every NaN or infinity (the reference writes them; recordings are strict JSON) made
    null, each noted by where it was."""
    if isinstance(value, float) and not math.isfinite(value):
        skipped.append(f"{where}: {value} is not a finite number; kept as null")
        return None
    if isinstance(value, Mapping):
        return {k: _finite(v, f"{where}.{k}", skipped) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v, f"{where}[{i}]", skipped) for i, v in enumerate(value)]
    return value


class Notes:
    """Skip notes prefixed with where they happened (shared by the readers of both CRAFT log formats)."""

    def __init__(self, sink: list[str], where: str) -> None:
        self.sink, self.where = sink, where

    def __call__(self, text: str) -> None:
        self.sink.append(f"{self.where}: {text}")


def _import_game(raw: Mapping[str, Any], index: int, skipped: list[str]) -> CraftGame:
    sid = str(raw.get("structure_id") or f"game_{index}")[:120]
    note = Notes(skipped, sid)
    if raw.get("error"):
        note(f"game error logged: {raw['error']}")
    target_codes = _codes(raw.get("target_structure"), "target_structure", note)
    target = _board(target_codes, _spans(raw.get("target_spans"), "target_spans", note), "target", note)
    archetypes = {k.split()[0]: str(v) for k, v in raw.items() if k.endswith(" Archetype")}
    if not archetypes:
        note("director archetypes missing")
    turns_raw = [t for t in _list(raw.get("turns"), "turns", note) if isinstance(t, Mapping)]
    if not turns_raw:
        note("no turns logged")
    final = raw.get("final_structure")
    turns: list[CraftTurn] = []
    for k, t in enumerate(turns_raw):
        turns.append(_import_turn(t, turns_raw[k + 1] if k + 1 < len(turns_raw) else None, final, raw, note))
        _carry_board(turns)
    return CraftGame(
        structure_id=sid,
        target_codes=target_codes,
        target=target,
        archetypes=archetypes,
        complexity=raw["complexity"] if isinstance(raw.get("complexity"), str) else None,
        final_progress=_float(raw.get("final_progress")),
        stopping_reason=raw.get("stopping_reason"),
        turns=turns,
    )


def _import_turn(
    raw: Mapping[str, Any], nxt: Mapping[str, Any] | None, final: Any, game: Mapping[str, Any], note: Notes
) -> CraftTurn:
    number = raw.get("turn_number")
    tnote = Notes(note.sink, f"{note.where} turn {str(number)[:20]}")
    if not isinstance(number, int) or isinstance(number, bool) or not 0 <= number <= MAX_TURN:
        tnote(f"turn_number missing or outside 0..{MAX_TURN}")
        number = -1
    if raw.get("error"):
        tnote(f"turn aborted by an exception in the runner: {raw['error']}")
    before = _codes(raw.get("structure_before"), "structure_before", tnote)
    board_before = _board(before, _spans(raw.get("spans_before"), "spans_before", tnote), "board before", tnote)
    move = _attempted_move(raw, tnote)
    logged_progress = raw.get("progress_data")
    progress_data: Mapping[str, Any] = logged_progress if isinstance(logged_progress, Mapping) else {}
    executed = bool(raw.get("move_executed"))
    error_text = progress_data.get("error")
    codes_after, source = _after(progress_data, nxt, final, tnote)
    return CraftTurn(
        number=number,
        codes_before=before,
        board_before=board_before,
        messages=_messages(raw.get("director_responses"), tnote),
        oracle=_oracle(raw.get("oracle_moves"), tnote),
        move=move,
        executed=executed,
        error_text=str(error_text) if error_text is not None else None,
        error=move_error_from_text(str(error_text)) if error_text is not None else None,
        followed_oracle=_flag(raw.get("builder_followed_oracle")),
        logged_metrics=_logged_metrics(progress_data, tnote) if executed else None,
        codes_after=codes_after,
        board_after=_after_board(codes_after, board_before, move, executed, nxt, game, tnote),
        after_source=source,
    )


def _carry_board(turns: list[CraftTurn]) -> None:
    """When a turn's board could not be built (e.g. spans_before missing) but its codes equal the previous
    turn's board after, that board (with its spans) is the board before."""
    if len(turns) < 2 or turns[-1].board_before is not None:
        return
    prev = turns[-2].board_after
    if prev is not None and {c: prev.codes(c) for c in CELLS} == turns[-1].codes_before:
        turns[-1].board_before = prev.copy()


# ---- field converters --------------------------------------------------------------------------------------


def _codes(raw: Any, name: str, note: Notes) -> Codes:
    """Per-cell code lists; missing cells are empty (as in the reference), odd keys are noted and dropped."""
    codes: Codes = {c: [] for c in CELLS}
    if not isinstance(raw, Mapping):
        note(f"{name} missing: taken as an empty board")
        return codes
    for key, value in raw.items():
        try:
            cell = parse_cell(key)
        except ValueError:
            note(f"{name}: unreadable cell key {key!r} dropped")
            continue
        if not in_grid(cell) or not isinstance(value, list):
            note(f"{name}: cell {key!r} outside the grid or not a list, dropped")
            continue
        codes[cell] = [str(v) for v in value]
    return codes


def _spans(raw: Any, name: str, note: Notes) -> Spans | None:
    """``{"layer": [[a, b], ...]}`` as ``(layer, a, b)`` triples; None when absent."""
    if raw is None:
        note(f"{name} missing")
        return None
    if not isinstance(raw, Mapping):
        note(f"{name}: expected an object, got {type(raw).__name__}")
        return None
    spans: Spans = []
    for layer, pairs in raw.items():
        for pair in _list(pairs, f"{name}[{layer!r}]", note):
            try:
                spans.append((int(layer), parse_cell(pair[0]), parse_cell(pair[1])))
            except (TypeError, ValueError, IndexError, KeyError):
                note(f"{name}: unreadable span {str(pair)[:60]} at layer {str(layer)[:20]} dropped")
    return spans


def _list(raw: Any, name: str, note: Notes) -> list[Any]:
    """``raw`` when it is a list; [] (with a note) when it is absent or something else."""
    if isinstance(raw, list):
        return raw
    if raw is not None:
        note(f"{name}: expected a list, got {type(raw).__name__}; ignored")
    return []


def _board(codes: Codes, spans: Spans | None, what: str, note: Notes) -> Board | None:
    """A Board when the codes and spans form a legal board (without spans: when a pairing of the large halves
    does); None (with a note) otherwise."""
    if spans is None:
        board = board_from_codes(codes)
        if board is None:
            note(f"{what}: no spans logged and no pairing of its large blocks is legal, kept as raw codes")
        return board
    try:
        return Board.from_codes(codes, spans)
    except ValueError as exc:
        note(f"{what}: not a legal board ({exc}), kept as raw codes")
        return None


def board_from_codes(codes: Codes) -> Board | None:
    """The board ``codes`` describe, its large blocks paired with an adjacent half of the same code on the same
    layer (the first pairing in cell order when several fit); None when no pairing makes a legal board."""
    for spans in _pairings(codes):
        try:
            return Board.from_codes(codes, spans)
        except ValueError:
            continue
    return None


def _pairings(codes: Codes) -> list[list[tuple[int, Cell, Cell]]]:
    """Every way of pairing the large halves of each layer (at most a few: a 3x3 layer holds four pairs)."""
    per_layer = [_layer_pairings(codes, layer) for layer in range(MAX_HEIGHT)]
    out: list[list[tuple[int, Cell, Cell]]] = [[]]
    for options in per_layer:
        out = [done + more for done in out for more in options][:64]
    return out


def _layer_pairings(codes: Codes, layer: int) -> list[list[tuple[int, Cell, Cell]]]:
    halves = [c for c in CELLS if len(codes.get(c, [])) > layer and is_large(codes[c][layer])]
    return [[(layer, a, b) for a, b in pairs] for pairs in _match(halves, codes, layer)][:8]


def _match(cells: list[Cell], codes: Codes, layer: int) -> list[list[tuple[Cell, Cell]]]:
    """Perfect matchings of ``cells`` into adjacent pairs of equal codes (backtracking in cell order)."""
    if not cells:
        return [[]]
    first, rest = cells[0], cells[1:]
    out: list[list[tuple[Cell, Cell]]] = []
    for other in rest:
        if adjacent(first, other) and codes[other][layer] == codes[first][layer]:
            remaining = [c for c in rest if c != other]
            out.extend([(first, other), *more] for more in _match(remaining, codes, layer))
    return out


def _move(raw: Mapping[str, Any]) -> Move:
    """A place/remove/clarify Move from a reference move dict; ValueError naming the bad field."""
    action = str(raw.get("action") or "").lower()
    if action == Action.CLARIFY.value:
        return Move.clarify(str(raw.get("clarification") or raw.get("text") or ""))
    if action not in (Action.PLACE.value, Action.REMOVE.value):
        raise ValueError(f"action {raw.get('action')!r} is not place, remove or clarify")
    cell = parse_cell(raw.get("position", raw.get("cell")))
    layer = raw.get("layer")
    if isinstance(layer, str) and layer.strip().isdigit():
        layer = int(layer)
    if not isinstance(layer, int) or isinstance(layer, bool):
        raise ValueError(f"layer {layer!r} is not an integer")
    span = raw.get("span_to")
    span_cell = parse_cell(span) if span not in (None, "", "none", "None") else None
    if action == Action.REMOVE.value:
        return Move.remove(cell, layer, span_cell)
    block = raw.get("block")
    if not isinstance(block, str):
        raise ValueError(f"block {block!r} is not a block code")
    return Move.place(block, cell, layer, span_cell)


def _attempted_move(raw: Mapping[str, Any], note: Notes) -> Move | None:
    if "clarification" in raw:
        return Move.clarify(str(raw.get("clarification") or ""))
    attempted = raw.get("move_attempted")
    if not isinstance(attempted, Mapping):
        note("no move_attempted and no clarification")
        return None
    try:
        return _move(attempted)
    except ValueError as exc:
        note(f"move_attempted unreadable ({exc})")
        return None


def _oracle(raw: Any, note: Notes) -> list[Move]:
    moves: list[Move] = []
    for k, entry in enumerate(_list(raw, "oracle_moves", note)):
        try:
            moves.append(_move(entry))
        except (ValueError, AttributeError, TypeError) as exc:
            note(f"oracle_moves[{k}] unreadable ({exc}), dropped")
    return moves


def _messages(raw: Any, note: Notes) -> list[DirectorMessage]:
    """Director messages in logged (speaking) order."""
    if not isinstance(raw, Mapping):
        note("director_responses missing")
        return []
    out = []
    for role, resp in raw.items():
        resp = resp if isinstance(resp, Mapping) else {}
        if "public_message" not in resp:
            note(f"{role}: public_message missing")
        out.append(
            DirectorMessage(str(role), str(resp.get("internal_thinking") or ""), str(resp.get("public_message") or ""))
        )
    return out


def _logged_metrics(progress_data: Mapping[str, Any], note: Notes) -> dict[str, float] | None:
    # Runner logs nest them under "metrics"; older logs (and the README) put them at the top level.
    source = progress_data.get("metrics", progress_data)
    if not isinstance(source, Mapping):
        note("progress_data.metrics is not an object")
        return None
    found = {ours: _float(source[theirs]) for theirs, ours in _LOGGED_METRICS.items() if theirs in source}
    metrics = {k: v for k, v in found.items() if v is not None}
    if not metrics:
        note("executed move without logged metrics")
        return None
    return metrics


def _after(
    progress_data: Mapping[str, Any], nxt: Mapping[str, Any] | None, final: Any, note: Notes
) -> tuple[Codes | None, str]:
    """Board after the turn: the logged snapshot, else the next turn's board before, else the final board."""
    if isinstance(progress_data.get("structure_snapshot"), Mapping):
        return _codes(progress_data["structure_snapshot"], "structure_snapshot", note), "snapshot"
    if nxt is not None and isinstance(nxt.get("structure_before"), Mapping):
        return _codes(nxt["structure_before"], "next structure_before", note), "next_turn"
    if isinstance(final, Mapping):
        return _codes(final, "final_structure", note), "final_structure"
    note("board after unknown")
    return None, "missing"


def _after_board(
    codes: Codes | None,
    before: Board | None,
    move: Move | None,
    executed: bool,
    nxt: Any,
    game: Mapping[str, Any],
    note: Notes,
) -> Board | None:
    """A Board for the codes after: replaying the move on our engine gives the spans; else logged spans."""
    if codes is None:
        return None
    if before is not None:
        replay = before.copy()
        if executed and move is not None:
            replay.apply(move)
        if {c: replay.codes(c) for c in CELLS} == codes:
            return replay
    spans = nxt.get("spans_before") if isinstance(nxt, Mapping) else game.get("final_spans")
    return _board(codes, _spans(spans, "spans after", note), "board after", note)


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


# ---- checking ----------------------------------------------------------------------------------------------


def recompute_metrics(imp: CraftImport) -> list[MetricCheck]:
    """Recompute every logged metric from the imported boards and compare (only keys both sides have)."""
    checks = []
    for game in imp.games:
        for turn in game.turns:
            if turn.logged_metrics is None or turn.codes_after is None:
                continue
            ours = progress_from_codes(turn.codes_after, game.target_codes)
            keys = [k for k in METRIC_KEYS if k in turn.logged_metrics]
            diff = max((abs(turn.logged_metrics[k] - ours[k]) for k in keys), default=0.0)
            checks.append(MetricCheck(game.structure_id, turn.number, turn.logged_metrics, ours, diff))
    return checks
