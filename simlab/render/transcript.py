"""A self-contained HTML transcript of an episode: header, then one section per turn with every event.

The pictures are whatever the episode's family declares (its pictures shown once, then per turn the 3D scene
and the turn's pictures); the events are worded by :mod:`simlab.render.formatting`, the same formatter the
app's dialogue uses. Everything a model or a person wrote is data: all text is HTML-escaped, and pictures are
inline PNG data URLs, so the file opens anywhere with no other files and runs no script.
"""

from __future__ import annotations

import base64
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from PIL import Image

from simlab.analysis.report import ROLES_CAPTION, role_stats, roles_rows, usage_line
from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.core.family import RGB
from simlab.core.notes import Mark
from simlab.render.episode_pictures import once_pictures, scene_picture, turn_pictures
from simlab.render.formatting import episode_colours, esc, event_html, family_of, speaker_html
from simlab.render.images import to_png_bytes

SCENE_SIZE = (640, 480)
ENCODERS = 2  # threads encoding PNGs while the next scene renders (this machine has two cores)

_STYLE = """
body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222;line-height:1.4}
h1{font-size:22px;margin-bottom:4px} h2{font-size:17px;border-bottom:1px solid #ddd;padding-bottom:3px}
table.meta td{padding:1px 12px 1px 0;vertical-align:top} table.meta td:first-child{color:#666}
.figs{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start}
figure{margin:4px 0;max-width:100%} figure img{max-width:100%;border:1px solid #e4e4e4}
figcaption{font-size:12px;color:#666}
details{margin:4px 0;color:#555}
pre{white-space:pre-wrap;background:#f6f6f6;padding:6px;font-size:12px}
table.scores{font-size:12px;border-collapse:collapse;margin:4px 0}
table.scores td{border:1px solid #e4e4e4;padding:1px 6px}
table.roles{font-size:12px;border-collapse:collapse;margin:4px 0}
table.roles td,table.roles th{border:1px solid #e4e4e4;padding:1px 6px;text-align:right}
table.roles td:first-child{text-align:left}
ul.calls{font-size:12px;color:#555;margin:4px 0;padding-left:18px} li.call .fault{color:#b00020}
aside.mark{background:#fff8d6;border-left:3px solid #e0b000;padding:4px 8px;margin:4px 0;font-size:13px}
aside.mark .tag{background:#f0e2a0;border-radius:3px;padding:0 4px;margin-right:4px}
"""


def _mark(mark: Mark | None) -> str:
    """The researcher's note, tags and bookmark on the episode or a turn (notes.json), marked as theirs."""
    if mark is None:
        return ""
    tags = "".join(f"<span class=tag>{esc(t)}</span>" for t in mark.tags)
    flag = "&#9733; bookmarked " if mark.bookmark else ""
    note = f"<div>{esc(mark.note)}</div>" if mark.note else ""
    return f"<aside class=mark><b>Note</b> {flag}{tags}{note}</aside>"


def _figure(url: str, name: str) -> str:
    img = f'<img src="{url}" alt="{esc(name)}" title="{esc(name)}">'
    return f"<figure>{img}<figcaption>{esc(name)}</figcaption></figure>"


def _figures(urls: Mapping[str, str]) -> str:
    return f"<div class=figs>{''.join(_figure(url, name) for name, url in urls.items())}</div>" if urls else ""


def _png_url(image: Image.Image) -> str:
    """``image`` as a PNG data URL made fast (:func:`to_png_bytes` at zlib level 6): the same pixels, a few
    percent more bytes than the optimized file (nobody checks these bytes against a record, unlike an agent's)."""
    return "data:image/png;base64," + base64.b64encode(to_png_bytes(image, 6)).decode("ascii")


