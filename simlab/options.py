"""Typed settings on the command line: argparse options made from a pydantic model, and ``KEY=VALUE`` pairs.

A family's generate options become flags of ``generate NAME`` (``questions_per_task`` -> ``--questions-per-task``,
a bool -> ``--images/--no-images``); world and agent settings are given as ``--set KEY=VALUE`` and
``--agent-setting ROLE.KEY=VALUE``, whose values are read as JSON when they are JSON and as text otherwise.
Either way the model checks them, so the CLI, run.toml and the app's forms share one set of rules.
"""

from __future__ import annotations

import argparse
import json
import types
import typing
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from simlab.core.errors import ConfigError


def json_or_text(value: str) -> Any:
    """``20`` -> 20, ``true`` -> True, ``[1, 3]`` -> [1, 3]; anything that is not JSON (``reference``) as is."""
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def key_values(items: Sequence[str], flag: str) -> dict[str, Any]:
    """``["turns=30", "interior=reference"]`` -> ``{"turns": 30, "interior": "reference"}``."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{flag} {item!r}: expected KEY=VALUE")
        out[key.strip()] = json_or_text(value)
    return out


def role_key_values(items: Sequence[str], flag: str) -> dict[str, dict[str, Any]]:
    """``["director.base_url=http://x"]`` -> ``{"director": {"base_url": "http://x"}}``."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in key_values(items, flag).items():
        role, dot, name = key.partition(".")
        if not dot or not role or not name:
            raise ConfigError(f"{flag} {key}=...: expected ROLE.KEY=VALUE, e.g. director.temperature=0.2")
        out.setdefault(role, {})[name] = value
    return out


def flag_name(field: str) -> str:
    return "--" + field.replace("_", "-")


def _base(annotation: Any) -> Any:
    """``int | None`` -> int; other annotations as they are."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def add_model_options(parser: argparse.ArgumentParser, model: type[BaseModel], skip: Sequence[str] = ()) -> None:
    """One option per field of ``model`` (its description as help, its default shown); values are left
    unset (None) unless given, so the model's own defaults apply."""
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        kind = _base(field.annotation)
        help_text = f"{field.description or name} (default: {field.default!r})"
        if kind is bool:
            parser.add_argument(flag_name(name), action=argparse.BooleanOptionalAction, default=None, help=help_text)
        elif typing.get_origin(kind) is typing.Literal:
            parser.add_argument(flag_name(name), choices=[str(c) for c in typing.get_args(kind)], help=help_text)
        elif kind in (int, float, str):
            parser.add_argument(flag_name(name), type=kind, metavar=kind.__name__.upper(), help=help_text)
        else:
            parser.add_argument(flag_name(name), type=json_or_text, metavar="JSON", help=help_text)


def model_values(args: argparse.Namespace, model: type[BaseModel]) -> dict[str, Any]:
    """The fields of ``model`` given on the command line (those left unset are left out)."""
    return {name: getattr(args, name) for name in model.model_fields if getattr(args, name, None) is not None}
