"""COMMA's error taxonomy judge (paper section 5.2, figure 3) over recorded puzzles episodes.

The paper classifies the errors of conversations that went wrong. Here one item per episode that failed (not
solved, or aborted) or had a mistake (an action the module counted as a strike, even when it was solved in the
end); a solved episode without a strike, or one that never finished and had none, has no item. The item is
rated at its last turn about the conversation as a whole (subject "").

The judge reads the puzzle (its name and capability categories), the whole manual the expert holds (a
puzzle's manual is short and the expert had all of it), the start as the solver was given it (the world
rebuilt from the recorded task and seed, not played: the picture in words, what only the solver was told, the
values it must not reveal, the actions it could name), the outcome, and the conversation turn by turn as
recorded: the module whenever it changed (the careful description of its picture each solver observation
records), the messages, the solver's actions with the engine's result of each, and protocol errors. A long
episode keeps its last :data:`CONVERSATION_TURNS` turns, and one turn's list of actions is one clipped line.

One categorical question: roleplay, misinterpretation, repetition loop, miscommunication (the paper's four)
or none; reported as shares, not averaged. The paper's judge prompt is not given; ours is
``prompts/judge_errors.txt``, from its definitions.
"""

from __future__ import annotations

from collections.abc import Mapping

from simlab.core.episode import Episode
from simlab.core.family import prompt_text
from simlab.core.judging import Judge, JudgeItem, Question, Scale, clip, transcript
from simlab.worlds.puzzles.world import SOLVER, PuzzlesWorld

CONVERSATION_TURNS = 30
"""Turns of conversation an item shows (the paper's episodes have 10)."""
ERROR = "ERR"
ERROR_SCALE = Scale(
    {label: None for label in ("roleplay", "misinterpretation", "repetition_loop", "miscommunication", "none")}
)
"""The paper's four error types and "none" (its figure 3 shares are over the four)."""
ACTS = "solver acts"
MODULE = "module (a careful description of the solver's picture)"


def went_wrong(episode: Episode) -> bool:
    """Whether the episode failed (not solved, or aborted) or the module counted a strike."""
    failed = episode.summary.get("outcome") in ("failure", "abort")
    return failed or _strikes(episode) > 0


def _strikes(episode: Episode) -> int:
    return sum(e.kind == "result" and e.data.get("error") == "mistake" for e in episode.events)


def _seen(data: Mapping[str, object]) -> Mapping[str, object]:
    """The JSON a solver observation event recorded for scripted agents (description, note, actions)."""
    inner = data.get("data")
    return inner if isinstance(inner, Mapping) else {}


def _conversation(episode: Episode) -> list[tuple[int, str, str]]:
    """``(turn, who, text)``: the module when it changed since the start, messages, each turn's actions with
    their results (one entry per turn), protocol errors."""
    out: list[tuple[int, str, str]] = []
    solver = [e for e in episode.events if e.kind == "observation" and e.role == SOLVER]
    shown = _seen(solver[0].data).get("description") if solver else None
    for e in episode.events:
        data = e.data
        if e.kind == "observation" and e.role == SOLVER:
            described = _seen(data).get("description")
            if isinstance(described, str) and described != shown:
                out.append((e.turn, MODULE, described))
                shown = described
        elif e.kind == "message" and e.role:
            out.append((e.turn, e.role, str(data.get("text", ""))))
        elif e.kind == "action":
            step = str(data.get("text", ""))
            if out and out[-1][:2] == (e.turn, ACTS):
                out[-1] = (e.turn, ACTS, f"{out[-1][2]}; {step}")
            else:
                out.append((e.turn, ACTS, step))
        elif e.kind == "result" and out and out[-1][1] == ACTS:
            turn, who, text = out[-1]
            out[-1] = (turn, who, f"{text} -> {data.get('kind') or 'result'}: {data.get('message', '')}")
        elif e.kind == "protocol_error":
            out.append((e.turn, "engine", f"{data.get('code', 'error')}: {data.get('message', '')}"))
    return out


def _start(world: PuzzlesWorld) -> list[str]:
    """The start as the solver was given it (``world`` rebuilt from the recorded task and seed and reset, not
    played): its picture in words, what only it was told, the values it must keep private, its actions."""
    seen = world.observe(SOLVER)
    out = [f"What the solver saw at the start (its picture, in words): {clip(seen.image_texts['module'])}"]
    if seen.data.get("note"):
        out.append(f"What only the solver was told: {clip(str(seen.data['note']))}")
    private = world.puzzle.private()
    if private:
        out.append(
            "Values only the solver knows and must not reveal: " + "; ".join(f"{k} {v}" for k, v in private.items())
        )
    return [*out, "Actions the solver could name at the start: " + clip(", ".join(seen.data["actions"]))]


def error_items(episode: Episode) -> list[JudgeItem]:
    """One item for an episode that went wrong (:func:`went_wrong`), none otherwise."""
    if not went_wrong(episode):
        return []
    world = PuzzlesWorld(episode.task, episode.settings)
    world.reset(episode.seed)
    kind = world.kind
    solved = episode.summary.get("outcome") == "success"
    since = max(1, episode.last_turn - CONVERSATION_TURNS + 1)
    said = [entry for entry in _conversation(episode) if entry[0] >= since]
    context = "\n\n".join(
        [
            f"Puzzle: {kind.title} (it tests {', '.join(kind.categories)}).",
            f"The expert's manual for this puzzle:\n<<<\n{kind.manual()}\n>>>",
            *_start(world),
            f"Outcome: {'solved' if solved else 'not solved'}, {_strikes(episode)} strike(s), "
            f"{episode.last_turn} turn(s) played.",
            "The conversation, turn by turn (what you rate):\n" + transcript(said, since),
        ]
    )
    return [JudgeItem(episode.last_turn, "", context)]


JUDGES: tuple[Judge, ...] = (
    Judge(
        "comma-errors",
        "puzzles",
        "Error taxonomy",
        "each failed or mistaken conversation: roleplay, misinterpretation, repetition loop, miscommunication?",
        prompt_text(__package__, "judge_errors"),
        (
            Question(
                ERROR,
                "Error type",
                "Which error best explains what went wrong in this conversation?",
                ERROR_SCALE,
            ),
        ),
        error_items,
        reference="COMMA, section 5.2 (error categories, figure 3)",
    ),
)
