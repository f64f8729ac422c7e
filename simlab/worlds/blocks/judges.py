"""CRAFT's three LLM judges (paper section 5.2, appendix E) over recorded blocks episodes.

* ``craft-sg``, spatial grounding: one item per director per turn that recorded private reasoning (a director
  that wrote none that turn has no item). The judge reads the reasoning alone, with the ground truth it needs
  to check it: the director's own wall view (from the task), the board at the start of the turn and the
  oracle-correct moves on it. It never sees the public message.
* ``craft-mm``, mind modelling: one item per director message. The judge reads the message with what the
  director knew publicly: which wall each director sees, the board, the shared conversation of the last
  :data:`HISTORY_TURNS` turns (messages and the engine's results, as directors are shown them) and what the
  others said before it this turn. Never the private reasoning, the private view or the oracle moves.
* ``craft-ps``, pragmatic sufficiency: one item per turn with director messages: all of them together, the
  previous turn's move and result, and the oracle-correct moves. "N/A" where a question does not apply.

SG and PS need the oracle moves, computed from the recorded board and the task's target with
:func:`~simlab.worlds.blocks.oracle.oracle_moves` (what the live world records in each result): a turn whose
board cannot be read (an imported log's illegal board) or has no oracle move gets no SG or PS item.

The paper's prompts were figures and are lost in its text; ours (``prompts/judge_*.txt``, after the shared
game rules of ``prompts/judge_rules.txt``) are written from its descriptions. The codes it names keep its
meaning: SG3 layer inference, SG5 move executability; MM1 novel information, MM4 message calibration, MM5
unique perspective, MM6 action specificity, MM7 conflict resolution; PS1-PS6 in the order of its figure 12
caption. Where it is silent the names are ours, from its text: SG1 missing block, SG2 block type and SG4
stacking constraints (appendix E: "identifies missing blocks, respects stacking constraints"); MM2 acting
without clarification (appendix E: "the builder can act on without clarification") and MM3 board awareness
(table 2: directors "describe target state not current state"). PS6, failure attribution, is read as
whether the messages say what went wrong with the previous turn's failed or mistaken move.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.core.family import prompt_text
from simlab.core.judging import YES_NO_UNCLEAR_NA, Judge, JudgeItem, Question, clip, transcript
from simlab.worlds.blocks.model import Board, Move
from simlab.worlds.blocks.oracle import oracle_moves
from simlab.worlds.blocks.simulation import is_simulation_event
from simlab.worlds.blocks.views import (
    DIRECTORS,
    INTERIOR_CELLS,
    INTERIOR_VIEWER,
    WALL_NAMES,
    WALL_POSITIONS,
    Interior,
    board_text,
    director_view,
)
from simlab.worlds.blocks.world import BUILDER

HISTORY_TURNS = 5
"""Turns of shared conversation an MM item shows before its own (older turns are said to be left out)."""
REASONING_LIMIT = 8000
"""Characters of a director's private reasoning an SG item keeps (its start and its conclusion)."""
PAPER = "CRAFT (arXiv 2603.25268)"

SG_QUESTIONS = (
    Question(
        "SG1",
        "Missing block",
        "Does the reasoning correctly identify, from the director's own wall view, a block the board is missing "
        "or has wrong?",
    ),
    Question(
        "SG2",
        "Block type",
        "Does it give that block's colour and size correctly (a large block may show as small from one wall)?",
    ),
    Question(
        "SG3", "Layer inference", "Does it put the block on the right layer, counting the stack heights on the board?"
    ),
    Question(
        "SG4",
        "Stacking constraints",
        "Does it respect stacking: nothing floats, a large block needs both its cells at the same height, and a "
        "buried block comes off only after the blocks above it?",
    ),
    Question(
        "SG5",
        "Move executability",
        "Would the move it settles on be accepted by the engine on this board and match an oracle-correct move?",
    ),
)
MM_QUESTIONS = (
    Question(
        "MM1",
        "Novel information",
        "Does the message add information that neither the earlier messages of this turn nor the recent "
        "conversation already gave?",
    ),
    Question("MM2", "Actionable", "Could the builder act on the message without asking for clarification?"),
    Question(
        "MM3",
        "Board awareness",
        "Does the message fit the current board, naming stacks and layers as they are now rather than as the "
        "finished target will be?",
    ),
    Question(
        "MM4",
        "Message calibration",
        "Is the message calibrated to what the builder and the other directors already know: concise, neither a "
        "transcript of private thinking nor too terse to use?",
    ),
    Question(
        "MM5",
        "Unique perspective",
        "Does the message use what this director's own wall shows that the other directors cannot see?",
    ),
    Question(
        "MM6",
        "Action specificity",
        "Does the message name one concrete action: the block's colour and size, its cell (both cells for a "
        "large block) and its layer, or exactly which block to remove?",
    ),
    Question(
        "MM7",
        "Conflict resolution",
        "Is the message free of unacknowledged conflict with the other directors: where it disagrees with one, "
        "does it say so and why?",
    ),
)
PS_QUESTIONS = tuple(
    Question(code, label, text, YES_NO_UNCLEAR_NA)
    for code, label, text in (
        (
            "PS1",
            "Location specificity",
            "Do the messages together name the exact cell (both cells for a large block) and layer of at least "
            "one oracle-correct move?",
        ),
        (
            "PS2",
            "Block type precision",
            "Do they give that move's block colour and size exactly? N/A when every move they point to is a removal.",
        ),
        (
            "PS3",
            "Rational sufficiency",
            "Could a rational builder, with only the board and these messages, pick at least one oracle-correct "
            "move without spatial reasoning of its own?",
        ),
        (
            "PS4",
            "Spatial anchoring",
            "Are locations given in the builder's frame (grid cells, layers, blocks on the board), not only "
            'relative to a director\'s own wall ("my left")?',
        ),
        (
            "PS5",
            "Builder understanding",
            "Are the messages, taken together, free of contradictions and ambiguities that would leave the "
            "builder unsure what to do?",
        ),
        (
            "PS6",
            "Failure attribution",
            "Do the messages say what went wrong with the previous turn's move and how to fix it? N/A when the "
            "previous turn's move neither failed nor was a mistake.",
        ),
    )
)


