"""The one way SimLab reads a file: task files, run configs, plugin manifests, recordings, logs to import,
judgments, editor documents and autosaves all come through here, so each is refused the same way before it
can do harm:

* only a regular file, asked of its name before it is opened (through symbolic links): a device such as
  ``/dev/zero`` would be read without end, and opening a FIFO blocks until someone writes to it;
* at most ``max_bytes``, however many the file holds when it is read (stat can be wrong or out of date);
* UTF-8 text (the offset of the first byte that is not is named); TOML without control bytes;
* JSON and TOML nested at most :data:`MAX_DEPTH` levels, integers of at most :data:`MAX_INT_DIGITS` digits
  (TOML: 64 bits, its own range), finite numbers only (except where a format has its own constants);
* the ``format`` and ``version`` of SimLab's own files (:func:`check_version`).

Every refusal is a :class:`~simlab.core.errors.FormatError` naming the file, the line or field where known,
and what was expected; the CLI answers it with exit status 2.
"""

from __future__ import annotations

import errno
import itertools
import json
import math
import os
import re
import stat
import tomllib
from array import array
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from simlab.core.errors import FormatError

MAX_FILE_BYTES = 512 * 2**20
"""The largest JSON file SimLab reads (an episode of thousands of turns with pictures' metadata is far less)."""
MAX_TOML_BYTES = 2**20
"""The largest TOML file (run configs and plugin manifests are a few hundred bytes)."""
MAX_DEPTH = 100
"""How deeply JSON and TOML values may nest. SimLab's own files nest at most 11 levels; 100 keeps every
recursive walk of what was read (copies, checks, scrubbing) far below Python's recursion limit of 1,000."""
MAX_INT_DIGITS = 30
"""The most digits a JSON integer may have. Every integer SimLab writes fits in 64 bits (20 digits; seeds
are 64-bit hashes); 30 leaves room for other tools' ids while refusing, before any conversion, the long ones
that Python refuses past 4,300 digits and converts in quadratic time below that."""
TOML_INT_RANGE = range(-(2**63), 2**63)
"""TOML's integers are 64-bit signed; a value outside cannot be read losslessly, so the spec says refuse."""
MAX_TOML_NUMBER = 200
"""The longest run of digits TOML text may hold outside strings: 64 bits take at most 64 digits (in binary),
130 with an underscore between each; refused before the parser converts a longer one."""
_CHUNK = 4 * 2**20
_KINDS: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


class LimitError(FormatError):
    """A file or value past one of the reading bounds (not a regular file, too large, nested too deeply, an
    integer too long, a number that is not finite): refused even where text that is not JSON would be taken
    as it is (``--set KEY=VALUE``)."""


# ---- files ------------------------------------------------------------------------------------------------


def check_file(path: str | Path) -> os.stat_result:
    """The status of ``path`` when it names a regular file (links followed); FormatError otherwise. Only the
    name is asked: nothing is opened, so a FIFO cannot block and a device is never read."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise FormatError(path, "", "file not found") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LimitError(path, "", "expected a regular file, and this is a loop of symbolic links") from None
        raise FormatError(path, "", f"cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:  # a NUL byte in the name
        raise FormatError(path, "", f"cannot be read ({exc})") from None
    _refuse_unless_regular(path, info.st_mode)
    return info


def resolved(path: Path) -> Path:
    """``path`` absolute with its links followed; FormatError when they lead round in a loop (which Python's
    ``resolve`` raises as a RuntimeError, or an OSError in newer versions)."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        raise LimitError(path, "", "expected a file or a folder, and this is a loop of symbolic links") from None


