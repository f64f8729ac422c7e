"""Read live models' replies in the CRAFT protocol: directors' think/message tags and the builder's moves.

Directors answer ``<think>private reasoning</think>`` then ``<message>public message</message>``
(:func:`parse_director_reply`). The builder answers one line in the CRAFT reference's colon format
(:func:`parse_builder_reply`)::

    PLACE:block_code:position:layer:CONFIRM:reasoning
    PLACE:block_code:position:layer:span_to:CONFIRM:reasoning
    REMOVE:position:layer:CONFIRM:reasoning
    CLARIFY:question

or copies a candidate as the world lists it (``PLACE bl @ (1,0) layer 0 -> (2,0)``). Both return data in the
world's own terms (``Move.to_json()``); anything that cannot be read raises :class:`ReplyError` with a short
reason that a re-ask can quote back to the model. Model output is data: it is matched, never evaluated.
"""

from __future__ import annotations

import re
from typing import Any

from simlab.core.family import ReplyError
from simlab.worlds.blocks.model import BLOCK_CODES, Cell, Move, parse_cell

__all__ = ["ReplyError", "parse_builder_reply", "parse_director_reply"]


# ---- directors ------------------------------------------------------------------------------------------
_THINK = re.compile(r"<think>(.*?)(?:</think>|(?=<message>)|\Z)", re.IGNORECASE | re.DOTALL)
_MESSAGE = re.compile(r"<message>(.*?)(?:</message>|\Z)", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<\s*/?\s*(?:think|message)\s*>", re.IGNORECASE)


def parse_director_reply(text: str) -> tuple[str | None, str]:
    """``(reasoning, message)`` from ``<think>...</think><message>...</message>``.

    Tags are matched in any case; the think block is optional (reasoning is then None) and an unclosed tag
    runs to the next tag or the end. A reply without a non-empty message raises ReplyError, and so does a
    message holding a think or message tag: everyone reads the message, so it never carries the protocol's
    markup (SmolLM2 wrote "(no <message> block). Reply again: Your private thoughts inside <think>..." in
    prose, which an unclosed block would otherwise have made public).
    """
    found = _MESSAGE.search(text or "")
    if found is None:
        raise ReplyError("no <message>...</message> block")
    message = found.group(1).strip()
    if not message:
        raise ReplyError("the <message> block is empty")
    if not any(ch.isalnum() for ch in message):
        raise ReplyError(f"the <message> block says nothing ({message[:20]!r}): give the builder an instruction")
    if _TAG.search(message):
        raise ReplyError("the <message> block holds a <think> or <message> tag: only the instruction goes in it")
    think = _THINK.search(text[: found.start()])
    reasoning = think.group(1).strip() if think else None
    return reasoning or None, message


# ---- the builder ----------------------------------------------------------------------------------------
_COLON = re.compile(r"\b(PLACE|REMOVE|CLARIFY)\s*:", re.IGNORECASE)
_AT = re.compile(r"\b(PLACE|REMOVE)\s+(?:[a-z]{2}\s*)?@", re.IGNORECASE)  # the candidate listing's form
_CLARIFY_WORD = re.compile(r"\b(CLARIFY)\s+\S")  # CLARIFY 'question' (capitals only: prose says "clarify")
_MARKUP = str.maketrans("", "", "*`")
_LAYER = re.compile(r"^(?:layer|level|l)?\s*=?\s*(-?\d{1,6})$", re.IGNORECASE | re.ASCII)  # int() reads it
_CELL = r"\(?\s*-?\d+\s*,\s*-?\d+\s*\)?"
_DESCRIBED = re.compile(
    rf"^(?P<block>[a-z]{{2}})?\s*@\s*(?P<cell>{_CELL})\s*(?:layer|l)\s*(?P<layer>-?\d+)"
    rf"(?:\s*(?:->|→|to)\s*(?P<span>{_CELL}))?",
    re.IGNORECASE,
)


PLACEHOLDER_QUESTIONS = frozenset({"question", "your question", "your own question", "a question", "...", ""})
"""What a builder copying the prompt's ``CLARIFY:question`` writes instead of a question."""


def parse_builder_reply(text: str) -> dict[str, Any]:
    """The move a builder reply names, as ``Move.to_json()`` (``{"action": "clarify", "text": q}`` for a
    question).

    Lines are read in order and the first that holds a readable PLACE, REMOVE or CLARIFY counts; markdown
    emphasis, spaces, letter case and a trailing rationale are ignored; a bare ``CLARIFY:`` takes the next
    non-empty line as its question. Raises ReplyError (with the first line's problem) when no line holds a
    complete move.
    """
    lines = [line.translate(_MARKUP) for line in (text or "").splitlines()]
    first_problem: str | None = None
    for index, line in enumerate(lines):
        found = min((m for m in (p.search(line) for p in (_COLON, _AT, _CLARIFY_WORD)) if m), key=_start, default=None)
        if found is None:
            continue
        keyword, rest = found.group(1).upper(), line[found.end(1) :].strip()
        if keyword == "CLARIFY" and not rest.lstrip(":").strip():
            rest = next((later.strip() for later in lines[index + 1 :] if later.strip()), "")
        try:
            return _read_move(keyword, rest).to_json()
        except ReplyError as exc:
            first_problem = first_problem or str(exc)
    raise ReplyError(first_problem or "no PLACE, REMOVE or CLARIFY line")


def _start(match: re.Match[str]) -> int:
    return match.start()


def _read_move(keyword: str, rest: str) -> Move:
    if keyword == "CLARIFY":
        question = rest.lstrip(":").strip().strip("\"'").strip()
        if not question:
            raise ReplyError("CLARIFY needs a question: CLARIFY: then the question itself")
        if question.lower().strip(" ?.!") in PLACEHOLDER_QUESTIONS:
            raise ReplyError(f"CLARIFY:{question} copies the instructions' placeholder; ask a real question")
        return Move.clarify(question)
    if rest.startswith(":"):
        return _read_colon_move(keyword, [f.strip() for f in rest[1:].split(":")])
    described = _DESCRIBED.match(rest)
    if described is None:
        raise ReplyError(f"expected {keyword}:... in the colon format, got {keyword} {rest[:60]!r}")
    span = [described.group("span")] if described.group("span") else []
    return _make_move(keyword, described.group("block"), described.group("cell"), described.group("layer"), span)


def _read_colon_move(keyword: str, fields: list[str]) -> Move:
    """``block:position:layer[:span_to][:CONFIRM:...]`` for PLACE, the same without the block for REMOVE."""
    needed = 3 if keyword == "PLACE" else 2
    head = fields[: needed + 1]  # the span_to, if any, sits right after the layer
    if "CONFIRM" in (f.upper() for f in head):
        head = head[: [f.upper() for f in head].index("CONFIRM")]
    if len(head) < needed:
        form = "PLACE:block:position:layer" if keyword == "PLACE" else "REMOVE:position:layer"
        raise ReplyError(f"{keyword} needs {form}, got {(keyword + ':' + ':'.join(fields))[:60]!r}")
    block = head[0] if keyword == "PLACE" else None
    cell, layer = head[needed - 2], head[needed - 1]
    return _make_move(keyword, block, cell, layer, head[needed:])


def _make_move(keyword: str, block: str | None, cell_text: str, layer_text: str, extra: list[str]) -> Move:
    cell = _cell(cell_text, "position")
    layer = _layer(layer_text)
    span = _optional_span(extra)
    if keyword == "REMOVE":
        return Move.remove(cell, layer, span)
    code = (block or "").strip().lower()
    if code not in BLOCK_CODES:
        raise ReplyError(f"unknown block code {block!r}; expected one of {', '.join(BLOCK_CODES)}")
    return Move.place(code, cell, layer, span)


def _cell(text: str, what: str) -> Cell:
    try:
        return parse_cell(text.replace(" ", ""))
    except ValueError:
        raise ReplyError(f"{what} {text!r} is not a cell like (0,1)") from None


def _layer(text: str) -> int:
    found = _LAYER.match(text.strip())
    if found is None:
        raise ReplyError(f"layer {text[:40]!r} is not a number like 0")
    return int(found.group(1))


def _optional_span(extra: list[str]) -> Cell | None:
    """A span_to cell right after the layer; anything else there is taken as the start of a rationale."""
    if not extra or not extra[0]:
        return None
    try:
        return parse_cell(extra[0].replace(" ", ""))
    except ValueError:
        return None
