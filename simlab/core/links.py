"""Links to a turn of an episode of a run: a command line (``python main.py gui RUN --episode E --turn N``) and
a URL, ``simlab://open?run=PATH&episode=E&turn=N``, which ``gui`` takes as its argument (an operating system
can hand it to SimLab when such a link is clicked).

A URL comes from outside (a chat, a web page), so it is read strictly: scheme ``simlab``, action ``open``,
no user, port, path, fragment or other keys; each key once; ``run`` an absolute path, ``episode`` a plain
episode id, ``turn`` a whole number from 0 to :data:`~simlab.core.events.MAX_TURN`. It only ever names what
to open: the run is then read as any run is.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from simlab.core.errors import ConfigError
from simlab.core.events import MAX_TURN
from simlab.core.recording import SAFE_ID

SCHEME = "simlab"
ACTION = "open"
KEYS = ("run", "episode", "turn")
MAX_URL_CHARS = 8_192
"""The longest URL read (a path is at most 4,096 bytes on Linux; percent-escapes triple some)."""
_TURN = re.compile(r"^[0-9]{1,6}$")


@dataclass(frozen=True)
class TurnLink:
    """What a link opens: a run, and optionally one of its episodes at a turn."""

    run: Path
    episode: str | None = None
    turn: int | None = None


def turn_command(run_dir: Path, episode_id: str, turn: int) -> str:
    """The command line that opens ``episode_id`` of ``run_dir`` at ``turn`` in the app, quoted for a shell."""
    words = ["python", "main.py", "gui", str(run_dir), "--episode", episode_id, "--turn", str(turn)]
    return " ".join(shlex.quote(w) for w in words)


def turn_url(run_dir: Path, episode_id: str | None = None, turn: int | None = None) -> str:
    """The ``simlab://open`` URL of ``run_dir`` (made absolute), with its episode and turn when given."""
    values = [("run", os.path.abspath(run_dir))]
    if episode_id is not None:
        values.append(("episode", episode_id))
    if turn is not None:
        values.append(("turn", str(turn)))
    return f"{SCHEME}://{ACTION}?{urlencode(values, quote_via=quote)}"


def is_turn_url(text: str) -> bool:
    """Whether ``text`` is meant as a SimLab URL (it may still be refused by :func:`parse_turn_url`)."""
    return text[: len(SCHEME) + 1].lower() == f"{SCHEME}:"


def parse_turn_url(url: str) -> TurnLink:
    """The :class:`TurnLink` of a ``simlab://open?...`` URL; ConfigError naming what is wrong otherwise."""
    if len(url) > MAX_URL_CHARS:
        raise ConfigError(f"a {SCHEME}:// URL holds at most {MAX_URL_CHARS:,} characters, got {len(url):,}")
    said = f"{url[:120]!r}"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"{said}: not a URL ({exc})") from None
    if parts.scheme != SCHEME or parts.netloc != ACTION or parts.path not in ("", "/") or parts.fragment:
        raise ConfigError(f"{said}: expected {SCHEME}://{ACTION}?run=PATH&episode=ID&turn=N")
    if parts.username or parts.password or port is not None:
        raise ConfigError(f"{said}: expected no user, password or port")
    try:
        pairs = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=True, max_num_fields=len(KEYS))
    except ValueError as exc:
        raise ConfigError(f"{said}: expected run=PATH&episode=ID&turn=N ({exc})") from None
    values = _unique_keys(pairs, said)
    return TurnLink(_run(values, said), _episode(values.get("episode"), said), _turn(values.get("turn"), said))


def _unique_keys(pairs: list[tuple[str, str]], said: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for key, value in pairs:
        if key not in KEYS:
            raise ConfigError(f"{said}: unknown key {key[:40]!r}; a link takes only {', '.join(KEYS)}")
        if key in values:
            raise ConfigError(f"{said}: the key {key!r} is given twice")
        values[key] = value
    return values


def _run(values: dict[str, str], said: str) -> Path:
    run = values.get("run", "")
    if not run or "\x00" in run or not os.path.isabs(run):
        raise ConfigError(f"{said}: expected run=PATH, the absolute path of a run folder")
    return Path(run)


def _episode(value: str | None, said: str) -> str | None:
    if value is not None and not SAFE_ID.match(value):
        raise ConfigError(f"{said}: episode {value[:80]!r} is not an episode id")
    return value


def _turn(value: str | None, said: str) -> int | None:
    if value is None:
        return None
    if not _TURN.match(value) or int(value) > MAX_TURN:
        raise ConfigError(f"{said}: turn {value[:20]!r}: expected a whole number from 0 to {MAX_TURN:,}")
    return int(value)
