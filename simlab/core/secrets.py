"""Credentials never reach a file, a log or the screen: how SimLab recognises them, refuses them and scrubs them.

* :func:`secret_places` finds, anywhere in a JSON-like value, the settings whose *name* says credential
  (``api_key``, ``auth``, ``bearer``, ``password``, ``token``...) and the strings that *look* like one (an
  ``sk-...`` key, ``Bearer ...``, a URL with a password or a ``?key=`` in it, a JWT). Run configs and
  command-line settings holding any are refused: keys come from the environment, named by ``api_key_env``.
* :func:`scrub` returns a copy with every such value replaced by :data:`REDACTED`; recordings, imported logs
  and what is printed go through it, so a credential that slipped in (an imported log's ``api_key``, a key
  echoed by an endpoint) is not kept.
* :func:`scrub_text` removes credentials from free text (an endpoint's error message), including the exact
  values of the keys in use.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[redacted]"
SECRET_WORDS = frozenset(
    {
        "secret",
        "password",
        "passwd",
        "token",
        "apikey",
        "key",
        "auth",
        "authorization",
        "bearer",
        "credential",
        "credentials",
        "cookie",
        "private",
    }
)
"""A setting is a credential when one of the words of its name (split at ``_``, ``-``, ``.``, case) is one of
these: ``api_key``, ``x-api-key``, ``auth_header``, ``bearerToken``."""
ALLOWED_NAMES = frozenset({"api_key_env", "paraphrase_key_env", "key_env"})
"""Names that hold the *name* of an environment variable, never its value."""
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
SECRET_VALUE = re.compile(
    r"(?:\bsk-[A-Za-z0-9_\-]{8,}"  # OpenAI-style keys
    r"|\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=\-]{8,}"  # authorization header values
    r"|\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"  # JWTs
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"  # AWS access keys
    r"|\b(?:ghp|gho|ghs|github_pat|xox[abpr]|hf)_[A-Za-z0-9_\-]{10,}"  # GitHub, Slack, Hugging Face tokens
    r"|://[^/\s:@]+:[^/\s@]+@"  # user:password@ in a URL
    r"|[?&](?:api[_-]?key|key|token|access_token|auth|sig|signature|password)=[^&\s]+)",  # credentials in a query
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=4096)  # every recording written asks it of the same few dozen key names
def name_is_secret(name: str) -> bool:
    """Whether a setting called ``name`` would hold a credential."""
    if name in ALLOWED_NAMES:
        return False
    words = re.split(r"[_\-.\s]+|(?<=[a-z])(?=[A-Z])", name)
    return bool(SECRET_WORDS & {w.lower() for w in words if w})


def value_is_secret(value: str) -> bool:
    """Whether a string looks like a credential (a key, a bearer token, a URL carrying a password or key)."""
    return SECRET_VALUE.search(value) is not None


def secret_places(value: Any, where: str = "") -> list[str]:
    """Every place in ``value`` (dicts, lists, strings) that holds or looks like a credential, as a path
    (``agents.builder.extra.api_key``). ``api_key_env`` and friends must hold a variable's name."""
    out: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            if str(key) in ALLOWED_NAMES:
                if not (isinstance(item, str) and ENV_NAME.match(item)):
                    out.append(path)
            elif name_is_secret(str(key)) and item not in (None, "", {}, []):
                out.append(path)
            else:
                out.extend(secret_places(item, path))
    elif isinstance(value, (list, tuple)):
        for k, item in enumerate(value):
            out.extend(secret_places(item, f"{where}[{k}]"))
    elif isinstance(value, str) and value_is_secret(value):
        out.append(where or "<value>")
    return out


MIN_KEY_CHARS = 8
"""The shortest key in use that is redacted wherever it appears: a shorter one (``EMPTY``, ``none``, what local
servers take) is no secret, and redacting it would spoil every message that holds the word."""
_KEYS_IN_USE: set[str] = set()


