"""A small, safe interpreter for the robot's Python-like code in the boards world.

A live model playing the robot answers with code such as ``put(board, "washer", "red", 1, 1)``, loops and a
helper ``def``. That code is data written by a model, so it is never handed to Python's own exec, eval or
compile: ``ast.parse`` turns it into a tree (parsing runs nothing) and this module turns the checked tree into
a tree of its own closures, one per node (or one per common small shape of nodes, such as ``x = x + i * 2``;
a loop of such whole-number assignments over a range runs on a list of registers), and runs those, so a
program can do exactly what the closures implement and nothing more. A program is read, checked and turned
into closures once and kept (a bounded cache keyed by its text, the API's and variables' names and the
limits), so sending it again costs only its run. The whole program is checked before any of it runs
(:func:`check_program`); anything outside the subset is refused with a :class:`ProgramError` that names the
line and says what to write instead.

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
import functools
import inspect
import operator
import sys
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
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
    return _compiled(source, tuple(functions), tuple(variables), limits).run(functions, variables)


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


# ---- compiling -----------------------------------------------------------------------------------------
# A checked tree is compiled once into closures, one per node (see "fused arithmetic" below for the shapes that
# take one closure for several), each taking the names it sees (the module's, or a call's locals) and the run's
# state; a compiled program is kept per (source, API names, variable names, limits), so a program the robot
# sends again (or a loop's body, run hundreds of times) is never re-read.
# The closures hold nothing of one run: everything a run changes lives in its _Run.
class _Flow(enum.Enum):
    """How a statement ended when it was not simply done (None): what the enclosing loop or call does next."""

    BREAK = enum.auto()
    CONTINUE = enum.auto()
    RETURN = enum.auto()


Names = dict[str, Any]
Code = Callable[[Names, "_Run"], Any]  # an expression: its value
Statement = Callable[[Names, "_Run"], "_Flow | None"]  # a statement or block: None when it ran to its end
_MISSING = object()
_CACHED_PROGRAMS = 256  # compiled programs kept, most recently used first (a program is at most 20,000 chars)

# Python frames a compiled closure tree may use per level of the source's nesting (a statement's closure and
# the block runner above it; an expression's closure and its argument loop), the frames one call of a def adds
# besides its body (the call's closure, _call_user, a fallback block runner), and the frames left free for API
# functions and the caller: a program's recursion is held inside Python's limit by counting these, so deep
# recursion in a program is a ProgramError and never a RecursionError.
_FRAMES_PER_LEVEL = 2
_FRAMES_PER_CALL = 4
_FRAME_MARGIN = 200
_TOO_DEEP = "the program nests calls too deeply; make the recursion stop sooner or use a for loop"
_SEQUENCES = (list, tuple, str, range)
_ORDERING: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


def _frame_budget() -> int:
    depth = 0
    frame: FrameType | None = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return sys.getrecursionlimit() - depth - _FRAME_MARGIN


def _frames_needed(body: Sequence[ast.stmt]) -> int:
    """The most Python frames running ``body``'s closures can stack, from its nesting (iterative, as
    _check_nesting: the count is what keeps recursion in check)."""
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(node, 1) for node in body]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + isinstance(child, (ast.stmt, ast.expr))) for child in ast.iter_child_nodes(node))
    return deepest * _FRAMES_PER_LEVEL + _FRAMES_PER_CALL


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


def _may_flow(node: ast.stmt) -> bool:
    """Whether running ``node`` can end its block early (break, continue or return reaching it)."""
    if isinstance(node, (ast.Break, ast.Continue, ast.Return)):
        return True
    if isinstance(node, ast.If):
        return any(_may_flow(inner) for inner in (*node.body, *node.orelse))
    return isinstance(node, ast.For) and any(isinstance(inner, ast.Return) for inner in ast.walk(node))


def _straight(node: ast.stmt) -> bool:
    """A statement that takes exactly one step: no call inside it, no block of its own, no break or return
    (a def's body does not run when the def does, and its defaults are plain values)."""
    if isinstance(node, ast.FunctionDef):
        return True
    simple = isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr, ast.Pass))
    return simple and not any(isinstance(inner, ast.Call) for inner in ast.walk(node))


# ---- the API's signatures ------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Signature:
    """An API function's signature and what a call by position alone needs, so most calls are bound without
    inspect's slower general binding (which still words every refusal)."""

    signature: inspect.Signature | None  # None: not readable, the function checks its own arguments
    positional: tuple[str, ...] = ()  # the parameters positional arguments fill, in order
    required: int = 0  # how many of them have no default
    by_position: bool = False  # whether any count of positional arguments in required..len(positional) binds

    @classmethod
    def of(cls, function: Callable[..., Any]) -> _Signature:
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):  # some callables have no readable signature: let them check
            return cls(None)
        params = list(signature.parameters.values())
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        others_optional = all(p.default is not p.empty for p in params if p.kind is p.KEYWORD_ONLY) and not any(
            p.kind is p.VAR_POSITIONAL for p in params
        )
        required = sum(p.default is p.empty for p in positional)
        return cls(signature, tuple(p.name for p in positional), required, others_optional)


@functools.lru_cache(maxsize=_CACHED_PROGRAMS)
def _cached_signature(function: Callable[..., Any], bound: bool) -> _Signature:
    # A bound method is made afresh for every object (the API is bound to each turn's board copy), so its
    # function is the key, with its first parameter given as a method's is.
    return _Signature.of(functools.partial(function, None) if bound else function)


def _signature(function: Callable[..., Any]) -> _Signature:
    try:
        if inspect.ismethod(function):
            return _cached_signature(function.__func__, True)
        return _cached_signature(function, False)
    except TypeError:  # an unhashable callable
        return _Signature.of(function)


# ---- the run --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _DefCode:
    """A compiled def: what calling it needs besides the defaults its def statement evaluated."""

    name: str
    params: tuple[str, ...]
    local_names: frozenset[str]
    body: Statement
    frames: int


@dataclass(frozen=True)
class _UserFunction:
    code: _DefCode
    defaults: tuple[Any, ...]

    def describe(self) -> str:
        params = self.code.params
        first_default = len(params) - len(self.defaults)
        shown = [p if i < first_default else f"{p}={self.defaults[i - first_default]!r}" for i, p in enumerate(params)]
        return f"{self.code.name}({', '.join(shown)})"