def _turn_drawings(episode: Episode, turn: int) -> dict[str, Image.Image]:
    """The pictures of ``turn``: the 3D scene after it first, when the family has one."""
    pictures = turn_pictures(episode, turn)
    scene = scene_picture(episode, turn, SCENE_SIZE)
    return {f"3D scene after turn {turn}": scene, **pictures} if scene is not None else pictures


_FIGURES: dict[int, tuple[int, dict[int | None, str]]] = {}
"""id of an episode -> (its number of events then, the figures HTML of each turn; None: those shown once).
Exporting an episode again (the app's File > Export) reuses them; an episode that grew (a live one) draws
them again, and an entry goes with its episode."""


def _known_figures(episode: Episode) -> dict[int | None, str]:
    """The figures already made for ``episode`` (this object, with as many events), to be filled in."""
    key = id(episode)
    entry = _FIGURES.get(key)
    if entry is None:
        weakref.finalize(episode, _FIGURES.pop, key, None)  # ids are reused once the object is gone
    if entry is None or entry[0] != len(episode.events):
        entry = _FIGURES[key] = (len(episode.events), {})
    return entry[1]


def _all_figures(episode: Episode) -> dict[int | None, str]:
    """The figures HTML of the pictures shown once (key None) and of every turn, from the cache or drawn now;
    the scenes are rendered here while other threads encode the pictures already drawn (Pillow lets go of
    the GIL while it compresses)."""
    known = _known_figures(episode)
    wanted = [turn for turn in (None, *range(episode.last_turn + 1)) if turn not in known]
    if not wanted:
        return known
    with ThreadPoolExecutor(max_workers=ENCODERS) as pool:
        pending = {}
        for turn in wanted:
            drawn = once_pictures(episode) if turn is None else _turn_drawings(episode, turn)
            pending[turn] = {name: pool.submit(_png_url, image) for name, image in drawn.items()}
        for turn, urls in pending.items():
            known[turn] = _figures({name: url.result() for name, url in urls.items()})
    return known


def _header(episode: Episode) -> str:
    s, task, family = episode.summary, episode.task, family_of(episode)
    group = family.tasks.group_of(task) if family is not None else None
    task_text = str(task.get("id", "")) + (f" ({family.tasks.group_label} {group})" if family and group else "")
    agents = ", ".join(f"{role}: {spec}" for role, spec in episode.agents.items())
    score = s.get("score")
    rows = [
        ("world", episode.world),
        ("task", task_text),
        ("agents", agents),
        ("outcome", s.get("outcome", "-")),
        ("score", f"{score:.3f}" if isinstance(score, (int, float)) else "-"),
        ("turns", s.get("turns", episode.last_turn)),
    ]
    if isinstance(s.get("usage"), Mapping):
        rows.append(("models", usage_line(s["usage"])))
    cells = "".join(f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in rows)
    return f"<h1>Episode {esc(episode.episode_id)}</h1>\n<table class=meta>{cells}</table>"


def _roles(summary: Mapping[str, Any]) -> str:
    """The per-role table of the report (acts, give-ups, calls, re-asks, latency, tokens), when models played."""
    roles = role_stats([summary])
    if not roles:
        return ""
    header, rows = roles_rows(roles)
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table class=roles><caption>{esc(ROLES_CAPTION)}</caption><tr>{head}</tr>{body}</table>"