# ---- the recording, turn by turn --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Turn:
    """One played turn: its events, the board at its start (None: unreadable) and the oracle moves on it."""

    number: int
    events: tuple[Event, ...]
    board: Board | None
    oracle: tuple[Move, ...]

    def said(self, kind: str) -> list[tuple[str, str]]:
        """``(director, text)`` of this turn's director events of ``kind``, in the order they happened."""
        return [
            (str(e.role), str(e.data.get("text", ""))) for e in self.events if e.kind == kind and e.role in DIRECTORS
        ]


def _board(value: Any) -> Board | None:
    """The board a recording holds, or None when it holds none or one the engine cannot read."""
    if not isinstance(value, Mapping):
        return None
    try:
        return Board.from_json(value)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError):
        return None


def _turns(episode: Episode) -> Iterator[_Turn]:
    """The played turns in order, in one pass over the events (the board carried from the last state)."""
    grouped: dict[int, list[Event]] = {}
    for event in episode.events:
        if not is_simulation_event(event):  # the builder's private dry runs: no director saw them
            grouped.setdefault(event.turn, []).append(event)
    target = _board(episode.task.get("board"))
    board: Board | None = None
    for number in sorted(grouped):
        if number > 0:
            oracle = oracle_moves(board, target) if board is not None and target is not None else []
            yield _Turn(number, tuple(grouped[number]), board, tuple(oracle))
        for event in grouped[number]:
            if event.kind == "state" and isinstance(event.data.get("state"), Mapping):
                board = _board(event.data["state"].get("board"))


def _interior(episode: Episode) -> Interior:
    """The episode's ``interior`` setting ("paper", the setting's default, when it records none)."""
    return "reference" if episode.settings.get("interior") == "reference" else "paper"


def _shared(turn: _Turn) -> list[tuple[int, str, str]]:
    """The turn's entries of the shared history, as directors are shown them: messages and engine results."""
    out = []
    for e in turn.events:
        if e.kind == "message" and e.role:
            out.append((turn.number, e.role, str(e.data.get("text", ""))))
        elif e.kind == "result":
            text = str(e.data.get("message", ""))
            out.append((turn.number, "engine", text if e.data.get("ok", True) else f"FAILED: {text}"))
    return out


# ---- the contexts -------------------------------------------------------------------------------------------
def _walls(interior: Interior) -> str:
    lines = ["Who sees what of the target (each director privately; the builder sees none of it):"]
    for director in DIRECTORS:
        cells = ", ".join(f"({i},{j})" for i, j in WALL_POSITIONS[director])
        line = f"- {director}: the {WALL_NAMES[director]} wall, cells {cells} at every layer"
        if director == INTERIOR_VIEWER and interior == "paper":
            line += ", and the top blocks of " + " and ".join(f"({i},{j})" for i, j in INTERIOR_CELLS) + " from above"
        lines.append(line)
    return "\n".join(lines)


def _moves(moves: Sequence[Move]) -> str:
    return "\n".join(f"- {m.describe()}" for m in moves)


def _board_line(turn: _Turn) -> str:
    shown = board_text(turn.board) if turn.board is not None else "(not recorded as a legal board)"
    return f"The board at the start of turn {turn.number}:\n{shown}"


def _messages(said: Sequence[tuple[str, str]]) -> str:
    return "\n".join(f"{who}: {clip(text)}" for who, text in said) or "(none)"


