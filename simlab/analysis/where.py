"""Filter expressions over episode summaries: ``score < 0.3 and errors > 2 and agents.builder == "qwen"``.

The same syntax in the app's browser and in ``report --where``. The text is parsed by Python's own parser
(``ast.parse(text, mode="eval")``) and the tree is walked against an explicit whitelist; nothing is ever
evaluated or compiled as code. What may be written:

* ``and``, ``or``, ``not``, parentheses;
* comparisons ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, chained (``0.2 < score <= 0.5``), and ``in`` /
  ``not in`` a list of constants (``outcome in ["failure", "abort"]``);
* names: a summary field (``score``, ``outcome``, ``group``, ``task_id``), a dotted path into it
  (``metrics.iou``, ``agents.builder``, ``usage.cost``), or, when no field has that name, a metric of that name
  (``iou`` is ``metrics.iou``); a name with other characters in backquotes (`` `tax_engine-layer` > 0 ``);
* constants: text in quotes, numbers (unary minus too), ``true``/``True``, ``false``/``False``,
  ``null``/``None``; a field alone is true when its value is (true, a number other than 0, non-empty text).

What a comparison means when the values do not fit: a missing value (the episode has no such field, or
``null``) makes every comparison false (``x != 3`` included), except ``x == None`` (true when missing) and
``x != None`` (true when present); ``in`` is ``==`` with any item and ``not in`` is ``!=`` with every item.
Values of different kinds (text against a number, true against 1) compare false whatever the operator,
never an error. ``not`` turns false into true as always (``not x == 3`` keeps the episodes without x).

:func:`parse_where` checks the text alone (length, nesting, syntax); :meth:`Where.bind` resolves its names
against the fields a run has (an unknown name is an error that lists them). A bound expression evaluates one
summary at a time (:meth:`Bound.matches`) or a whole :class:`~simlab.core.run_table.RunTable` at once with
numpy (:meth:`Bound.mask`); the two always agree.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from simlab.core.records import IndexLine
from simlab.core.run_table import Column, RunTable, value_kind

MAX_WHERE_LENGTH = 2_000
"""The longest expression: a filter a person types or a script writes is a line or two."""
MAX_WHERE_DEPTH = 32
"""How deeply an expression may nest (parentheses, ``not``, and/or groups): bounds the parser and the walk."""

_COMPARE: dict[type[ast.cmpop], tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
    ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le),
    ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge),
}
STANDARD_FIELDS = frozenset(IndexLine.model_fields)
"""Fields every summary may have (stopped, timeout...): known even when no episode of a run has them."""
_NAMED_CONSTANTS = {"true": True, "false": False, "null": None}
_QUOTED = re.compile(r"`([^`\n]*)`")

_Summary = TypeVar("_Summary", bound=Mapping[str, Any])


class WhereError(ValueError):
    """An expression that cannot be used: ``offset`` is the column (from 1) where the problem starts."""

    def __init__(self, text: str, offset: int, expected: str) -> None:
        self.text, self.offset, self.expected = text, offset, expected
        super().__init__(f"where, column {offset}: {expected}")


# ---- the tree of a parsed expression ---------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    name: str
    offset: int


@dataclass(frozen=True)
class Const:
    value: Any


@dataclass(frozen=True)
class Neg:
    operand: Field | Const


@dataclass(frozen=True)
class Compare:
    op: str
    left: Field | Const | Neg
    right: Field | Const | Neg | tuple[Any, ...]  # a tuple of constants only for "in" and "not in"


@dataclass(frozen=True)
class Logic:
    op: str  # "and", "or", "not"
    parts: tuple[Node, ...]


Node = Compare | Logic | Field | Const | Neg


@dataclass(frozen=True)
class Where:
    """A parsed expression (its names not yet resolved)."""

    text: str
    tree: Node

    def names(self) -> list[str]:
        """The field names it uses, in order."""
        return [f.name for f in _fields(self.tree)]

    def bind(self, columns: Mapping[str, Any]) -> Bound:
        """Resolve every name against ``columns`` (the fields a run has, e.g. ``RunTable.columns``): a name
        that is neither a field nor a metric is a WhereError listing the known fields."""
        paths: dict[str, str] = {}
        known = {*columns, *STANDARD_FIELDS}
        for f in _fields(self.tree):
            found = f.name if f.name in known else f"metrics.{f.name}"
            if found not in known:
                names = sorted(columns)
                listed = ", ".join(names[:60]) + (f" (and {len(names) - 60} more)" if len(names) > 60 else "")
                raise WhereError(self.text, f.offset, f"unknown field {f.name!r}; the fields are: {listed}")
            paths[f.name] = found
        return Bound(self, paths)


def parse_where(text: str) -> Where:
    """Parse ``text`` (see the module docstring); WhereError naming the column and what was expected."""
    if not isinstance(text, str):
        raise WhereError("", 1, f"expected text, got {type(text).__name__}")
    if len(text) > MAX_WHERE_LENGTH:
        raise WhereError(text[:80], MAX_WHERE_LENGTH, f"expected at most {MAX_WHERE_LENGTH:,} characters")
    if not text.strip():
        raise WhereError(text, 1, "expected an expression, e.g. score < 0.3 and errors > 2")
    source, quoted = _unquote(text)
    _check_nesting(source)
    indent = len(source) - len(source.lstrip())
    if indent:  # Python refuses an indented expression: an opening bracket in its place keeps every column
        source = "(" + source[1:] + ")"
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise WhereError(text, exc.offset or 1, _syntax(exc)) from None
    except (RecursionError, MemoryError, ValueError):
        raise WhereError(text, 1, "expected a simpler expression") from None
    return Where(text, _node(tree.body, text, quoted, 0))


# ---- parsing ----------------------------------------------------------------------------------------------


def _unquote(text: str) -> tuple[str, dict[str, str]]:
    """``text`` with each backquoted name replaced by a placeholder identifier of the same length (so columns
    stay right), and the placeholders' names."""
    quoted: dict[str, str] = {}

    def placeholder(match: re.Match[str]) -> str:
        key = f"_q{len(quoted)}_"
        if not match[1] or len(key) > len(match[0]):
            raise WhereError(text, match.start() + 1, "expected a name between backquotes")
        key = key.ljust(len(match[0]), "_")
        quoted[key] = match[1]
        return key

    return _QUOTED.sub(placeholder, text), quoted