def _refuse_unless_regular(path: str | Path, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    link = f" ({path} is a symbolic link to {os.path.realpath(path)})" if os.path.islink(path) else ""
    raise LimitError(path, "", f"expected a regular file, and this is {kind}{link}")


def _open(path: str | Path) -> int:
    """A descriptor of the regular file ``path``, checked again once open: the name may have been given to
    a FIFO or a device since it was asked (O_NONBLOCK keeps the open of a FIFO from blocking even then)."""
    check_file(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise FormatError(path, "", f"cannot be read ({exc.strerror or exc})") from None
    try:
        _refuse_unless_regular(path, os.fstat(fd).st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _too_large(path: str | Path, max_bytes: int) -> LimitError:
    return LimitError(path, "", f"expected a file of at most {_size(max_bytes)}, and it is larger")


def _size(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 else f"{n:,} bytes"


def read_bytes(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file ``path``; FormatError when it is not one, cannot be read or holds more
    than ``max_bytes`` (at most ``max_bytes + 1`` are ever read)."""
    fd = _open(path)
    try:
        if os.fstat(fd).st_size > max_bytes:
            raise _too_large(path, max_bytes)
        data = bytearray()
        while len(data) <= max_bytes:
            chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - len(data)))
            if not chunk:
                break
            data += chunk
    except OSError as exc:
        raise FormatError(path, "", f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # the file grew after it was asked
        raise _too_large(path, max_bytes)
    return bytes(data)


def decode(data: bytes, path: str | Path, where: str = "") -> str:
    """``data`` as UTF-8 text; FormatError naming the offset (and line) of the first byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        place = f"{where} byte {exc.start}" if where else f"byte {exc.start} (line {line})"
        raise FormatError(path, place, "expected UTF-8 text") from None


def read_text(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of the regular file ``path`` (see :func:`read_bytes` and :func:`decode`)."""
    return decode(read_bytes(path, max_bytes), path)


def read_lines(path: str | Path, max_line: int, max_bytes: int = MAX_FILE_BYTES) -> Iterator[tuple[int, bytes]]:
    """The lines of the regular file ``path`` (JSON Lines), numbered from 1, each with its newline. A line
    longer than ``max_line`` comes cut to ``max_line + 1`` bytes (its rest skipped unread into memory), so
    the caller reports it; FormatError when the file is not a regular one or holds more than ``max_bytes``."""
    with open(_open(path), "rb") as f:
        total = 0
        for number in itertools.count(1):
            line = f.readline(max_line + 1)
            if not line:
                return
            total += len(line) + (0 if line.endswith(b"\n") else _skip_line(f, max_bytes - total))
            if total > max_bytes:
                raise _too_large(path, max_bytes)
            yield number, line


def _skip_line(f: BinaryIO, budget: int) -> int:
    """Read past the rest of a line (at most ``budget + 1`` bytes, a chunk at a time); how many were read."""
    skipped = 0
    while skipped <= budget:
        rest = f.readline(_CHUNK)
        skipped += len(rest)
        if not rest or rest.endswith(b"\n"):
            break
    return skipped


# ---- JSON -------------------------------------------------------------------------------------------------


def read_json(path: str | Path, max_bytes: int = MAX_FILE_BYTES, *, constants: bool = False) -> Any:
    """The JSON value of the file ``path``, read and parsed within every bound (see the module docstring);
    ``constants`` accepts the bare ``Infinity``, ``-Infinity`` and ``NaN`` other tools write."""
    return parse_json(read_text(path, max_bytes), path, constants=constants)


def parse_json(text: str, path: str | Path, where: str = "", *, constants: bool = False) -> Any:
    """``text`` as strict JSON (no NaN or Infinity, which other tools cannot read, unless ``constants``),
    nested at most :data:`MAX_DEPTH` deep, integers of at most :data:`MAX_INT_DIGITS` digits. FormatError
    naming the place of a syntax error or the field of a refused number (``where``: the place of ``text`` in
    the file, such as ``line 3`` of an index)."""
    data = text.encode("utf-8", "surrogatepass")
    if _json_depth(data) > MAX_DEPTH:
        raise LimitError(path, where, f"expected JSON nested at most {MAX_DEPTH} levels deep")
    numbers = _Numbers(constants)
    hooks: dict[str, Any] = {}
    if not _plain_numbers(data):
        hooks = {"parse_int": numbers.integer, "parse_float": numbers.number}
    try:
        value = json.loads(text, parse_constant=numbers.constant, **hooks)
    except json.JSONDecodeError as exc:
        place = where or f"line {exc.lineno} column {exc.colno}"
        raise FormatError(path, place, f"expected JSON ({exc.msg})") from None
    if numbers.refused is not None:
        refused = numbers.refused
        field = next((place for node, place, _ in walk(value) if node is refused), "")
        raise LimitError(path, " ".join(p for p in (where, field and f"field {field!r}") if p), refused.expected)
    if _SURROGATE_ESCAPE.search(text):  # JSON can spell half a character; UTF-8 files cannot hold one
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            expected = "expected text of whole characters (a lone surrogate \\udXXX is not)"
            raise FormatError(path, where, expected) from None
    return value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_NOT_SYNTAX = bytes(sorted(set(range(256)) - set(b'[]{}"')))
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1 and -1 as signed bytes
_NUMBER_SHAPE = bytes.maketrans(b"0123456789Ee+", b"0000000000ee+")
_LONG_DIGITS = b"0" * (MAX_INT_DIGITS + 1)


def _json_depth(data: bytes) -> int:
    """The deepest nesting of brackets outside strings in the JSON text ``data``, found without parsing (a few
    C-speed passes): an upper bound on how deeply a parser recurses, whether the text is JSON or not."""
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:
        return 0
    # Only escaped backslashes and quotes change where strings end: drop them (a run of backslashes pairs
    # up from its left, as in JSON), then every other quote opens a string; an unterminated one runs to the
    # end, where a parser stops too. Two quotes side by side (once all but brackets and quotes are gone)
    # enclose nothing outside a string whichever they are, so they go first: most strings hold no bracket.
    data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    syntax = data.translate(None, _NOT_SYNTAX).replace(b'""', b"")
    outside = b"".join(syntax.split(b'"')[::2])
    return max(itertools.accumulate(array("b", outside.translate(_STEPS))), default=0)


def _plain_numbers(data: bytes) -> bool:
    """Whether the JSON text ``data`` certainly holds no integer longer than :data:`MAX_INT_DIGITS` digits
    and no number beyond a float's range (which takes an exponent of three digits), so the parser's own
    conversions may read it; when it might (in strings too), the slower checking hooks are used."""
    shape = data.translate(_NUMBER_SHAPE)
    return _LONG_DIGITS not in shape and b"e000" not in shape and b"e+000" not in shape


class _Refused:
    """Put in place of a number that is not returned: what was expected instead. Found again after parsing,
    to name its field."""

    __slots__ = ("expected",)

    def __init__(self, expected: str) -> None:
        self.expected = expected


class _Numbers:
    """The json hooks that keep numbers within bounds, remembering the first one refused."""

    def __init__(self, constants: bool) -> None:
        self.constants = constants
        self.refused: _Refused | None = None

    def _refuse(self, expected: str) -> _Refused:
        refused = _Refused(expected)
        self.refused = self.refused or refused
        return refused

    def integer(self, text: str) -> int | _Refused:
        digits = len(text) - text.startswith("-")
        if digits > MAX_INT_DIGITS:
            return self._refuse(f"expected an integer of at most {MAX_INT_DIGITS} digits, got one of {digits:,}")
        return int(text)

    def number(self, text: str) -> float | _Refused:
        value = float(text)
        if self.constants or math.isfinite(value):
            return value
        return self._refuse(f"expected a finite number, got {text[:40]} (beyond 1.8e308)")

    def constant(self, name: str) -> float | _Refused:
        if self.constants:
            return float(name)
        return self._refuse(f"expected strict JSON ({name} is not JSON: numbers must be finite)")


def walk(value: Any) -> Iterator[tuple[Any, str, int]]:
    """Every value inside ``value`` with its place (``events[3].data``; "" for ``value``) and depth, in file
    order; no recursion, so a value of any depth is walked."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        node, place, depth = stack.pop()
        yield node, place, depth
        if isinstance(node, Mapping):
            items = [(v, f"{place}.{k!s:.40}" if place else f"{k!s:.40}", depth + 1) for k, v in node.items()]
        elif isinstance(node, list):
            items = [(v, f"{place}[{k}]", depth + 1) for k, v in enumerate(node)]
        else:
            continue
        stack.extend(reversed(items))


# ---- TOML -------------------------------------------------------------------------------------------------


def read_toml(path: str | Path, max_bytes: int = MAX_TOML_BYTES) -> dict[str, Any]:
    """The TOML table of the file ``path``, within every bound (see the module docstring): text without
    control bytes, nested at most :data:`MAX_DEPTH` deep, 64-bit integers and finite numbers only."""
    data = read_bytes(path, max_bytes)
    control = _CONTROL_BYTE.search(data)
    if control is not None:
        at = control.start()
        line, column = data.count(b"\n", 0, at) + 1, at - data.rfind(b"\n", 0, at)
        raise FormatError(
            path, f"line {line} column {column}", f"expected TOML text, found the control byte 0x{data[at]:02x}"
        )
    return parse_toml(decode(data, path), path)


def parse_toml(text: str, path: str | Path) -> dict[str, Any]:
    """``text`` as a TOML table, within the bounds of :func:`read_toml`; FormatError naming the line or key."""
    _check_toml_text(text, path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FormatError(path, "", f"expected TOML ({exc})") from None
    for node, place, depth in walk(data):
        key = f"key {place!r:.80}"
        if depth > MAX_DEPTH:
            raise LimitError(path, key, f"expected tables nested at most {MAX_DEPTH} levels deep")
        if isinstance(node, int) and not isinstance(node, bool) and node not in TOML_INT_RANGE:
            raise LimitError(path, key, "expected an integer of at most 64 bits (TOML's range)")
        if isinstance(node, float) and not math.isfinite(node):
            raise FormatError(path, key, f"expected a finite number, got {node} (SimLab records strict JSON)")
    return data


_CONTROL_BYTE = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # TOML allows tab, LF and CR only
# What a TOML parser recurses into (arrays and inline tables) and what it converts to an integer, outside its
# strings and comments; every string pattern ends at its quote, a line's end or the text's, so never fails.
_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')"""
"""One part of a dotted TOML key: a dotted key of thousands of parts costs the parser memory growing with their
square (40 GB for 100,000), so one past :data:`MAX_DEPTH` parts is refused before it parses."""
_TOML_TOKEN = re.compile(
    r"(?P<dotted>" + _KEY_PART + r"(?:[ \t]*\.[ \t]*" + _KEY_PART + "){" + str(MAX_DEPTH) + ",})"  # before strings
    r'|(?P<skip>"""(?:\\(?:.|\Z)|.)*?(?:"""|\Z)|\'\'\'.*?(?:\'\'\'|\Z)'
    r'|"(?:[^"\\\n]|\\(?:.|\Z))*(?:"|$)|\'[^\'\n]*(?:\'|$)|#[^\n]*)'
    r"|(?P<open>[\[{])|(?P<close>[\]}])|(?P<digits>[0-9_]{" + str(MAX_TOML_NUMBER + 1) + ",})",
    re.S | re.M,
)


def _check_toml_text(text: str, path: str | Path) -> None:
    """LimitError when ``text`` nests arrays or inline tables deeper than :data:`MAX_DEPTH`, holds a key of more
    dotted parts or a number too long to be TOML's, naming the line: each is refused before the parser
    recurses, builds or converts."""
    depth = 0
    for token in _TOML_TOKEN.finditer(text):
        kind = token.lastgroup
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
        if depth > MAX_DEPTH or kind in ("digits", "dotted"):
            at = f"line {text.count(chr(10), 0, token.start()) + 1}"
            if kind == "digits":
                raise LimitError(path, at, f"expected a number of at most 64 bits, got {len(token[0]):,} digits")
            if kind == "dotted":
                raise LimitError(path, at, f"expected keys of at most {MAX_DEPTH} dotted parts")
            raise LimitError(path, at, f"expected arrays and tables nested at most {MAX_DEPTH} levels deep")


# ---- formats ----------------------------------------------------------------------------------------------


def check_version(obj: Any, fmt: str, supported: int, path: Path | str, where: str = "") -> None:
    """Raise FormatError unless ``obj`` is a ``fmt`` object of a version this SimLab reads."""
    prefix = f"{where} " if where else ""
    if not isinstance(obj, Mapping):
        raise FormatError(path, where, f"expected a JSON object of format {fmt!r}, got {type(obj).__name__}")
    if obj.get("format") != fmt:
        raise FormatError(path, f"{prefix}field 'format'".strip(), f"expected {fmt!r}, got {obj.get('format')!r:.80}")
    version = obj.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise FormatError(path, f"{prefix}field 'version'".strip(), f"expected an integer, got {version!r:.80}")
    if version > supported:
        raise FormatError(
            path,
            f"{prefix}field 'version'".strip(),
            f"{fmt} version {version} is newer than this SimLab reads (up to {supported}); upgrade SimLab",
        )
    if version < 1:
        raise FormatError(path, f"{prefix}field 'version'".strip(), f"{fmt} version {version} does not exist")
