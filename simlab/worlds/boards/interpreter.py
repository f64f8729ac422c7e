"""A small, safe interpreter for the robot's Python-like code in the boards world.

A live model playing the robot answers with code such as ``put(board, "washer", "red", 1, 1)``, loops and a
helper ``def``. That code is data written by a model, so it is never handed to Python's own exec, eval or
compile: ``ast.parse`` turns it into a tree (parsing runs nothing) and this module walks the tree itself, so a
program can do exactly what the walker implements and nothing more. The whole program is checked before any
of it runs (:func:`check_program`); anything outside the subset is refused with a :class:`ProgramError` that
names the line and says what to write instead.

The accepted subset (what the paper's examples and the reference game's data use, plus the obvious helpers):

* Statements: calls; ``x = ...`` and unpacking into names (``a, (b, c) = ...``); ``x += / -= / *= ...``;
  ``for`` over a list, tuple, string, range, ``zip()`` or ``enumerate()`` (no ``else``) with ``break`` and
  ``continue``; ``if``/``elif``/``else``; ``pass``; ``def`` at the top level only (plain positional
  parameters, literal defaults) and ``return`` inside it; bare strings (docstrings). Comments are free.
* Expressions: int, str, bool and None literals (no floats: the board has whole-number coordinates), names,
  lists and tuples, ``+ - *`` on numbers, ``+`` joining two strings, lists or tuples and ``*`` repeating one,
  unary ``- + not``, comparisons (``== != < <= > >= in not in is is not``, chained), ``and``/``or``,
  ``x[i]`` and slices ``x[a:b:c]`` of lists, tuples, strings and ranges, and calls by plain name of the API
  functions, the program's own defs and the builtins range, zip, len, enumerate, list and tuple, with
  positional and keyword arguments.
* Refused: imports, attribute access (any ``.``), names starting with ``__``, while loops, lambda,
  comprehensions, dicts and sets, with/try/raise/assert/global/nonlocal/class/del/yield/async/match,
  f-strings, ``*``/``**`` unpacking, ``:=``, ``a if c else b``, the operators ``** / // % @`` and bitwise
  ones, type hints, decorators, calling anything but a plain function name, using a function as a value
  (``f = put``), and assigning to an API function, a builtin, a def or a pre-bound variable (``board`` is
  always the caller's board).

Values a program can hold: int, str, bool, None, list, tuple, range, the pre-bound variables' objects (opaque:
it can only pass them on) and whatever the API functions return. Lists are never changed in place (there is
no item assignment and ``x += [1]`` builds a new list), so every value behaves as immutable.

:class:`Limits` bounds everything a program can make the host do: the source size before parsing and the
tree's nesting after it; then, while running, the steps (statements and calls), the items of any one loop
(``range()`` is sized from its arguments before it exists), the call depth, the length of every list, tuple
or string built (checked before building it), the size of ints, the number of API calls, and how big a value
may be compared or handed to an API function. Recursion is counted by the interpreter and its own use of
Python's stack is kept well under Python's recursion limit, so a program ends with a result or a
ProgramError, never RecursionError, MemoryError or another raw Python error. A bug in an API function is not
the program's fault and propagates as itself.

Atomicity is the caller's job: a program stopped halfway (by a limit too) has made every API call before the
failing one, so run it on a copy of the board and keep the copy only if :func:`run_program` returns. API
functions must change nothing but the objects the caller gives the program (that copy), and report the
author's mistakes by raising :class:`CallError`. An API function's parameter named like a pre-bound variable
(``board``) must receive that very object, so a program cannot hand the API a board of its own making.
"""

from __future__ import annotations

import ast
import enum
import inspect
import operator
import sys
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, ClassVar

BUILTINS = ("range", "zip", "len", "enumerate", "list", "tuple")
"""The interpreter's own functions, available to every program."""

# ProgramError codes (stable strings for callers to classify failures; API functions add their own).
SYNTAX = "syntax"  # the source is not Python, or too big or too nested to read
NOT_ALLOWED = "not_allowed"  # valid Python outside the accepted subset
UNKNOWN_NAME = "unknown_name"  # a name or function that does not exist (yet)
LIMIT = "limit"  # a Limits bound was reached
TYPE = "type"  # an operation on the wrong kind of value
VALUE = "value"  # the right kind of value, but unusable (index out of range, range step 0, unpacking count)
ARGUMENTS = "arguments"  # a function called with arguments it does not take
API = "api"  # CallError's default code


@dataclass(frozen=True)
class Limits:
    """Bounds on what one program may make the host do (see the module docstring)."""

    max_source_chars: int = 20_000
    max_nesting: int = 50  # statements and expressions inside one another in the source
    max_statements_run: int = 5_000  # executed statement/call steps in all
    max_loop_items: int = 1_000  # items any single for loop may iterate; a longer range() is refused when made
    max_call_depth: int = 20  # nested calls of user-defined functions (recursion)
    max_sequence_len: int = 1_000  # longest list/tuple/str the program may build (literals, +, *, builtins)
    max_int: int = 10**6  # absolute value of any int the program computes
    max_api_calls: int = 500
    max_value_items: int = 2_000  # items, nested ones included, in a value compared or passed to the API
    max_value_depth: int = 10  # lists/tuples inside one another in such a value


DEFAULT_LIMITS = Limits()


class ProgramError(Exception):
    """Why a program was refused or stopped.

    ``message`` is for the robot: ``"line 3: while loops are not allowed; use a for loop over range(n)"``;
    ``reason`` is the same without the ``line N:`` prefix (an API function's own words, verbatim);
    ``line`` is 1-based or None; ``code`` is a stable string: ``syntax``, ``not_allowed``,
    ``unknown_name``, ``limit``, ``type``, ``value``, ``arguments``, or the code of the API's CallError.
    """

    def __init__(self, reason: str, code: str, line: int | None = None) -> None:
        super().__init__(reason, code, line)  # positional, so the error pickles across processes
        self.reason = reason
        self.code = code
        self.line = line
        self.message = reason if line is None else f"line {line}: {reason}"

    def __str__(self) -> str:
        return self.message