class _Run:
    """One run of a compiled program: the module's names, the defs run so far and the counters."""

    __slots__ = (
        "api_calls",
        "budget",
        "call_depth",
        "defs",
        "frames",
        "functions",
        "globals",
        "returned",
        "signatures",
        "steps",
        "variables",
    )

    def __init__(self, functions: Mapping[str, Callable[..., Any]], variables: Mapping[str, Any]) -> None:
        self.functions = dict(functions)
        self.variables = dict(variables)
        self.globals: Names = {}
        self.defs: dict[str, _UserFunction] = {}
        self.steps = 0
        self.api_calls: list[tuple[str, int]] = []
        self.call_depth = 0
        self.frames = 0  # Python frames the program's closures may be using (see _FRAMES_PER_LEVEL)
        self.budget = _frame_budget()
        self.signatures: dict[str, _Signature] = {}
        self.returned: Any = None  # what the last return statement gave, for the call it ends


def _too_many_steps(limits: Limits, line: int | None) -> ProgramError:
    return ProgramError(
        f"the program ran more than {limits.max_statements_run} steps; do the work with fewer statements and calls",
        LIMIT,
        line,
    )


@dataclass(frozen=True)
class _Program:
    """A checked program compiled to closures, ready to run any number of times."""

    body: Statement
    frames: int

    def run(self, functions: Mapping[str, Callable[..., Any]], variables: Mapping[str, Any]) -> RunResult:
        run = _Run(functions, variables)
        run.frames = self.frames
        if run.frames > run.budget:
            raise ProgramError(_TOO_DEEP, LIMIT)
        self.body(run.globals, run)
        return RunResult(run.steps, run.api_calls)


@functools.lru_cache(maxsize=_CACHED_PROGRAMS)
def _compiled(
    source: str, functions: tuple[str, ...], variables: tuple[str, ...], limits: Limits, fused: bool = True
) -> _Program:
    """The checked, compiled program; ``fused=False`` compiles every node to its generic closure (the reference
    the fused closures are tested and measured against)."""
    tree = check_program(source, functions, limits, variables=variables)
    return _Compiler(tree, functions, limits, fused).module(tree)


# ---- what the closures call --------------------------------------------------------------------------------
class _Guard:
    """The checks and operations of one set of limits that closures call out to: everything but the fast
    paths (whole numbers) the closures do inline."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    def bounded(self, value: int, line: int | None) -> int:
        if abs(value) > self.limits.max_int:
            bound = self.limits.max_int
            raise ProgramError(f"a number went beyond the range -{bound} to {bound}", LIMIT, line)
        return value

    def length(self, count: int, line: int | None) -> None:
        if count > self.limits.max_sequence_len:
            raise ProgramError(
                f"this would make a list, tuple or string of {count} items; the limit is "
                f"{self.limits.max_sequence_len}",
                LIMIT,
                line,
            )

    def check_value(self, value: Any, line: int | None, what: str) -> None:
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
                    line,
                )
            stack.extend((inner, depth + 1) for inner in item if isinstance(inner, (list, tuple)))

    @staticmethod
    def sequence(value: Any, line: int | None, what: str) -> Any:
        if not isinstance(value, _SEQUENCES):
            raise ProgramError(f"{what} must be a list, tuple, string or range, not {_kind(value)}", TYPE, line)
        return value

    @staticmethod
    def index(value: Any, line: int | None) -> int:
        if not _is_int(value):
            raise ProgramError(f"an index must be a whole number, not {_kind(value)}", TYPE, line)
        return int(value)

    def arith(self, op: type[ast.operator], left: Any, right: Any, line: int | None) -> Any:
        if _is_int(left) and _is_int(right):
            return self.bounded(
                left + right if op is ast.Add else left - right if op is ast.Sub else left * right, line
            )
        joinable = (str, list, tuple)
        if op is ast.Add and isinstance(left, joinable) and type(left) is type(right):
            self.length(len(left) + len(right), line)  # before building it
            return operator.add(left, right)  # str, list or tuple, both the same kind
        if op is ast.Mult:
            sequence, count = (left, right) if _is_int(right) else (right, left)
            if isinstance(sequence, joinable) and _is_int(count):
                self.length(len(sequence) * max(count, 0), line)  # before building it
                return sequence * count
        verb = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply"}[op]
        raise ProgramError(f"cannot {verb} {_kind(left)} and {_kind(right)}", TYPE, line)

    def compare(self, op: type[ast.cmpop], left: Any, right: Any, line: int) -> bool:
        if op is ast.Is or op is ast.IsNot:
            return (left is right) == (op is ast.Is)
        for value in (left, right):
            self.check_value(value, line, "a value compared here")
        if op is ast.In or op is ast.NotIn:
            container = self.sequence(right, line, "the right side of in")
            if isinstance(container, str) and not isinstance(left, str):
                raise ProgramError(f"cannot look for {_kind(left)} in a string", TYPE, line)
            return (left in container) == (op is ast.In)
        if op is ast.Eq or op is ast.NotEq:
            return bool(left == right) == (op is ast.Eq)
        same_kind = (_is_int(left) and _is_int(right)) or any(
            isinstance(left, kind) and isinstance(right, kind) for kind in (str, list, tuple)
        )
        try:
            if same_kind:
                return bool(_ORDERING[op](left, right))
        except TypeError:  # lists or tuples whose items cannot be ordered, e.g. [1] < ["a"]
            pass
        raise ProgramError(f"cannot order {_kind(left)} and {_kind(right)}", TYPE, line)

    def unpack(self, value: Any, count: int, line: int) -> Any:
        items = self.sequence(value, line, "a value unpacked into several names")
        if len(items) != count:
            raise ProgramError(f"cannot unpack {len(items)} values into {count} names", VALUE, line)
        return items

    def loop_items(self, value: Any, line: int) -> Any:
        items = self.sequence(value, line, "what a for loop goes over")
        if len(items) > self.limits.max_loop_items:
            raise ProgramError(
                f"this loop would run {len(items)} times; a loop may run at most {self.limits.max_loop_items} times",
                LIMIT,
                line,
            )
        # A snapshot: an API function handed the list must not be able to change what the loop goes over.
        return tuple(items) if isinstance(items, list) else items

    # -- calls ---------------------------------------------------------------------------------------------
    def call_user(self, run: _Run, function: _UserFunction, args: list[Any], kwargs: dict[str, Any], line: int) -> Any:
        if run.call_depth >= self.limits.max_call_depth:
            raise ProgramError(
                f"calls of your defs go more than {self.limits.max_call_depth} deep; make the recursion stop "
                "sooner or use a for loop",
                LIMIT,
                line,
            )
        code = function.code
        if run.frames + code.frames > run.budget:
            raise ProgramError(_TOO_DEEP, LIMIT, line)
        names = _bind_user(function, args, kwargs, line)
        run.call_depth += 1
        run.frames += code.frames
        try:
            flow = code.body(names, run)
        finally:
            run.call_depth -= 1
            run.frames -= code.frames
        return run.returned if flow is _Flow.RETURN else None

    def call_api(self, run: _Run, name: str, args: list[Any], kwargs: dict[str, Any], line: int) -> Any:
        if len(run.api_calls) >= self.limits.max_api_calls:
            raise ProgramError(
                f"the program called the robot's functions more than {self.limits.max_api_calls} times", LIMIT, line
            )
        function = run.functions[name]
        _bind_api(run, name, function, args, kwargs, line)
        for value in (*args, *kwargs.values()):
            if isinstance(value, (list, tuple)):
                self.check_value(value, line, f"an argument of {name}()")
        run.api_calls.append((name, line))
        try:
            return function(*args, **kwargs)
        except CallError as error:  # the author's mistake, in the API's words and code
            raise ProgramError(error.message, error.code, line) from error

    # -- builtins ------------------------------------------------------------------------------------------
    def builtins(self) -> dict[str, Callable[[list[Any], dict[str, Any], int], Any]]:
        """The interpreter's own functions by name (BUILTINS), bound to these limits."""
        return {
            "range": self.range_of,
            "zip": self.zip_of,
            "enumerate": self.enumerate_of,
            "len": self.len_of,
            "list": self.list_of,
            "tuple": self.tuple_of,
        }

    def range_of(self, args: list[Any], kwargs: dict[str, Any], line: int) -> range:
        if kwargs or not 1 <= len(args) <= 3 or not all(_is_int(arg) for arg in args):
            raise ProgramError(
                "range() takes 1 to 3 whole numbers: range(stop), range(start, stop) or range(start, stop, step)",
                ARGUMENTS,
                line,
            )
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], 1 if len(args) == 2 else args[2])
        if step == 0:
            raise ProgramError("range() step cannot be 0", VALUE, line)
        count = _range_len(start, stop, step)  # from the arguments: nothing is made yet
        if count > self.limits.max_loop_items:
            raise ProgramError(
                f"range() would hold {count} numbers; a loop may run at most {self.limits.max_loop_items} times",
                LIMIT,
                line,
            )
        return range(start, stop, step)

    def zip_of(self, args: list[Any], kwargs: dict[str, Any], line: int) -> list[tuple[Any, ...]]:
        if kwargs:
            raise ProgramError("zip() takes lists, tuples, strings or ranges, and no keywords", ARGUMENTS, line)
        sequences = [self.sequence(arg, line, "each argument of zip()") for arg in args]
        self.length(min((len(sequence) for sequence in sequences), default=0), line)
        return list(zip(*sequences, strict=False))

    def enumerate_of(self, args: list[Any], kwargs: dict[str, Any], line: int) -> list[tuple[int, Any]]:
        usage = "enumerate() takes a list, tuple, string or range, and a start number"
        if set(kwargs) - {"start"} or not 1 <= len(args) <= 2 or len(args) + len(kwargs) > 2:
            raise ProgramError(usage, ARGUMENTS, line)
        start = args[1] if len(args) == 2 else kwargs.get("start", 0)
        if not _is_int(start):
            raise ProgramError(usage, ARGUMENTS, line)
        sequence = self.sequence(args[0], line, "the argument of enumerate()")
        self.length(len(sequence), line)
        self.bounded(start + len(sequence), line)
        return list(enumerate(sequence, start))

    def len_of(self, args: list[Any], kwargs: dict[str, Any], line: int) -> int:
        if kwargs or len(args) != 1:
            raise ProgramError("len() takes one list, tuple, string or range", ARGUMENTS, line)
        return len(self.sequence(args[0], line, "the argument of len()"))

    def list_of(self, args: list[Any], kwargs: dict[str, Any], line: int) -> list[Any]:
        return list(self._copy("list", args, kwargs, line))

    def tuple_of(self, args: list[Any], kwargs: dict[str, Any], line: int) -> tuple[Any, ...]:
        return tuple(self._copy("tuple", args, kwargs, line))

    def _copy(self, name: str, args: list[Any], kwargs: dict[str, Any], line: int) -> Any:
        if kwargs or len(args) > 1:
            raise ProgramError(f"{name}() takes one list, tuple, string or range, or nothing", ARGUMENTS, line)
        sequence = self.sequence(args[0], line, f"the argument of {name}()") if args else ()
        self.length(len(sequence), line)
        return sequence