def remember_key(key: str) -> None:
    """Note a key this process sends: from now on every recording and every scrubbed text redacts its exact
    value wherever it appears (an endpoint that echoes it in a reply, whatever it looks like)."""
    if len(key) >= MIN_KEY_CHARS:
        _KEYS_IN_USE.add(key)


def _keys_in(text: str) -> bool:
    return any(key in text for key in tuple(_KEYS_IN_USE))


def scrub(value: Any) -> Any:
    """A copy of ``value`` with every credential (by name or by look, and the keys in use) replaced by
    :data:`REDACTED`."""
    if isinstance(value, Mapping):
        return {
            key: REDACTED if name_is_secret(str(key)) and item not in (None, "", {}, []) else scrub(item)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):  # JSON writes a tuple as an array: its items are scrubbed too
        return [scrub(item) for item in value]
    if isinstance(value, str) and (value_is_secret(value) or _keys_in(value)):
        return scrub_text(value)
    return value


_STARTS = (
    *("sk-", "bearer", "basic", "eyj", "akia", "asia", "ghp_", "gho_", "ghs_", "github_pat_", "xox", "hf_"),
    *("://", "?", "&"),
)
"""Every match of :data:`SECRET_VALUE` starts with one of these (lower case): the places where
:func:`looks_secret` tries it."""
_FOLDED_ODDLY = ("\u0130", "\u0131", "\u017f")
"""The characters besides the Kelvin sign that match an ASCII letter under IGNORECASE (İ and ı an ``i``, ſ an
``s``) whose ``lower()`` is not that letter: where one is, :func:`looks_secret` searches the whole text."""


def looks_secret(text: str) -> bool:
    """``value_is_secret(text)``, the same answer, found faster in a long text: :data:`SECRET_VALUE` is tried
    only where a match could start (a run.json of 200 tasks holds an endpoint's ``://``, and a search of its
    415 kB took 19 ms; an episode's 13 kB, 1.8)."""
    probe = text.lower()
    if len(probe) != len(text) or (not text.isascii() and any(c in text for c in _FOLDED_ODDLY)):
        return value_is_secret(text)  # positions in ``probe`` would not be those of ``text``
    for start in _STARTS:
        at = probe.find(start)
        while at >= 0:
            if SECRET_VALUE.match(text, at):  # \b still sees the character before ``at``
                return True
            at = probe.find(start, at + 1)
    return False


def needs_scrub(value: Any, text: str) -> bool:
    """Whether ``value`` (whose JSON is ``text``) may hold a credential: a credential-looking part of the text,
    a key in use, or a setting whose name says credential. Clean recordings are written without a second walk."""
    return looks_secret(text) or _keys_in(text) or any(name_is_secret(name) for name in _key_names(value))


def _key_names(value: Any) -> set[str]:
    """Every key of every object in ``value``, reached as ``json.dumps`` reaches them (dicts, lists, tuples)."""
    names: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            names.update(map(str, item))
            stack.extend(v for v in item.values() if isinstance(v, _CONTAINERS))
        elif isinstance(item, (list, tuple)):
            stack.extend(v for v in item if isinstance(v, _CONTAINERS))
    return names


_CONTAINERS = (dict, list, tuple)


def scrub_text(text: str, known: Iterable[str] = ()) -> str:
    """``text`` with credential-looking parts, every value in ``known`` and the keys in use redacted."""
    for secret in sorted({k for k in (*known, *tuple(_KEYS_IN_USE)) if k and len(k) >= 4}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return SECRET_VALUE.sub(_redact_match, text)


def _redact_match(match: re.Match[str]) -> str:
    found = match.group(0)
    if found.startswith("://"):
        return "://" + REDACTED + "@"
    if found[0] in "?&":
        name = found[1:].split("=", 1)[0]
        return f"{found[0]}{name}={REDACTED}"
    return REDACTED
