"""Scripted agents of the block world: oracle directors stay on their walls and say oracle moves, builders
pick what they are told (or a candidate, or a random legal move), and the registry checks roles."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from simlab.core.world import Observation, Reply
from simlab.worlds.blocks.agents import (
    AGENTS,
    CLARIFY_QUESTION,
    OracleBuilder,
    OracleDirector,
    RandomBuilder,
    ScriptedBuilder,
    effect,
    legal_moves,
)
from simlab.worlds.blocks.generator import generate_structures
from simlab.worlds.blocks.language import describe_move, parse_moves
from simlab.worlds.blocks.model import BLOCK_CODES, CELLS, Action, Board, Move, adjacent
from simlab.worlds.blocks.oracle import oracle_moves
from simlab.worlds.blocks.views import DIRECTORS, director_view, visible_cell_layers

STRUCTURES = generate_structures(4, seed=11)


def task_of(target: Board) -> dict[str, Any]:
    return {"id": "t", "tier": "simple", "blocks": target.block_count(), "board": target.to_json()}


def director_obs(
    board: Board, target: Board, director: str, interior: str = "paper", this_turn: Sequence[Any] = (), turn: int = 1
) -> Observation:
    data = {
        "director": director,
        "view": director_view(target, director, interior).to_json(),
        "board": board.to_json(),
        "history": [],
        "this_turn": list(this_turn),
        "persona": "cautious",
        "interior": interior,
    }
    return Observation(director, turn, "", data=data)


def builder_obs(
    board: Board, messages: Sequence[Mapping[str, str]] = (), candidates: Sequence[Move] | None = None, turn: int = 1
) -> Observation:
    data: dict[str, Any] = {"board": board.to_json(), "messages": list(messages)}
    if candidates is not None:
        data["candidates"] = [m.to_json() for m in candidates]
    return Observation("builder", turn, "", data=data)


def boards_towards(target: Board, seed: int, steps: int = 30) -> list[Board]:
    """Boards met while mostly following the oracle, with some wrong moves mixed in (so removals occur)."""
    r = random.Random(seed)
    board, out = Board(), [Board()]
    for _ in range(steps):
        good = oracle_moves(board, target)
        if not good:
            break
        board.apply(r.choice(good) if r.random() < 0.75 else r.choice(legal_moves(board)))
        out.append(board.copy())
    return out


def move_of(reply: Reply) -> Move:
    assert reply.action is not None
    return Move.from_json(reply.action)


def on_view(move: Move, visible: set[tuple[tuple[int, int], int]]) -> bool:
    """Some cell the move covers, at its layer, is visible (a long block seen end-on counts)."""
    cells = [move.cell] + ([move.span_to] if move.span_to else [])
    return any((c, move.layer) in visible for c in cells)


def make(name: str, role: str, target: Board, seed: int = 3, arg: str | None = None) -> Any:
    agent = AGENTS[name](role, arg)
    agent.reset(seed, role, task_of(target))
    return agent


# ---- oracle director -------------------------------------------------------------------------------------
@pytest.mark.parametrize("interior", ["paper", "reference"])
@pytest.mark.parametrize("director", DIRECTORS)
def test_oracle_director_only_says_visible_oracle_moves(director: str, interior: str) -> None:
    said_something = False
    for k, structure in enumerate(STRUCTURES):
        target = structure.board
        agent = make("oracle", director, target, arg="random" if k % 2 else None)
        visible = visible_cell_layers(target, director, interior)
        for board in boards_towards(target, seed=k):
            reply = agent.act(director_obs(board, target, director, interior))
            assert reply.message and reply.reasoning
            moves = parse_moves(reply.message)
            assert len(moves) <= 1, reply.message
            for move in moves:
                said_something = True
                assert move in oracle_moves(board, target), reply.message
                assert on_view(move, visible), reply.message
            if not moves:
                assert reply.message.startswith("Nothing more to add from the")
    assert said_something


def test_oracle_director_does_not_repeat_what_was_said_this_turn() -> None:
    target = STRUCTURES[0].board
    board = Board()
    agent = make("oracle", "D1", target)
    first = agent.act(director_obs(board, target, "D1")).message
    visible = [m for m in oracle_moves(board, target) if m in parse_moves(first)]
    assert visible
    second = agent.act(director_obs(board, target, "D1", this_turn=[{"role": "D2", "text": first}])).message
    assert second != first
    assert parse_moves(second) != parse_moves(first)


def test_oracle_director_agrees_when_everything_it_sees_was_said() -> None:
    target = STRUCTURES[1].board
    board = Board()
    agent = make("oracle", "D3", target)
    seen = visible_cell_layers(target, "D3", "paper")
    mine = [m for m in oracle_moves(board, target) if on_view(m, seen)]
    assert mine
    said = [{"role": "D2", "text": describe_move(m)} for m in mine]
    assert agent.act(director_obs(board, target, "D3", this_turn=said)).message == "Agreed with D2."


def test_oracle_director_says_nothing_when_its_wall_is_done() -> None:
    target = STRUCTURES[2].board
    agent = make("oracle", "D1", target)
    reply = agent.act(director_obs(target.copy(), target, "D1"))
    assert reply.message == "Nothing more to add from the left wall."
    assert parse_moves(reply.message) == []


def test_oracle_director_explains_removals() -> None:
    target = STRUCTURES[0].board
    board = Board()
    wrong = next(c for c in BLOCK_CODES if c[1] == "s" and c != target.codes((0, 0))[0])
    board.apply(Move.place(wrong, (0, 0), 0))
    reply = make("oracle", "D1", target).act(director_obs(board, target, "D1"))
    assert parse_moves(reply.message) == [Move.remove((0, 0), 0)]
    assert "(it should be " in reply.message


def test_oracle_director_is_deterministic() -> None:
    target = STRUCTURES[3].board
    boards = boards_towards(target, seed=5)
    runs = [
        [make("oracle", "D2", target, arg="random").act(director_obs(b, target, "D2")) for b in boards]
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


def test_oracles_need_the_target() -> None:
    with pytest.raises(ValueError, match="privileged"):
        OracleDirector("D1").reset(0, "D1", {"id": "t"})
    with pytest.raises(ValueError, match="privileged"):
        OracleBuilder("builder").reset(0, "builder", {})


def test_silent_director_gives_no_instruction() -> None:
    target = STRUCTURES[0].board
    reply = make("silent", "D2", target).act(director_obs(Board(), target, "D2"))
    assert reply.message is not None and parse_moves(reply.message) == []


# ---- scripted builder ------------------------------------------------------------------------------------
def test_scripted_builder_plays_the_described_move() -> None:
    target = STRUCTURES[0].board
    builder = make("scripted", "builder", target)
    for k, board in enumerate(boards_towards(target, seed=2)):
        for move in oracle_moves(board, target):
            text = describe_move(move, random.Random(k))
            reply = builder.act(
                builder_obs(board, [{"role": "D1", "text": "Looks good."}, {"role": "D2", "text": text}])
            )
            assert move_of(reply) == move, text
            assert reply.message is None


def test_scripted_builder_skips_illegal_moves_and_prefers_candidates() -> None:
    board = Board()
    illegal = "Place a small red block at (0,0) on layer 2."
    first = "Place a small green block at (1,1) on layer 0."
    second = "Place a small blue block at (2,2) on layer 0."
    messages = [{"role": "D1", "text": illegal}, {"role": "D2", "text": first}, {"role": "D3", "text": second}]
    builder = ScriptedBuilder("builder")
    builder.reset(0, "builder", {})
    assert move_of(builder.act(builder_obs(board, messages))) == Move.place("gs", (1, 1), 0)
    assert move_of(builder.act(builder_obs(board, messages, candidates=[]))) == Move.place("gs", (1, 1), 0)
    candidates = [Move.place("bs", (2, 2), 0), Move.place("ys", (0, 0), 0)]
    assert move_of(builder.act(builder_obs(board, messages, candidates))) == Move.place("bs", (2, 2), 0)


def test_scripted_builder_matches_a_candidate_spelt_the_other_way() -> None:
    builder = ScriptedBuilder("builder")
    builder.reset(0, "builder", {})
    messages = [
        {"role": "D1", "text": "Place a small red block at (0,0) on layer 0."},
        {"role": "D2", "text": "Put a large blue block on layer 0 from (2,1) to (2,0)."},
    ]
    candidates = [Move.place("bl", (2, 0), 0, (2, 1))]
    assert move_of(builder.act(builder_obs(Board(), messages, candidates))) == Move.place("bl", (2, 1), 0, (2, 0))


@pytest.mark.parametrize(
    "texts",
    [[], ["Looks good so far."], ["asdf qwerty (((", "Agreed with D1."], ["Remove the block at (1,1) on layer 0."]],
)
def test_scripted_builder_clarifies_when_nothing_usable_was_said(texts: list[str]) -> None:
    builder = ScriptedBuilder("builder")
    builder.reset(0, "builder", {})
    reply = builder.act(builder_obs(Board(), [{"role": "D1", "text": t} for t in texts]))
    assert reply.action == {"action": "clarify", "text": CLARIFY_QUESTION}
    assert reply.message == CLARIFY_QUESTION
    assert move_of(reply).action is Action.CLARIFY


# ---- oracle builder --------------------------------------------------------------------------------------
def test_oracle_builder_picks_a_candidate() -> None:
    target = STRUCTURES[1].board
    first = make("oracle", "builder", target)
    chooser = make("oracle", "builder", target, arg="random")
    for k, board in enumerate(boards_towards(target, seed=4)):
        candidates = oracle_moves(board, target)[:5]
        obs = builder_obs(board, candidates=candidates, turn=k)
        if candidates:
            assert move_of(first.act(obs)) == candidates[0]
            assert move_of(chooser.act(obs)) in candidates


def test_oracle_builder_clarifies_without_candidates_and_computes_them_without_the_field() -> None:
    target = STRUCTURES[1].board
    builder = make("oracle", "builder", target)
    assert move_of(builder.act(builder_obs(Board(), candidates=[]))).action is Action.CLARIFY
    assert move_of(builder.act(builder_obs(Board()))) == oracle_moves(Board(), target)[0]


def test_oracle_builder_completes_the_target() -> None:
    target = STRUCTURES[2].board
    builder, board = make("oracle", "builder", target), Board()
    for turn in range(60):
        if board == target:
            break
        assert board.apply(move_of(builder.act(builder_obs(board, turn=turn)))).ok
    assert board == target


# ---- random builder --------------------------------------------------------------------------------------
def random_run(seed: int, steps: int = 40) -> list[Move]:
    builder = RandomBuilder("builder")
    builder.reset(seed, "builder", {})
    board, played = Board(), []
    for turn in range(steps):
        move = move_of(builder.act(builder_obs(board, turn=turn)))
        assert board.apply(move).ok, move.describe()
        played.append(move)
    return played


def test_random_builder_plays_legal_moves_deterministically() -> None:
    assert random_run(7) == random_run(7)
    assert random_run(7) != random_run(8)


def test_legal_moves_cover_every_legal_effect_once() -> None:
    for board in boards_towards(STRUCTURES[3].board, seed=9):
        listed = legal_moves(board)
        effects = [effect(board, m) for m in listed]
        assert None not in effects and len(set(effects)) == len(effects)
        spellings = [Move.place(code, c, board.height(c)) for code in BLOCK_CODES for c in CELLS]
        spellings += [
            Move.place(code, a, board.height(a), b)
            for code in BLOCK_CODES
            for a in CELLS
            for b in CELLS
            if adjacent(a, b)
        ]
        spellings += [Move.remove(c, board.height(c) - 1) for c in CELLS]
        assert {effect(board, m) for m in spellings} - {None} == set(effects)


# ---- registry --------------------------------------------------------------------------------------------
def test_registry_builds_the_right_agent_per_role() -> None:
    assert isinstance(AGENTS["oracle"]("D2"), OracleDirector)
    assert isinstance(AGENTS["oracle"]("builder", "random"), OracleBuilder)
    assert isinstance(AGENTS["scripted"]("builder", None, {}), ScriptedBuilder)
    assert isinstance(AGENTS["random"]("builder"), RandomBuilder)


@pytest.mark.parametrize(
    ("name", "role", "arg", "message"),
    [
        ("random", "D1", None, "the random agent plays the builder only"),
        ("scripted", "D3", None, "the scripted agent plays the builder only"),
        ("silent", "builder", None, "plays a director only"),
        ("oracle", "D4", None, "unknown role"),
        ("oracle", "D1", "best", "takes one of first, random"),
        ("random", "builder", "x", "takes no argument"),
    ],
)
def test_registry_rejects_specs_that_do_not_fit(name: str, role: str, arg: str | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AGENTS[name](role, arg)


def test_scripted_builder_with_slips_makes_seeded_mistakes() -> None:
    from simlab.testing import play
    from simlab.worlds import get_family

    family = get_family("blocks")
    task = family.tasks.generate(1, 4)[0]
    runs = [play(family, task, ["builder=scripted:0.5"], 0, {"turns": 12}) for _ in range(2)]
    labels = [e.data["taxonomy"] for e in runs[0].events if e.kind == "result"]
    assert any(label.startswith(("engine-", "wrong-")) for label in labels)
    assert runs[0].to_json() == runs[1].to_json()
    clean = play(family, task, ["builder=scripted"], 0, {"turns": 12})
    assert not any(e.data["taxonomy"].startswith(("engine-", "wrong-")) for e in clean.events if e.kind == "result")


@pytest.mark.parametrize("arg", ["1.5", "-0.1", "often"])
def test_scripted_builder_rejects_a_bad_slip_chance(arg: str) -> None:
    with pytest.raises(ValueError, match="slip chance"):
        AGENTS["scripted"]("builder", arg)
