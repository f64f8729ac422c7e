"""The one event formatter and the one palette: how every view names, colours and words what happened.

The app's dialogue and agent panels, the HTML transcript and the turn sheet all read events through
:func:`event_line` (what to show and in which tone) and colour speakers with :func:`episode_colours` (the
family's own palette, :attr:`~simlab.core.family.WorldFamily.palette`), so a role has the same colour and an
engine result the same words everywhere. :func:`event_html` is the HTML form, with inline styles only, so the
same markup renders in a browser and in Qt's rich-text widgets. All text is escaped: model output is data.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from simlab.core.episode import Episode
from simlab.core.errors import ConfigError
from simlab.core.events import Event
from simlab.core.family import RGB, WorldFamily, hex_colour, role_colours

OK_RGB: RGB = (46, 125, 50)
FAILED_RGB: RGB = (198, 40, 40)
MUTED_RGB: RGB = (122, 127, 135)
CHECK_RGB: RGB = (176, 96, 0)
TEXT_RGB: RGB = (32, 36, 42)
LINK_SCHEME = "ev"
TONE_RGB: dict[str, RGB] = {
    "ok": OK_RGB,
    "failed": FAILED_RGB,
    "error": FAILED_RGB,
    "private": MUTED_RGB,
    "check": CHECK_RGB,
}
"""The colour of a line's tone (``plain`` lines take the speaker's colour or the text colour)."""


@dataclass(frozen=True)
class EventLine:
    """An event as every view shows it: who, the words, a tone (``plain``, ``private``, ``ok``, ``failed``,
    ``error``, ``check``), a short ``label`` naming what it is (``FAILED [cell_occupied]``) and a ``note`` (a tag)."""

    kind: str
    who: str
    text: str
    tone: str = "plain"
    label: str = ""
    note: str = ""

    def plain(self) -> str:
        """One line of plain text: ``label: text [note]``."""
        head = f"{self.label}: " if self.label else ""
        return f"{head}{self.text}" + (f" [{self.note}]" if self.note else "")


def action_text(data: Mapping[str, Any]) -> str:
    """An action event's words: its ``text``, else its action object as compact JSON."""
    text = data.get("text")
    if isinstance(text, str) and text:
        return text
    return json.dumps(data.get("action"), ensure_ascii=False, sort_keys=True)


def event_line(event: Event, as_told: bool = False) -> EventLine | None:
    """How ``event`` is shown, or None for events no transcript lists (observations, states, scores).

    ``as_told`` words a result only as the engine tells the roles, for a window a person plays in: whether the
    engine took the reply and its words, never the ``mistake`` or the ``taxonomy`` tag, which the engine
    judges against what the roles cannot see (the target, the right answer)."""
    data, who = event.data, event.role or "engine"
    if event.kind == "message":
        return EventLine("message", who, str(data.get("text", "")))
    if event.kind == "reasoning":
        return EventLine("reasoning", who, str(data.get("text", "")), "private", "thinks (private)")
    if event.kind == "action":
        return EventLine("action", who, action_text(data))
    if event.kind == "result":
        message = str(data.get("message", ""))
        note = "" if as_told else str(data.get("taxonomy") or "")
        mistake = "" if as_told else str(data.get("mistake") or "")
        if data.get("ok", True) and mistake:  # accepted, but against the task: never shown as ok
            # the label names the mistake already; a tag saying the same again is dropped
            return EventLine("result", who, message, "failed", f"MISTAKE [{mistake}]", "" if note == mistake else note)
        if data.get("ok", True):
            return EventLine("result", who, message, "ok", "ok", note)
        code = data.get("error")
        label = f"FAILED [{code}]" if code else "FAILED"
        return EventLine("result", who, message, "failed", label, note)
    if event.kind == "protocol_error":
        label = f"PROTOCOL ERROR [{data.get('code', '')}]"
        return EventLine("protocol_error", who, str(data.get("message", "")), "error", label)
    if event.kind == "check" and not as_told:  # a finding about the recording, never part of the game
        detail = data.get("detail")
        note = str(detail.get("kind") or "") if isinstance(detail, Mapping) else ""
        return EventLine(
            "check", "check", str(data.get("message", "")), "check", f"CHECK [{data.get('code', '')}]", note
        )
    return None


