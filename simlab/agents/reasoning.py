"""A model's private reasoning, kept apart from what it says.

Reasoning models think aloud before they answer: inline as ``<think>...</think>public answer`` (DeepSeek-R1
distills, QwQ, Qwen3 served raw), or in a field of their own when the server splits it out
(``reasoning_content`` or ``reasoning`` on the message: vLLM's and llama.cpp's reasoning parsers, DeepSeek's
API, OpenRouter). Either way it is the model's own: the agent hands a family's reply protocol the public
part only and gives the reasoning to the reply's ``reasoning`` (recorded as a reasoning event), so no
partner, action, metric or leak count ever reads it. Inline blocks are found wherever they stand, not only at
the start. A reply that opens its reasoning and never closes it (cut off at the token limit) has no public part
at all: it is unreadable, never public text.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

DEFAULT_TAGS: tuple[str, str] = ("<think>", "</think>")
"""The inline reasoning markers most open models use; an agent setting (``reasoning_tags``) changes them."""


@dataclass(frozen=True)
class Split:
    """A reply's private reasoning, its public part, and whether the reasoning was left open."""

    reasoning: str
    public: str
    unclosed: bool = False


def split_reasoning(text: str, tags: tuple[str, ...] = DEFAULT_TAGS) -> Split:
    """The reasoning blocks of ``text``, wherever they stand, and the rest as its public part. With no tags
    (``()``) nothing is split.

    Models and templates vary, and a block missed is private reasoning handed to a partner, so the markers are
    read loosely: any case, spaces or attributes inside a tag (``< think >``, ``<think type="x">``), the
    ``<thinking>`` variant of the default tags, blocks nested in blocks. A closing tag with no opening one
    before it makes all the text before it reasoning (templates that put the opening tag in the prompt). An
    opened block without its closing tag makes the rest reasoning and the public part empty (``unclosed``)."""
    if len(tags) != 2:
        return Split("", text)
    markers = _markers(tags[0], tags[1])
    thoughts: list[str] = []
    public: list[str] = []
    depth, pos, start = 0, 0, 0
    for tag in markers.finditer(text):
        if tag.group("open") is not None and not (depth and tags[0] == tags[1]):
            if depth == 0:
                public.append(text[pos : tag.start()])
                start = tag.end()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                thoughts.append(text[start : tag.start()])
                pos = tag.end()
        else:  # a closing tag outside any block: what came before it was reasoning
            thoughts.append(text[pos : tag.start()])
            pos = tag.end()
    if depth:
        return Split(_joined([*thoughts, text[start:]]), "", unclosed=True)
    if not thoughts and pos == 0:
        return Split("", text)
    public.append(text[pos:])
    return Split(_joined(thoughts), " ".join(p.strip() for p in public if p.strip()))


def joined(*parts: str | None) -> str | None:
    """The non-empty reasoning parts, in order, one paragraph each (None when there is none)."""
    kept = [p.strip() for p in parts if p and p.strip()]
    return "\n\n".join(kept) or None


def _joined(parts: list[str]) -> str:
    return "\n\n".join(p.strip() for p in parts if p.strip())


VARIANTS = {"think": ("think", "thinking")}
"""Tag names read as one: models trained on ``<think>`` write ``<thinking>`` too."""


@functools.lru_cache(maxsize=16)
def _markers(opening: str, closing: str) -> re.Pattern[str]:
    """One pattern matching either tag (group ``open`` or ``close``): an XML-like pair ``<name>``/``</name>``
    loosely (spaces, attributes, case, :data:`VARIANTS`), any other pair as written, case aside."""
    named = re.fullmatch(r"<(\w+)>", opening)
    if named and closing == f"</{named.group(1)}>":
        names = "|".join(VARIANTS.get(named.group(1).lower(), (re.escape(named.group(1)),)))
        return re.compile(rf"(?P<open><\s*(?:{names})(?:\s[^<>]*)?>)|(?P<close><\s*/\s*(?:{names})\s*>)", re.I)
    return re.compile(rf"(?P<open>{re.escape(opening)})|(?P<close>{re.escape(closing)})", re.I)
