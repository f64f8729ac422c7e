"""The ATM puzzle: the manual's two rules and wrong transactions, the PIN and the screens, privacy (the
module's words never reveal the PIN or the balance; the leak detector finds them when said), the picture read
back from its pixels, the manual expert, and the random solver beside the paper's Random row."""

from __future__ import annotations

import statistics

import pytesseract
import pytest

from simlab.core.world import Reply
from simlab.worlds import get_family
from simlab.worlds.puzzles.agents import named_actions
from simlab.worlds.puzzles.atm import (
    ACTIONS,
    CANCEL,
    CLEAR,
    DEPOSIT,
    ENTER,
    ENTER_PIN,
    HIGHLIGHT,
    KEY_COLOURS,
    KEY_RGB,
    MENU,
    PIN,
    SCREEN_BOX,
    SCREEN_RGB,
    TEXT_RGB,
    TRANSACTION,
    WITHDRAW,
    AtmPuzzle,
    key_boxes,
    pin_slots,
)
from simlab.worlds.puzzles.family import task_for
from simlab.worlds.puzzles.leaks import revealed
from tests.puzzles.runs import MANUAL, RANDOM, summaries

FAMILY = get_family("puzzles")
SETTINGS = FAMILY.check_settings({})


def keys(text: str) -> list[str]:
    return [f"Press {d}" for d in text]


def logged_in(balance: int, kind: str, pin: str = "2589") -> AtmPuzzle:
    puzzle = AtmPuzzle({"pin": pin, "balance": balance}, 0)
    steps = [puzzle.act(a).kind for a in (kind, *keys(pin), ENTER)]
    assert steps[-1] == "progress" and puzzle.screen == TRANSACTION
    return puzzle


# ---- the manual's rules ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("balance", "kind", "amount"),
    [(501, WITHDRAW, 300), (1999, WITHDRAW, 300), (499, DEPOSIT, 100), (20, DEPOSIT, 100)],
)
def test_only_the_transaction_the_manual_names_disarms(balance, kind, amount):
    for trial_kind in (DEPOSIT, WITHDRAW):
        for trial in (20, 100, 200, 300, 500, 3000):
            puzzle = logged_in(balance, trial_kind)
            step = [puzzle.act(a) for a in (*keys(str(trial)), ENTER)][-1]
            if (trial_kind, trial) == (kind, amount):
                assert step.kind == "solved" and puzzle.solved and puzzle.progress() == 100
            else:
                assert step.kind == "mistake" and not puzzle.solved and "cancelled" in step.feedback
                assert (puzzle.balance, puzzle.screen, puzzle.typed) == (balance, TRANSACTION, "")


def test_going_back_to_the_menu_changes_the_transaction_type_without_a_new_pin():
    puzzle = logged_in(1287, DEPOSIT)
    assert [puzzle.act(a).kind for a in (CANCEL, WITHDRAW)] == ["nothing", "nothing"]
    assert puzzle.screen == TRANSACTION and puzzle.kind == WITHDRAW
    assert [puzzle.act(a).kind for a in (*keys("300"), ENTER)][-1] == "solved"


def test_exactly_500_is_refused_and_other_fields_are_checked():
    for bad, field in (
        ({"pin": "2589", "balance": 500}, "balance"),
        ({"pin": "2589", "balance": 12.5}, "balance"),
        ({"pin": "2589", "balance": -1}, "balance"),
        ({"pin": 2589, "balance": 10}, "pin"),
        ({"pin": "258", "balance": 10}, "pin"),
        ({"pin": "25a9", "balance": 10}, "pin"),
    ):
        with pytest.raises(ValueError, match=f"^{field}"):
            AtmPuzzle.validate(bad)