def _bind_user(function: _UserFunction, args: list[Any], kwargs: dict[str, Any], line: int) -> Names:
    params = function.code.params

    def refuse(problem: str) -> ProgramError:
        return ProgramError(f"{function.describe()}: {problem}", ARGUMENTS, line)

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


def _bind_api(
    run: _Run, name: str, function: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], line: int
) -> None:
    """Report wrong arguments before the call (a TypeError from inside the function could be a bug of its
    own, which must not pass for the program's mistake), and hold pre-bound parameters to their objects."""
    found = run.signatures.get(name)
    if found is None:
        found = run.signatures[name] = _signature(function)
    signature = found.signature
    if signature is None:
        return
    given: Iterable[tuple[str, Any]]
    if not kwargs and found.by_position and found.required <= len(args) <= len(found.positional):
        given = zip(found.positional, args, strict=False)  # what signature.bind would give, without its cost
    else:
        try:
            given = signature.bind(*args, **kwargs).arguments.items()
        except TypeError as error:
            raise ProgramError(f"{_describe_signature(name, signature)}: {error}", ARGUMENTS, line) from None
    for param, value in given:
        if param in run.variables and value is not run.variables[param]:
            raise ProgramError(f"{name}() needs {param} itself as its {param} argument, not {_kind(value)}", TYPE, line)


def _ticked(statements: Sequence[Statement], lines: Sequence[int], limits: Limits) -> Statement:
    """A block that counts a step before each statement, and stops at a break, continue or return."""
    steps_allowed = limits.max_statements_run
    pairs = tuple(zip(lines, statements, strict=True))

    def block(names: Names, run: _Run) -> _Flow | None:
        for line, statement in pairs:
            run.steps += 1
            if run.steps > steps_allowed:
                raise _too_many_steps(limits, line)
            flow = statement(names, run)
            if flow is not None:
                return flow
        return None

    return block


def _prepaid(steps: Sequence[_Step], ticked: Statement, steps_allowed: int) -> Statement:
    """A block of straight statements (see _straight): its steps are counted at once, as none of them can add
    steps of its own or leave the block early; where the step limit falls inside it, ``ticked`` runs it
    instead, so the program stops at the very statement it stops at otherwise."""
    count = len(steps)

    def block(names: Names, run: _Run) -> _Flow | None:
        if run.steps + count > steps_allowed:
            return ticked(names, run)
        run.steps += count
        for name, code in steps:  # x = ... stored here, saving a call per assignment
            if name is None:
                code(names, run)
            else:
                names[name] = code(names, run)
        return None

    return block


