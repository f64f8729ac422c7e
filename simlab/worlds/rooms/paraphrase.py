"""The paraphrase step (Cosmic 7.2): a language model rewords a template question and its options.

The paper has an LLM rephrase each templated question so that the wording varies while the meaning stays.
:func:`paraphrase_question` asks any OpenAI-compatible chat endpoint (the openai agent's settings shape:
``base_url`` (default ``$OPENAI_BASE_URL``, else OpenAI's), ``model``, ``api_key_env``, ``temperature``,
``timeout``, ``max_retries``, ``backoff_s``, ``max_wait_s``; sent by the agents' own caller, so each attempt
is held to ``timeout`` however the server sends its bytes) for a strict JSON reply ``{"question": ...,
"options": [...]}``, checks it, and returns the question reworded with the template form kept in ``details``.
The option order, the answer letter and what each option stands for never change; a reply that is not such
JSON (or changes the number of options, their numbers or makes two alike) and an endpoint that fails past its
retries leave the template form, with ``details["paraphrase_error"]`` saying why. The API key is read from the
environment variable named by ``api_key_env`` and never recorded. Yes/no options (cognitive mapping) are the
answers themselves: only the question text is reworded there.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from simlab.agents.endpoint import KEY_ENV, default_base_url
from simlab.core.errors import ConfigError
from simlab.worlds.rooms.tasks import YES_NO, Question

__all__ = ["DEFAULTS", "ParaphraseError", "paraphrase_question", "parse_paraphrase"]

DEFAULTS: dict[str, Any] = {
    "api_key_env": KEY_ENV,
    "temperature": 0.7,
    "timeout": 60.0,
    "max_retries": 3,
}
SYSTEM_PROMPT = (
    "You rephrase multiple-choice questions about a room. Reword the question and each option so the wording "
    "changes but the meaning stays exactly the same. Keep the options in the same order and as many as given, "
    "keep every number written as digits, and do not add or drop information. Reply with only a JSON object "
    '{"question": "...", "options": ["...", ...]} and nothing else.'
)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL | re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


class ParaphraseError(ValueError):
    """The model's reply is not a usable paraphrase."""


def paraphrase_question(question: Question, client_settings: Mapping[str, Any]) -> Question:
    """``question`` with its text and options reworded by the configured model, the template form kept in
    ``details["template_text"]`` / ``details["template_options"]``; on any failure the question unchanged
    but for ``details["paraphrase_error"]``."""
    settings = {**DEFAULTS, "base_url": default_base_url(), **dict(client_settings)}
    fixed = tuple(question.options) == YES_NO
    options = () if fixed else tuple(question.options)
    try:
        reply = _ask(settings, question.text, options)
        text, new_options = parse_paraphrase(reply, question.text, options)
    except Exception as exc:  # any failure keeps the template form; the reason is recorded
        return _with_details(question, paraphrase_error=_reason(exc, settings))
    return replace(
        question,
        text=text,
        options=question.options if fixed else new_options,
        details={
            **question.details,
            "template_text": question.text,
            "template_options": list(question.options),
            "paraphrase_model": str(settings.get("model", "")),
        },
    )


def parse_paraphrase(reply: str, text: str, options: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """The reworded question and options from a strict JSON reply (a ```json fence around it is allowed);
    ParaphraseError when it is not JSON of that shape, has another number of options, changes a number or
    makes two options alike."""
    body = reply.strip()
    fenced = _FENCE.match(body)
    try:
        data = json.loads(fenced.group(1) if fenced else body)
    except json.JSONDecodeError as exc:
        raise ParaphraseError(f"the reply is not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not _is_text(data.get("question")) or not isinstance(data.get("options"), list):
        raise ParaphraseError('expected {"question": "...", "options": [...]}')
    new_options = data["options"]
    if len(new_options) != len(options) or not all(_is_text(o) for o in new_options):
        raise ParaphraseError(f"expected {len(options)} non-empty option texts, got {len(new_options)}")
    out = tuple(o.strip() for o in new_options)
    if len({o.casefold() for o in out}) != len(out):
        raise ParaphraseError("two options read the same")
    _check_numbers(text, data["question"].strip(), "the question")
    for k, (old, new) in enumerate(zip(options, out, strict=True)):
        _check_numbers(old, new, f"option {k + 1}")
    return data["question"].strip(), out


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _check_numbers(old: str, new: str, where: str) -> None:
    """A paraphrase keeps every number (a count option must stay the same count)."""
    if sorted(_NUMBER.findall(old)) != sorted(_NUMBER.findall(new)):
        raise ParaphraseError(f"{where} changed its numbers: {old!r} -> {new!r}")


def _ask(settings: Mapping[str, Any], text: str, options: Sequence[str]) -> str:
    """One chat request through the agents' caller (retried ``max_retries`` times, each attempt held to
    ``timeout`` however the server sends its bytes); the reply text."""
    from simlab.agents.openai_agent import AgentSettings, ChatCaller

    if not settings.get("model"):
        raise ParaphraseError("no paraphrase model configured (settings 'model')")
    names = ("base_url", "api_key_env", "temperature", "timeout", "max_retries", "backoff_s", "max_wait_s")
    values = {name: settings[name] for name in names if settings.get(name) is not None}
    caller = ChatCaller(AgentSettings.from_config(str(settings["model"]), values))
    try:
        caller.connect()
    except ConfigError as exc:
        raise ParaphraseError(str(exc)) from None
    completion = caller.complete(_messages(text, options))
    if completion.failure is not None:
        raise ParaphraseError(str(completion.failure))
    if not completion.content:
        raise ParaphraseError("the reply is empty")
    return completion.content


def _messages(text: str, options: Sequence[str]) -> list[dict[str, str]]:
    """The chat request: the instructions, then the question and options as JSON."""
    task = json.dumps({"question": text, "options": list(options)}, ensure_ascii=False)
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": task}]


def _reason(exc: Exception, settings: Mapping[str, Any]) -> str:
    """What went wrong, short and without the key (some endpoints echo part of a refused key)."""
    reason = f"{type(exc).__name__}: {exc}"[:300]
    key = os.environ.get(str(settings.get("api_key_env", "")))
    return reason.replace(key, "***") if key else reason


def _with_details(question: Question, **details: Any) -> Question:
    return replace(question, details={**question.details, **details})
