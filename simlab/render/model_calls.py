"""An episode's model calls (its raw stream) as chats: what each model was sent and what it answered.

:func:`model_calls` reads the raw records the model agent writes (``simlab/agents/openai_agent.py``
``_record``, with ``turn`` and ``role`` added by the episode driver) into :class:`ModelCall`\\ s: the request's
messages (system, user with its pictures by reference, the assistant's earlier answer and the correction of a
re-ask), the reply, and what the call cost (tokens, latency and time to first byte, failed attempts and why,
cost, errors, parse errors, notes, history left out). Records of any other shape are read as far as they go,
never trusted: a plugin's agent may write anything.

:func:`calls_html` draws calls as chat bubbles with inline styles only (the app's Raw tab and agent panels,
and any export, use the same markup), every text HTML-escaped: model output is data, never markup.
:func:`call_pictures` re-renders the pictures a call named from the recording, through the family's
``observation_images``, and says whether each is byte for byte the one sent (its PNG's sha256). No Qt here.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PIL import Image

from simlab.analysis.report import usage_line
from simlab.core.episode import Episode
from simlab.core.family import RGB, hex_colour
from simlab.core.usage import model_usage
from simlab.render.episode_pictures import views_of
from simlab.render.formatting import FAILED_RGB, MUTED_RGB, TEXT_RGB, esc
from simlab.render.images import to_png_bytes

ERROR = hex_colour(FAILED_RGB)
MUTED = hex_colour(MUTED_RGB)
TEXT = hex_colour(TEXT_RGB)
BUBBLES: dict[str, tuple[str, str]] = {  # chat role -> (background, text colour)
    "system": ("#f1f2f4", MUTED),
    "user": ("#eaf2fb", TEXT),
    "assistant": ("#e9f5ea", TEXT),
}
OTHER_BUBBLE = ("#f6f1e7", TEXT)  # a role no chat API defines (a plugin's own records)
SEPARATOR = " \u00b7 "
SYSTEM_LINES = 2
"""Lines of a system prompt shown while system prompts are collapsed (the rest is one tick away)."""


@dataclass(frozen=True)
class ImageRef:
    """A picture a request carried, as the recording keeps it: its name, the sha256 and size of its PNG."""

    name: str
    sha256: str = ""
    size: int | None = None  # bytes of the PNG sent

    def label(self) -> str:
        """``wall, 12.7 kB PNG`` (the size when recorded)."""
        return self.name + (f", {self.size / 1000:.1f} kB PNG" if self.size is not None else "")


@dataclass(frozen=True)
class ChatMessage:
    """One message of a chat: who (``system``, ``user``, ``assistant``), its text and its pictures."""

    role: str
    text: str
    images: tuple[ImageRef, ...] = ()


@dataclass(frozen=True)
class ModelCall:
    """One recorded model call: where it happened, what was sent, what came back and what it took."""

    index: int  # position in the episode's raw stream
    turn: int | None
    role: str
    call: int | None  # 1, or 2 for the re-ask of an unreadable reply
    model: str
    messages: tuple[ChatMessage, ...]
    reply: str | None  # None when no answer came (the endpoint failed)
    reasoning: str | None  # the private reasoning a server split out of the reply (reasoning_content)
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None  # the answered attempt, request to last byte
    ttfb_s: float | None  # the answered attempt, request to first byte
    total_s: float | None  # the whole call, failed attempts and waits included
    attempts: tuple[str, ...]  # each failed attempt in words
    cost: float | None
    error: str | None
    parse_error: str | None
    notes: tuple[str, ...]
    history_left_out: int

    def facts(self) -> list[str]:
        """The call's numbers in words: tokens, times, retries, cost, how it finished."""
        out = [f"{_count(self.prompt_tokens)} prompt + {_count(self.completion_tokens)} completion tokens"]
        if self.latency_s is not None:
            first = f", first byte {self.ttfb_s:.2f} s" if self.ttfb_s is not None else ""
            out.append(f"latency {self.latency_s:.2f} s{first}")
        if self.total_s is not None and (self.attempts or self.latency_s is None):
            out.append(f"{self.total_s:.2f} s in all")
        retries = max(
            0, len(self.attempts) - (self.reply is None)
        )  # the last failed attempt of a failed call is no retry
        out.append(f"{retries} retr{'y' if retries == 1 else 'ies'}" if retries else "no retries")
        if self.cost is not None:
            out.append(f"cost ${self.cost:.6f}")
        if self.finish_reason:
            out.append(f"finish {self.finish_reason}")
        return out

    def faults(self) -> list[str]:
        """What went wrong, in words: failed attempts and why, the server's error, an unreadable reply."""
        out = [f"attempt {k} failed: {why}" for k, why in enumerate(self.attempts, 1)]
        if self.error:
            out.append(f"error: {self.error}")
        if self.parse_error:
            out.append(f"could not be read: {self.parse_error}")
        return out

    def remarks(self) -> list[str]:
        """Neutral notes: the history the agent left out to fit the context, and the agent's own notes."""
        out = list(self.notes)
        if self.history_left_out:
            n = self.history_left_out
            out.insert(0, f"the {n} oldest history entr{'y was' if n == 1 else 'ies were'} left out to fit the context")
        return out