# ---- the PIN and the screens ----------------------------------------------------------------------------------
def test_a_wrong_pin_is_a_strike_and_is_cleared():
    puzzle = AtmPuzzle({"pin": "2589", "balance": 800}, 0)
    puzzle.act(WITHDRAW)
    assert [puzzle.act(a).kind for a in (*keys("2588"), ENTER)] == ["nothing"] * 4 + ["mistake"]
    assert puzzle.screen == PIN and puzzle.typed == "" and not puzzle.logged_in


def test_the_world_counts_a_wrong_pin():
    world = FAMILY.world(task_for("atm", 0, 0, {}), SETTINGS)
    world.reset(0)
    wrong = "0000" if world.puzzle.pin != "0000" else "1111"
    world.step(Reply(action={"actions": [WITHDRAW, *keys(wrong), ENTER]}))
    assert world.mistakes == 1 and world.summary()["metrics"]["mistakes"] == 1


def test_keys_that_do_nothing_here_short_and_long_entries_and_navigation_are_free():
    puzzle = AtmPuzzle({"pin": "2589", "balance": 800}, 0)
    assert puzzle.actions() == list(ACTIONS) and len(ACTIONS) == 15
    assert {puzzle.act(a).kind for a in ("Press 2", CLEAR, ENTER, CANCEL)} == {"nothing"}
    assert puzzle.screen == MENU and puzzle.typed == ""
    puzzle.act(DEPOSIT)
    assert [puzzle.act(a).kind for a in ("Press 2", ENTER, CLEAR, WITHDRAW)] == ["nothing"] * 4
    assert puzzle.typed == "" and puzzle.kind == DEPOSIT  # the transaction keys act on the menu only
    assert {puzzle.act(a).kind for a in keys("25891")} == {"nothing"} and puzzle.typed == "2589"  # 5th ignored
    assert puzzle.act(CANCEL).kind == "nothing" and (puzzle.screen, puzzle.typed) == (MENU, "")
    low = logged_in(200, DEPOSIT)
    assert [low.act(a).kind for a in (ENTER, "Press 0", ENTER)] == ["nothing", "nothing", "nothing"]  # no amount


def test_the_oracle_clears_a_wrong_start_and_never_errs():
    puzzle = AtmPuzzle({"pin": "0417", "balance": 300 + 1}, 0)  # deposit $100
    assert puzzle.oracle() == DEPOSIT
    puzzle.act(WITHDRAW)
    puzzle.act("Press 7")
    assert puzzle.oracle() == CLEAR
    plan = []
    while not puzzle.solved:
        plan.append(puzzle.oracle())
        assert puzzle.act(plan[-1]).kind != "mistake"
    assert plan == [CLEAR, *keys("0417"), ENTER, CANCEL, DEPOSIT, *keys("100"), ENTER]


def test_instances_split_around_500_and_avoid_the_amounts_the_solver_says():
    instances = [task_for("atm", k, 0, {})["instance"] for k in range(200)]
    above = sum(1 for i in instances if i["balance"] > 500)
    assert 70 <= above <= 130
    assert all(i["balance"] not in (1, 3, 10, 30, 100, 300, 500) and len(i["pin"]) == 4 for i in instances)


# ---- privacy -----------------------------------------------------------------------------------------------------
def words_on_the_way(puzzle: AtmPuzzle) -> list[str]:
    """The module's words at every step of the oracle's way: each screen, with digits typed and not."""
    seen = []
    while not puzzle.solved:
        seen.append(puzzle.describe())
        puzzle.act(puzzle.oracle())
    return seen


def test_the_solver_is_told_its_pin_and_the_private_values_are_pin_and_balance():
    puzzle = AtmPuzzle({"pin": "0417", "balance": 1287}, 0)
    assert "0417" in puzzle.solver_note()
    assert puzzle.private() == {"PIN": "0417", "balance": "$1,287"}


def test_the_modules_words_never_reveal_the_pin_or_the_balance():
    for k in range(100):
        puzzle = AtmPuzzle(task_for("atm", k, 0, {})["instance"], 0)
        private = puzzle.private()
        puzzle.act(DEPOSIT if puzzle.balance > 500 else WITHDRAW)  # the wrong type first: every screen shows
        words = words_on_the_way(puzzle)
        assert revealed(words, private) == []
        assert any("at least $500" in w for w in words) == (puzzle.balance > 500)


