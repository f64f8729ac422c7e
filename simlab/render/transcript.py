"""A self-contained HTML transcript of an episode: header, then one section per turn with every event.

Everything a model or a person wrote is data: all text is HTML-escaped, and pictures are inline PNG data URLs,
so the file opens anywhere with no other files and runs no script.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from PIL import Image

from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.render.blocks_images import board_image, wall_image
from simlab.render.images import data_url

RGB = tuple[int, int, int]
SPEAKER_PALETTE: tuple[RGB, ...] = (
    (110, 64, 190),
    (0, 128, 128),
    (196, 60, 130),
    (40, 90, 170),
    (150, 100, 20),
    (70, 120, 40),
    (120, 120, 120),
)
"""Speaker colours, given out in the order of the episode's role names."""
OK_RGB: RGB = (20, 130, 60)
FAILED_RGB: RGB = (200, 30, 30)

_STYLE = """
body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222;line-height:1.4}
h1{font-size:22px;margin-bottom:4px} h2{font-size:17px;border-bottom:1px solid #ddd;padding-bottom:3px}
table.meta td{padding:1px 12px 1px 0;vertical-align:top} table.meta td:first-child{color:#666}
.figs img{max-width:100%;border:1px solid #e4e4e4;margin:4px 8px 4px 0;vertical-align:top}
.msg{border-left:4px solid;padding:3px 10px;margin:6px 0;background:#fafafa;white-space:pre-wrap}
.who{font-weight:600} details{margin:4px 0;color:#555} details.reasoning{color:#888;font-style:italic}
pre{white-space:pre-wrap;background:#f6f6f6;padding:6px;font-size:12px}
.action code{background:#eef;padding:1px 5px;border-radius:3px}
table.scores{font-size:12px;border-collapse:collapse;margin:4px 0}
table.scores td{border:1px solid #e4e4e4;padding:1px 6px}
"""
_STYLE += f".ok{{color:rgb{OK_RGB};font-weight:600}} .failed{{color:rgb{FAILED_RGB};font-weight:600}}\n"


def esc(value: Any) -> str:
    """HTML-escaped text of ``value`` (quotes included)."""
    return html.escape(str(value), quote=True)


def role_colors(episode: Episode) -> dict[str, RGB]:
    """A fixed colour per role: the episode's agents in order, then other roles as they first speak."""
    roles = list(episode.agents)
    roles += [e.role for e in episode.events if e.role and e.role not in roles and e.role != "engine"]
    roles = list(dict.fromkeys(roles))
    return {role: SPEAKER_PALETTE[k % len(SPEAKER_PALETTE)] for k, role in enumerate(roles)}


def _img(image: Image.Image, alt: str) -> str:
    return f'<img src="{data_url(image)}" alt="{esc(alt)}" title="{esc(alt)}">'


# ---- header --------------------------------------------------------------------------------------------


def _header(episode: Episode) -> str:
    s, task = episode.summary, episode.task
    task_text = " ".join(f"{k} {task[k]}" for k in ("id", "tier", "blocks") if k in task)
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
    cells = "".join(f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in rows)
    return f"<h1>Episode {esc(episode.episode_id)}</h1>\n<table class=meta>{cells}</table>"


def _walls(episode: Episode) -> str:
    from simlab.render.blocks_scene import director_walls

    walls = director_walls(episode)
    if not walls:
        return ""
    target = episode.task.get("board")
    figs = "".join(_img(wall_image(v, 64, target_json=target), f"{d}'s wall") for d, v in walls.items())
    return f"<h2>The directors' walls (the target as each director sees it)</h2><div class=figs>{figs}</div>"


# ---- events --------------------------------------------------------------------------------------------


def _who(role: str | None, colors: Mapping[str, RGB]) -> str:
    color = colors.get(role or "", (90, 90, 90))
    return f'<span class=who style="color:rgb{color}">{esc(role or "engine")}</span>'