def _register_loop(
    name: str, over: tuple[Code, Callable[[Any, int], Any], int], registers: _IntBody, body: Statement, limits: Limits
) -> Statement:
    """``for name in items:`` (``over``: the items' closure, the guard's loop_items and the line) over a body
    that runs on ``registers`` where it can (see _IntBody): its statements are straight (see _straight), so
    every pass takes the same steps and none can end the loop early, and the whole loop's steps are counted
    before its first pass. Where the step limit falls inside the loop, or the registers cannot take it, the
    passes run one ``body`` (its block) at a time, so the program stops at the very statement it stops at
    otherwise."""
    items, loop_items, line = over
    count, steps_allowed = len(registers.statements), limits.max_statements_run

    def for_loop(names: Names, run: _Run) -> None:
        sequence = loop_items(items(names, run), line)
        steps = len(sequence) * count
        if run.steps + steps <= steps_allowed and registers.runs(sequence, names):
            run.steps += steps
            registers.run(sequence, names, run)
            return
        for item in sequence:
            names[name] = item
            body(names, run)

    return for_loop


def _storing(name: str, value: Code) -> Statement:
    def assign_name(names: Names, run: _Run) -> None:
        names[name] = value(names, run)

    return assign_name


def _returning(flow: _Flow | None) -> Statement:
    def statement(names: Names, run: _Run) -> _Flow | None:
        return flow

    return statement


def _constant(value: Any) -> Code:
    def constant(names: Names, run: _Run) -> Any:
        return value

    return constant


