"""The interpreter's fast paths against its generic closures: fused arithmetic, loops whose steps are paid up
front and loops run on registers give the same values, step counts, API calls, errors, codes, lines and
messages as the same program compiled with every node to its generic closure (``fused=False``), also where a
step or int limit falls inside such a loop, and around break and continue."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simlab.worlds.boards import interpreter
from simlab.worlds.boards.interpreter import DEFAULT_LIMITS, Limits, ProgramError

BIG = 10**9  # what big() returns: an API may hand a program a number beyond its own int limit


class Recorder:
    """The API the programs call: note() records the values it is given (so a test sees the names' values
    after a loop), big() returns a number beyond the int limit."""

    def __init__(self) -> None:
        self.notes: list[tuple[Any, ...]] = []

    def note(self, *values: Any) -> None:
        self.notes.append(values)

    @staticmethod
    def big() -> int:
        return BIG


def outcome(source: str, limits: Limits, fused: bool) -> tuple[Any, ...]:
    """Everything a run shows: its step count and API calls with what note() saw, or its error."""
    recorder = Recorder()
    functions: dict[str, Callable[..., Any]] = {"note": recorder.note, "big": recorder.big}
    try:
        result = interpreter._compiled(textwrap.dedent(source), tuple(functions), (), limits, fused).run(functions, {})
    except ProgramError as error:
        return "error", error.code, error.line, error.message, recorder.notes
    return "done", result.statements, result.api_calls, recorder.notes


def agree(source: str, limits: Limits = DEFAULT_LIMITS) -> tuple[Any, ...]:
    """The program's outcome, after checking the fast paths give exactly the generic closures' outcome."""
    fast = outcome(source, limits, fused=True)
    assert fast == outcome(source, limits, fused=False)
    return fast


LOOP = "total = 0\nfor i in range(400):\n    total = total + i * 2\n    total = total - i\nnote(total, i)"


def test_the_benchmark_loop_gives_pythons_values_and_steps() -> None:
    # 1 for total = 0, 1 for the for, 1 for range(), 2 per pass, then the note statement and its call
    assert agree(LOOP) == ("done", 3 + 400 * 2 + 2, [("note", 5)], [(sum(range(400)), 399)])


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # one statement, three statements, augmented assignments, the inner operation on the left, copies
        ("t = 0\nfor i in range(5):\n    t += i\nnote(t)", [(10,)]),
        (
            "t, u = 1, 0\nfor i in range(4):\n    t = t * 2\n    u = u - t\n    v = u\nnote(t, u, v, i)",
            [(16, -30, -30, 3)],
        ),
        ("t = 0\nfor i in range(4):\n    t += i * 3\n    t -= 1\nnote(t)", [(14,)]),
        ("t = 5\nfor i in range(3):\n    t = (i * 2) - t\nnote(t)", [(-3,)]),
        ("for i in range(3):\n    i = i * 10\n    x = i\nnote(i, x)", [(20, 20)]),
        # nested loops, a def's locals, a global read inside a def, a loop over no items
        ("t = 0\nfor j in range(3):\n    for i in range(4):\n        t = t + i * j\nnote(t)", [(18,)]),
        ("def f(n):\n    t = 0\n    for i in range(n):\n        t = t + i\n    return t\nnote(f(10))", [(45,)]),
        ("k = 3\ndef f():\n    t = 0\n    for i in range(4):\n        t = t + k\n    return t\nnote(f())", [(12,)]),
        ("i, x = 7, 8\nfor i in range(0):\n    x = i\nnote(i, x)", [(7, 8)]),
        # values that are not whole numbers: the loop's own generic closures take them
        ("t = True\nfor i in range(3):\n    t = t + i\nnote(t)", [(4,)]),
        ("s = ''\nfor c in 'abc':\n    s = s + c\nnote(s)", [("abc",)]),
        ("s = [0]\nfor i in range(2):\n    s = s + [i]\nnote(s)", [([0, 0, 1],)]),
        ("t = big()\nfor i in range(2):\n    x = t\nnote(x)", [(BIG,)]),
        ("t = 0\nfor i in [1, 2, 3]:\n    t = t + i * i\nnote(t)", [(14,)]),
        # break and continue: the loop is not straight, but its assignments are fused
        ("t = 0\nfor i in range(10):\n    t = t + i\n    if i == 5:\n        break\nnote(t, i)", [(15, 5)]),
        ("t = 0\nfor i in range(6):\n    if i == 2:\n        continue\n    t = t + i * 2\nnote(t)", [(26,)]),
    ],
)
def test_fast_paths_give_the_generic_values(source: str, expected: list[tuple[Any, ...]]) -> None:
    assert agree(source)[-1] == expected


@pytest.mark.parametrize(
    ("source", "code", "line"),
    [
        ("for i in range(3):\n    t = t + i", "unknown_name", 2),  # read before it has a value
        ("for i in range(0):\n    x = i\nnote(x)", "unknown_name", 3),  # a loop over nothing assigns nothing
        ("t = 'a'\nfor i in range(3):\n    t = t + i", "type", 3),
        ("t = big()\nfor i in range(2):\n    t = t + i", "limit", 3),
        ("t = -999999\nfor i in range(3):\n    t = t + i * 600000", "limit", 3),  # the inner result is too big
        ("t = 999990\nfor i in range(20):\n    u = i\n    t = t + i\nnote(t)", "limit", 4),  # 1000005 at the 6th pass
        ("def f():\n    t = 0\n    for i in range(9):\n        t = t - i * 300000\nf()", "limit", 4),
        # i * k can be bounded before the loop: within the limit for range(3), not for range(4) (at i == 3)
        ("k = 400000\nfor i in range(3):\n    t = 1 + i * k\nfor i in range(4):\n    t = 1 + i * k", "limit", 5),
        ("k = big()\nfor i in range(0, -3, -1):\n    t = 1 + i * k", "limit", 3),  # ... not with k too big
        ("t = 999999\nfor i in range(3):\n    u = t + i * 1", "limit", 3),  # i * 1 bounded, t + i * 1 is not
        # k changes in the loop, so i * k is not bounded in advance: too big at i == 2, though n + i * k is not
        ("k, n = 1, 0 - 1000000\nfor i in range(3):\n    t = n + i * k\n    k = (0 * k) + 750000", "limit", 3),
    ],
)
def test_fast_paths_stop_with_the_generic_error_at_the_same_line(source: str, code: str, line: int) -> None:
    assert agree(source)[:3] == ("error", code, line)


@pytest.mark.parametrize("allowed", [*range(1, 8), *range(400, 405), *range(800, 808)])
def test_the_step_limit_falls_on_the_same_statement_inside_a_fast_loop(allowed: int) -> None:
    # LOOP takes 805 steps: at that limit it ends, one fewer stops at the note call (line 5), and every limit
    # inside the loop stops at the statement the generic closures stop at
    result = agree(LOOP, Limits(max_statements_run=allowed))
    if allowed >= 805:
        assert result[:2] == ("done", 805)
    else:
        assert result[:2] == ("error", "limit")


@pytest.mark.parametrize(("top", "ok"), [(79800, True), (79799, False)])
def test_the_int_limit_exactly_at_and_one_under_the_largest_value_a_fast_loop_makes(top: int, ok: bool) -> None:
    # total grows to sum(range(400)) = 79800 at the last pass: one under it stops there, at the statement's line
    source = "total = 0\nfor i in range(400):\n    total = total + i\nnote(total)"
    result = agree(source, Limits(max_int=top))
    assert result[0] == ("done" if ok else "error")
    if not ok:
        assert result[1:3] == ("limit", 3)


SMALL = Limits(max_statements_run=120, max_loop_items=12, max_int=1000)
_LEAVES = st.sampled_from(["a", "b", "i", "0", "1", "2", "-3", "999", "1000"])
_SHAPES = st.one_of(
    _LEAVES,
    st.tuples(_LEAVES, st.sampled_from("+-*"), _LEAVES).map(" ".join),
    st.tuples(_LEAVES, st.sampled_from("+-*"), _LEAVES, st.sampled_from("+-*"), _LEAVES).map(
        lambda t: f"{t[0]} {t[1]} ({t[2]} {t[3]} {t[4]})"
    ),
    st.tuples(_LEAVES, st.sampled_from("+-*"), _LEAVES, st.sampled_from("+-*"), _LEAVES).map(
        lambda t: f"({t[0]} {t[1]} {t[2]}) {t[3]} {t[4]}"
    ),
)
_STATEMENTS = st.one_of(
    st.tuples(st.sampled_from(["a", "b", "c"]), _SHAPES).map(lambda t: f"{t[0]} = {t[1]}"),
    st.tuples(st.sampled_from(["a", "b"]), st.sampled_from("+-*"), _LEAVES).map(lambda t: f"{t[0]} {t[1]}= {t[2]}"),
    st.sampled_from(["if a > b:\n        break", "if i == 1:\n        continue"]),
)


@st.composite
def int_loops(draw: st.DrawFn) -> str:
    """Names given values (whole numbers mostly), a loop of arithmetic over a range or a list, then the
    names' values noted: most loops run on registers, some meet a limit, a non-number or a name with none."""
    values = st.sampled_from(["0", "1", "-7", "500", "True", "'x'", "[1]", "big()"])
    overs = ["range({})", "range(1, {}, 2)", "range({}, -4, -1)", "list(range({}))"]
    over = draw(st.sampled_from(overs)).format(draw(st.integers(0, 12)))
    body = draw(st.lists(_STATEMENTS, min_size=1, max_size=4))
    lines = [f"a = {draw(values)}", f"b = {draw(values)}", f"for i in {over}:", *(f"    {line}" for line in body)]
    return "\n".join([*lines, "note(a, b, i)"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(int_loops())
def test_random_arithmetic_loops_give_the_generic_outcome(source: str) -> None:
    agree(source, SMALL)


def _int_body(source: str, names: dict[str, int]) -> tuple[interpreter._IntBody, list[Any]]:
    """The register form of the one loop in ``source`` and its registers as a run starts with ``names``."""
    tree = ast.parse(textwrap.dedent(source))
    loop = tree.body[0]
    assert isinstance(loop, ast.For) and isinstance(loop.target, ast.Name)
    compiler = interpreter._Compiler(tree, ("note",), DEFAULT_LIMITS)
    steps = [compiler.step(node) for node in loop.body]
    body = interpreter._IntBody.of(loop.target.id, loop.body, steps, DEFAULT_LIMITS.max_int)
    assert body is not None
    return body, [names.get(value) if is_name else value for is_name, value in body.leaves]


@pytest.mark.parametrize(
    ("source", "names", "over", "unchecked"),
    [
        # the benchmark's loop: at most 0 + 400 * (798 + 399), well within 10**6: no check at all
        ("for i in range(400):\n    t = t + i * 2\n    t = t - i", {"t": 0}, range(400), True),
        ("for i in range(400):\n    t = t + i * 2\n    t = t - i", {"t": 0}, range(900), False),  # 1.08e6 bound
        ("for i in range(400):\n    t = t + i * 2\n    t = t - i", {"t": -999_000}, range(400), False),
        ("for i in range(0, -50, -1):\n    t -= i * k", {"t": 7, "k": 3}, range(0, -50, -1), True),  # negative step
        ("for i in range(5):\n    u = k * (i - 2)\n    t += u", {"t": 0, "k": 10**7}, range(5), False),  # u read
        ("for i in range(5):\n    t = k * (i + 2)", {"k": 10**5}, range(5), True),  # set, 6e5 at most
        ("for i in range(5):\n    t = k * (i + 20)", {"k": 10**5}, range(5), False),  # 2.4e6: checked
        ("for i in range(5):\n    t = t * 2", {"t": 1}, range(5), False),  # doubles: not accumulation
        ("for i in range(5):\n    t = t + t", {"t": 1}, range(5), False),  # reads what the loop assigns
        ("for i in range(5):\n    i = i + 1\n    t = t + i", {"t": 0}, range(5), False),  # assigns its own name
    ],
)
def test_a_loop_runs_unchecked_only_when_no_value_it_makes_can_pass_the_limit(
    source: str, names: dict[str, int], over: range, unchecked: bool
) -> None:
    body, registers = _int_body(source, names)
    assert body.unchecked_holds(over, registers) == unchecked
    assert (body.chosen(over, registers) is body.unchecked) == unchecked


@pytest.mark.parametrize(("passes", "ok"), [(833, True), (834, False)])
def test_a_loop_just_within_the_limit_runs_unchecked_one_just_beyond_stops_as_generic(passes: int, ok: bool) -> None:
    # t grows by 1200 a pass: 833 passes reach 999,600, within 10**6 (unchecked); 834 reach 1,000,800
    source = f"t = 0\nfor i in range({passes}):\n    t = t + 1200\nnote(t)"
    result = agree(source)
    assert result[0] == ("done" if ok else "error")
    if not ok:
        assert result[1:3] == ("limit", 3)
