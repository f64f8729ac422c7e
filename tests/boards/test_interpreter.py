"""The robot's code interpreter: accepted programs call the API in order with the right arguments; hostile
programs are refused (before anything runs where the check can tell) with a code and a line, and leave no file,
no new module and no memory behind; every limit stops a program at its bound; API failures keep their code and
line; random programs of the grammar end in a result or a ProgramError, never another exception."""

from __future__ import annotations

import ast
import pickle
import sys
import textwrap
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from simlab.worlds.boards import interpreter
from simlab.worlds.boards.interpreter import CallError, Limits, ProgramError, RunResult, check_program, run_program


class Board:
    """The opaque object the name ``board`` holds."""


class FakeApi:
    """Test doubles of the robot's API: they record each call; ``put`` at x == fail_at raises a CallError."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.board = Board()
        self.calls: list[tuple[Any, ...]] = []
        self.fail_at = fail_at

    def put(self, board: Board, shape: str, color: str, x: int, y: int) -> None:
        if x == self.fail_at:
            raise CallError(
                "depth mismatch while placing bridge-h, adjacent cell has different depth", "depth_mismatch"
            )
        self.calls.append(("put", shape, color, x, y))

    def move(self, board: Board, x1: int, y1: int, x2: int, y2: int, shapes_list: Any = None) -> None:
        self.calls.append(("move", x1, y1, x2, y2, shapes_list))

    def note(self, *values: Any) -> str:
        """Records computed values, so a test can see what an expression gave; returns something to hold."""
        self.calls.append(("note", *values))
        return "noted"

    def functions(self) -> dict[str, Any]:
        return {"put": self.put, "move": self.move, "note": self.note}

    def run(self, source: str, limits: Limits = interpreter.DEFAULT_LIMITS) -> RunResult:
        return run_program(textwrap.dedent(source), self.functions(), {"board": self.board}, limits)


def run(source: str, limits: Limits = interpreter.DEFAULT_LIMITS) -> list[tuple[Any, ...]]:
    api = FakeApi()
    api.run(source, limits)
    return api.calls


def refused(source: str, limits: Limits = interpreter.DEFAULT_LIMITS) -> tuple[ProgramError, FakeApi]:
    api = FakeApi()
    with pytest.raises(ProgramError) as caught:
        api.run(source, limits)
    return caught.value, api


# ---- accepted programs -------------------------------------------------------------------------------------
def test_the_briefs_example_calls_the_api_in_order():
    api = FakeApi()
    result = api.run(
        """
        put(board, "washer", "red", 1, 1)
        put(board, shape="bridge-h", color="blue", x=2, y=3)
        for x, c in zip([1, 2, 3], ["red", "green", "blue"]):
            put(board, "nut", c, x, 4)
        def tower(x, y):
            put(board, "washer", "red", x, y)
            put(board, "nut", "blue", x, y)
        tower(5, 5)
        move(board, 1, 1, 2, 2, shapes_list=[("washer", "red")])
        """
    )
    assert api.calls == [
        ("put", "washer", "red", 1, 1),
        ("put", "bridge-h", "blue", 2, 3),
        ("put", "nut", "red", 1, 4),
        ("put", "nut", "green", 2, 4),
        ("put", "nut", "blue", 3, 4),
        ("put", "washer", "red", 5, 5),
        ("put", "nut", "blue", 5, 5),
        ("move", 1, 1, 2, 2, [("washer", "red")]),
    ]
    assert [line for _, line in result.api_calls] == [2, 3, 5, 5, 5, 7, 8, 10]  # the source starts with a newline
    assert [name for name, _ in result.api_calls] == ["put"] * 7 + ["move"]


ACCEPTED = [
    ("keywords in any order", "put(board, y=2, x=1, color='red', shape='nut')", [("put", "nut", "red", 1, 2)]),
    ("for over a tuple", "for x in (3, 1):\n    note(x)", [("note", 3), ("note", 1)]),
    ("for over range(a, b, step)", "for x in range(7, 0, -3):\n    note(x)", [("note", 7), ("note", 4), ("note", 1)]),
    ("for over a string", "for ch in 'ab':\n    note(ch)", [("note", "a"), ("note", "b")]),
    (
        "enumerate with start",
        "for i, c in enumerate(['r', 'g'], start=1):\n    note(i, c)",
        [("note", 1, "r"), ("note", 2, "g")],
    ),
    (
        "nested loops",
        "for x in range(1, 3):\n    for y in [5, 6]:\n        put(board, 'nut', 'red', x, y)",
        [
            ("put", "nut", "red", 1, 5),
            ("put", "nut", "red", 1, 6),
            ("put", "nut", "red", 2, 5),
            ("put", "nut", "red", 2, 6),
        ],
    ),
    ("nested unpacking", "a, (b, c) = 1, [2, 3]\nnote(a, b, c)", [("note", 1, 2, 3)]),
    ("chained assignment", "a = b = 4\nnote(a + b)", [("note", 8)]),
    ("arithmetic", "x = 2 + 3 * 4 - -1\nx -= 5\nx *= 2\nx += 1\nnote(x)", [("note", 21)]),
    (
        "joining and repeating",
        "note('ab' + 'c', [1] * 3, (0,) + (1,), 2 * 'x')",
        [("note", "abc", [1, 1, 1], (0, 1), "xx")],
    ),
    ("+= builds a new list", "a = [1]\nb = a\na += [2]\nnote(a, b)", [("note", [1, 2], [1])]),
    (
        "def with defaults, keywords and return",
        "def cell(x, y=2, color='red'):\n    return (x, y, color)\n"
        "note(cell(1), cell(1, color='blue'), cell(y=5, x=3))",
        [("note", (1, 2, "red"), (1, 2, "blue"), (3, 5, "red"))],
    ),
    ("return without a value", "def f():\n    return\nnote(f())", [("note", None)]),
    (
        "a def's parameter may be named board",
        "def t(board, x):\n    put(board, 'nut', 'red', x, 1)\nt(board, 2)",
        [("put", "nut", "red", 2, 1)],
    ),
    (
        "bounded recursion",
        "def f(n):\n    if n > 0:\n        note(n)\n        f(n - 1)\nf(2)",
        [("note", 2), ("note", 1)],
    ),
    (
        "if / elif / else",
        "for n in range(4):\n    if n == 0:\n        note('zero')\n"
        "    elif n in [1, 2] and not n == 2:\n        note('one')\n"
        "    elif n < 3 or n != n:\n        note('two')\n    else:\n        note('big')",
        [("note", "zero"), ("note", "one"), ("note", "two"), ("note", "big")],
    ),
    (
        "comparisons",
        "note(1 < 2 <= 2, 'a' not in 'bc', None is None, [1, 2] == [1, 2], (1, 2) < (1, 3))",
        [("note", True, True, True, True, True)],
    ),
    ("and / or give a value", "note(0 or 5, 3 and 0, '' or 'x')", [("note", 5, 0, "x")]),
    (
        "break and continue",
        "for i in range(10):\n    if i == 1:\n        continue\n    if i == 3:\n        break\n    note(i)",
        [("note", 0), ("note", 2)],
    ),
    (
        "return from inside a loop",
        "def first(xs):\n    for x in xs:\n        return x\nnote(first([7, 8]))",
        [("note", 7)],
    ),
    (
        "indexing and slices",
        "xs = [1, 2, 3, 4]\nnote(xs[0], xs[-1], xs[1:3], xs[::2], 'abc'[1], range(5)[2], len(xs))",
        [("note", 1, 4, [2, 3], [1, 3], "b", 2, 4)],
    ),
    (
        "list() and tuple()",
        "note(list('ab'), tuple([1]), list(), tuple(range(2)))",
        [("note", ["a", "b"], (1,), [], (0, 1))],
    ),
    ("API results can be held", "r = note(1)\nnote(r)", [("note", 1), ("note", "noted")]),
    (
        "comments, docstrings and several statements",
        '"""Two washers."""\n# the first\nput(board, "washer", "red", 1, 1)  # left\n\n'
        'def f():\n    """A helper."""\n    put(board, "washer", "blue", 1, 2)\nf()',
        [("put", "washer", "red", 1, 1), ("put", "washer", "blue", 1, 2)],
    ),
    (
        "board may be passed on under another name",
        "b = board\nput(b, 'nut', 'red', 1, 1)",
        [("put", "nut", "red", 1, 1)],
    ),
]


@pytest.mark.parametrize(("source", "calls"), [case[1:] for case in ACCEPTED], ids=[case[0] for case in ACCEPTED])
def test_accepted_programs_call_the_api_with_the_right_arguments(source, calls):
    assert run(source) == calls


def test_steps_count_every_statement_and_every_call():
    # the for statement, the range() call, then per item the Expr statement and the note() call
    result = FakeApi().run("for i in range(3):\n    note(i)")
    assert result.statements == 1 + 1 + 3 * 2
    assert result.api_calls == [("note", 2)] * 3


# ---- hostile programs --------------------------------------------------------------------------------------
NOT_ALLOWED, UNKNOWN, LIMIT, SYNTAX, TYPE = "not_allowed", "unknown_name", "limit", "syntax", "type"
HOSTILE = [
    # (id, source with MARKER for a path that must not appear, code, line, refused by the static check)
    ("import", "import os", NOT_ALLOWED, 1, True),
    ("from-import", "from os import system", NOT_ALLOWED, 1, True),
    ("__import__", "__import__('os').system('touch MARKER')", NOT_ALLOWED, 1, True),
    ("__import__ by name", "m = __import__('os')", NOT_ALLOWED, 1, True),
    ("subclasses walk", "().__class__.__bases__[0].__subclasses__()", NOT_ALLOWED, 1, True),
    ("board's class", "x = board.__class__", NOT_ALLOWED, 1, True),
    ("__builtins__", "x = __builtins__", NOT_ALLOWED, 1, True),
    ("open and write", "open('MARKER', 'w').write('x')", NOT_ALLOWED, 1, True),
    ("open", "f = open('MARKER', 'w')", UNKNOWN, 1, True),
    ("eval", "eval('1')", UNKNOWN, 1, True),
    ("exec", 'exec(\'open("MARKER", "w")\')', UNKNOWN, 1, True),
    ("compile", "compile('1', '', 'exec')", UNKNOWN, 1, True),
    ("getattr", "getattr(board, 'x')", UNKNOWN, 1, True),
    ("globals", "globals()", UNKNOWN, 1, True),
    ("vars", "vars()", UNKNOWN, 1, True),
    ("breakpoint", "breakpoint()", UNKNOWN, 1, True),
    ("type", "type(board)", UNKNOWN, 1, True),
    ("print", "print(1)", UNKNOWN, 1, True),
    ("os.system", "os.system('touch MARKER')", NOT_ALLOWED, 1, True),
    ("subprocess", "subprocess.run(['touch', 'MARKER'])", NOT_ALLOWED, 1, True),
    ("while", "put(board, 'nut', 'red', 1, 1)\nwhile True:\n    pass", NOT_ALLOWED, 2, True),
    ("refused after calls: nothing runs", "put(board, 'nut', 'red', 1, 1)\nimport os", NOT_ALLOWED, 2, True),
    ("import inside a def", "def f():\n    import os", NOT_ALLOWED, 2, True),
    ("huge range with **", "for i in range(10**12):\n    pass", NOT_ALLOWED, 1, True),
    ("huge range in a loop", "for i in range(1000000):\n    put(board, 'nut', 'red', 1, 1)", LIMIT, 1, False),
    ("huge range assigned", "x = range(-1000000, 1000000)", LIMIT, 1, False),
    ("huge range by product", "x = range(999999 * 999999)", LIMIT, 1, False),
    ("recursion", "def f(n):\n    return f(n + 1)\nf(0)", LIMIT, 2, False),
    ("mutual recursion", "def f(n):\n    return g(n + 1)\ndef g(n):\n    return f(n + 1)\nf(0)", LIMIT, 4, False),
    ("str * 10**9", "x = 'a' * 10**9", NOT_ALLOWED, 1, True),
    ("str * 10**6", "x = 'a' * 1000000", LIMIT, 1, False),
    ("list * 10**6", "x = [0] * 1000000", LIMIT, 1, False),
    ("doubling a list", "x = [0]\nfor i in range(100):\n    x = x + x", LIMIT, 3, False),
    ("doubling a string", "x = 'ab'\nfor i in range(100):\n    x += x", LIMIT, 3, False),
    ("squaring", "x = 2\nfor i in range(100):\n    x = x * x", LIMIT, 3, False),
    ("huge literal", "x = 10000000000000000000000", LIMIT, 1, True),
    (
        "deep value compared",
        "x = [0]\ny = [0]\nfor i in range(60):\n    x = [x, x]\n    y = [y, y]\nz = x == y",
        LIMIT,
        6,
        False,
    ),
    (
        "deep value to the API",
        "x = 0\nfor i in range(500):\n    x = [x]\nmove(board, 1, 1, 2, 2, shapes_list=x)",
        LIMIT,
        4,
        False,
    ),
    ("wide value to the API", "x = [[0] * 1000, [0] * 1000, [0] * 1000]\nmove(board, 1, 1, 2, 2, x)", LIMIT, 2, False),
    ("lambda", "(lambda: 1)()", NOT_ALLOWED, 1, True),
    ("comprehension", "x = [x for x in range(10)]", NOT_ALLOWED, 1, True),
    ("generator", "x = list(i for i in range(10))", NOT_ALLOWED, 1, True),
    ("function as a value", "f = put\nf(board, 'nut', 'red', 1, 1)", NOT_ALLOWED, 1, True),
    ("function's globals", "x = put.__globals__", NOT_ALLOWED, 1, True),
    ("class", "class A:\n    pass", NOT_ALLOWED, 1, True),
    ("try", "try:\n    pass\nexcept:\n    pass", NOT_ALLOWED, 1, True),
    ("with", "with open('MARKER') as f:\n    pass", NOT_ALLOWED, 1, True),
    ("yield", "def f():\n    yield 1", NOT_ALLOWED, 2, True),
    ("async", "async def f():\n    pass", NOT_ALLOWED, 1, True),
    ("deep parentheses, long", "(" * 100000, LIMIT, None, True),
    ("deep minus, long", "-" * 100000 + "1", LIMIT, None, True),
    ("deep parentheses", "(" * 9000 + ")" * 9000, SYNTAX, 1, True),
    ("deep minus", "-" * 19000 + "1", SYNTAX, None, True),
    ("long sum", "x = 1" + " + 1" * 4000, SYNTAX, None, True),
    ("deep lists", "x = " + "[" * 150 + "]" * 150, LIMIT, 1, True),
    ("1 MB source", "put(board, 'washer', 'red', 1, 1)\n" * 30000, LIMIT, None, True),
    ("del", "del board", NOT_ALLOWED, 1, True),
    ("global", "def f():\n    global x", NOT_ALLOWED, 2, True),
    ("walrus", "(x := 1)", NOT_ALLOWED, 1, True),
    ("bare walrus", "x := 1", SYNTAX, 1, True),
    ("replace board", "board = 1", NOT_ALLOWED, 1, True),
    ("replace board in a loop", "for board in [1]:\n    pass", NOT_ALLOWED, 1, True),
    ("replace put", "def put(board):\n    pass", NOT_ALLOWED, 1, True),
    ("replace range", "range = 5", NOT_ALLOWED, 1, True),
    ("fake board", "put(1, 'nut', 'red', 1, 1)", TYPE, 1, False),
    ("f-string", 'x = f"{board.__class__}"', NOT_ALLOWED, 1, True),
    ("% formatting", 'x = "%s" % 1', NOT_ALLOWED, 1, True),
    ("power", "x = 2 ** 1000000", NOT_ALLOWED, 1, True),
    ("division", "x = 1 / 0", NOT_ALLOWED, 1, True),
    ("float", "x = 1.5", NOT_ALLOWED, 1, True),
    ("star args", "put(*[board, 'nut', 'red', 1, 1])", NOT_ALLOWED, 1, True),
    ("double-star kwargs", "put(board, **{'shape': 'nut'})", NOT_ALLOWED, 1, True),
    ("dict", "x = {}", NOT_ALLOWED, 1, True),
    ("item assignment", "x = [0]\nx[0] = 1", NOT_ALLOWED, 2, True),
    ("indexing the board", "x = board[0]", TYPE, 1, False),
    ("iterating the board", "for c in board:\n    pass", TYPE, 1, False),
    ("calling a call's result", "note(1)()", NOT_ALLOWED, 1, True),
    ("a call before its def", "f()\ndef f():\n    pass", UNKNOWN, 1, False),
]


@pytest.mark.parametrize(
    ("source", "code", "line", "static"), [case[1:] for case in HOSTILE], ids=[case[0] for case in HOSTILE]
)
def test_hostile_programs_are_refused_and_leave_nothing_behind(tmp_path: Path, source, code, line, static):
    marker = tmp_path / f"pwned-{uuid.uuid4().hex}"
    source = source.replace("MARKER", str(marker))
    api = FakeApi()
    modules = set(sys.modules)
    tracemalloc.start()
    try:
        with pytest.raises(ProgramError) as caught:
            run_program(source, api.functions(), {"board": api.board})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    error = caught.value
    assert (error.code, error.line) == (code, line), error.message
    assert error.message.startswith(f"line {line}: " if line else error.reason)
    assert api.calls == []  # the static refusals ran nothing; the others stopped before their first API call
    assert not marker.exists()
    assert set(sys.modules) <= modules
    assert peak < 50 * 2**20
    if static:  # the check alone refuses it, so nothing can have run
        with pytest.raises(ProgramError):
            check_program(source, api.functions(), variables=["board"])
    else:
        check_program(source, api.functions(), variables=["board"])


def test_refusals_tell_the_robot_what_to_write_instead():
    assert refused("while True:\n    pass")[0].message == (
        "line 1: while loops are not allowed; use a for loop over range(n)"
    )
    assert "attribute access (x.y) is not allowed" in refused("board.x = 1")[0].message
    assert "use a for loop" in refused("x = [i for i in range(3)]")[0].message
    assert "use whole numbers" in refused("put(board, 'nut', 'red', 1.5, 1)")[0].message
    error = refused("print(1)")[0]
    assert "you can call put, move, note, range, zip, len, enumerate, list, tuple" in error.message


def test_the_interpreter_never_names_eval_exec_or_compile():
    tree = ast.parse(Path(interpreter.__file__).read_text(encoding="utf-8"))
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert not names & {"eval", "exec", "compile", "__import__", "import_module"}


# ---- limits ------------------------------------------------------------------------------------------------
def test_the_step_budget_stops_a_program_midway_after_the_calls_it_allowed():
    # 1 step for the for statement, 1 for range(), then 2 per item (the statement and the put call): 10 steps
    # allow exactly 4 puts, and the 5th item's statement is the 11th step. The 4 puts have happened, which is
    # why the caller runs a program on a copy of the board and throws the copy away on any error.
    error, api = refused("for i in range(100):\n    put(board, 'nut', 'red', 1, i)", Limits(max_statements_run=10))
    assert (error.code, error.line) == ("limit", 2)
    assert api.calls == [("put", "nut", "red", 1, i) for i in range(4)]


@pytest.mark.parametrize(("allowed", "line"), [(6, 2), (7, 3), (8, 4), (9, 4)])
def test_the_step_budget_stops_at_the_same_statement_inside_a_block_of_assignments(allowed, line):
    # Assignments without calls are counted a block at a time; the limit must still fall on the statement it
    # falls on when each is counted: for, range(), 2 per item, then the note statement (9) and its call (10).
    source = "for i in range(3):\n    a = i\n    b = a + 1\nnote(b)"
    error, api = refused(source, Limits(max_statements_run=allowed))
    assert (error.code, error.line, api.calls) == ("limit", line, [])
    assert FakeApi().run(source, Limits(max_statements_run=10)).statements == 10


def test_a_program_run_again_starts_afresh_and_obeys_each_runs_limits_and_api():
    source = "x = [1]\nx += [len(x)]\ndef f(y=[0]):\n    return y + x\nnote(f())"
    assert run(source) == run(source) == [("note", [0, 1, 1])]  # the second run is the cached program's
    assert refused(source, Limits(max_sequence_len=2))[0].line == 4  # the limits are the run's, not the cache's
    with pytest.raises(ProgramError) as caught:  # as are the API's names: without note() it is unknown
        run_program(source, {"put": FakeApi().put}, {"board": Board()})
    assert (caught.value.code, caught.value.line) == ("unknown_name", 5)


def test_deep_recursion_through_a_deeply_nested_def_is_a_program_error():
    # Each call of f stacks closures for its nesting (lists in lists): the frames are counted per def.
    nested = "[" * 45 + "n" + "]" * 45
    source = f"def f(n):\n    x = {nested}\n    if n > 0:\n        f(n - 1)\nf(100000)"
    error, _ = refused(source, Limits(max_call_depth=10**6, max_statements_run=10**6, max_nesting=60))
    assert (error.code, error.line) == ("limit", 4)
    assert "nests calls too deeply" in error.message


def test_the_api_call_budget():
    source = "for i in range(5):\n    put(board, 'nut', 'red', 1, i)"
    assert len(run(source, Limits(max_api_calls=5))) == 5
    error, api = refused(source, Limits(max_api_calls=4))
    assert (error.code, error.line, len(api.calls)) == ("limit", 2, 4)


@pytest.mark.parametrize(("n", "ok"), [(4, True), (5, False)])
def test_the_call_depth_limit(n, ok):
    # f(n) makes n + 1 nested calls of f
    source = f"def f(n):\n    if n > 0:\n        f(n - 1)\n    note(n)\nf({n})"
    limits = Limits(max_call_depth=5)
    if ok:
        assert run(source, limits) == [("note", i) for i in range(n + 1)]
    else:
        error, api = refused(source, limits)
        assert (error.code, error.line, api.calls) == ("limit", 3, [])


@pytest.mark.parametrize(
    ("source", "ok"),
    [
        ("for i in [1, 2, 3, 4, 5]:\n    note(i)", True),
        ("for i in [1, 2, 3, 4, 5, 6]:\n    note(i)", False),
        ("for i in range(5):\n    note(i)", True),
        ("for i in range(6):\n    note(i)", False),
        ("for i in zip(range(5), 'abcdefg'):\n    note(i)", True),
    ],
)
def test_the_loop_items_limit_exactly_at_and_one_over(source, ok):
    limits = Limits(max_loop_items=5)
    if ok:
        assert len(run(source, limits)) == 5
    else:
        error, api = refused(source, limits)
        assert (error.code, error.line, api.calls) == ("limit", 1, [])


@pytest.mark.parametrize(
    ("source", "ok"),
    [
        ("x = [0] * 4", True),
        ("x = [0] * 5", False),
        ("x = 'ab' + 'cd'", True),
        ("x = 'ab' + 'cde'", False),
        ("x = [1, 2, 3, 4, 5]", False),
        ("x = list(range(5))", False),
        ("x = 1000 * 1000", True),
        ("x = 1000 * 1000 + 1", False),
        ("x = -1000 * 1000 - 1", False),
        ("x = 1000001", False),
    ],
)
def test_sequence_and_int_limits_exactly_at_and_one_over(source, ok):
    limits = Limits(max_sequence_len=4, max_int=10**6)
    if ok:
        assert run(source, limits) == []
    else:
        assert refused(source, limits)[0].code == "limit"


def test_deep_recursion_is_a_program_error_even_with_a_huge_call_depth_limit():
    source = "def f(n):\n    if n > 0:\n        f(n - 1)\nf(100000)"
    error, _ = refused(source, Limits(max_call_depth=10**6, max_statements_run=10**6))
    assert error.code == "limit"
    assert "nests calls too deeply" in error.message


def test_a_caller_deep_in_its_own_stack_still_gets_a_program_error():
    limits = Limits(max_call_depth=10**6, max_statements_run=10**6)

    def from_depth(depth: int, source: str) -> Any:
        if depth:
            return from_depth(depth - 1, source)
        try:
            return run(source, limits)
        except ProgramError as error:
            return error

    room = sys.getrecursionlimit() - 320  # leaves the interpreter about 25 levels above its margin
    assert from_depth(room, "put(board, 'nut', 'red', 1, 1)") == [("put", "nut", "red", 1, 1)]
    error = from_depth(room, "def f(n):\n    f(n + 1)\nf(0)")
    assert isinstance(error, ProgramError)
    assert error.code == "limit"


# ---- API failures ------------------------------------------------------------------------------------------
def test_a_call_error_keeps_the_apis_code_and_words_at_the_calling_line():
    api = FakeApi(fail_at=2)
    with pytest.raises(ProgramError) as caught:
        api.run("put(board, 'nut', 'red', 1, 1)\n\nput(board, 'nut', 'red', 2, 1)\nput(board, 'nut', 'red', 3, 1)")
    error = caught.value
    assert (error.code, error.line) == ("depth_mismatch", 3)
    assert error.reason == "depth mismatch while placing bridge-h, adjacent cell has different depth"
    assert error.message == f"line 3: {error.reason}"
    assert isinstance(error.__cause__, CallError)
    assert api.calls == [("put", "nut", "red", 1, 1)]  # the call before it happened: the caller must discard


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("put(board, 'nut', 'red', 1)", "missing a required argument: 'y'"),
        ("put(board, 'nut', 'red', 1, 2, 3)", "too many positional arguments"),
        ("put(board, 'nut', 'red', 1, 2, z=3)", "unexpected keyword argument 'z'"),
    ],
)
def test_wrong_arguments_to_the_api_name_the_function_and_its_parameters(source, problem):
    error, api = refused(source)
    assert (error.code, error.line, api.calls) == ("arguments", 1, [])
    assert error.message.startswith("line 1: put(board, shape, color, x, y): ")
    assert problem in error.message


def test_a_keyword_only_api_signature_is_described_with_its_star():
    def put(board: Board, shape: str = "washer", *, row: int = 1) -> None:
        pass

    with pytest.raises(ProgramError) as caught:
        run_program("put(board, 'nut', 3)", {"put": put}, {"board": Board()})
    assert caught.value.reason == "put(board, shape='washer', *, row=1): too many positional arguments"


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("f()", "f(x, y=1): no value for x"),
        ("f(1, 2, 3)", "f(x, y=1): takes 2 arguments but got 3"),
        ("f(1, x=2)", "f(x, y=1): got two values for x"),
        ("f(1, z=2)", "f(x, y=1): has no parameter z"),
    ],
)
def test_wrong_arguments_to_a_def(source, problem):
    error, _ = refused(f"def f(x, y=1):\n    pass\n{source}")
    assert (error.code, error.line) == ("arguments", 3)
    assert problem in error.message


def test_a_bug_inside_an_api_function_is_not_swallowed():
    def broken(board: Board) -> None:
        return {}["missing"]

    def typo(board: Board) -> None:
        len(5)  # a TypeError inside the function, not from the program's arguments

    for function, kind in ((broken, KeyError), (typo, TypeError)):
        with pytest.raises(kind):
            run_program("f(board)", {"f": function}, {"board": Board()})


@pytest.mark.parametrize(
    ("source", "code", "line"),
    [
        ("put(board, 'nut', colour, 1, 1)", "unknown_name", 1),
        ("def f():\n    x = x + 1\nf()", "unknown_name", 2),
        ("x = [1, 2][2]", "value", 1),
        ("x = [1] + (2,)", "type", 1),
        ("x = 'a' < 1", "type", 1),
        ("a, b = [1, 2, 3]", "value", 1),
        ("x = range(1, 5, 0)", "value", 1),
        ("x = len(5)", "type", 1),
        ("x = range('a')", "arguments", 1),
    ],
)
def test_run_time_mistakes(source, code, line):
    error, _ = refused(source)
    assert (error.code, error.line) == (code, line), error.message


def test_program_errors_survive_pickling_for_process_runners():
    error = refused("x = y")[0]
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.message, copy.code, copy.line, copy.reason) == (error.message, error.code, error.line, error.reason)


# ---- random programs ---------------------------------------------------------------------------------------
SMALL = Limits(
    max_statements_run=200, max_loop_items=30, max_call_depth=5, max_sequence_len=50, max_int=1000, max_api_calls=15
)
_ATOMS = st.one_of(
    st.integers(-3, 60).map(str),
    st.sampled_from(["a", "b", "i", "board", "'red'", "'nut'", "[1, 2, 3]", "(1, 'a')", "None", "True", "''", "999"]),
)
EXPRESSIONS = st.recursive(
    _ATOMS,
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "==", "<", "in", "and", "or"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        st.lists(inner, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
        st.tuples(st.sampled_from(["len", "range", "list", "f", "note", "tuple"]), inner).map(
            lambda t: f"{t[0]}({t[1]})"
        ),
        st.tuples(inner, inner).map(lambda t: f"zip({t[0]}, {t[1]})"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]"),
        inner.map(lambda e: f"(not {e})"),
    ),
    max_leaves=6,
)


@st.composite
def blocks(draw: st.DrawFn, depth: int = 0, in_loop: bool = False) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kinds = (
            ["put", "put", "assign", "aug", "call", "pass"] + ["break"] * in_loop + ["for", "for", "if"] * (depth < 2)
        )
        kind = draw(st.sampled_from(kinds))
        e = draw(EXPRESSIONS)
        if kind == "put":
            x, y = draw(st.sampled_from(["i", "a", "i * a", e])), draw(st.sampled_from(["b", "i + 1", e]))
            lines.append(f"put(board, 'nut', 'red', {x}, {y})")
        elif kind == "assign":
            lines.append(f"{draw(st.sampled_from(['a', 'b', 'a, b']))} = {e}")
        elif kind == "aug":
            lines.append(f"{draw(st.sampled_from(['a', 'b']))} {draw(st.sampled_from(['+', '-', '*']))}= {e}")
        elif kind == "call":
            lines.append(f"note(f({e}))")
        elif kind in ("pass", "break"):
            lines.append(kind)
        else:
            loop = kind == "for"
            over = draw(st.one_of(st.integers(0, 40).map(lambda n: f"range({n})"), st.just(e)))
            head = f"for i in {over}:" if loop else f"if {e}:"
            lines += [head, *("    " + line for line in draw(blocks(depth + 1, in_loop or loop)))]
    return lines


@st.composite
def programs(draw: st.DrawFn) -> str:
    """A def, names given values, then statements: most run for a while before they end or fail."""
    body = draw(blocks(1))
    return "\n".join(
        ["def f(a, b=2):", *("    " + line for line in body), "    return a", "a, b, i = 1, 2, 0", *draw(blocks())]
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
@example("def f(a, b=2):\n    return a\nfor i in range(30):\n    put(board, 'nut', 'red', i, f(i))")  # the API budget
def test_random_programs_end_in_a_result_or_a_program_error_within_the_limits(source):
    api = FakeApi(fail_at=-2)
    try:
        result = api.run(source, SMALL)
    except ProgramError as error:
        assert error.code in {"syntax", "not_allowed", "unknown_name", "limit", "type", "value", "arguments"} | {
            "depth_mismatch"
        }
    else:
        assert result.statements <= SMALL.max_statements_run
        assert len(result.api_calls) == len(api.calls)
    assert len(api.calls) <= SMALL.max_api_calls
    for call in api.calls:
        assert all(abs(v) <= SMALL.max_int for v in call if isinstance(v, int))
        assert all(len(v) <= SMALL.max_sequence_len for v in call if isinstance(v, (list, tuple, str)))
