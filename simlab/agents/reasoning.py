"""A model's private reasoning, kept apart from what it says.

Reasoning models think aloud before they answer: inline as ``<think>...</think>public answer`` (DeepSeek-R1
distills, QwQ, Qwen3 served raw), or in a field of their own when the server splits it out
(``reasoning_content`` or ``reasoning`` on the message: vLLM's and llama.cpp's reasoning parsers, DeepSeek's
API, OpenRouter). Either way it is the model's own: the agent hands a family's reply protocol the public
part only and gives the reasoning to the reply's ``reasoning`` (recorded as a reasoning event), so no
partner, action, metric or leak count ever reads it. A reply that opens its reasoning and never closes it
(cut off at the token limit) has no public part at all: it is unreadable, never public text.
"""

from __future__ import annotations

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
    """The reasoning blocks that open ``text`` (any case, any number) and what follows them. With no tags
    (``()``) nothing is split. An opened block without its closing tag makes the rest reasoning and the
    public part empty (``unclosed``)."""
    if len(tags) != 2:
        return Split("", text)
    opening, closing = (t.lower() for t in tags)
    thoughts: list[str] = []
    rest = text
    while rest.lstrip().lower().startswith(opening):
        rest = rest.lstrip()[len(opening) :]
        end = rest.lower().find(closing)
        if end < 0:
            thoughts.append(rest.strip())
            return Split(_joined(thoughts), "", unclosed=True)
        thoughts.append(rest[:end].strip())
        rest = rest[end + len(closing) :]
    return Split(_joined(thoughts), rest.strip() if thoughts else text)


def joined(*parts: str | None) -> str | None:
    """The non-empty reasoning parts, in order, one paragraph each (None when there is none)."""
    kept = [p.strip() for p in parts if p and p.strip()]
    return "\n\n".join(kept) or None


def _joined(parts: list[str]) -> str:
    return "\n\n".join(p for p in parts if p)