def model_calls(raw: Iterable[Mapping[str, Any]], turn: int | None = None, role: str | None = None) -> list[ModelCall]:
    """The calls of ``raw`` (an episode's raw stream), of one ``turn`` and/or ``role`` when given."""
    calls = [read_call(k, record) for k, record in enumerate(raw) if isinstance(record, Mapping)]
    return [c for c in calls if (turn is None or c.turn == turn) and (role is None or c.role == role)]


def read_call(index: int, record: Mapping[str, Any]) -> ModelCall:
    """One raw record as a :class:`ModelCall`; fields of another shape than the model agent's are left out."""
    request = _mapping(record.get("request"))
    response = _mapping(record.get("response"))
    usage = _mapping(record.get("usage"))
    answered = record.get("response") is not None
    reply = response.get("content")
    return ModelCall(
        index=index,
        turn=_int(record.get("turn")),
        role=str(record.get("role") or "?"),
        call=_int(record.get("call")),
        model=str(request.get("model") or ""),
        messages=tuple(_message(m) for m in _list(request.get("messages")) if isinstance(m, Mapping)),
        reply=(reply if isinstance(reply, str) else "") if answered else None,
        reasoning=_text(response.get("reasoning")),
        finish_reason=_text(response.get("finish_reason")),
        prompt_tokens=_int(usage.get("prompt_tokens")),
        completion_tokens=_int(usage.get("completion_tokens")),
        latency_s=_float(record.get("latency_s")) if answered else None,
        ttfb_s=_float(record.get("ttfb_s")) if answered else None,
        total_s=_float(record.get("total_s")),
        attempts=tuple(_attempt(a) for a in _list(record.get("attempts")) if isinstance(a, Mapping)),
        cost=_float(record.get("cost")),
        error=_text(record.get("error")),
        parse_error=_text(record.get("parse_error")),
        notes=tuple(str(n) for n in _list(record.get("notes"))),
        history_left_out=_int(record.get("history_left_out")) or 0,
    )


def total_line(raw: Sequence[Mapping[str, Any]]) -> str:
    """The totals of ``raw``'s calls in one line (calls, requests, time, tokens, cost): the report's words."""
    if not raw:
        return "no model calls"
    return usage_line(model_usage([dict(r) for r in raw if isinstance(r, Mapping)]))


# ---- pictures ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Picture:
    """A picture of a call re-rendered from the recording; ``same`` when its PNG is byte for byte the one sent."""

    image: Image.Image
    same: bool


def call_pictures(episode: Episode, call: ModelCall) -> dict[str, Picture]:
    """The pictures ``call`` named, re-rendered by the family from the role's observation at the call's turn
    (only those the family can draw; none for a world this SimLab does not know)."""
    wanted = {ref.name: ref for m in call.messages for ref in m.images}
    views = views_of(episode) if wanted else None
    observation = _observation(episode, call.role, call.turn) if views is not None else None
    if views is None or observation is None or call.turn is None:
        return {}
    drawn = views.observation_images(observation, episode, call.turn)
    return {
        name: Picture(drawn[name], hashlib.sha256(to_png_bytes(drawn[name])).hexdigest() == ref.sha256)
        for name, ref in wanted.items()
        if name in drawn
    }


def _observation(episode: Episode, role: str, turn: int | None) -> dict[str, Any] | None:
    """The data of ``role``'s last observation at ``turn`` (what the request was made from)."""
    found = [e for e in episode.events if e.kind == "observation" and e.role == role and e.turn == turn]
    return dict(found[-1].data) if found else None


# ---- HTML -------------------------------------------------------------------------------------------------------

ImageSource = Callable[[ModelCall, ImageRef], "tuple[str, bool] | None"]
"""Where a call's picture can be shown from: ``(img src, byte for byte the one sent)``, or None (a placeholder)."""


def calls_html(
    calls: Sequence[ModelCall],
    colours: Mapping[str, RGB] | None = None,
    image_src: ImageSource | None = None,
    full_system: bool = False,
    thumbnail: int = 160,
) -> str:
    """``calls`` as chats: a header per call (turn, role, call, model, its numbers, faults in red), then its
    messages as bubbles and the reply. Pictures are thumbnails ``thumbnail`` pixels wide when ``image_src``
    gives one, else a labelled placeholder; system prompts show their first lines unless ``full_system``."""
    parts = [_call_html(c, colours or {}, image_src, full_system, thumbnail) for c in calls]
    return "\n".join(parts)