class CallError(Exception):
    """Raised by an API function to report the program author's mistake (``message``, ``code``). The
    interpreter turns it into a ProgramError with the same code and message at the calling line."""

    def __init__(self, message: str, code: str = API) -> None:
        super().__init__(message, code)
        self.message = message
        self.code = code

    def __str__(self) -> str:
        return self.message


@dataclass
class RunResult:
    """What a program that ran to its end did: ``statements`` steps, and the API calls as (name, line)."""

    statements: int
    api_calls: list[tuple[str, int]] = field(default_factory=list)


def check_program(
    source: str, functions: Collection[str], limits: Limits = DEFAULT_LIMITS, *, variables: Collection[str] = ()
) -> ast.Module:
    """Static check: syntax, and every node kind, name and call target in the accepted subset, with the API
    ``functions`` and pre-bound ``variables`` named. Raises ProgramError naming the first problem and its line.
    Nothing runs."""
    tree = _parse(source, limits)
    _check_nesting(tree, limits.max_nesting)
    _Checker(tree, functions, variables, limits).module(tree)
    return tree


def run_program(
    source: str,
    functions: Mapping[str, Callable[..., Any]],
    variables: Mapping[str, Any],
    limits: Limits = DEFAULT_LIMITS,
) -> RunResult:
    """Check ``source`` (:func:`check_program`), then interpret it. ``functions`` are the API (put, remove,
    move, ...): only these, the program's own defs and the builtins range, zip, len, enumerate, list and
    tuple may be called. ``variables`` are pre-bound names (``board``). Raises ProgramError; on any error the
    API calls made before it have happened (see the module docstring: run on a copy)."""
    tree = check_program(source, functions, limits, variables=variables)
    return _Run(tree, functions, variables, limits).run()


# ---- reading the source --------------------------------------------------------------------------------
def _parse(source: str, limits: Limits) -> ast.Module:
    # The length check comes first: ast.parse's time and memory grow with the source.
    if len(source) > limits.max_source_chars:
        raise ProgramError(
            f"the program is {len(source)} characters long; the limit is {limits.max_source_chars}: "
            "shorten it, with a for loop or a def for repeated steps",
            LIMIT,
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. an invalid escape in a string: nothing the host should print
            return ast.parse(source, filename="<robot>")
    except SyntaxError as error:  # IndentationError and TabError included
        raise ProgramError(f"syntax error: {error.msg}", SYNTAX, error.lineno) from error
    except (RecursionError, MemoryError) as error:  # the C parser's own guards against deeply nested source
        raise ProgramError(
            "the code is nested too deeply to read (brackets or operators inside one another); "
            "split it into several lines",
            SYNTAX,
        ) from error
    except ValueError as error:  # e.g. a null byte, on Pythons that do not call it a SyntaxError
        raise ProgramError(f"the code cannot be read: {error}", SYNTAX) from error


def _check_nesting(tree: ast.Module, limit: int) -> None:
    """Refuse trees nested deeper than ``limit`` statements/expressions, without recursion (the tree may be
    thousands deep), so the recursive checker and interpreter below stay shallow."""
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        for child in ast.iter_child_nodes(node):
            level = depth + isinstance(child, (ast.stmt, ast.expr))
            if level > limit:
                raise ProgramError(
                    f"the code is nested more than {limit} levels deep (blocks, brackets and operators inside "
                    "one another); split it into simpler lines",
                    LIMIT,
                    getattr(child, "lineno", None),
                )
            stack.append((child, level))


# ---- the static check ----------------------------------------------------------------------------------
_ATTRIBUTE = "attribute access (x.y) is not allowed; call the functions by name, e.g. put(board, ...)"
_COMPREHENSION = "comprehensions are not allowed; use a for loop"
_ASYNC = "async code is not allowed"
_TRY = "try/except is not allowed; a failing call stops the program and reports why"
_STARRED = "* and ** unpacking are not allowed; write the values out one by one"
_REFUSED: dict[type[ast.AST], str] = {
    ast.While: "while loops are not allowed; use a for loop over range(n)",
    ast.Import: "import is not allowed; everything you can use is already available",
    ast.ImportFrom: "import is not allowed; everything you can use is already available",
    ast.Attribute: _ATTRIBUTE,
    ast.Lambda: "lambda is not allowed; use def",
    ast.ListComp: _COMPREHENSION,
    ast.SetComp: _COMPREHENSION,
    ast.DictComp: _COMPREHENSION,
    ast.GeneratorExp: _COMPREHENSION,
    ast.Dict: "dictionaries are not allowed; use lists and tuples",
    ast.Set: "sets are not allowed; use lists and tuples",
    ast.With: "with is not allowed",
    ast.AsyncWith: _ASYNC,
    ast.AsyncFor: _ASYNC,
    ast.AsyncFunctionDef: _ASYNC,
    ast.Await: _ASYNC,
    ast.Try: _TRY,
    ast.TryStar: _TRY,
    ast.Raise: "raise is not allowed; a failing call stops the program by itself",
    ast.Assert: "assert is not allowed; use if",
    ast.Global: "global is not allowed; pass values to the def and return results",
    ast.Nonlocal: "nonlocal is not allowed; pass values to the def and return results",
    ast.ClassDef: "classes are not allowed; use def",
    ast.Delete: "del is not allowed",
    ast.Yield: "yield is not allowed; return a list instead",
    ast.YieldFrom: "yield is not allowed; return a list instead",
    ast.JoinedStr: "f-strings are not allowed; join strings with +",
    ast.Starred: _STARRED,
    ast.NamedExpr: "the := operator is not allowed; assign on a line of its own",
    ast.IfExp: "a if c else b is not allowed; use an if statement",
    ast.Match: "match is not allowed; use if/elif/else",
    ast.AnnAssign: "type hints are not allowed; write x = value",
    ast.Slice: "a slice (a:b) can only be used inside [ ]",
}
_OPERATORS: dict[type[ast.AST], str] = {
    ast.Pow: "**",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.MatMult: "@",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
    ast.Invert: "~",
}
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult)