def _call(record: Mapping[str, Any]) -> str:
    """One model call of the raw stream in a line: time, first byte, tokens, how it finished, and its faults
    (failed attempts, a server error, a reply that could not be read, history left out to fit)."""
    response = record.get("response") or {}
    usage = record.get("usage") or {}
    said = [
        f"{float(record.get('total_s', record.get('latency_s')) or 0):.2f} s",
        f"first byte {float(record.get('ttfb_s') or 0):.2f} s",
        f"{usage.get('prompt_tokens', '?')} + {usage.get('completion_tokens', '?')} tokens",
        f"finish {response.get('finish_reason') or '-'}",
    ]
    faults = []
    attempts = record.get("attempts") or []
    if attempts:
        errors = ", ".join(sorted({str(a.get("status") or a.get("error")) for a in attempts if isinstance(a, Mapping)}))
        faults.append(f"{len(attempts)} failed attempt{'s' if len(attempts) != 1 else ''} ({errors})")
    if record.get("error"):
        faults.append(f"server error: {record['error']}")
    if record.get("parse_error"):
        faults.append(f"could not be read: {record['parse_error']}")
    if record.get("history_left_out"):
        faults.append(f"{record['history_left_out']} oldest history entries left out to fit the context")
    fault = f"; <span class=fault>{esc('; '.join(faults))}</span>" if faults else ""
    who = esc(f"{record.get('role', '?')} call {record.get('call', '?')}")
    return f"<li class=call><b>{who}</b>: {esc(', '.join(said))}{fault}</li>"


def _calls(episode: Episode, turn: int) -> str:
    calls = [_call(r) for r in episode.raw if r.get("turn") == turn]
    return f"<ul class=calls>{''.join(calls)}</ul>" if calls else ""


def _scores(metrics: Mapping[str, Any]) -> str:
    names = "".join(f"<td>{esc(k)}</td>" for k in metrics)
    values = "".join(
        f"<td>{v:.3f}</td>" if isinstance(v, (int, float)) else f"<td>{esc(v)}</td>" for v in metrics.values()
    )
    return f"<table class=scores><tr>{names}</tr><tr>{values}</tr></table>"


def _event(e: Event, colours: Mapping[str, RGB]) -> str:
    """An event: what the formatter shows, plus the prompt an observation gave and a score's table."""
    if e.kind == "observation":
        names = ", ".join(str(n) for n in e.data.get("images") or [])
        extra = f" (images: {esc(names)})" if names else ""
        who = speaker_html(e.role or "engine", colours)
        prompt = esc(e.data.get("text", ""))
        return f"<details><summary>observation for {who}{extra}</summary><pre>{prompt}</pre></details>"
    if e.kind == "score":
        return _scores(e.data.get("metrics") or {})
    return event_html(e, colours)


def _turn(episode: Episode, turn: int, colours: Mapping[str, RGB], figures: str, mark: Mark | None) -> str:
    title = "Set-up" if turn == 0 else f"Turn {turn}"
    body = [_mark(mark), figures]
    body += [_event(e, colours) for e in episode.events_of_turn(turn)]
    body.append(_calls(episode, turn))
    return f'<section id="turn-{turn}">\n<h2>{title}</h2>\n' + "\n".join(b for b in body if b) + "\n</section>"


def episode_html(episode: Episode, images: bool = True, marks: Sequence[Mark] = ()) -> str:
    """The whole episode as one self-contained HTML page: a header (id, world, task, agents, outcome, score,
    turns) and, when models played, the per-role table of give-ups, calls, latency and tokens; the family's
    pictures shown once (with ``images``), then a ``turn-N`` section per turn 0..last holding the turn's
    pictures (with ``images``), every event in order and one line per model call. ``marks`` (the run's notes
    on this episode) show beside the header and their turns."""
    colours = episode_colours(episode)
    by_turn = {m.turn: m for m in marks if m.episode_id == episode.episode_id}
    parts = [_header(episode), _mark(by_turn.get(None)), _roles(episode.summary)]
    figures = _all_figures(episode) if images else {}
    if figures.get(None):
        parts.append(f"<h2>The episode's pictures</h2>{figures[None]}")
    turns = range(episode.last_turn + 1)
    parts += [_turn(episode, t, colours, figures.get(t, ""), by_turn.get(t)) for t in turns]
    body = "\n".join(p for p in parts if p)
    title = esc(f"SimLab - {episode.episode_id}")
    return (
        f"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>{title}</title>"
        f"<style>{_STYLE}</style></head>\n<body>\n{body}\n</body></html>\n"
    )