def _scores(metrics: Mapping[str, Any]) -> str:
    names = "".join(f"<td>{esc(k)}</td>" for k in metrics)
    values = "".join(
        f"<td>{v:.3f}</td>" if isinstance(v, (int, float)) else f"<td>{esc(v)}</td>" for v in metrics.values()
    )
    return f"<table class=scores><tr>{names}</tr><tr>{values}</tr></table>"


def _result(e: Event) -> str:
    if e.data.get("ok"):
        return f"<div class=result><span class=ok>ok</span> {esc(e.data.get('message', ''))}</div>"
    code = e.data.get("error")
    code_text = f" [{esc(code)}]" if code else ""
    return f"<div class=result><span class=failed>FAILED{code_text}</span> {esc(e.data.get('message', ''))}</div>"


def event_html(e: Event, colors: Mapping[str, RGB]) -> str:
    """One event as HTML ('' for state events, which the pictures show)."""
    text = esc(e.data.get("text", ""))
    if e.kind == "observation":
        names = ", ".join(str(n) for n in e.data.get("images") or [])
        extra = f" (images: {esc(names)})" if names else ""
        return f"<details><summary>observation for {_who(e.role, colors)}{extra}</summary><pre>{text}</pre></details>"
    if e.kind == "reasoning":
        return f"<details class=reasoning><summary>{_who(e.role, colors)} thinks (private)</summary>{text}</details>"
    if e.kind == "message":
        color = colors.get(e.role or "", (90, 90, 90))
        return f'<div class=msg style="border-left-color:rgb{color}">{_who(e.role, colors)}: {text}</div>'
    if e.kind == "action":
        return f"<div class=action>{_who(e.role, colors)} <code>{text}</code></div>"
    if e.kind == "result":
        return _result(e)
    if e.kind == "score":
        return _scores(e.data.get("metrics") or {})
    if e.kind == "protocol_error":
        code, message = esc(e.data.get("code", "")), esc(e.data.get("message", ""))
        return f"<div>{_who(e.role, colors)} <span class=failed>PROTOCOL ERROR [{code}]</span> {message}</div>"
    return ""


def _turn_figures(episode: Episode, turn: int) -> str:
    from simlab.render.blocks_scene import CAMERAS, blocks_scene, board_json_at
    from simlab.render.scene import render_items

    scene = render_items(blocks_scene(episode, turn), CAMERAS["free"], (640, 480))
    board = board_image(board_json_at(episode, turn), 72, target_json=episode.task.get("board"))
    return (
        f"<div class=figs>{_img(scene, f'3D scene after turn {turn}')}{_img(board, f'board after turn {turn}')}</div>"
    )


def _turn(episode: Episode, turn: int, colors: Mapping[str, RGB], images: bool) -> str:
    title = "Set-up" if turn == 0 else f"Turn {turn}"
    body = [_turn_figures(episode, turn)] if images and episode.world == "blocks" else []
    body += [event_html(e, colors) for e in episode.events_of_turn(turn)]
    return f'<section id="turn-{turn}">\n<h2>{title}</h2>\n' + "\n".join(b for b in body if b) + "\n</section>"


def episode_html(episode: Episode, images: bool = True) -> str:
    """The whole episode as one self-contained HTML page: a header (id, world, task, agents, outcome, score,
    turns), the directors' walls once (blocks, with ``images``), then a ``turn-N`` section per turn 0..last
    holding the 3D scene and board pictures (with ``images``) and every event in order."""
    colors = role_colors(episode)
    parts = [_header(episode)]
    if images and episode.world == "blocks":
        parts.append(_walls(episode))
    parts += [_turn(episode, t, colors, images) for t in range(episode.last_turn + 1)]
    body = "\n".join(p for p in parts if p)
    title = esc(f"SimLab - {episode.episode_id}")
    return (
        f"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>{title}</title>"
        f"<style>{_STYLE}</style></head>\n<body>\n{body}\n</body></html>\n"
    )