def _refusal(node: ast.AST, line: int | None = None) -> ProgramError:
    reason = _REFUSED.get(type(node), f"{type(node).__name__} is not allowed here")
    return ProgramError(reason, NOT_ALLOWED, getattr(node, "lineno", line))


def _operator_refusal(op: ast.AST, line: int) -> ProgramError:
    symbol = _OPERATORS.get(type(op), type(op).__name__)
    hint = "multiply, or use a for loop" if isinstance(op, ast.Pow) else "only + - * work, on whole numbers"
    return ProgramError(f"the {symbol} operator is not allowed; {hint}", NOT_ALLOWED, line)


@dataclass(frozen=True)
class _Where:
    top: bool = True  # a statement of the module itself (where defs may go)
    in_def: bool = False
    in_loop: bool = False  # inside a for loop of the current def or module


class _Checker:
    """Walks the whole tree once and raises at the first node outside the accepted subset."""

    def __init__(self, tree: ast.Module, functions: Collection[str], variables: Collection[str], limits: Limits):
        self.limits = limits
        self.api = list(functions)
        defs = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
        self.callable = set(self.api) | set(BUILTINS) | set(defs)
        self.variables = set(variables)

    def module(self, tree: ast.Module) -> None:
        self.block(tree.body, _Where())

    def block(self, body: Sequence[ast.stmt], where: _Where) -> None:
        for node in body:
            self.stmt(node, where)

    def stmt(self, node: ast.stmt, where: _Where) -> None:
        inner = _Where(top=False, in_def=where.in_def, in_loop=where.in_loop)
        if isinstance(node, ast.Expr):
            self.expr_statement(node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                self.target(target)
            self.expr(node.value)
        elif isinstance(node, ast.AugAssign):
            self.aug_assign(node)
        elif isinstance(node, ast.For):
            self.for_loop(node, inner)
        elif isinstance(node, ast.If):
            self.expr(node.test)
            self.block(node.body, inner)
            self.block(node.orelse, inner)
        elif isinstance(node, (ast.Break, ast.Continue)):
            if not where.in_loop:
                word = "break" if isinstance(node, ast.Break) else "continue"
                raise ProgramError(f"{word} is only allowed inside a for loop", NOT_ALLOWED, node.lineno)
        elif isinstance(node, ast.Return):
            if not where.in_def:
                raise ProgramError("return is only allowed inside a def", NOT_ALLOWED, node.lineno)
            if node.value is not None:
                self.expr(node.value)
        elif isinstance(node, ast.FunctionDef):
            self.function(node, where)
        elif not isinstance(node, ast.Pass):
            raise _refusal(node)

    def expr_statement(self, node: ast.Expr) -> None:
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return  # a docstring or a string used as a comment
        self.expr(value)  # refuses yield, await, := and the like with their own message
        if not isinstance(value, ast.Call):
            raise ProgramError(
                "this line computes a value and does nothing with it; assign it (x = ...) or call a function",
                NOT_ALLOWED,
                node.lineno,
            )

    def aug_assign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            self.target(node.target)  # refuses x[i] += ... and x.y += ... with their own message
            raise _refusal(node)
        self.assignable(node.target.id, node.target)
        if not isinstance(node.op, _ARITHMETIC):
            raise _operator_refusal(node.op, node.lineno)
        self.expr(node.value)

    def for_loop(self, node: ast.For, where: _Where) -> None:
        if node.orelse:
            raise ProgramError(
                "for ... else is not allowed; use a variable to remember whether the loop stopped early",
                NOT_ALLOWED,
                node.orelse[0].lineno,
            )
        self.target(node.target)
        self.expr(node.iter)
        self.block(node.body, _Where(top=False, in_def=where.in_def, in_loop=True))

    def function(self, node: ast.FunctionDef, where: _Where) -> None:
        if not where.top:
            raise ProgramError(
                "a def must be at the top level of the program, not inside a block or another def",
                NOT_ALLOWED,
                node.lineno,
            )
        if node.decorator_list:
            raise ProgramError("decorators (@...) are not allowed", NOT_ALLOWED, node.decorator_list[0].lineno)
        self.no_dunder(node.name, node.lineno)
        if node.name in self.api or node.name in BUILTINS or node.name in self.variables:
            raise ProgramError(
                f"{node.name} is already defined for you; give your def another name", NOT_ALLOWED, node.lineno
            )
        self.parameters(node)
        self.block(node.body, _Where(top=False, in_def=True, in_loop=False))

    def parameters(self, node: ast.FunctionDef) -> None:
        args = node.args
        if args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg:
            raise ProgramError(
                "a def takes plain parameters only, e.g. def tower(x, y, color='red') (no /, *, *args or **kwargs)",
                NOT_ALLOWED,
                node.lineno,
            )
        if node.returns is not None or any(arg.annotation is not None for arg in args.args):
            raise ProgramError("type hints are not allowed; write def tower(x, y)", NOT_ALLOWED, node.lineno)
        seen: set[str] = set()
        for arg in args.args:
            self.no_dunder(arg.arg, node.lineno)
            # A parameter may be named like a pre-bound variable (def tower(board, x, y)): it is local.
            if arg.arg in self.callable:
                raise ProgramError(
                    f"{arg.arg} is a function name; give the parameter another name", NOT_ALLOWED, node.lineno
                )
            if arg.arg in seen:
                raise ProgramError(f"the parameter {arg.arg} appears twice", NOT_ALLOWED, node.lineno)
            seen.add(arg.arg)
        for default in args.defaults:
            self.literal(default)

    def literal(self, node: ast.expr) -> None:
        """A parameter's default: a plain value, so a def never runs code when it is defined."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            node = node.operand
        if isinstance(node, (ast.Tuple, ast.List)):
            for item in node.elts:
                self.literal(item)
        elif isinstance(node, ast.Constant):
            self.constant(node)
        else:
            raise ProgramError(
                "a default value must be a plain value such as 0, 'red', None or ('washer', 'red')",
                NOT_ALLOWED,
                node.lineno,
            )

    def target(self, node: ast.expr) -> None:
        if isinstance(node, ast.Name):
            self.assignable(node.id, node)
        elif isinstance(node, (ast.Tuple, ast.List)):
            for item in node.elts:
                self.target(item)
        elif isinstance(node, ast.Subscript):
            raise ProgramError(
                "changing an item in place (x[i] = ...) is not allowed; build a new list, "
                "e.g. x = x[:i] + [value] + x[i + 1:]",
                NOT_ALLOWED,
                node.lineno,
            )
        elif isinstance(node, (ast.Attribute, ast.Starred)):
            raise _refusal(node)
        else:
            raise ProgramError("you can only assign to names, e.g. x = ... or a, b = ...", NOT_ALLOWED, node.lineno)

    def assignable(self, name: str, node: ast.expr) -> None:
        self.no_dunder(name, node.lineno)
        if name in self.variables:
            raise ProgramError(
                f"{name} is given to you and cannot be replaced; use another name", NOT_ALLOWED, node.lineno
            )
        if name in self.callable:
            raise ProgramError(f"{name} is a function; use another name for the variable", NOT_ALLOWED, node.lineno)

    def no_dunder(self, name: str, line: int) -> None:
        if name.startswith("__"):
            raise ProgramError(f"names starting with __ ({name}) are not allowed", NOT_ALLOWED, line)

    def expr(self, node: ast.expr) -> None:
        if isinstance(node, ast.Constant):
            self.constant(node)
        elif isinstance(node, ast.Name):
            self.name(node)
        elif isinstance(node, (ast.List, ast.Tuple)):
            for item in node.elts:
                self.expr(item)
        elif isinstance(node, ast.BinOp):
            if not isinstance(node.op, _ARITHMETIC):
                raise _operator_refusal(node.op, node.lineno)
            self.expr(node.left)
            self.expr(node.right)
        elif isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Invert):
                raise _operator_refusal(node.op, node.lineno)
            self.expr(node.operand)
        elif isinstance(node, ast.BoolOp):
            for value in node.values:
                self.expr(value)
        elif isinstance(node, ast.Compare):  # every comparison operator is accepted
            for value in (node.left, *node.comparators):
                self.expr(value)
        elif isinstance(node, ast.Subscript):
            self.subscript(node)
        elif isinstance(node, ast.Call):
            self.call(node)
        else:
            raise _refusal(node)

    def constant(self, node: ast.Constant) -> None:
        value = node.value
        if value is None or isinstance(value, bool):
            return
        if isinstance(value, int):
            if abs(value) > self.limits.max_int:
                raise ProgramError(
                    f"numbers must stay between -{self.limits.max_int} and {self.limits.max_int}", LIMIT, node.lineno
                )
        elif isinstance(value, str):
            if len(value) > self.limits.max_sequence_len:
                raise ProgramError(
                    f"a string may be at most {self.limits.max_sequence_len} characters long", LIMIT, node.lineno
                )
        elif isinstance(value, float):
            raise ProgramError(f"{value!r} is not a whole number; use whole numbers", NOT_ALLOWED, node.lineno)
        else:
            shown = "..." if value is Ellipsis else type(value).__name__
            raise ProgramError(
                f"{shown} values are not allowed; use numbers, strings, lists and tuples", NOT_ALLOWED, node.lineno
            )

    def name(self, node: ast.Name) -> None:
        self.no_dunder(node.id, node.lineno)
        if node.id in self.callable:
            raise ProgramError(
                f"{node.id} is a function: call it, as in {node.id}(...); functions cannot be used as values",
                NOT_ALLOWED,
                node.lineno,
            )

    def subscript(self, node: ast.Subscript) -> None:
        self.expr(node.value)
        if isinstance(node.slice, ast.Slice):
            for part in (node.slice.lower, node.slice.upper, node.slice.step):
                if part is not None:
                    self.expr(part)
        else:
            self.expr(node.slice)

    def call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            raise _refusal(func)
        if not isinstance(func, ast.Name):
            raise ProgramError(
                "only functions can be called, by their plain name, e.g. put(board, ...)", NOT_ALLOWED, node.lineno
            )
        self.no_dunder(func.id, node.lineno)
        if func.id not in self.callable:
            raise ProgramError(
                f"{func.id}() is not available; you can call {', '.join([*self.api, *BUILTINS])} and your own defs",
                UNKNOWN_NAME,
                node.lineno,
            )
        for arg in node.args:
            self.expr(arg)
        seen: set[str] = set()
        for keyword in node.keywords:
            if keyword.arg is None:
                raise ProgramError(_STARRED, NOT_ALLOWED, node.lineno)
            self.no_dunder(keyword.arg, node.lineno)
            if keyword.arg in seen:
                raise ProgramError(f"the argument {keyword.arg}= is given twice", NOT_ALLOWED, node.lineno)
            seen.add(keyword.arg)
            self.expr(keyword.value)


# ---- running -------------------------------------------------------------------------------------------
class _Flow(enum.Enum):
    """How a block ended: what the enclosing loop or call must do next."""

    NEXT = enum.auto()
    BREAK = enum.auto()
    CONTINUE = enum.auto()
    RETURN = enum.auto()


@dataclass
class _Frame:
    """The names one level of the program sees: the module's, or a call's locals."""

    names: dict[str, Any]
    local_names: frozenset[str] | None = None  # a def's parameters and assigned names; None at the top level
    returned: Any = None


@dataclass(frozen=True)
class _UserFunction:
    node: ast.FunctionDef
    params: tuple[str, ...]
    defaults: tuple[Any, ...]
    local_names: frozenset[str]

    def describe(self) -> str:
        first_default = len(self.params) - len(self.defaults)
        shown = [
            p if i < first_default else f"{p}={self.defaults[i - first_default]!r}" for i, p in enumerate(self.params)
        ]
        return f"{self.node.name}({', '.join(shown)})"


# Python frames between two counted interpreter levels at most (_call -> _call_user -> _block -> _stmt), and
# frames left free for API functions and the caller: together they keep the interpreter's recursion inside
# Python's limit, so deep recursion in a program is a ProgramError and never a RecursionError.
_FRAMES_PER_LEVEL = 4
_FRAME_MARGIN = 200
_SEQUENCES = (list, tuple, str, range)
_ORDERING: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


def _level_budget() -> int:
    depth = 0
    frame: FrameType | None = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return max(0, (sys.getrecursionlimit() - depth - _FRAME_MARGIN) // _FRAMES_PER_LEVEL)


def _kind(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return repr(value)
    names = {int: "a number", str: "a string", list: "a list", tuple: "a tuple", range: "a range"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return f"a {type(value).__name__}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int)  # bools too, as in Python


def _range_len(start: int, stop: int, step: int) -> int:
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // -step)


def _describe_signature(name: str, signature: inspect.Signature) -> str:
    shown: list[str] = []
    for param in signature.parameters.values():
        if param.kind is param.KEYWORD_ONLY and not any(part.startswith("*") for part in shown):
            shown.append("*")  # what follows is given by keyword only
        if param.kind is param.VAR_POSITIONAL:
            shown.append(f"*{param.name}")
        elif param.kind is param.VAR_KEYWORD:
            shown.append(f"**{param.name}")
        elif param.default is param.empty:
            shown.append(param.name)
        else:
            shown.append(f"{param.name}={param.default!r}"[:40])
    return f"{name}({', '.join(shown)})"


class _Run:
    """One run of a checked program: the module's names, the defs run so far and the counters."""

    def __init__(
        self,
        tree: ast.Module,
        functions: Mapping[str, Callable[..., Any]],
        variables: Mapping[str, Any],
        limits: Limits,
    ) -> None:
        self.tree = tree
        self.functions = dict(functions)
        self.variables = dict(variables)
        self.limits = limits
        self.globals: dict[str, Any] = {}
        self.defs: dict[str, _UserFunction] = {}
        self.declared = {node.name: node.lineno for node in tree.body if isinstance(node, ast.FunctionDef)}
        self.steps = 0
        self.api_calls: list[tuple[str, int]] = []
        self.call_depth = 0
        self.levels = 0  # _stmt and _value calls under way: the interpreter's own recursion
        self.max_levels = _level_budget()
        self.signatures: dict[str, inspect.Signature | None] = {}

    def run(self) -> RunResult:
        self._block(self.tree.body, _Frame(self.globals))
        return RunResult(self.steps, self.api_calls)

    # -- counting ------------------------------------------------------------------------------------------
    def _tick(self, node: ast.AST) -> None:
        self.steps += 1
        if self.steps > self.limits.max_statements_run:
            raise ProgramError(
                f"the program ran more than {self.limits.max_statements_run} steps; do the work with fewer "
                "statements and calls",
                LIMIT,
                getattr(node, "lineno", None),
            )

    def _enter(self, node: ast.AST) -> None:
        self.levels += 1
        if self.levels > self.max_levels:
            raise ProgramError(
                "the program nests calls too deeply; make the recursion stop sooner or use a for loop",
                LIMIT,
                getattr(node, "lineno", None),
            )

    def _int(self, value: int, node: ast.AST) -> int:
        if abs(value) > self.limits.max_int:
            bound = self.limits.max_int
            raise ProgramError(
                f"a number went beyond the range -{bound} to {bound}", LIMIT, getattr(node, "lineno", None)
            )
        return value

    def _length(self, count: int, node: ast.AST) -> None:
        if count > self.limits.max_sequence_len:
            raise ProgramError(
                f"this would make a list, tuple or string of {count} items; the limit is "
                f"{self.limits.max_sequence_len}",
                LIMIT,
                getattr(node, "lineno", None),
            )

    def _check_value(self, value: Any, node: ast.AST, what: str) -> None:
        """Bound a value before Python walks it in full (== and in, or an API function): a program can
        build lists whose shared items make them huge or deep when walked, cheaply. Iterative and stops
        early, so the check itself costs at most max_value_items steps."""
        stack: list[tuple[Any, int]] = [(value, 1)]
        items = 0
        while stack:
            item, depth = stack.pop()
            if not isinstance(item, (list, tuple)):
                continue
            items += len(item)
            if depth > self.limits.max_value_depth or items > self.limits.max_value_items:
                raise ProgramError(
                    f"{what} is too big: at most {self.limits.max_value_items} items and lists nested "
                    f"{self.limits.max_value_depth} deep",
                    LIMIT,
                    getattr(node, "lineno", None),
                )
            stack.extend((inner, depth + 1) for inner in item if isinstance(inner, (list, tuple)))

    def _sequence(self, value: Any, node: ast.AST, what: str) -> Any:
        if not isinstance(value, _SEQUENCES):
            raise ProgramError(
                f"{what} must be a list, tuple, string or range, not {_kind(value)}",
                TYPE,
                getattr(node, "lineno", None),
            )
        return value

    # -- statements ----------------------------------------------------------------------------------------
    def _block(self, body: Sequence[ast.stmt], frame: _Frame) -> _Flow:
        for node in body:
            flow = self._stmt(node, frame)
            if flow is not _Flow.NEXT:
                return flow
        return _Flow.NEXT

    def _stmt(self, node: ast.stmt, frame: _Frame) -> _Flow:
        self._tick(node)
        try:
            self._enter(node)
            return self._STATEMENTS[type(node)](self, node, frame)
        finally:
            self.levels -= 1

    def _expr_stmt(self, node: ast.Expr, frame: _Frame) -> _Flow:
        self._value(node.value, frame)
        return _Flow.NEXT

    def _assign(self, node: ast.Assign, frame: _Frame) -> _Flow:
        value = self._value(node.value, frame)
        for target in node.targets:
            self._assign_to(target, value, frame)
        return _Flow.NEXT

    def _aug_assign(self, node: ast.AugAssign, frame: _Frame) -> _Flow:
        assert isinstance(node.target, ast.Name)  # the check allows nothing else
        current = self._load(node.target, frame)
        # x += v builds a new value (never changes a list in place), so no other name sees the change.
        frame.names[node.target.id] = self._arith(node.op, current, self._value(node.value, frame), node)
        return _Flow.NEXT

    def _assign_to(self, target: ast.expr, value: Any, frame: _Frame) -> None:
        if isinstance(target, ast.Name):
            frame.names[target.id] = value
            return
        assert isinstance(target, (ast.Tuple, ast.List))  # the check allows nothing else
        items = self._sequence(value, target, "a value unpacked into several names")
        if len(items) != len(target.elts):
            raise ProgramError(f"cannot unpack {len(items)} values into {len(target.elts)} names", VALUE, target.lineno)
        for inner, item in zip(target.elts, items, strict=True):
            self._assign_to(inner, item, frame)

    def _for(self, node: ast.For, frame: _Frame) -> _Flow:
        items = self._sequence(self._value(node.iter, frame), node, "what a for loop goes over")
        if len(items) > self.limits.max_loop_items:
            raise ProgramError(
                f"this loop would run {len(items)} times; a loop may run at most {self.limits.max_loop_items} times",
                LIMIT,
                node.lineno,
            )
        # A snapshot: an API function handed the list must not be able to change what the loop goes over.
        for item in tuple(items) if isinstance(items, list) else items:
            self._assign_to(node.target, item, frame)
            flow = self._block(node.body, frame)
            if flow is _Flow.BREAK:
                break
            if flow is _Flow.RETURN:
                return flow
        return _Flow.NEXT

    def _if(self, node: ast.If, frame: _Frame) -> _Flow:
        branch = node.body if self._value(node.test, frame) else node.orelse
        return self._block(branch, frame)

    def _pass(self, node: ast.Pass, frame: _Frame) -> _Flow:
        return _Flow.NEXT

    def _break(self, node: ast.Break, frame: _Frame) -> _Flow:
        return _Flow.BREAK

    def _continue(self, node: ast.Continue, frame: _Frame) -> _Flow:
        return _Flow.CONTINUE

    def _return(self, node: ast.Return, frame: _Frame) -> _Flow:
        frame.returned = None if node.value is None else self._value(node.value, frame)
        return _Flow.RETURN

    def _def(self, node: ast.FunctionDef, frame: _Frame) -> _Flow:
        defaults = tuple(self._value(default, frame) for default in node.args.defaults)
        params = tuple(arg.arg for arg in node.args.args)
        assigned = (n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
        self.defs[node.name] = _UserFunction(node, params, defaults, frozenset((*params, *assigned)))
        return _Flow.NEXT

    # -- expressions ---------------------------------------------------------------------------------------
    def _value(self, node: ast.expr, frame: _Frame) -> Any:
        try:
            self._enter(node)
            return self._EXPRESSIONS[type(node)](self, node, frame)
        finally:
            self.levels -= 1

    def _constant(self, node: ast.Constant, frame: _Frame) -> Any:
        return node.value

    def _load(self, node: ast.Name, frame: _Frame) -> Any:
        name = node.id
        if frame.local_names is not None and name in frame.local_names:
            if name not in frame.names:  # Python's UnboundLocalError
                raise ProgramError(f"{name} is used before it is given a value", UNKNOWN_NAME, node.lineno)
            return frame.names[name]
        for names in (self.globals, self.variables):
            if name in names:
                return names[name]
        raise ProgramError(f"{name} is not defined; give it a value first", UNKNOWN_NAME, node.lineno)

    def _list(self, node: ast.List | ast.Tuple, frame: _Frame) -> Any:
        self._length(len(node.elts), node)
        items = [self._value(item, frame) for item in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)

    def _binop(self, node: ast.BinOp, frame: _Frame) -> Any:
        return self._arith(node.op, self._value(node.left, frame), self._value(node.right, frame), node)

    def _arith(self, op: ast.operator, left: Any, right: Any, node: ast.AST) -> Any:
        if _is_int(left) and _is_int(right):
            result = (
                left + right if isinstance(op, ast.Add) else left - right if isinstance(op, ast.Sub) else left * right
            )
            return self._int(result, node)
        joinable = (str, list, tuple)
        if isinstance(op, ast.Add) and isinstance(left, joinable) and type(left) is type(right):
            self._length(len(left) + len(right), node)  # before building it
            return operator.add(left, right)  # str, list or tuple, both the same kind
        if isinstance(op, ast.Mult):
            sequence, count = (left, right) if _is_int(right) else (right, left)
            if isinstance(sequence, joinable) and _is_int(count):
                self._length(len(sequence) * max(count, 0), node)  # before building it
                return sequence * count
        verb = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply"}[type(op)]
        raise ProgramError(f"cannot {verb} {_kind(left)} and {_kind(right)}", TYPE, getattr(node, "lineno", None))

    def _unaryop(self, node: ast.UnaryOp, frame: _Frame) -> Any:
        value = self._value(node.operand, frame)
        if isinstance(node.op, ast.Not):
            return not value
        if not _is_int(value):
            raise ProgramError(f"cannot use a sign on {_kind(value)}", TYPE, node.lineno)
        return self._int(-value if isinstance(node.op, ast.USub) else +value, node)

    def _boolop(self, node: ast.BoolOp, frame: _Frame) -> Any:
        stop_when = isinstance(node.op, ast.Or)  # `or` stops at the first true value, `and` at the first false
        value = None
        for item in node.values:
            value = self._value(item, frame)
            if bool(value) is stop_when:
                break
        return value

    def _compare(self, node: ast.Compare, frame: _Frame) -> bool:
        left = self._value(node.left, frame)
        for op, item in zip(node.ops, node.comparators, strict=True):
            right = self._value(item, frame)
            if not self._compare_pair(op, left, right, node):
                return False
            left = right
        return True

    def _compare_pair(self, op: ast.cmpop, left: Any, right: Any, node: ast.Compare) -> bool:
        if isinstance(op, (ast.Is, ast.IsNot)):
            return (left is right) == isinstance(op, ast.Is)
        for value in (left, right):
            self._check_value(value, node, "a value compared here")
        if isinstance(op, (ast.In, ast.NotIn)):
            container = self._sequence(right, node, "the right side of in")
            if isinstance(container, str) and not isinstance(left, str):
                raise ProgramError(f"cannot look for {_kind(left)} in a string", TYPE, node.lineno)
            return (left in container) == isinstance(op, ast.In)
        if isinstance(op, (ast.Eq, ast.NotEq)):
            return bool(left == right) == isinstance(op, ast.Eq)
        same_kind = (_is_int(left) and _is_int(right)) or any(
            isinstance(left, kind) and isinstance(right, kind) for kind in (str, list, tuple)
        )
        try:
            if same_kind:
                return bool(_ORDERING[type(op)](left, right))
        except TypeError:  # lists or tuples whose items cannot be ordered, e.g. [1] < ["a"]
            pass
        raise ProgramError(f"cannot order {_kind(left)} and {_kind(right)}", TYPE, node.lineno)

    def _subscript(self, node: ast.Subscript, frame: _Frame) -> Any:
        sequence = self._sequence(self._value(node.value, frame), node, "what is indexed with [ ]")
        if isinstance(node.slice, ast.Slice):
            parts = (node.slice.lower, node.slice.upper, node.slice.step)
            bounds = [None if part is None else self._index(self._value(part, frame), node) for part in parts]
            if bounds[2] == 0:
                raise ProgramError("a slice step cannot be 0", VALUE, node.lineno)
            return sequence[slice(*bounds)]  # never longer than the sequence itself
        index = self._index(self._value(node.slice, frame), node)
        if not -len(sequence) <= index < len(sequence):
            raise ProgramError(
                f"index {index} is out of range for {_kind(sequence)} of {len(sequence)} items (the first is 0)",
                VALUE,
                node.lineno,
            )
        return sequence[index]

    def _index(self, value: Any, node: ast.AST) -> int:
        if not _is_int(value):
            raise ProgramError(
                f"an index must be a whole number, not {_kind(value)}", TYPE, getattr(node, "lineno", None)
            )
        return int(value)

    # -- calls ---------------------------------------------------------------------------------------------
    def _call(self, node: ast.Call, frame: _Frame) -> Any:
        assert isinstance(node.func, ast.Name)  # the check allows nothing else
        name = node.func.id
        args = [self._value(arg, frame) for arg in node.args]
        kwargs = {str(keyword.arg): self._value(keyword.value, frame) for keyword in node.keywords}
        self._tick(node)
        if name in self.defs:
            return self._call_user(self.defs[name], args, kwargs, node)
        if name in self.functions:
            return self._call_api(name, self.functions[name], args, kwargs, node)
        if name in self._BUILTINS:
            return self._BUILTINS[name](self, args, kwargs, node)
        raise ProgramError(
            f"{name}() is called before its def (line {self.declared.get(name)}) has run; "
            "put the def above its first use",
            UNKNOWN_NAME,
            node.lineno,
        )

    def _call_user(self, function: _UserFunction, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        if self.call_depth >= self.limits.max_call_depth:
            raise ProgramError(
                f"calls of your defs go more than {self.limits.max_call_depth} deep; make the recursion stop "
                "sooner or use a for loop",
                LIMIT,
                node.lineno,
            )
        frame = _Frame(self._bind_user(function, args, kwargs, node), function.local_names)
        self.call_depth += 1
        try:
            flow = self._block(function.node.body, frame)
        finally:
            self.call_depth -= 1
        return frame.returned if flow is _Flow.RETURN else None

    def _bind_user(
        self, function: _UserFunction, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> dict[str, Any]:
        params = function.params

        def refuse(problem: str) -> ProgramError:
            return ProgramError(f"{function.describe()}: {problem}", ARGUMENTS, node.lineno)

        if len(args) > len(params):
            raise refuse(f"takes {len(params)} arguments but got {len(args)}")
        names = dict(zip(params, args, strict=False))
        for key, value in kwargs.items():
            if key not in params:
                raise refuse(f"has no parameter {key}")
            if key in names:
                raise refuse(f"got two values for {key}")
            names[key] = value
        first_default = len(params) - len(function.defaults)
        for i, param in enumerate(params):
            if param not in names:
                if i < first_default:
                    raise refuse(f"no value for {param}")
                names[param] = function.defaults[i - first_default]
        return names

    def _call_api(
        self, name: str, function: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> Any:
        if len(self.api_calls) >= self.limits.max_api_calls:
            raise ProgramError(
                f"the program called the robot's functions more than {self.limits.max_api_calls} times",
                LIMIT,
                node.lineno,
            )
        self._bind_api(name, function, args, kwargs, node)
        for value in (*args, *kwargs.values()):
            self._check_value(value, node, f"an argument of {name}()")
        self.api_calls.append((name, node.lineno))
        try:
            return function(*args, **kwargs)
        except CallError as error:  # the author's mistake, in the API's words and code
            raise ProgramError(error.message, error.code, node.lineno) from error

    def _bind_api(
        self, name: str, function: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> None:
        """Report wrong arguments before the call (a TypeError from inside the function could be a bug of
        its own, which must not pass for the program's mistake), and hold pre-bound parameters to their
        objects."""
        if name not in self.signatures:
            try:
                self.signatures[name] = inspect.signature(function)
            except (TypeError, ValueError):  # some callables have no readable signature: let them check
                self.signatures[name] = None
        signature = self.signatures[name]
        if signature is None:
            return
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            shown = _describe_signature(name, signature)
            raise ProgramError(f"{shown}: {error}", ARGUMENTS, node.lineno) from None
        for param, value in bound.arguments.items():
            if param in self.variables and value is not self.variables[param]:
                raise ProgramError(
                    f"{name}() needs {param} itself as its {param} argument, not {_kind(value)}", TYPE, node.lineno
                )

    # -- builtins --------------------------------------------------------------------------------------------
    def _refuse_arguments(self, usage: str, node: ast.Call) -> ProgramError:
        return ProgramError(usage, ARGUMENTS, node.lineno)

    def _range(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> range:
        if kwargs or not 1 <= len(args) <= 3 or not all(_is_int(arg) for arg in args):
            raise self._refuse_arguments(
                "range() takes 1 to 3 whole numbers: range(stop), range(start, stop) or range(start, stop, step)",
                node,
            )
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], 1 if len(args) == 2 else args[2])
        if step == 0:
            raise ProgramError("range() step cannot be 0", VALUE, node.lineno)
        count = _range_len(start, stop, step)  # from the arguments: nothing is made yet
        if count > self.limits.max_loop_items:
            raise ProgramError(
                f"range() would hold {count} numbers; a loop may run at most {self.limits.max_loop_items} times",
                LIMIT,
                node.lineno,
            )
        return range(start, stop, step)

    def _zip(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> list[tuple[Any, ...]]:
        if kwargs:
            raise self._refuse_arguments("zip() takes lists, tuples, strings or ranges, and no keywords", node)
        sequences = [self._sequence(arg, node, "each argument of zip()") for arg in args]
        self._length(min((len(sequence) for sequence in sequences), default=0), node)
        return list(zip(*sequences, strict=False))

    def _enumerate(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> list[tuple[int, Any]]:
        usage = "enumerate() takes a list, tuple, string or range, and a start number"
        if set(kwargs) - {"start"} or not 1 <= len(args) <= 2 or len(args) + len(kwargs) > 2:
            raise self._refuse_arguments(usage, node)
        start = args[1] if len(args) == 2 else kwargs.get("start", 0)
        if not _is_int(start):
            raise self._refuse_arguments(usage, node)
        sequence = self._sequence(args[0], node, "the argument of enumerate()")
        self._length(len(sequence), node)
        self._int(start + len(sequence), node)
        return list(enumerate(sequence, start))

    def _len(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> int:
        if kwargs or len(args) != 1:
            raise self._refuse_arguments("len() takes one list, tuple, string or range", node)
        return len(self._sequence(args[0], node, "the argument of len()"))

    def _list_of(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> list[Any]:
        if kwargs or len(args) > 1:
            raise self._refuse_arguments("list() takes one list, tuple, string or range, or nothing", node)
        sequence = self._sequence(args[0], node, "the argument of list()") if args else ()
        self._length(len(sequence), node)
        return list(sequence)

    def _tuple_of(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> tuple[Any, ...]:
        if kwargs or len(args) > 1:
            raise self._refuse_arguments("tuple() takes one list, tuple, string or range, or nothing", node)
        sequence = self._sequence(args[0], node, "the argument of tuple()") if args else ()
        self._length(len(sequence), node)
        return tuple(sequence)

    # Dispatch tables: one entry per node kind the check accepts (a direct call, no extra stack frame).
    _STATEMENTS: ClassVar[dict[type[ast.AST], Callable[..., _Flow]]] = {
        ast.Expr: _expr_stmt,
        ast.Assign: _assign,
        ast.AugAssign: _aug_assign,
        ast.For: _for,
        ast.If: _if,
        ast.Pass: _pass,
        ast.Break: _break,
        ast.Continue: _continue,
        ast.Return: _return,
        ast.FunctionDef: _def,
    }
    _EXPRESSIONS: ClassVar[dict[type[ast.AST], Callable[..., Any]]] = {
        ast.Constant: _constant,
        ast.Name: _load,
        ast.List: _list,
        ast.Tuple: _list,
        ast.BinOp: _binop,
        ast.UnaryOp: _unaryop,
        ast.BoolOp: _boolop,
        ast.Compare: _compare,
        ast.Subscript: _subscript,
        ast.Call: _call,
    }
    _BUILTINS: ClassVar[dict[str, Callable[..., Any]]] = {
        "range": _range,
        "zip": _zip,
        "enumerate": _enumerate,
        "len": _len,
        "list": _list_of,
        "tuple": _tuple_of,
    }
