"""Turn imported CRAFT logs into a SimLab run folder whose episodes replay like ours.

Both formats the reference publishes are read: run logs of ``run_craft.py`` (many games, with oracle moves
and metrics; :mod:`~simlab.worlds.blocks.craft_import`) and the per-turn records of ``divergenceData/``
(one game per file; :mod:`~simlab.worlds.blocks.craft_turns`), a file or a folder of them.

Each logged game becomes an episode: per turn the directors' reasoning and messages, the builder's move,
the engine's result as logged (error codes mapped from the reference's text, which is kept), the board after
the turn and the scores. Scores are recomputed by our metrics; the logged ones ride along under ``logged`` so
a reader can compare (:func:`simlab.worlds.blocks.craft_import.recompute_metrics` does it for every turn).
Every game is also replayed through our engine (:mod:`~simlab.worlds.blocks.craft_check`): each turn it
judges otherwise is a ``check`` event and the summary counts them as ``reference_disagreements``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simlab.core import events as ev
from simlab.core.assets import asset_path
from simlab.core.episode import Episode
from simlab.core.errors import ConfigError, FormatError
from simlab.core.events import Event
from simlab.core.recording import RunWriter, check_episode_id
from simlab.worlds.blocks.craft_check import CODES as DISAGREEMENT_CODES
from simlab.worlds.blocks.craft_check import Disagreement, check_game
from simlab.worlds.blocks.craft_import import (
    Codes,
    CraftGame,
    CraftImport,
    CraftTurn,
    craft_log_from_data,
    read_craft_json,
    recompute_metrics,
)
from simlab.worlds.blocks.craft_structures import structures_in
from simlab.worlds.blocks.craft_turns import is_turn_log, read_turn_log
from simlab.worlds.blocks.generator import Structure
from simlab.worlds.blocks.metrics import progress_from_codes
from simlab.worlds.blocks.model import CELLS, Action, Board, cell_key
from simlab.worlds.blocks.world import BUILDER, summarize, turn_record

DISAGREEMENT = "reference_disagreement"
"""The code of the ``check`` events that record where our engine judges a logged turn otherwise."""


DEFAULT_STRUCTURES = asset_path("reference/craft/structures_dataset_20.json")
"""The targets of per-turn logs unless ``--structures`` names others: CRAFT's 20 evaluation structures (shipped
in ``assets/reference/craft`` with their source)."""
MAX_LOG_FILES = 10_000


@dataclass
class ImportedGame:
    """One game to record: the game, the models that played it, where it came from and how it was checked."""

    game: CraftGame
    models: dict[str, str]
    settings: dict[str, Any]
    file: str
    index: int  # the game's place in its file
    disagreements: list[Disagreement] = field(default_factory=list)
    per_turn_log: bool = False  # the divergenceData format: no oracle, no metrics, one game per file


def import_craft_run(source: str | Path, out_dir: str | Path, structures: str | Path | None = None) -> str:
    """Import every game of a CRAFT log (a run log of the reference runner, a per-turn record, or a folder of
    either) into a new run folder; each game is replayed through our engine and every disagreement
    recorded. ``structures`` holds the targets of per-turn records (default: the 20 evaluation structures).
    Returns a report of what was done; nothing is written when a file cannot be read."""
    notes: list[str] = []
    games = _read_games(Path(source), Path(structures) if structures else DEFAULT_STRUCTURES, notes)
    if not games:
        raise FormatError(source, "field 'games'", "expected a list of games: nothing to import, nothing written")
    for imported in games:
        found: list[str] = []
        imported.disagreements = check_game(imported.game, found)
        notes.extend(f"{Path(imported.file).name} {imported.game.structure_id}: {note}" for note in found)
    episodes = [_episode(g) for g in games]
    _check_ids(games, episodes)
    agents = _run_agents([e.agents for e in episodes])
    config = {"world": "blocks", "seed": 0, "repeats": 1, "agents": agents, "settings": finite(games[0].settings)}
    tasks = list({t["id"]: t for t in (_task(g.game) for g in games)}.values())
    config.update({"tasks": tasks, "imported_from": {"source": "craft", "file": str(source)}})
    writer = RunWriter(out_dir, config)
    for episode in episodes:
        writer.add(episode)
    return _report(games, out_dir, notes)


def _read_games(source: Path, structures: Path, notes: list[str]) -> list[ImportedGame]:
    """The games of ``source`` (a file or a folder of ``*.json`` logs, read in name order)."""
    files = sorted(source.glob("*.json")) if source.is_dir() else [source]
    if len(files) > MAX_LOG_FILES:
        raise FormatError(source, "", f"expected at most {MAX_LOG_FILES} log files, found {len(files)}")
    targets: dict[str, Structure] | None = None
    games: list[ImportedGame] = []
    for path in files:
        data = read_craft_json(path)
        if is_turn_log(data):
            targets = targets if targets is not None else _targets(structures)
            log = read_turn_log(path, data, targets)
            notes.extend(log.notes)
            games.append(ImportedGame(log.game, log.models, {}, str(path), 0, per_turn_log=True))
        elif isinstance(data, dict):
            imp = craft_log_from_data(path, data)
            notes.extend(imp.skipped)
            settings = dict(imp.settings)
            games.extend(ImportedGame(g, imp.models, settings, str(path), k) for k, g in enumerate(imp.games))
        else:
            raise FormatError(
                path, "top level", "expected a CRAFT run log (an object with 'games') or a per-turn record (a list)"
            )
    return games


def _targets(path: Path) -> dict[str, Structure]:
    """The structures of a CRAFT structures file (or a SimLab structures file) by id."""
    return {s.id: s for s in structures_in(path)[0]}


def _check_ids(games: Sequence[ImportedGame], episodes: Sequence[Episode]) -> None:
    """Every id names a file: check them all (and that they differ) before writing anything."""
    seen: dict[str, str] = {}
    for imported, episode in zip(games, episodes, strict=True):
        where = f"games[{imported.index}].structure_id"
        try:
            check_episode_id(episode.episode_id)
        except ConfigError as exc:
            raise FormatError(imported.file, where, f"{exc}; nothing written") from None
        if episode.episode_id in seen:
            raise FormatError(
                imported.file,
                where,
                f"expected games to differ; {episode.episode_id} also comes from {seen[episode.episode_id]}",
            )
        seen[episode.episode_id] = imported.file


def _run_agents(lineups: Sequence[Mapping[str, str]]) -> dict[str, str]:
    """The run's agents: the games' lineup when they share one, else per role the agent they share or
    ``craft:several`` (each episode records its own)."""
    roles = list(dict.fromkeys(role for lineup in lineups for role in lineup))
    out = {}
    for role in roles:
        values = {lineup.get(role) for lineup in lineups}
        out[role] = str(values.pop()) if len(values) == 1 else "craft:several"
    return out


def _report(games: Sequence[ImportedGame], out_dir: str | Path, notes: Sequence[str]) -> str:
    turns = sum(len(g.game.turns) for g in games)
    found = [d for g in games for d in g.disagreements]
    lines = [f"imported {len(games)} game(s), {turns} turns, into {out_dir}"]
    runner_logs = [g for g in games if not g.per_turn_log]
    if runner_logs:
        checks = recompute_metrics(CraftImport("", {}, {}, [g.game for g in runner_logs]))
        worst = max((c.max_abs_diff for c in checks), default=0.0)
        lines.append(f"metrics recomputed on {len(checks)} logged turns: largest difference {worst:.2e}")
    by_code = Counter(d.code for d in found)
    detail = ", ".join(f"{code} {by_code[code]}" for code in DISAGREEMENT_CODES if by_code[code])
    lines.append(
        f"replayed through SimLab's engine: {len(found)} disagreement(s) in {turns} turns"
        + (f" ({detail})" if detail else "")
    )
    if notes:
        lines.append(f"skipped or missing ({len(notes)}):")
        lines.extend(f"  - {note}" for note in notes)
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
    """Every role's agent as ``craft:MODEL`` (directors share the director model unless the log names each)."""
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