_FAST_COMPARE: dict[type[ast.cmpop], Callable[[int, int], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    **_ORDERING,
}
Operand = tuple[bool, bool, Any, Code]
_Step = tuple[str | None, Code]  # is a constant, is a name, the constant or the name, its closure


# ---- fused arithmetic ----------------------------------------------------------------------------------
# A tight loop spends its time on closure calls, so the commonest arithmetic shapes (_Shape) are each one
# closure that reads its names and constants inline and applies its operators as the operator module's
# functions bound in the closure (cheaper than branching on the operator). A fused closure only ever computes
# whole numbers within the int limit; anything else (another kind of value, a number out of range, a name not
# yet given a value) is handed to the generic closure of the same expression, which computes it again from the
# start (reading a name or a constant has no effect) and gives the same value or the same error, so fusing
# changes nothing but the time taken.
_Leaf = tuple[bool, Any]  # is it a name; the name or the constant
IntOperation = Callable[[int, int], int]
_OPERATIONS: dict[type[ast.AST], IntOperation] = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def _subtracted_from(x: int, inner: int) -> int:
    """``inner - x``: the outer operation of ``(b INNER c) - a``, which the closures compute as ``op(a, inner)``."""
    return inner - x


def _leaf(node: ast.expr) -> _Leaf | None:
    """A name or a constant, read inline by the fused closures; None for anything else."""
    if isinstance(node, ast.Name):
        return True, node.id
    if isinstance(node, ast.Constant):
        return False, node.value
    return None


@dataclass(frozen=True)
class _Shape:
    """An arithmetic expression of a fused shape, where a, b and c (``leaves``, in that order) are names or
    constants: ``a OP b`` (``total - i``), ``a OP (b INNER c)`` (``total + i * 2``; ``(b INNER c) OP a`` too,
    with ``op`` taking a first), or a lone leaf (``x = y``, no ``op``)."""

    op: IntOperation | None
    leaves: tuple[_Leaf, ...]
    inner: IntOperation | None = None

    @classmethod
    def of(cls, node: ast.expr) -> _Shape | None:
        """The shape of ``node``, or None if it has none of them."""
        leaf = _leaf(node)
        if leaf is not None:
            return cls(None, (leaf,))
        if not isinstance(node, ast.BinOp):
            return None
        op, left, right = _OPERATIONS[type(node.op)], node.left, node.right
        if isinstance(left, ast.BinOp) and not isinstance(right, ast.BinOp):  # (b INNER c) OP a
            left, right, op = right, left, _subtracted_from if op is operator.sub else op  # + and * commute
        if isinstance(right, ast.BinOp):
            leaves = _leaf(left), _leaf(right.left), _leaf(right.right)
            shape = cls(op, tuple(leaf for leaf in leaves if leaf is not None), _OPERATIONS[type(right.op)])
        else:
            shape = cls(op, tuple(leaf for leaf in (_leaf(left), _leaf(right)) if leaf is not None))
        return shape if len(shape.leaves) == (2 if shape.inner is None else 3) else None


def _fused(shape: _Shape, top: int, generic: Code) -> Code:
    """The closure of a two- or three-leaf ``shape`` over the names of a scope; whole numbers only, the rest
    to ``generic`` (see the section's comment)."""
    op, inner_op, low, ((a_name, a), (b_name, b)) = shape.op, shape.inner, -top, shape.leaves[:2]
    assert op is not None  # a lone leaf is no arithmetic
    if inner_op is None:

        def leaf_op_leaf(names: Names, run: _Run) -> Any:
            try:
                x = names[a] if a_name else a
                y = names[b] if b_name else b
            except KeyError:  # a name this scope has no value for (yet): the generic closure looks further
                return generic(names, run)
            if type(x) is int and type(y) is int:
                result = op(x, y)
                if low <= result <= top:
                    return result
            return generic(names, run)

        return leaf_op_leaf
    c_name, c = shape.leaves[2]

    def nested(names: Names, run: _Run) -> Any:
        try:
            x = names[a] if a_name else a
            y = names[b] if b_name else b
            z = names[c] if c_name else c
        except KeyError:  # as in leaf_op_leaf
            return generic(names, run)
        if type(x) is int and type(y) is int and type(z) is int:
            inner = inner_op(y, z)
            if low <= inner <= top:
                result = op(x, inner)
                if low <= result <= top:
                    return result
        return generic(names, run)

    return nested


# ---- loops of whole-number arithmetic ----------------------------------------------------------------------
# The tightest loops (for i in range(n): total = total + i * 2) assign whole numbers computed from whole
# numbers. Their body's names are given slots in a list of registers (constants too) at compile time; when the
# loop runs over a range and every name the body reads before assigning it holds a whole number, no value in the
# loop can be of another kind, so the register closures check only the int limit, and the names are written
# back when the loop ends. A result beyond the limit hands its statement, with the names written back, to the
# statement's generic closure, which raises the program's error at its line. A body whose every statement grows
# its target by, or sets it to, a term of registers the loop does not assign (and its own name) is bounded before
# the run (_IntBody.unchecked_holds): when no value can reach the limit, it runs without any check (a quarter
# less time for the benchmark's loop); otherwise with them, as above.
class _OutOfRange(Exception):
    """A register closure's result went beyond the int limit: ``statement`` (generic) says why."""

    def __init__(self, statement: Statement) -> None:
        super().__init__()
        self.statement = statement


Registers = list[Any]
IntStatement = Callable[[Registers], None]


def _int_statement(
    shape: _Shape, slot: Callable[[_Leaf], int], target: int, top: int, statement: Statement, inner_checked: bool
) -> IntStatement:
    """The register closure of ``target = shape``, its leaves at their ``slot``; beyond the limit, _OutOfRange
    for the generic ``statement``. Without ``inner_checked``, the inner operation's value is not checked (for
    runs where it is proven within the limit: see _IntBody.chosen)."""
    op, inner_op, low = shape.op, shape.inner, -top
    a, *others = [slot(leaf) for leaf in shape.leaves]
    if op is None:
        return _copy(target, a)
    if inner_op is None:
        (b,) = others

        def leaf_op_leaf(registers: Registers) -> None:
            result = op(registers[a], registers[b])
            if not low <= result <= top:
                raise _OutOfRange(statement)
            registers[target] = result

        return leaf_op_leaf
    b, c = others
    if not inner_checked:

        def proven_inner(registers: Registers) -> None:
            result = op(registers[a], inner_op(registers[b], registers[c]))
            if not low <= result <= top:
                raise _OutOfRange(statement)
            registers[target] = result

        return proven_inner

    def nested(registers: Registers) -> None:
        inner = inner_op(registers[b], registers[c])
        if low <= inner <= top:
            result = op(registers[a], inner)
            if low <= result <= top:
                registers[target] = result
                return
        raise _OutOfRange(statement)

    return nested


def _copy(target: int, a: int) -> IntStatement:
    def copy(registers: Registers) -> None:
        registers[target] = registers[a]  # x = y: nothing computed, nothing to check (as in the generic closure)

    return copy


def _unchecked_statement(shape: _Shape, slot: Callable[[_Leaf], int], target: int) -> IntStatement:
    """The register closure of ``target = shape`` without any check: for runs where every value is proven within
    the int limit (see _IntBody.unchecked_holds)."""
    op, inner_op, slots = shape.op, shape.inner, [slot(leaf) for leaf in shape.leaves]
    if op is None:
        return _copy(target, slots[0])
    if inner_op is None:
        a, b = slots

        def leaf_op_leaf(registers: Registers) -> None:
            registers[target] = op(registers[a], registers[b])

        return leaf_op_leaf
    a, b, c = slots

    def nested(registers: Registers) -> None:
        registers[target] = op(registers[a], inner_op(registers[b], registers[c]))

    return nested


_ADDITIVE = (operator.add, operator.sub, _subtracted_from)  # |a OP t| <= |a| + |t|
_Term = tuple[IntOperation | None, tuple[int, ...]]  # an operation (None: a lone register) and its registers


@dataclass(frozen=True)
class _Growth:
    """How a statement of a loop body moves its target's register from pass to pass: ``accumulates`` (``x = x
    +/- term``: by at most the term's size a pass) or sets it (``x = term``), the term reading only registers
    the loop does not assign and the loop's own name (see _IntBody.unchecked_holds)."""

    target: int
    accumulates: bool
    outer: _Term  # the term, or its outer operation over (a, the inner term's value): see size
    inner: _Term | None = None

    def size(self, span: Callable[[int], tuple[int, int]]) -> int:
        """The largest magnitude the term, or the inner value on the way to it, takes over the run, each register
        within its ``span``."""
        ranges = [span(slot) for slot in self.outer[1]]
        reached = []
        if self.inner is not None:
            inner_op, inner_slots = self.inner
            ranges.append(_corners(inner_op, [span(slot) for slot in inner_slots]))
            reached.append(ranges[-1])
        reached.append(_corners(self.outer[0], ranges))
        return max(abs(value) for extremes in reached for value in extremes)


def _spans(sequence: range, registers: Registers) -> Callable[[int], tuple[int, int]]:
    """The range of values a register the loop does not assign holds over a run: the loop's own name (register
    0) between the range's ends, any other its value before the run."""
    ends = (min(sequence[0], sequence[-1]), max(sequence[0], sequence[-1]))
    return lambda slot: ends if slot == 0 else (registers[slot], registers[slot])


def _corners(op: IntOperation | None, ranges: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """The lowest and highest value of ``op`` over operands each within its range: +, - and * are at their
    extremes at the corners of the ranges' box (None: the one range itself)."""
    if op is None:
        return ranges[0]
    (x_low, x_high), (y_low, y_high) = ranges
    corners = [op(x, y) for x in (x_low, x_high) for y in (y_low, y_high)]
    return min(corners), max(corners)


@dataclass(frozen=True)
class _IntBody:
    """A loop body of whole-number assignments compiled to register closures (see the section's comment)."""

    leaves: tuple[_Leaf, ...]  # what each register holds: the loop's own name first, then in order of use
    read_first: tuple[str, ...]  # names the body reads before it assigns them: whole numbers when the loop starts
    assigned: tuple[tuple[str, int], ...]  # the names the loop assigns (its own included) and their registers
    statements: tuple[IntStatement, ...]
    # Statements whose inner operation reads only the loop's own name, constants and names the loop does not
    # assign, so a run can bound its value before the first pass: (index, b's and c's registers, the inner
    # operation, the statement's closure without the inner check).
    provable: tuple[tuple[int, int, int, IntOperation, IntStatement], ...]
    top: int
    # When every statement accumulates into its target or sets it from registers the loop does not assign, a
    # run can bound every value it will make before the first pass (unchecked_holds) and run without checks.
    growth: tuple[_Growth, ...] | None
    unchecked: tuple[IntStatement, ...]

    @classmethod
    def of(cls, loop_name: str, body: Sequence[ast.stmt], steps: Sequence[_Step], top: int) -> _IntBody | None:
        """The register form of ``body`` (compiled to ``steps``), or None unless every statement is
        ``name = <shape>`` or ``name OP= <leaf or leaf OP leaf>`` of names and whole-number constants."""
        shapes = [shape for shape in map(_assigned_shape, body) if shape is not None]
        if len(shapes) < len(body):
            return None
        slots, read_first = _registers(loop_name, shapes)
        targets = {target for target, _ in shapes}

        def closure(index: int, inner_checked: bool) -> IntStatement:
            (target, shape), (_, code) = shapes[index], steps[index]
            generic = _storing(target, code)
            return _int_statement(shape, slots.__getitem__, slots[True, target], top, generic, inner_checked)

        fixed = {slot for (is_name, value), slot in slots.items() if not is_name or value not in targets}
        provable = tuple(
            (index, b, c, shape.inner, closure(index, False))
            for index, (_, shape) in enumerate(shapes)
            if shape.inner is not None and {b := slots[shape.leaves[1]], c := slots[shape.leaves[2]]} <= fixed
        )
        assigned = tuple(
            (value, slot) for (is_name, value), slot in slots.items() if is_name and value in {loop_name, *targets}
        )
        statements = tuple(closure(index, True) for index in range(len(shapes)))
        growth = _growths(shapes, slots, fixed)
        unchecked = tuple(
            _unchecked_statement(shape, slots.__getitem__, slots[True, target]) for target, shape in shapes
        )
        return cls(tuple(slots), read_first, assigned, statements, provable, top, growth, unchecked)

    def runs(self, sequence: Any, names: Names) -> bool:
        """Whether the loop can run on registers: over a range, with whole numbers where the body reads first."""
        return type(sequence) is range and all(type(names.get(name)) is int for name in self.read_first)

    def run(self, sequence: range, names: Names, run: _Run) -> None:
        """Every pass of the loop (see runs), its steps already counted."""
        registers = [names.get(value) if is_name else value for is_name, value in self.leaves]
        statements = self.chosen(sequence, registers)
        try:
            # A loop over the statements costs about as much as one of them: unrolled for bodies of one or two.
            if len(statements) == 1:
                (only,) = statements
                for registers[0] in sequence:
                    only(registers)
            elif len(statements) == 2:
                first, second = statements
                for registers[0] in sequence:
                    first(registers)
                    second(registers)
            else:
                for registers[0] in sequence:
                    for statement in statements:
                        statement(registers)
        except _OutOfRange as beyond:
            self.write_back(registers, names)
            beyond.statement(names, run)  # the same numbers: it raises the program's error at its line
            raise AssertionError("a result beyond the int limit passed the generic check") from beyond
        self.write_back(registers, names)

    def chosen(self, sequence: range, registers: Registers) -> Sequence[IntStatement]:
        """The statements' closures for a run over ``sequence``: without the inner check where the inner
        operation's value is within the int limit for every pass (an operation of +, - or * is at its
        extremes at the corners of its operands' ranges: the range's ends, or a fixed register's value)."""
        if not sequence:
            return self.statements
        if self.unchecked_holds(sequence, registers):
            return self.unchecked
        if not self.provable:
            return self.statements
        chosen, span = list(self.statements), _spans(sequence, registers)
        for index, b, c, inner, proven in self.provable:
            low, high = _corners(inner, [span(b), span(c)])
            if -self.top <= low and high <= self.top:
                chosen[index] = proven
        return chosen

    def unchecked_holds(self, sequence: range, registers: Registers) -> bool:
        """Whether no value a run over ``sequence`` makes can go beyond the int limit, so its statements need no
        check: a target set from a term and grown by terms, each term read from registers the loop does not
        assign (whose values the run cannot change) and the loop's own name (within the range's ends), is at
        most ``max(|its value before|, the largest term it is set to) + passes * (the largest terms it grows
        by)`` after any pass; each term is at most the largest value at the corners of its registers' ranges."""
        if self.growth is None:
            return False
        span = _spans(sequence, registers)
        start: dict[int, int] = {}  # per target: the largest term it is set to
        per_pass: dict[int, int] = {}  # per target: the most its terms grow it by in a pass
        for growth in self.growth:
            size = growth.size(span)
            if size > self.top:
                return False
            if growth.accumulates:
                per_pass[growth.target] = per_pass.get(growth.target, 0) + size
            else:
                start[growth.target] = max(start.get(growth.target, 0), size)
        for target in sorted({*start, *per_pass}):
            value = registers[target]  # not a whole number only if the body sets it before it reads it
            before = abs(value) if type(value) is int else 0
            if max(before, start.get(target, 0)) + len(sequence) * per_pass.get(target, 0) > self.top:
                return False
        return True

    def write_back(self, registers: Registers, names: Names) -> None:
        """The names the loop assigned, as the generic passes would have left them."""
        for name, slot in self.assigned:
            if registers[slot] is not None:  # not assigned yet, and given no value before the loop either
                names[name] = registers[slot]


def _registers(loop_name: str, shapes: Sequence[tuple[str, _Shape]]) -> tuple[dict[_Leaf, int], tuple[str, ...]]:
    """The register of each name and constant ``shapes`` use (the loop's own name first, then in order of
    use), and the names read before the body assigns them."""
    slots: dict[_Leaf, int] = {(True, loop_name): 0}
    read_first: list[str] = []
    for target, shape in shapes:
        read_first += [value for is_name, value in shape.leaves if is_name and (True, value) not in slots]
        for leaf in (*shape.leaves, (True, target)):
            slots.setdefault(leaf, len(slots))
    return slots, tuple(dict.fromkeys(read_first))


def _growths(
    shapes: Sequence[tuple[str, _Shape]], slots: Mapping[_Leaf, int], fixed: Collection[int]
) -> tuple[_Growth, ...] | None:
    """How each statement moves its target (see _Growth), or None when one reads a register the loop assigns
    other than as its own accumulator."""
    out = []
    for target, shape in shapes:
        t, registers = slots[True, target], tuple(slots[leaf] for leaf in shape.leaves)
        accumulates = shape.op in _ADDITIVE and registers[0] == t
        term = registers[1:] if accumulates else registers
        if not set(term) <= set(fixed):
            return None
        if shape.inner is not None and accumulates:
            out.append(_Growth(t, True, (shape.inner, term)))
        elif shape.inner is not None:
            out.append(_Growth(t, False, (shape.op, registers[:1]), (shape.inner, registers[1:])))
        else:
            out.append(_Growth(t, accumulates, (None if accumulates else shape.op, term)))
    return tuple(out)


def _assigned_shape(node: ast.stmt) -> tuple[str, _Shape] | None:
    """``name = <shape>`` or ``name OP= <leaf or leaf OP leaf>`` with whole-number constants: the target and
    the shape; None for any other statement."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        target, shape = node.targets[0].id, _Shape.of(node.value)
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        target = node.target.id
        shape = _Shape.of(ast.BinOp(ast.Name(target, ast.Load()), node.op, node.value))
    else:
        return None
    if shape is None or any(not is_name and type(value) is not int for is_name, value in shape.leaves):
        return None
    return target, shape


class _Compiler:
    """Turns a checked tree into closures (see the section's comment). Closures do whole-number arithmetic
    and comparisons and read plain names inline, the cases loops spend their time on; the rest they hand
    to the _Guard."""

    def __init__(self, tree: ast.Module, functions: Collection[str], limits: Limits, fused: bool = True) -> None:
        self.limits = limits
        self.fused = fused  # the fused closures and register loops (see _Shape and _IntBody)
        self.guard = _Guard(limits)
        self.api = frozenset(functions)
        self.declared = {node.name: node.lineno for node in tree.body if isinstance(node, ast.FunctionDef)}
        self.local_names: frozenset[str] | None = None  # those of the def being compiled; None at the top level

    def module(self, tree: ast.Module) -> _Program:
        return _Program(self.block(tree.body), _frames_needed(tree.body))

    # -- statements ----------------------------------------------------------------------------------------
    def block(self, body: Sequence[ast.stmt]) -> Statement:
        return self.block_of(body, [self.step(node) for node in body])

    def block_of(self, body: Sequence[ast.stmt], steps: Sequence[_Step]) -> Statement:
        """The block of ``body`` from its statements' compiled ``steps``."""
        statements = [code if name is None else _storing(name, code) for name, code in steps]
        ticked = _ticked(statements, [node.lineno for node in body], self.limits)
        if all(_straight(node) for node in body):
            return _prepaid(steps, ticked, self.limits.max_statements_run)
        return ticked

    def step(self, node: ast.stmt) -> _Step:
        """A statement as the name it assigns to and the closure of the value (``x = ...`` and ``x += ...``:
        a block stores the value itself), or None and the statement's closure."""
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            return node.targets[0].id, self.expr(node.value)
        if isinstance(node, ast.AugAssign):
            assert isinstance(node.target, ast.Name)  # the check allows nothing else
            # x += v builds a new value (never changes a list in place), so no other name sees the change.
            return node.target.id, self.arith(type(node.op), node.target, node.value, node.lineno)
        return None, self.statement(node)

    def statement(self, node: ast.stmt) -> Statement:
        if isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            return _returning(None)  # pass, or a docstring
        if isinstance(node, (ast.Break, ast.Continue)):
            return _returning(_Flow.BREAK if isinstance(node, ast.Break) else _Flow.CONTINUE)
        return self._STATEMENTS[type(node)](self, node)

    def expr_statement(self, node: ast.Expr) -> Statement:
        value = self.expr(node.value)

        def statement(names: Names, run: _Run) -> None:
            value(names, run)

        return statement

    def assign(self, node: ast.Assign) -> Statement:
        value = self.expr(node.value)
        stores = [self.store(target) for target in node.targets]

        def assign(names: Names, run: _Run) -> None:
            result = value(names, run)
            for store in stores:
                store(names, result)

        return assign

    def store(self, target: ast.expr) -> Callable[[Names, Any], None]:
        if isinstance(target, ast.Name):
            name = target.id

            def store_name(names: Names, value: Any) -> None:
                names[name] = value

            return store_name
        assert isinstance(target, (ast.Tuple, ast.List))  # the check allows nothing else
        stores = [self.store(item) for item in target.elts]
        unpack, count, line = self.guard.unpack, len(stores), target.lineno

        def store_items(names: Names, value: Any) -> None:
            for store, item in zip(stores, unpack(value, count, line), strict=True):
                store(names, item)

        return store_items

    def for_loop(self, node: ast.For) -> Statement:
        steps = [self.step(inner) for inner in node.body]
        items, store, body = self.expr(node.iter), self.store(node.target), self.block_of(node.body, steps)
        loop_items, line = self.guard.loop_items, node.lineno
        name = node.target.id if isinstance(node.target, ast.Name) else None
        if self.fused and name is not None:
            registers = _IntBody.of(name, node.body, steps, self.limits.max_int)
            if registers is not None:
                return _register_loop(name, (items, loop_items, line), registers, body, self.limits)

        def for_loop(names: Names, run: _Run) -> _Flow | None:
            for item in loop_items(items(names, run), line):
                if name is None:
                    store(names, item)
                else:
                    names[name] = item  # the usual case, without a call
                flow = body(names, run)
                if flow is _Flow.BREAK:
                    break
                if flow is _Flow.RETURN:
                    return flow
            return None

        return for_loop

    def if_else(self, node: ast.If) -> Statement:
        test, body, orelse = self.expr(node.test), self.block(node.body), self.block(node.orelse)

        def if_else(names: Names, run: _Run) -> _Flow | None:
            return body(names, run) if test(names, run) else orelse(names, run)

        return if_else

    def return_value(self, node: ast.Return) -> Statement:
        value = _constant(None) if node.value is None else self.expr(node.value)

        def return_value(names: Names, run: _Run) -> _Flow | None:
            run.returned = value(names, run)
            return _Flow.RETURN

        return return_value

    def function_def(self, node: ast.FunctionDef) -> Statement:
        defaults = [self.expr(default) for default in node.args.defaults]  # run where the def is: the top level
        params = tuple(arg.arg for arg in node.args.args)
        assigned = (n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
        self.local_names = frozenset((*params, *assigned))
        try:
            code = _DefCode(node.name, params, self.local_names, self.block(node.body), _frames_needed(node.body))
        finally:
            self.local_names = None

        def function_def(names: Names, run: _Run) -> None:
            run.defs[code.name] = _UserFunction(code, tuple([default(names, run) for default in defaults]))

        return function_def

    # -- expressions ---------------------------------------------------------------------------------------
    def expr(self, node: ast.expr) -> Code:
        return self._EXPRESSIONS[type(node)](self, node)

    def operand(self, node: ast.expr) -> Operand:
        """An operand that arithmetic or a comparison reads inline when it is a constant or a name."""
        code = self.expr(node)
        if isinstance(node, ast.Constant):
            return True, False, node.value, code
        if isinstance(node, ast.Name):
            return False, True, node.id, code
        return False, False, None, code

    def constant(self, node: ast.Constant) -> Code:
        return _constant(node.value)

    def load(self, node: ast.Name) -> Code:
        name, line = node.id, node.lineno
        if self.local_names is not None and name in self.local_names:

            def load_local(names: Names, run: _Run) -> Any:
                if name not in names:  # Python's UnboundLocalError
                    raise ProgramError(f"{name} is used before it is given a value", UNKNOWN_NAME, line)
                return names[name]

            return load_local

        def load_global(names: Names, run: _Run) -> Any:
            for scope in (run.globals, run.variables):
                if name in scope:
                    return scope[name]
            raise ProgramError(f"{name} is not defined; give it a value first", UNKNOWN_NAME, line)

        return load_global

    def sequence(self, node: ast.List | ast.Tuple) -> Code:
        items = [self.expr(item) for item in node.elts]
        length, count, line = self.guard.length, len(items), node.lineno
        as_tuple = isinstance(node, ast.Tuple)

        def sequence(names: Names, run: _Run) -> Any:
            length(count, line)  # before its items, as for every list the program builds
            values = [item(names, run) for item in items]
            return tuple(values) if as_tuple else values

        return sequence

    def binop(self, node: ast.BinOp) -> Code:
        return self.arith(type(node.op), node.left, node.right, node.lineno)

    def arith(self, op: type[ast.operator], left_node: ast.expr, right_node: ast.expr, line: int) -> Code:
        """``left OP right``: a fused closure where it has a fused shape (see _Shape), else the generic one."""
        generic = self.generic_arith(op, left_node, right_node, line)
        shape = _Shape.of(ast.BinOp(left_node, op(), right_node)) if self.fused else None
        return generic if shape is None else _fused(shape, self.limits.max_int, generic)

    def generic_arith(self, op: type[ast.operator], left_node: ast.expr, right_node: ast.expr, line: int) -> Code:
        """Any ``left OP right``: operands that are names or constants read inline, whole numbers computed here,
        the rest handed to the guard."""
        left_constant, left_name, left, left_code = self.operand(left_node)
        right_constant, right_name, right, right_code = self.operand(right_node)
        slow, top, add, subtract = self.guard.arith, self.limits.max_int, op is ast.Add, op is ast.Sub
        low = -top  # made once: -top in the closure would make a new int at every run

        def arith(names: Names, run: _Run) -> Any:
            a = left if left_constant else names[left] if left_name and left in names else left_code(names, run)
            b = right if right_constant else names[right] if right_name and right in names else right_code(names, run)
            if type(a) is int and type(b) is int:
                result = a + b if add else a - b if subtract else a * b
                if low <= result <= top:
                    return result
            return slow(op, a, b, line)  # other kinds, or a number out of range: the guard says why

        return arith

    def unaryop(self, node: ast.UnaryOp) -> Code:
        operand, line = self.expr(node.operand), node.lineno
        if isinstance(node.op, ast.Not):

            def negation(names: Names, run: _Run) -> bool:
                return not operand(names, run)

            return negation
        bounded, minus = self.guard.bounded, isinstance(node.op, ast.USub)

        def sign(names: Names, run: _Run) -> int:
            value = operand(names, run)
            if not _is_int(value):
                raise ProgramError(f"cannot use a sign on {_kind(value)}", TYPE, line)
            return bounded(-value if minus else +value, line)

        return sign

    def boolop(self, node: ast.BoolOp) -> Code:
        values = [self.expr(value) for value in node.values]
        stop_when = isinstance(node.op, ast.Or)  # `or` stops at the first true value, `and` at the first false

        def boolop(names: Names, run: _Run) -> Any:
            value = None
            for item in values:
                value = item(names, run)
                if bool(value) is stop_when:
                    break
            return value

        return boolop

    def compare(self, node: ast.Compare) -> Code:
        if len(node.ops) == 1:
            return self.compare_one(type(node.ops[0]), node.left, node.comparators[0], node.lineno)
        left = self.expr(node.left)
        rights = [(type(op), self.expr(item)) for op, item in zip(node.ops, node.comparators, strict=True)]
        pair, line = self.guard.compare, node.lineno

        def compare(names: Names, run: _Run) -> bool:
            a = left(names, run)
            for op, right in rights:
                b = right(names, run)
                if not pair(op, a, b, line):
                    return False
                a = b
            return True

        return compare

    def compare_one(self, op: type[ast.cmpop], left_node: ast.expr, right_node: ast.expr, line: int) -> Code:
        left_constant, left_name, left, left_code = self.operand(left_node)
        right_constant, right_name, right, right_code = self.operand(right_node)
        pair, fast = self.guard.compare, _FAST_COMPARE.get(op)

        def compare_one(names: Names, run: _Run) -> bool:
            a = left if left_constant else names[left] if left_name and left in names else left_code(names, run)
            b = right if right_constant else names[right] if right_name and right in names else right_code(names, run)
            if fast is not None and type(a) is int and type(b) is int:
                return fast(a, b)
            return pair(op, a, b, line)

        return compare_one

    def subscript(self, node: ast.Subscript) -> Code:
        value, line, sequence, index = self.expr(node.value), node.lineno, self.guard.sequence, self.guard.index
        if isinstance(node.slice, ast.Slice):
            parts = [
                None if part is None else self.expr(part)
                for part in (node.slice.lower, node.slice.upper, node.slice.step)
            ]

            def sliced(names: Names, run: _Run) -> Any:
                whole = sequence(value(names, run), line, "what is indexed with [ ]")
                bounds = [None if part is None else index(part(names, run), line) for part in parts]
                if bounds[2] == 0:
                    raise ProgramError("a slice step cannot be 0", VALUE, line)
                return whole[slice(*bounds)]  # never longer than the sequence itself

            return sliced
        key = self.expr(node.slice)

        def item(names: Names, run: _Run) -> Any:
            whole = sequence(value(names, run), line, "what is indexed with [ ]")
            i = index(key(names, run), line)
            if not -len(whole) <= i < len(whole):
                raise ProgramError(
                    f"index {i} is out of range for {_kind(whole)} of {len(whole)} items (the first is 0)", VALUE, line
                )
            return whole[i]

        return item

    def call(self, node: ast.Call) -> Code:
        assert isinstance(node.func, ast.Name)  # the check allows nothing else
        name, line, limits = node.func.id, node.lineno, self.limits
        args = [self.expr(arg) for arg in node.args]
        keywords = [(str(keyword.arg), self.expr(keyword.value)) for keyword in node.keywords]
        user, api = name in self.declared, name in self.api  # a def cannot be named like an API function
        builtin = self.guard.builtins().get(name)
        call_user, call_api = self.guard.call_user, self.guard.call_api
        before_def = (
            f"{name}() is called before its def (line {self.declared.get(name)}) has run; put the def above its "
            "first use"
        )

        def call(names: Names, run: _Run) -> Any:
            values = [arg(names, run) for arg in args]
            kwargs = {key: value(names, run) for key, value in keywords}
            run.steps += 1
            if run.steps > limits.max_statements_run:
                raise _too_many_steps(limits, line)
            if api:
                return call_api(run, name, values, kwargs, line)
            if user:
                function = run.defs.get(name)
                if function is None:
                    raise ProgramError(before_def, UNKNOWN_NAME, line)
                return call_user(run, function, values, kwargs, line)
            assert builtin is not None  # the check allows calling nothing else
            return builtin(values, kwargs, line)

        return call

    # Dispatch tables: one entry per node kind the check accepts.
    _STATEMENTS: ClassVar[dict[type[ast.AST], Callable[..., Statement]]] = {
        ast.Expr: expr_statement,
        ast.Assign: assign,
        ast.For: for_loop,
        ast.If: if_else,
        ast.Return: return_value,
        ast.FunctionDef: function_def,
    }
    _EXPRESSIONS: ClassVar[dict[type[ast.AST], Callable[..., Code]]] = {
        ast.Constant: constant,
        ast.Name: load,
        ast.List: sequence,
        ast.Tuple: sequence,
        ast.BinOp: binop,
        ast.UnaryOp: unaryop,
        ast.BoolOp: boolop,
        ast.Compare: compare,
        ast.Subscript: subscript,
        ast.Call: call,
    }