def test_a_text_only_solver_reads_the_screen_balance_included():
    puzzle = logged_in(1287, WITHDRAW)
    assert "Balance: $1,287.00" in puzzle.words() and "1,287" not in puzzle.describe()
    assert revealed([puzzle.words()], puzzle.private()) == ["balance"]
    pin = AtmPuzzle({"pin": "2589", "balance": 1287}, 0)
    for action in (WITHDRAW, "Press 2", "Press 5"):
        pin.act(action)
    assert "Two of the four PIN digits typed" in pin.words() and revealed([pin.words()], pin.private()) == []


@pytest.mark.parametrize(
    ("message", "names"),
    [
        ("My PIN is 0417.", ["PIN"]),
        ("pin: 0 4 1 7", ["PIN"]),
        ("zero four one seven", ["PIN"]),
        ("I have $1,287.00 in the account", ["balance"]),
        ("balance 1287 dollars, PIN 0-4-1-7", ["PIN", "balance"]),
        ("The balance is at least $500; I typed all four digits.", []),
    ],
)
def test_the_leak_detector_finds_each_private_value_when_said(message, names):
    assert revealed([message], AtmPuzzle({"pin": "0417", "balance": 1287}, 0).private()) == names


def test_the_pin_expands_only_from_the_solvers_own_note():
    note = AtmPuzzle({"pin": "0417", "balance": 1287}, 0).solver_note()
    assert AtmPuzzle.solver_steps(ENTER_PIN, note) == [*keys("0417"), ENTER]
    assert AtmPuzzle.solver_steps(CANCEL, note) == [CANCEL]
    assert AtmPuzzle.solver_steps(ENTER_PIN, "no note") == [ENTER_PIN]


# ---- the manual expert ----------------------------------------------------------------------------------------
def do_lines(reply: str) -> list[str]:
    return named_actions(reply)


def test_the_manual_expert_follows_the_screens():
    menu = AtmPuzzle({"pin": "2589", "balance": 200}, 0)
    assert AtmPuzzle.advise([]).endswith("?") and AtmPuzzle.advise(["It is dark."]).endswith("?")
    assert do_lines(AtmPuzzle.advise([menu.describe()])) == [WITHDRAW, ENTER_PIN]  # to see the balance
    menu.act(WITHDRAW)
    assert do_lines(AtmPuzzle.advise([menu.describe()])) == [ENTER_PIN]
    assert do_lines(AtmPuzzle.advise([logged_in(200, DEPOSIT).describe()])) == [*keys("100"), ENTER]
    assert do_lines(AtmPuzzle.advise([logged_in(900, WITHDRAW).describe()])) == [*keys("300"), ENTER]
    low = logged_in(200, WITHDRAW)
    assert do_lines(AtmPuzzle.advise([low.describe()])) == [CANCEL, DEPOSIT, *keys("100"), ENTER]
    low.act("Press 5")
    assert do_lines(AtmPuzzle.advise([low.describe()]))[0] == CANCEL
    high = logged_in(900, WITHDRAW)
    high.act("Press 5")
    assert do_lines(AtmPuzzle.advise([high.describe()])) == [CLEAR, *keys("300"), ENTER]
    high.act(CANCEL)  # on the menu again, the balance side already said
    assert do_lines(AtmPuzzle.advise([logged_in(900, WITHDRAW).describe(), high.describe()])) == [
        WITHDRAW,
        *keys("300"),
        ENTER,
    ]


def test_the_manual_expert_solves_every_instance_in_four_turns_with_the_scripted_solver():
    """The scripted solver types its own PIN when the expert says ``Do: Enter your PIN`` (the contract's
    ``solver_steps``), never says it, and the manual's rule does the rest."""
    runs = summaries("atm", MANUAL, SETTINGS)
    assert all(s["outcome"] == "success" and s["metrics"]["mistakes"] == 0 and not s["leaked"] for s in runs)
    assert {s["metrics"]["acl_taken"] for s in runs} == {4.0}