def _call_html(
    call: ModelCall, colours: Mapping[str, RGB], image_src: ImageSource | None, full_system: bool, thumbnail: int
) -> str:
    colour = hex_colour(colours.get(call.role, TEXT_RGB))
    where = f"Turn {call.turn}" if call.turn is not None else "Turn ?"
    number = esc(call.call if call.call is not None else "?")
    title = f'{where}{SEPARATOR}<span style="color:{colour}">{esc(call.role)}</span>{SEPARATOR}call {number}'
    model = f'{SEPARATOR}<span style="font-weight:400">{esc(call.model)}</span>' if call.model else ""
    lines = [f'<h4 style="margin:14px 0 2px 0" id="call-{call.index}">{title}{model}</h4>']
    lines.append(f'<p style="margin:0; color:{MUTED}">{esc(SEPARATOR.join(call.facts()))}</p>')
    lines += [f'<p style="margin:0; color:{ERROR}">{esc(fault)}</p>' for fault in call.faults()]
    lines += [f'<p style="margin:0; color:{MUTED}; font-style:italic">{esc(note)}</p>' for note in call.remarks()]
    for message in call.messages:
        lines.append(_bubble(call, message, image_src, full_system, thumbnail))
    if call.reasoning:
        thought = ChatMessage("assistant", call.reasoning)
        lines.append(_bubble(call, thought, None, True, thumbnail, "private reasoning, split out by the server"))
    if call.reply is not None:
        lines.append(_bubble(call, ChatMessage("assistant", call.reply), None, True, thumbnail, "reply"))
    else:
        lines.append(f'<p style="margin:2px 0; color:{ERROR}">no reply: the endpoint did not answer</p>')
    return "\n".join(lines)


def _bubble(
    call: ModelCall,
    message: ChatMessage,
    image_src: ImageSource | None,
    full_system: bool,
    thumbnail: int,
    label: str = "",
) -> str:
    background, colour = BUBBLES.get(message.role, OTHER_BUBBLE)
    text = message.text
    if message.role == "system" and not full_system:
        text = _first_lines(text)
    pictures = "".join(_picture(call, ref, image_src, thumbnail) for ref in message.images)
    name = esc(message.role + (f" ({label})" if label else ""))
    body = f'<span style="white-space:pre-wrap">{esc(text)}</span>' if text else ""
    return (
        f'<table width="100%" cellpadding="6" cellspacing="0" style="margin:3px 0"><tr>'
        f'<td style="background-color:{background}; color:{colour}">'
        f'<span style="font-size:small; font-weight:600; color:{MUTED}">{name}</span><br>{body}{pictures}'
        f"</td></tr></table>"
    )


def _first_lines(text: str) -> str:
    lines = text.splitlines()
    if len(lines) <= SYSTEM_LINES:
        return text
    more = len(lines) - SYSTEM_LINES
    return "\n".join(lines[:SYSTEM_LINES]) + f"\n[... {more} more line{'s' if more != 1 else ''}]"


def _picture(call: ModelCall, ref: ImageRef, image_src: ImageSource | None, thumbnail: int) -> str:
    found = image_src(call, ref) if image_src is not None else None
    if found is None:
        return f'<br><span style="color:{MUTED}">[picture sent: {esc(ref.label())}]</span>'
    src, same = found
    truth = "the picture sent" if same else "re-rendered from the recording; not byte for byte the one sent"
    return (
        f'<br><img src="{esc(src)}" width="{thumbnail}" alt="{esc(ref.name)}">'
        f'<br><span style="font-size:small; color:{MUTED}">{esc(ref.label())}: {truth}</span>'
    )


# ---- reading untrusted records ----------------------------------------------------------------------------------


def _message(message: Mapping[str, Any]) -> ChatMessage:
    """A chat message of the request; content parts of type ``text`` are joined, ``image`` parts are pictures."""
    content = message.get("content")
    role = str(message.get("role") or "?")
    if isinstance(content, str):
        return ChatMessage(role, content)
    texts, images = [], []
    for part in _list(content):
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "text":
            texts.append(str(part.get("text", "")))
        elif part.get("type") in ("image", "image_url"):
            images.append(
                ImageRef(str(part.get("name") or "picture"), str(part.get("sha256") or ""), _int(part.get("bytes")))
            )
    return ChatMessage(role, "\n".join(texts), tuple(images))


def _attempt(attempt: Mapping[str, Any]) -> str:
    """A failed attempt in words: ``HTTP 429 RateLimitError: Rate limit reached (waited 1.00 s)``."""
    status = _int(attempt.get("status"))
    words = (f"HTTP {status} " if status is not None else "") + str(attempt.get("error") or "failed")
    if attempt.get("detail"):
        words += f": {attempt['detail']}"
    waited = _float(attempt.get("waited_s"))
    return words + (f" (waited {waited:.2f} s)" if waited else "")


def _count(value: int | None) -> str:
    return f"{value:,}" if value is not None else "?"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    return str(value) if value is not None and value != "" else None


def _float(value: Any) -> float | None:
    """A finite number of the record, else None (a plugin may record anything)."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if number and math.isfinite(value) else None


def _int(value: Any) -> int | None:
    number = _float(value)
    return int(number) if number is not None else None
