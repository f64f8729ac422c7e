"""Turn an imported CRAFT log into a SimLab run folder whose episodes replay like ours.

Each logged game becomes an episode: per turn the directors' reasoning and messages, the builder's move,
the engine's result (error codes mapped from the reference's text, which is kept), the board after the turn
and the scores. Scores are recomputed by our metrics; the logged ones ride along under ``logged`` so a
reader can compare (:func:`simlab.worlds.blocks.craft_import.recompute_metrics` does it for every turn).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simlab.core import events as ev
from simlab.core.episode import Episode
from simlab.core.errors import ConfigError, FormatError
from simlab.core.events import Event
from simlab.core.recording import RunWriter, check_episode_id
from simlab.worlds.blocks.craft_import import Codes, CraftGame, CraftTurn, import_craft_log, recompute_metrics
from simlab.worlds.blocks.metrics import progress_from_codes
from simlab.worlds.blocks.model import CELLS, Action, Board, cell_key
from simlab.worlds.blocks.world import BUILDER, summarize, turn_record


def import_craft_run(log_path: str | Path, out_dir: str | Path) -> str:
    """Import every game of a CRAFT log into a new run folder; returns a report of what was done."""
    imp = import_craft_log(log_path)
    if not imp.games:
        raise FormatError(log_path, "field 'games'", "expected a list of games: nothing to import, nothing written")
    agents = _agents(imp.models)
    tasks = [_task(g) for g in imp.games]
    settings = finite(imp.settings)
    config = {"world": "blocks", "seed": 0, "repeats": 1, "agents": agents, "settings": settings}
    config.update({"tasks": tasks, "imported_from": {"source": "craft", "file": str(log_path)}})
    episodes = [game_episode(game, k, agents, settings, str(log_path)) for k, game in enumerate(imp.games)]
    for k, episode in enumerate(episodes):  # every id names a file: check them all before writing anything
        try:
            check_episode_id(episode.episode_id)
        except ConfigError as exc:
            raise FormatError(log_path, f"games[{k}].structure_id", f"{exc}; nothing written") from None
    writer = RunWriter(out_dir, config)
    for episode in episodes:
        writer.add(episode)
    checks = recompute_metrics(imp)
    worst = max((c.max_abs_diff for c in checks), default=0.0)
    lines = [
        f"imported {len(imp.games)} game(s), {sum(len(g.turns) for g in imp.games)} turns, into {out_dir}",
        f"metrics recomputed on {len(checks)} logged turns: largest difference {worst:.2e}",
    ]
    if imp.skipped:
        lines.append(f"skipped or missing ({len(imp.skipped)}):")
        lines.extend(f"  - {note}" for note in imp.skipped)
    return "\n".join(lines)


def finite(value: Any) -> Any:
    """The reference logs hold bare Infinity/NaN; recordings are strict JSON, so those become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def _agents(models: Mapping[str, str]) -> dict[str, str]:
    director = models.get("director", "unknown")
    out = {d: f"craft:{models.get(d, director)}" for d in ("D1", "D2", "D3")}
    out[BUILDER] = f"craft:{models.get('builder', 'unknown')}"
    return out


def _task(game: CraftGame) -> dict[str, Any]:
    target = game.target.to_json() if game.target is not None else {"stacks": _codes_json(game.target_codes)}
    blocks = sum(len(v) for v in game.target_codes.values())
    return {"id": game.structure_id, "tier": game.complexity, "blocks": blocks, "board": target}


def _codes_json(codes: Codes) -> dict[str, list[str]]:
    return {cell_key(c): list(codes.get(c, [])) for c in CELLS}


def _state(board: Board | None, codes: Codes) -> dict[str, Any]:
    # An illegal logged board cannot be a Board; its raw codes still replay in a table view.
    return {"board": board.to_json()} if board is not None else {"board": None, "codes": _codes_json(codes)}


def game_episode(
    game: CraftGame, index: int, agents: Mapping[str, str], settings: Mapping[str, Any], path: str
) -> Episode:
    """One logged game as an episode."""
    target_codes = game.target_codes
    first = game.turns[0] if game.turns else None
    start_codes = first.codes_before if first is not None else {}
    events: list[Event] = [
        ev.state(0, _state(first.board_before if first else Board(), start_codes)),
        ev.score(0, progress_from_codes(start_codes, target_codes)),
    ]
    log: list[dict[str, Any]] = []
    codes = start_codes
    for turn in (t for t in game.turns if t.number >= 0):  # a turn without a usable number is noted, not played
        events.extend(_turn_events(turn))
        if turn.codes_after is not None:
            if turn.codes_after != codes:
                events.append(ev.state(turn.number, _state(turn.board_after, turn.codes_after)))
            codes = turn.codes_after
        scores = progress_from_codes(codes, target_codes)
        clarify = turn.move is not None and turn.move.action is Action.CLARIFY
        ok = turn.executed or clarify
        log.append(turn_record(turn.number, turn.move, ok, turn.error, turn.oracle, scores["overall_progress"]))
        events.append(Event("score", turn.number, None, {"metrics": scores, "logged": finite(turn.logged_metrics)}))
    final = progress_from_codes(codes, target_codes)
    summary = summarize(_task(game), log, final, final["completion"] == 1.0 and final["iou"] == 1.0)
    summary["agents"] = dict(agents)
    return Episode(
        episode_id=f"{game.structure_id}-g{index}",
        world="blocks",
        seed=0,
        task=_task(game),
        settings=dict(settings),
        agents=dict(agents),
        events=events,
        summary=summary,
        source={"importer": "craft", "file": path, "game": index, "archetypes": game.archetypes},
    )


def _turn_events(turn: CraftTurn) -> list[Event]:
    t = turn.number
    out: list[Event] = []
    for m in turn.messages:
        if m.reasoning:
            out.append(ev.reasoning(t, m.role, m.reasoning))
        if m.message:
            out.append(ev.message(t, m.role, m.message))
    move = turn.move
    if move is None:
        out.append(ev.protocol_error(t, BUILDER, "missing_move", "the log holds no move for this turn"))
        return out
    out.append(Event("action", t, BUILDER, {"action": move.to_json(), "text": move.describe()}))
    if move.action is Action.CLARIFY:
        out.append(ev.message(t, BUILDER, move.text))
    result: dict[str, Any] = {"ok": turn.executed, "message": turn.error_text or ("ok" if turn.executed else "")}
    if turn.error is not None:
        result["error"] = turn.error.value
    result["candidates"] = [m.to_json() for m in turn.oracle]
    result["followed_oracle"] = turn.followed_oracle
    out.append(Event("result", t, "engine", result))
    return out