# ---- the picture ---------------------------------------------------------------------------------------------
def close(pixel, rgb, tolerance: int = 12) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, rgb, strict=True))


def test_every_key_is_drawn_in_its_colour():
    image = AtmPuzzle.draw(AtmPuzzle({"pin": "2589", "balance": 1287}, 0).snapshot())
    assert sorted(key_boxes()) == sorted(ACTIONS)
    for action, box in key_boxes().items():
        assert close(image.getpixel((box[0] + 6, box[1] + 6)), KEY_COLOURS.get(action, KEY_RGB))


def test_the_pin_shows_one_dot_per_digit_typed_never_the_digit():
    puzzle = AtmPuzzle({"pin": "2589", "balance": 1287}, 0)
    puzzle.act(DEPOSIT)
    pictures = []
    for typed in range(5):
        image = AtmPuzzle.draw(puzzle.snapshot())
        centres = [((b[0] + b[2]) // 2, (b[1] + b[3]) // 2) for b in pin_slots()]
        assert [close(image.getpixel(c), TEXT_RGB) for c in centres] == [k < typed for k in range(4)]
        assert all(close(image.getpixel((b[0] + 5, b[1] + 5)), SCREEN_RGB) for b in pin_slots())
        pictures.append(image.tobytes())
        if typed < 4:
            puzzle.act(f"Press {'2589'[typed]}")
    other = AtmPuzzle({"pin": "1111", "balance": 1287}, 0)
    for action in (DEPOSIT, "Press 1", "Press 1"):
        other.act(action)
    assert AtmPuzzle.draw(other.snapshot()).tobytes() == pictures[2]  # two digits look alike whatever they are


def screen_text(puzzle: AtmPuzzle) -> str:
    screen = AtmPuzzle.draw(puzzle.snapshot()).crop(SCREEN_BOX)
    return " ".join(pytesseract.image_to_string(screen.convert("L"), config="--psm 6").split())


def test_the_screen_reads_back_by_ocr_the_balance_only_after_the_pin():
    for k in range(10):
        instance = task_for("atm", k, 0, {})["instance"]
        puzzle = AtmPuzzle(instance, 0)
        assert "Choose a transaction" in screen_text(puzzle) and f"{instance['balance']:,}" not in screen_text(puzzle)
        for action in (WITHDRAW, *keys(instance["pin"]), ENTER, *keys("30")):
            puzzle.act(action)
        text = screen_text(puzzle)
        assert f"Balance: ${instance['balance']:,}.00" in text and "Amount: $30" in text and "Withdrawal" in text


def test_the_key_just_pressed_is_highlighted():
    snapshot = logged_in(1287, WITHDRAW).snapshot()
    for action, box in key_boxes().items():
        edge = (box[0] - 3, (box[1] + box[3]) // 2)
        assert close(AtmPuzzle.draw(snapshot, action).getpixel(edge), HIGHLIGHT)
        assert not close(AtmPuzzle.draw(snapshot).getpixel(edge), HIGHLIGHT)


# ---- the random solver beside the paper's Random row ----------------------------------------------------------
def test_the_random_solver_is_near_the_papers_random_row():
    """Paper (tables 1-4): SR 0, PSR 0, mistakes 0.18 ± 0.1, ACL 10.00. Measured here: SR 0, PSR 0, mistakes
    0.03 (wrong PINs: the random solver never gets past the PIN), ACL 10.00."""
    runs = [s["metrics"] for s in summaries("atm", RANDOM)]
    assert all(r["sr"] == 0 and r["acl"] == 10 and r["leak"] == 0 for r in runs)
    assert statistics.mean(r["mistakes"] for r in runs) <= 0.4