def family_of(episode: Episode) -> WorldFamily | None:
    """The episode's family, or None for a world this SimLab does not know."""
    from simlab.worlds import get_family

    try:
        return get_family(episode.world)
    except ConfigError:  # a recording of a world this SimLab does not know still shows, uncoloured
        return None


def headline_metrics(episode: Episode) -> tuple[str, ...]:
    """The headline metrics of the episode's family (none for a world this SimLab does not know)."""
    family = family_of(episode)
    return tuple(family.headline_metrics) if family is not None else ()


def episode_roles(episode: Episode) -> list[str]:
    """The roles of ``episode`` in the family's own order (D1, D2, D3, builder), then any others sorted: the
    agents it recorded, else the roles that were observed."""
    family = family_of(episode)
    observed = [e.role for e in episode.events if e.kind == "observation" and e.role]
    roles = set(episode.agents) or set(observed)
    order = list(family.roles) if family is not None else []
    return sorted(roles, key=lambda r: (order.index(r) if r in order else len(order), r))


def episode_colours(episode: Episode) -> dict[str, RGB]:
    """A colour for every role of ``episode`` (and the engine) from its family's palette; roles the palette
    does not name, and every role of a world this SimLab does not know, get the shared extras."""
    family = family_of(episode)
    roles = [*episode.agents, *(e.role for e in episode.events if e.role)]
    return role_colours(family.palette if family is not None else {}, [*dict.fromkeys(roles), "engine"])


def esc(value: Any) -> str:
    """HTML-escaped text of ``value`` (quotes included)."""
    return html.escape(str(value), quote=True)


def speaker_html(who: str, colours: Mapping[str, RGB]) -> str:
    """A speaker's name in its colour, bold."""
    return f'<span style="color:{hex_colour(colours.get(who, TEXT_RGB))}; font-weight:600">{esc(who)}</span>'


def event_html(
    event: Event,
    colours: Mapping[str, RGB],
    show_reasoning: bool = True,
    link: int | None = None,
    as_told: bool = False,
) -> str:
    """One event as a styled paragraph ('' when it is not shown). ``link`` (the event's index) makes a
    message a link ``ev:INDEX`` named ``ev-INDEX``, which the app's dialogue follows to seek on a click;
    ``as_told`` words results as the engine tells the roles (see :func:`event_line`)."""
    line = event_line(event, as_told)
    if line is None or (line.kind == "reasoning" and not show_reasoning):
        return ""
    who, text = speaker_html(line.who, colours), esc(line.text)
    if line.kind == "message":
        body = f'{who}<span style="color:{hex_colour(TEXT_RGB)}">&nbsp; {text}</span>'
        if link is not None:
            body = f'<a href="{LINK_SCHEME}:{link}" name="{LINK_SCHEME}-{link}" style="text-decoration:none">{body}</a>'
        return f'<p style="margin:3px 0 3px 10px">{body}</p>'
    if line.kind == "reasoning":
        muted = hex_colour(MUTED_RGB)
        return f'<p style="margin:1px 0 1px 10px; color:{muted}"><i>{esc(line.who)} (private): {text}</i></p>'
    if line.kind == "action":
        code = f'<code style="font-family:monospace; background-color:#f1f3f5">{text}</code>'
        return f'<p style="margin:3px 0 1px 10px">{who}&nbsp; {code}</p>'
    colour = hex_colour(TONE_RGB[line.tone])
    head = f'<span style="color:{colour}; font-weight:600">{esc(line.label)}</span>'
    note = f' <span style="color:{hex_colour(MUTED_RGB)}">[{esc(line.note)}]</span>' if line.note else ""
    if line.kind == "result":
        return f'<p style="margin:1px 0 3px 26px">&rarr; {head} {text}{note}</p>'
    if line.kind == "check":  # not said by a role: no speaker, set apart in the checker's colour
        return f'<p style="margin:1px 0 3px 26px">&#9888; {head} {text}{note}</p>'
    return f'<p style="margin:1px 0 1px 10px">{who} {head} {text}</p>'
