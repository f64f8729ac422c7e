"""The ``plain-speech`` judge: how plainly each role speaks, asked of an LLM through SimLab's judge contract.

One item per role and turn that the role said something public in (its messages of that turn together). The
judge reads the conversation of the :data:`HISTORY_TURNS` turns before, then the message to rate, and answers
three Yes/No/Unclear questions, each worded so that Yes is the plain answer, so the judge's mean is a
plainness score: PL1 brevity (no needless words), PL2 no hedging, PL3 actionable without asking back.

Nothing here reads a world's own data: only ``message`` events, which every family records, so
:func:`plain_speech` makes the same judge for any family. A :class:`~simlab.core.judging.Judge` judges the
episodes of one world, and this plugin declares it for the blocks world (``PLAIN_SPEECH``); another family's
takes one more line here and one in ``plugin.toml``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from simlab.core.episode import Episode
from simlab.core.judging import YES_NO_UNCLEAR, Judge, JudgeItem, Question, clip, transcript

HISTORY_TURNS = 3
"""Turns of conversation an item shows before its own (older ones are said to be left out)."""

QUESTIONS = (
    Question(
        "PL1",
        "Brevity",
        "Is the message no longer than what it has to say needs: no instruction said twice, nothing everyone "
        "already knows restated, no filler?",
        YES_NO_UNCLEAR,
    ),
    Question(
        "PL2",
        "No hedging",
        "Does the speaker state what they know plainly, without hedging (maybe, I think, probably, perhaps) "
        "where they could have been sure?",
        YES_NO_UNCLEAR,
    ),
    Question(
        "PL3",
        "Actionable",
        "Could a listener act on the message at once, without asking what was meant?",
        YES_NO_UNCLEAR,
    ),
)


def plain_speech(world: str, name: str = "plain-speech") -> Judge:
    """The plain-speech judge of ``world``'s episodes, called ``name``."""
    return Judge(
        name=name,
        world=world,
        title="Plain speech (length and hedging)",
        description="per role and turn with a message: brevity, no hedging, actionable (Yes is plain)",
        instructions=(Path(__file__).parent / "instructions.txt").read_text(encoding="utf-8"),
        questions=QUESTIONS,
        items=message_items,
        runs=1,
        reference="SimLab plugin plugins/plainspeech",
    )


def message_items(episode: Episode) -> list[JudgeItem]:
    """One item per (turn, role) with public messages, in the order the messages were said; its context is
    what was said before the role's first message of the turn (this turn's earlier speakers included)."""
    said = list(_messages(episode))
    first: dict[tuple[int, str], int] = {}
    texts: dict[tuple[int, str], list[str]] = {}
    for position, (turn, role, text) in enumerate(said):
        first.setdefault((turn, role), position)
        texts.setdefault((turn, role), []).append(text)
    items = []
    for (turn, role), position in first.items():
        since = max(1, turn - HISTORY_TURNS)
        before = [entry for entry in said[:position] if entry[0] >= since]
        context = (
            f"The conversation before the message:\n{transcript(before, since)}\n\n"
            f"The message to rate, said by {role} at turn {turn}:\n{clip(' '.join(texts[turn, role]))}"
        )
        items.append(JudgeItem(turn, role, context))
    return items


def _messages(episode: Episode) -> Iterator[tuple[int, str, str]]:
    for event in episode.events:
        text = event.data.get("text") if event.kind == "message" else None
        if isinstance(text, str) and text.strip() and event.role:
            yield event.turn, event.role, text


PLAIN_SPEECH = plain_speech("blocks")
"""What ``plugin.toml`` names: the judge of blocks episodes (the directors' instructions, the builder's
questions)."""
