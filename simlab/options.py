"""Typed settings on the command line: argparse options made from a pydantic model, and ``KEY=VALUE`` pairs.

A family's generate options become flags of ``generate NAME`` (``questions_per_task`` -> ``--questions-per-task``,
a bool -> ``--images/--no-images``); world and agent settings are given as ``--set KEY=VALUE`` and
``--agent-setting ROLE.KEY=VALUE``, whose values are read as JSON when they are JSON and as text otherwise.
Either way the model checks them, so the CLI, run.toml and the app's forms share one set of rules.
"""

from __future__ import annotations

import argparse
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from simlab.core.errors import ConfigError, FormatError
from simlab.core.reading import LimitError, parse_json


def json_or_text(value: str) -> Any:
    """``20`` -> 20, ``true`` -> True, ``[1, 3]`` -> [1, 3]; anything that is not JSON (``reference``) as is."""
    try:
        return parse_json(value, f"value {value!r:.40}")
    except LimitError:  # JSON, but nested too deeply or with a number too long: refused, never taken as text
        raise
    except FormatError:
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
    """One option per field of ``model`` (its description as help, its default and range shown); values are
    left unset (None) unless given, so the model's own defaults apply. A number outside its field's range is
    refused by argparse, naming the flag."""
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        kind = _base(field.annotation)
        bound = field_bound(field)
        limits = f"; {bound.range()}" if bound else ""
        help_text = f"{field.description or name} (default: {field.default!r}{limits})"
        if kind is bool:
            parser.add_argument(flag_name(name), action=argparse.BooleanOptionalAction, default=None, help=help_text)
        elif typing.get_origin(kind) is typing.Literal:
            parser.add_argument(flag_name(name), choices=[str(c) for c in typing.get_args(kind)], help=help_text)
        elif kind in (int, float, str):
            parser.add_argument(flag_name(name), type=bound or kind, metavar=kind.__name__.upper(), help=help_text)
        else:
            parser.add_argument(flag_name(name), type=json_or_text, metavar="JSON", help=help_text)


def model_values(args: argparse.Namespace, model: type[BaseModel]) -> dict[str, Any]:
    """The fields of ``model`` given on the command line (those left unset are left out)."""
    return {name: getattr(args, name) for name in model.model_fields if getattr(args, name, None) is not None}


def path_arg(text: str) -> Path:
    """An argparse ``type`` for a path: an empty one (which would mean the working folder) and one holding a
    control character (a newline pasted into the command) are refused, not taken as names."""
    if not text:
        raise argparse.ArgumentTypeError("expected a path, got an empty string")
    bad = next((c for c in text if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        raise argparse.ArgumentTypeError(f"expected a path without control characters, got {text[:80]!r}")
    return Path(text)


@dataclass(frozen=True)
class Bound:
    """An argparse ``type`` for a number flag with a range and the reason for it. A value outside the range (or
    not a number, or NaN) is refused with exit 2, argparse naming the flag, this saying the range and why;
    :meth:`range` words it for ``--help``."""

    low: float
    high: float
    why: str = ""
    kind: type[int] | type[float] = int

    def __call__(self, text: str) -> int | float:
        try:
            value = self.kind(text)
        except (ValueError, OverflowError):  # int() refuses numbers of thousands of digits too
            noun = "a whole number" if self.kind is int else "a number"
            raise argparse.ArgumentTypeError(
                f"invalid {self.kind.__name__} value: {text[:40]!r} (expected {noun} from {self.range()})"
            ) from None
        if value < self.low:
            raise argparse.ArgumentTypeError(f"expected at least {_number(self.low)} ({self.range()}), got {text[:40]}")
        if not value <= self.high:  # NaN too
            why = f": {self.why}" if self.why else ""
            raise argparse.ArgumentTypeError(
                f"expected at most {_number(self.high)} ({self.range()}), got {text[:40]}{why}"
            )
        return value

    def range(self) -> str:
        """``1 to 100,000``."""
        return f"{_number(self.low)} to {_number(self.high)}"


def _number(value: float) -> str:
    """``100,000``, ``0.5``, and ``2^63 - 1`` for the largest seed (its 19 digits say less)."""
    if isinstance(value, int) and value >= 2**40 and (value + 1).bit_count() == 1:
        return f"2^{(int(value) + 1).bit_length() - 1} - 1"
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def field_bound(field: FieldInfo) -> Bound | None:
    """The range of a number field whose model bounds it above and below (``Field(ge=..., le=...)``), else None."""
    kind = _base(field.annotation)
    if kind not in (int, float):
        return None
    low: Any = None
    high: Any = None
    for rule in field.metadata:
        if isinstance(rule, annotated_types.Ge):
            low = rule.ge
        elif isinstance(rule, annotated_types.Le):
            high = rule.le
    return None if low is None or high is None else Bound(low, high, kind=kind)