def _check_nesting(source: str) -> None:
    depth = 0
    for k, char in enumerate(source):
        depth += char in "([{"
        depth -= char in ")]}"
        if depth > MAX_WHERE_DEPTH:
            raise WhereError(source, k + 1, f"expected brackets nested at most {MAX_WHERE_DEPTH} deep")


def _syntax(exc: SyntaxError) -> str:
    said = (exc.msg or "invalid syntax").split(" (")[0]
    return f'expected an expression such as score < 0.3 and outcome == "failure" ({said})'


def _node(node: ast.AST, text: str, quoted: Mapping[str, str], depth: int) -> Node:
    """Our tree for a whitelisted Python node; WhereError naming the column of anything else."""
    at = getattr(node, "col_offset", 0) + 1
    if depth > MAX_WHERE_DEPTH:
        raise WhereError(text, at, f"expected an expression nested at most {MAX_WHERE_DEPTH} deep")
    if isinstance(node, ast.BoolOp):
        op = "and" if isinstance(node.op, ast.And) else "or"
        return Logic(op, tuple(_node(v, text, quoted, depth + 1) for v in node.values))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return Logic("not", (_node(node.operand, text, quoted, depth + 1),))
    if isinstance(node, ast.Compare):
        return _compare(node, text, quoted, depth)
    return _operand(node, text, quoted, depth)