def _episode(imported: ImportedGame) -> Episode:
    """One imported game as an episode: the logged turns, each followed by our engine's disagreements."""
    game, agents = imported.game, _agents(imported.models)
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
        events.extend(
            ev.check(d.turn, DISAGREEMENT, d.message, {"kind": d.code})
            for d in imported.disagreements
            if d.turn == turn.number
        )
    final = progress_from_codes(codes, target_codes)
    summary = summarize(_task(game), log, final, final["completion"] == 1.0 and final["iou"] == 1.0)
    summary["agents"] = dict(agents)
    summary["metrics"]["reference_disagreements"] = len(imported.disagreements)
    if imported.per_turn_log:
        _drop_oracle_metrics(summary["metrics"])
    source = {"importer": "craft", "file": imported.file, "game": imported.index, "archetypes": game.archetypes}
    return Episode(
        episode_id=_episode_id(imported),
        world="blocks",
        seed=0,
        task=_task(game),
        settings=dict(imported.settings),
        agents=agents,
        events=events,
        summary=summary,
        source=source,
    )


def _episode_id(imported: ImportedGame) -> str:
    """A run log's games are ``STRUCTURE-gK``; a per-turn record is named by its file (model and structure)."""
    if imported.per_turn_log:
        return re.sub(r"[^A-Za-z0-9._-]+", "-", Path(imported.file).stem).strip("-.")[:160]
    return f"{imported.game.structure_id}-g{imported.index}"


def _drop_oracle_metrics(metrics: dict[str, Any]) -> None:
    """Per-turn records hold no oracle candidates: what rests on them is unknown (None), not zero."""
    for key in list(metrics):
        if key.startswith(("oracle_", "tax_")) or key in ("communication_failure_rate", "remove_gap"):
            metrics[key] = None


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
    if turn.oracle_logged:  # CRAFT's per-turn records hold no oracle moves: unknown, so not written as none
        result["candidates"] = [m.to_json() for m in turn.oracle]
        result["followed_oracle"] = turn.followed_oracle
    if turn.logged:
        result["logged"] = finite(turn.logged)
    out.append(Event("result", t, "engine", result))
    return out