def _previous(turn: _Turn | None) -> str:
    """The previous turn's move and result, as PS6 needs them."""
    if turn is None:
        return "This is the first turn."
    lines = []
    for e in turn.events:
        if e.kind == "action" and e.role == BUILDER:
            lines.append(f"The builder's move: {clip(str(e.data.get('text', '')))}")
        elif e.kind == "result":
            verdict = "mistake" if e.data.get("mistake") else "accepted" if e.data.get("ok", True) else "FAILED"
            lines.append(f"The engine: {verdict}: {clip(str(e.data.get('message', '')))}")
    return f"On turn {turn.number}:\n" + ("\n".join(lines) or "(the builder made no move)")


def sg_items(episode: Episode) -> list[JudgeItem]:
    """One item per (turn, director) with private reasoning, on a turn with a readable board and oracle moves."""
    target = _board(episode.task.get("board"))
    if target is None:
        return []
    interior = _interior(episode)
    walls = _walls(interior)
    views: dict[str, str] = {d: director_view(target, d, interior).to_text() for d in DIRECTORS}
    out = []
    for turn in _turns(episode):
        if turn.board is None or not turn.oracle:
            continue
        for director, text in turn.said("reasoning"):
            context = "\n\n".join(
                [
                    f"Turn {turn.number}. The reasoning you rate is director {director}'s "
                    f"({WALL_NAMES[director]} wall).",
                    walls,
                    f"{director}'s private view of the target (only {director} sees it):\n{views[director]}",
                    _board_line(turn),
                    "Oracle-correct moves on this board (ground truth; the director never saw this list):\n"
                    + _moves(turn.oracle),
                    f"{director}'s private reasoning this turn (what you rate):\n<<<\n"
                    f"{clip(text, REASONING_LIMIT)}\n>>>",
                ]
            )
            out.append(JudgeItem(turn.number, director, context))
    return out


def mm_items(episode: Episode) -> list[JudgeItem]:
    """One item per director message, in the order they were said."""
    walls = _walls(_interior(episode))
    history: dict[int, list[tuple[int, str, str]]] = {}
    out = []
    for turn in _turns(episode):
        since = max(1, turn.number - HISTORY_TURNS)
        recent = [entry for n in range(since, turn.number) for entry in history.get(n, [])]
        said = turn.said("message")
        for k, (director, text) in enumerate(said):
            context = "\n\n".join(
                [
                    f"Turn {turn.number}. The message you rate is director {director}'s ({WALL_NAMES[director]} wall).",
                    walls,
                    _board_line(turn),
                    "The shared conversation before this turn:\n" + transcript(recent, since),
                    f"What the other directors said this turn before {director}:\n{_messages(said[:k])}",
                    f"{director}'s public message (what you rate):\n<<<\n{clip(text)}\n>>>",
                ]
            )
            out.append(JudgeItem(turn.number, director, context))
        history[turn.number] = _shared(turn)
    return out


def ps_items(episode: Episode) -> list[JudgeItem]:
    """One item per turn with director messages and oracle moves."""
    walls = _walls(_interior(episode))
    out = []
    previous: _Turn | None = None
    for turn in _turns(episode):
        said = turn.said("message")
        if said and turn.oracle:
            context = "\n\n".join(
                [
                    f"Turn {turn.number}.",
                    walls,
                    _board_line(turn),
                    "What happened on the previous turn:\n" + _previous(previous),
                    "The directors' public messages this turn, in the order given (what you rate, together):\n"
                    + _messages(said),
                    "Oracle-correct moves on this board (ground truth; nobody in the game saw this list):\n"
                    + _moves(turn.oracle),
                ]
            )
            out.append(JudgeItem(turn.number, "", context))
        previous = turn
    return out


def _instructions(name: str) -> str:
    return f"{prompt_text(__package__, name)}\n\n{prompt_text(__package__, 'judge_rules')}"


JUDGES: tuple[Judge, ...] = (
    Judge(
        "craft-sg",
        "blocks",
        "Spatial grounding (SG)",
        "each director's private reasoning, alone, against its wall view, the board and the oracle moves",
        _instructions("judge_sg"),
        SG_QUESTIONS,
        sg_items,
        runs=3,
        reference=f"{PAPER} section 5.2, appendix E (figure 13), table 7",
    ),
    Judge(
        "craft-mm",
        "blocks",
        "Mind modelling (MM)",
        "each director's public message in the context of the others' and the conversation, never its reasoning",
        _instructions("judge_mm"),
        MM_QUESTIONS,
        mm_items,
        runs=3,
        reference=f"{PAPER} section 5.2, appendix E (figure 14), table 7",
    ),
    Judge(
        "craft-ps",
        "blocks",
        "Pragmatic sufficiency (PS)",
        "a turn's director messages together against the oracle moves: enough for a rational builder?",
        _instructions("judge_ps"),
        PS_QUESTIONS,
        ps_items,
        runs=2,
        reference=f"{PAPER} section 5.2, appendix E (figure 12)",
    ),
)