def _compare(node: ast.Compare, text: str, quoted: Mapping[str, str], depth: int) -> Node:
    parts: list[Node] = []
    left = _operand(node.left, text, quoted, depth + 1)
    for op, right_node in zip(node.ops, node.comparators, strict=True):
        at = right_node.col_offset + 1
        if isinstance(op, ast.In | ast.NotIn):
            items = _constants(right_node, text)
            parts.append(Compare("in" if isinstance(op, ast.In) else "not in", left, items))
            left = Const(None)  # a chain after "in" compares nothing sensible
            continue
        if type(op) not in _COMPARE:
            raise WhereError(text, at, "expected ==, !=, <, <=, >, >=, in or not in (is: use == or !=)")
        right = _operand(right_node, text, quoted, depth + 1)
        parts.append(Compare(_COMPARE[type(op)][0], left, right))
        left = right
    return parts[0] if len(parts) == 1 else Logic("and", tuple(parts))


def _operand(node: ast.AST, text: str, quoted: Mapping[str, str], depth: int) -> Field | Const | Neg:
    at = getattr(node, "col_offset", 0) + 1
    if depth > MAX_WHERE_DEPTH:
        raise WhereError(text, at, f"expected an expression nested at most {MAX_WHERE_DEPTH} deep")
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, str | bool)):
        return Const(node.value)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        try:
            return Const(float(node.value))  # numbers compare as floats, as the columns hold them
        except OverflowError:
            raise WhereError(text, at, "expected a number within a float's range") from None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _operand(node.operand, text, quoted, depth + 1)
        if isinstance(inner, Const) and value_kind(inner.value) != "number":
            raise WhereError(text, at, "expected a number after the sign")
        return inner if isinstance(node.op, ast.UAdd) else _negate(inner)
    name = _dotted(node)
    if name is not None:
        first = name.split(".")[0]
        if name in _NAMED_CONSTANTS:
            return Const(_NAMED_CONSTANTS[name])
        return Field(quoted.get(first, first) + name[len(first) :], at)
    raise WhereError(text, at, f"expected a field, a constant or a comparison, not {_what(node)}")


def _negate(inner: Field | Const | Neg) -> Field | Const | Neg:
    if isinstance(inner, Const):
        return Const(-inner.value)
    return inner.operand if isinstance(inner, Neg) else Neg(inner)


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of names (Name and Attribute only), else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _constants(node: ast.AST, text: str) -> tuple[Any, ...]:
    """The constants of a list or tuple after ``in``."""
    at = getattr(node, "col_offset", 0) + 1
    if not isinstance(node, ast.List | ast.Tuple):
        raise WhereError(text, at, 'expected a list of constants after in, e.g. outcome in ["failure", "abort"]')
    items = []
    for item in node.elts:
        value = _operand(item, text, {}, 0)
        if not isinstance(value, Const):
            raise WhereError(text, item.col_offset + 1, "expected constants only in the list after in")
        items.append(value.value)
    return tuple(items)


def _what(node: ast.AST) -> str:
    names = {
        ast.Call: "a call",
        ast.Subscript: "a subscript",
        ast.Lambda: "a lambda",
        ast.JoinedStr: "an f-string",
        ast.BinOp: "arithmetic (a name with '-' goes in backquotes: `tax_engine-layer`)",
        ast.Attribute: "an attribute of something that is not a name",
    }
    return next((said for kind, said in names.items() if isinstance(node, kind)), type(node).__name__)


def _fields(node: Any) -> Iterable[Field]:
    if isinstance(node, Field):
        yield node
    elif isinstance(node, Neg):
        yield from _fields(node.operand)
    elif isinstance(node, Compare):
        yield from _fields(node.left)
        yield from _fields(node.right)
    elif isinstance(node, Logic):
        for part in node.parts:
            yield from _fields(part)


# ---- evaluating -------------------------------------------------------------------------------------------


def compare_values(left: Any, op: str, right: Any) -> bool:
    """One comparison of two values (None: missing) as the module docstring says: a missing value or kinds
    that differ make it false. ``in`` is ``==`` with any item (None among them matches a missing value),
    ``not in`` is ``!=`` with every item. (``== None`` written in an expression is :func:`_null_test`'s.)"""
    if op in ("in", "not in"):
        kind = value_kind(left)
        if kind is None:
            return op == "in" and any(v is None for v in right)
        hit = any(value_kind(v) == kind and _as(left) == _as(v) for v in right)
        return hit if op == "in" else not hit
    left_kind, right_kind = value_kind(left), value_kind(right)
    if left_kind is None or left_kind != right_kind or left_kind == "other":
        return False
    return bool(_OPS[op](_as(left), _as(right)))


def _null_test(node: Compare) -> tuple[Field | Const | Neg, bool] | None:
    """``x == None`` / ``x != None`` as (x, whether missing is what is asked); None for other comparisons."""
    if node.op not in ("==", "!=") or isinstance(node.right, tuple):
        return None
    for side, other in ((node.right, node.left), (node.left, node.right)):
        if isinstance(side, Const) and side.value is None:
            return other, node.op == "=="
    return None


_OPS = {symbol: fn for symbol, fn in _COMPARE.values()}


def _as(value: Any) -> Any:
    """Numbers compare as floats (as the columns hold them), bools as 0 and 1 (true > false)."""
    return float(value) if isinstance(value, int | float) else value


def truthy(value: Any) -> bool:
    kind = value_kind(value)
    return kind is not None and kind != "other" and bool(value)


@dataclass(frozen=True)
class Bound:
    """An expression with its names resolved to a run's columns: evaluate it per summary or per table."""

    where: Where
    paths: Mapping[str, str]  # name as written -> column name

    def matches(self, summary: Mapping[str, Any]) -> bool:
        """Whether one summary passes (the per-row reference the vectorised :meth:`mask` agrees with)."""
        return bool(self._row(self.where.tree, summary))

    def _row(self, node: Node, summary: Mapping[str, Any]) -> Any:
        if isinstance(node, Logic):
            if node.op == "not":
                return not self._row(node.parts[0], summary)
            results = (self._row(part, summary) for part in node.parts)
            return all(results) if node.op == "and" else any(results)
        if isinstance(node, Compare):
            null = _null_test(node)
            if null is not None:
                return (value_kind(self._value(null[0], summary)) is None) == null[1]
            right = node.right if isinstance(node.right, tuple) else self._value(node.right, summary)
            return compare_values(self._value(node.left, summary), node.op, right)
        return truthy(self._value(node, summary))

    def _value(self, node: Field | Const | Neg, summary: Mapping[str, Any]) -> Any:
        if isinstance(node, Const):
            return node.value
        if isinstance(node, Neg):
            value = self._value(node.operand, summary)
            return -value if value_kind(value) == "number" else None
        found: Any = summary
        for key in self.paths[node.name].split("."):
            found = found.get(key) if isinstance(found, Mapping) else None
        return found

    def mask(self, table: RunTable) -> np.ndarray:
        """A boolean array, one per row of ``table``: the same answer as :meth:`matches` per summary."""
        return _Vector(table, self.paths).node(self.where.tree)


class _Vector:
    """Evaluates a bound tree over a RunTable's columns with numpy."""

    def __init__(self, table: RunTable, paths: Mapping[str, str]) -> None:
        self.table, self.paths = table, paths

    def node(self, node: Node) -> np.ndarray:
        if isinstance(node, Logic):
            masks = [self.node(part) for part in node.parts]
            if node.op == "not":
                return ~masks[0]
            combine = np.logical_and if node.op == "and" else np.logical_or
            return _bools(combine.reduce(masks))
        if isinstance(node, Compare):
            return self.compare(node)
        column = self.column(node)
        if column is None:
            return np.full(self.table.n, truthy(_const(node)))
        return self.per_value(column, truthy)

    def column(self, node: Field | Const | Neg | tuple[Any, ...]) -> Column | None:
        """The column of a field (negated numbers as a new column); None for a constant."""
        if isinstance(node, Field):
            path = self.paths[node.name]
            found = self.table.columns.get(path)  # a standard field no episode has: missing everywhere
            return found or Column((path,), "number", np.full(self.table.n, np.nan))
        if isinstance(node, Neg):
            inner = self.column(node.operand)
            if inner is None or inner.kind != "number":
                return Column(("-",), "other", [None] * self.table.n)
            return Column(inner.path, "number", -np.asarray(inner.data))
        return None

    def compare(self, node: Compare) -> np.ndarray:
        null = _null_test(node)
        if null is not None:
            column = self.column(null[0])
            if column is None:
                return np.full(self.table.n, (value_kind(_const(null[0])) is None) == null[1])
            return _bools(column.present() != null[1])
        left, right = self.column(node.left), self.column(node.right)
        if left is not None and right is not None:
            return self.between(left, node.op, right)
        if left is not None:
            return self.against(left, node.op, _right_constant(node))
        if right is not None:  # a constant on the left: flip it to the right
            flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(node.op, node.op)
            return self.against(right, flipped, _const(node.left))
        return np.full(self.table.n, compare_values(_const(node.left), node.op, _right_constant(node)))

    def against(self, column: Column, op: str, constant: Any) -> np.ndarray:
        """A column against a constant (or the tuple of ``in``)."""
        if column.kind == "other":
            return self.per_value(column, lambda v: compare_values(v, op, constant))
        if column.kind == "text":  # each category once, then looked up by code (-1, missing: the last slot)
            per_category = [compare_values(c, op, constant) for c in column.categories]
            lookup = np.array([*per_category, compare_values(None, op, constant)], dtype=bool)
            return _bools(lookup[np.asarray(column.data)])
        data = np.asarray(column.data)
        present = ~np.isnan(data)
        if op in ("in", "not in"):
            items = [float(v) for v in constant if value_kind(v) == column.kind]
            hit = np.isin(data, items)
            if op == "not in":
                return _bools(present & ~hit)
            return _bools((present & hit) | (~present & any(v is None for v in constant)))
        if value_kind(constant) != column.kind:
            return np.zeros(self.table.n, dtype=bool)
        with np.errstate(invalid="ignore"):
            return _bools(present & _OPS[op](data, float(constant)))

    def between(self, left: Column, op: str, right: Column) -> np.ndarray:
        """Two columns, row by row."""
        if left.kind == right.kind and left.kind in ("number", "bool"):
            a, b = np.asarray(left.data), np.asarray(right.data)
            present = ~np.isnan(a) & ~np.isnan(b)
            with np.errstate(invalid="ignore"):
                return _bools(present & _OPS[op](a, b)) if op in _OPS else np.zeros(self.table.n, dtype=bool)
        pairs = zip(left.values(), right.values(), strict=True)
        return np.fromiter((compare_values(a, op, b) for a, b in pairs), dtype=bool, count=self.table.n)

    def per_value(self, column: Column, test: Callable[[Any], bool]) -> np.ndarray:
        if column.kind == "text":
            lookup = np.array([*(test(c) for c in column.categories), test(None)], dtype=bool)
            return _bools(lookup[np.asarray(column.data)])
        return np.fromiter((test(v) for v in column.values()), dtype=bool, count=self.table.n)


def _bools(values: Any) -> np.ndarray:
    out: np.ndarray = np.asarray(values, dtype=bool)
    return out


def _const(node: Any) -> Any:
    return node.value if isinstance(node, Const) else None


def _right_constant(node: Compare) -> Any:
    """The constant a comparison's right side holds: the tuple after ``in``, else the value."""
    return node.right if isinstance(node.right, tuple) else _const(node.right)


def filter_summaries(summaries: Sequence[_Summary], text: str) -> list[_Summary]:
    """The summaries ``text`` keeps, evaluated with numpy over their columns; WhereError when it cannot be
    used (the names resolved against every field the summaries have)."""
    table = RunTable.from_summaries(summaries)
    bound = parse_where(text).bind(table.columns)
    return [summaries[k] for k in np.flatnonzero(bound.mask(table)).tolist()]
