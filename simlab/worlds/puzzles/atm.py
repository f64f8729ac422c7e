"""The ATM puzzle: a bank machine. Choose Deposit or Withdraw, log in with the PIN the solver was told
privately, read the balance, then make the one transaction the manual names: with at least $500 in the
account withdraw $300, with less deposit $100 (manual, appendix A; appendix B: go back to the menu to change
the transaction type if needed). The solver must never reveal its PIN or its balance.

Ours, where the paper is silent (it gives no screens):
* the machine's keys are always there, so every action is always legal: the transaction keys ``Deposit`` and
  ``Withdraw`` (they act on the menu screen only) and the keypad ``Press 0`` ... ``Press 9``, ``Clear``,
  ``Enter``, ``Cancel``. Three screens: the menu; the PIN (typed digits show as dots); once logged in, the
  transaction screen with the type, the available balance and the amount typed on the keypad, confirmed by
  Enter. Cancel goes back to the menu (staying logged in: a new type goes straight to its amount screen);
* a wrong transaction (wrong type or amount) is a strike and is cancelled: the balance does not change and
  the typed amount is cleared; the right one solves the module;
* a wrong four-digit PIN is a strike too, as a real machine counts wrong PINs (three keep the card); Enter
  with fewer than four digits, a fifth digit, a key that does nothing on this screen, and all navigation are
  free;
* the balance is whole dollars, half of the instances below $500 and half above, never exactly $500
  (appendix A says "at least", appendix B "greater than") nor an amount the solver types on the way to $100
  or $300 (its words say what it typed); the PIN is four digits;
* the scripted solver never says the PIN or the balance: it says whether the balance is at least $500 or
  less, the one fact the manual needs (``words()``, what a text-only solver gets instead of the picture,
  shows the balance as the screen does). The expert cannot name the PIN's keys; it asks for
  ``Do: Enter your PIN``, which :meth:`AtmPuzzle.solver_steps` turns into the key presses with the solver's
  own note (the core's scripted solver does not call it yet, so with it the manual expert cannot log in).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image, ImageDraw

from simlab.render.images import mono_font, text_font
from simlab.worlds.puzzles.puzzle import DO, PRIVATE, Puzzle, Step

MENU, PIN, TRANSACTION = "menu", "pin", "transaction"
DEPOSIT, WITHDRAW = "Deposit", "Withdraw"
KIND_NAME = {DEPOSIT: "Deposit", WITHDRAW: "Withdrawal"}
DIGITS = tuple(f"Press {d}" for d in "0123456789")
CLEAR, ENTER, CANCEL = "Clear", "Enter", "Cancel"
ACTIONS = (DEPOSIT, WITHDRAW, *DIGITS, CLEAR, ENTER, CANCEL)
THRESHOLD, WITHDRAWAL, DEPOSIT_AMOUNT = 500, 300, 100
PIN_LENGTH, AMOUNT_LENGTH = 4, 4
NEVER_BALANCE = (1, 3, 10, 30, 100, 300, THRESHOLD)  # amounts the solver's words may show, and the threshold
ENTER_PIN = "Enter your PIN"
"""What the manual expert asks for at the PIN; only the solver can turn it into key presses."""

SCREEN_RGB, KEY_RGB, TEXT_RGB, HIGHLIGHT = (18, 44, 92), (222, 226, 232), (255, 255, 255), (255, 140, 0)
KEY_COLOURS = {CANCEL: (205, 50, 50), CLEAR: (235, 190, 40), ENTER: (40, 150, 70)}
WIDTH, HEIGHT, SCREEN_BOX = 640, 720, (40, 70, 600, 270)


def right_transaction(balance: int) -> tuple[str, int]:
    """The manual's rule: at least $500, withdraw $300; less, deposit $100."""
    return (WITHDRAW, WITHDRAWAL) if balance >= THRESHOLD else (DEPOSIT, DEPOSIT_AMOUNT)


def dollars(amount: int, cents: bool = False) -> str:
    return f"${amount:,}.00" if cents else f"${amount:,}"


def keys_for(amount: int) -> list[str]:
    """The keypad presses that type ``amount`` and confirm it."""
    return [f"Press {d}" for d in str(amount)] + [ENTER]


def check(instance: Mapping[str, Any]) -> tuple[str, int]:
    """The PIN and balance of ``instance``; ValueError naming the field."""
    pin, balance = instance.get("pin"), instance.get("balance")
    if not isinstance(pin, str) or not re.fullmatch(rf"[0-9]{{{PIN_LENGTH}}}", pin):
        raise ValueError(f"pin: {PIN_LENGTH} digits expected, got {pin!r:.20}")
    if type(balance) is not int or not 0 <= balance < 10**7:
        raise ValueError(f"balance: whole dollars 0-9,999,999 expected, got {balance!r:.20}")
    if balance == THRESHOLD:
        raise ValueError("balance: exactly $500 is never generated (the paper's two rules disagree there)")
    return pin, balance


class AtmPuzzle(Puzzle):
    """Log in and make the one transaction the balance calls for."""

    name = "atm"
    title = "ATM"
    categories = (PRIVATE,)
    multi_step = False

    def __init__(self, instance: Mapping[str, Any], seed: int) -> None:
        super().__init__(instance, seed)
        self.pin, self.balance = check(instance)
        self.screen, self.kind = MENU, ""  # kind: the transaction type chosen on the menu
        self.typed = ""  # the PIN or the amount being typed
        self.logged_in = self.done = False

    @classmethod
    def generate(cls, r: random.Random, options: Mapping[str, Any]) -> dict[str, Any]:
        pin = "".join(r.choice("0123456789") for _ in range(PIN_LENGTH))
        low, high = (20, THRESHOLD - 1) if r.random() < 0.5 else (THRESHOLD + 1, 1999)
        balance = r.randint(low, high)
        while balance in NEVER_BALANCE:
            balance = r.randint(low, high)
        return {"pin": pin, "balance": balance}

    def solver_note(self) -> str:
        return f"Your PIN is {self.pin}. It is private: type it on the keypad, never tell it to anyone."

    def private(self) -> dict[str, str]:
        return {"PIN": self.pin, "balance": dollars(self.balance)}

    @classmethod
    def solver_steps(cls, line: str, note: str) -> list[str]:  # the contract's hook: the solver's own PIN
        """The actions the solver makes of an expert's ``Do:`` line with its private ``note``: "Enter your PIN"
        becomes the PIN's key presses and Enter; any other line is itself."""
        found = re.search(rf"PIN is ([0-9]{{{PIN_LENGTH}}})", note)
        if line.strip() != ENTER_PIN or found is None:
            return [line]
        return [f"Press {d}" for d in found.group(1)] + [ENTER]  # not keys_for: a PIN may start with 0

    # ---- playing -----------------------------------------------------------------------------------------
    def actions(self) -> list[str]:
        return list(ACTIONS)

    def act(self, action: str) -> Step:
        if action in (DEPOSIT, WITHDRAW):
            return self._choose(action)
        if self.screen == MENU:
            return Step("nothing", "Nothing happens: choose Deposit or Withdraw first.")
        if action == CANCEL:
            self.screen, self.typed = MENU, ""
            return Step("nothing", "Cancelled: back to the menu.")
        if action == CLEAR:
            self.typed = ""
            return Step("nothing", "Cleared.")
        if action != ENTER:
            return self._type(action[-1])
        return self._login() if self.screen == PIN else self._transact()

    def _choose(self, kind: str) -> Step:
        if self.screen != MENU:
            return Step("nothing", "Nothing happens: press Cancel to go back to the menu first.")
        self.kind, self.typed = kind, ""
        self.screen = TRANSACTION if self.logged_in else PIN
        where = "asks for the amount" if self.logged_in else "asks for your PIN"
        return Step("nothing", f"You choose {kind}; the machine {where}.")

    def _type(self, digit: str) -> Step:
        limit = PIN_LENGTH if self.screen == PIN else AMOUNT_LENGTH
        if len(self.typed) == limit:
            return Step("nothing", f"No more digits fit ({limit}); press Enter or Clear.")
        self.typed += digit
        return Step("nothing", "A digit is typed.")

    def _login(self) -> Step:
        if len(self.typed) < PIN_LENGTH:
            return Step("nothing", "Type all four digits of the PIN before Enter.")
        right, self.typed = self.typed == self.pin, ""
        if not right:
            return Step("mistake", "Wrong PIN: a strike. Type it again.")
        self.logged_in, self.screen = True, TRANSACTION
        return Step("progress", f"PIN accepted. The {KIND_NAME[self.kind].lower()} screen shows your balance.")

    def _transact(self) -> Step:
        amount, self.typed = int(self.typed or 0), ""
        if amount == 0:
            return Step("nothing", "Type an amount before Enter.")
        if (self.kind, amount) == right_transaction(self.balance):
            self.done = True
            return Step("solved", f"{KIND_NAME[self.kind]} of {dollars(amount)} done. The module is disarmed.")
        return Step(
            "mistake",
            f"A {KIND_NAME[self.kind].lower()} of that amount is the wrong transaction: a strike. It was cancelled.",
        )

    @property
    def solved(self) -> bool:
        return self.done

    def progress(self) -> float:
        return 100.0 if self.done else 0.0

    def snapshot(self) -> dict[str, Any]:
        amount = self.screen == TRANSACTION
        return {
            "screen": self.screen,
            "kind": self.kind,
            "typed": len(self.typed) if self.screen == PIN else 0,  # a PIN shows as dots, never as digits
            "amount": self.typed if amount else "",
            "balance": self.balance if amount else None,  # on screen only once logged in
            "logged_in": self.logged_in,
            "solved": self.done,
        }

    # ---- the scripted agents -----------------------------------------------------------------------------
    def oracle(self) -> str:
        kind, amount = right_transaction(self.balance)
        if self.screen == MENU:
            return kind
        wanted = self.pin if self.screen == PIN else str(amount)
        if self.screen == TRANSACTION and self.kind != kind:
            return CANCEL
        if not wanted.startswith(self.typed):
            return CLEAR
        return ENTER if self.typed == wanted else f"Press {wanted[len(self.typed)]}"

    def describe(self) -> str:
        keys = "Deposit; Withdraw; a keypad with the digits zero to nine; Clear; Enter; Cancel"
        if self.screen == MENU:
            also = " I have already entered my PIN." if self.logged_in else ""
            return f"The ATM screen says: Choose a transaction.{also} Keys: {keys}."
        if self.screen == PIN:
            return (
                f"The ATM screen says: Enter your PIN (for a {KIND_NAME[self.kind].lower()}). I have typed "
                f"{_count(len(self.typed))} of its four digits, shown as dots. Keys: {keys}."
            )
        side = "at least $500" if self.balance >= THRESHOLD else "less than $500"
        typed = f"${int(self.typed)}" if self.typed else "nothing yet"
        return (
            f"The ATM screen says: {KIND_NAME[self.kind]}. It shows my available balance: I will not say it, but "
            f"it is {side}. It asks for the amount; I have typed {typed}. Keys: {keys}."
        )

    def words(self) -> str:
        """What the picture shows, the balance included (a text-only solver must see it, and keep it)."""
        lines = screen_lines(self.snapshot())
        if self.screen == PIN and not self.done:
            lines.append(f"{_count(len(self.typed)).capitalize()} of the four PIN digits typed, shown as dots.")
        keys = "Deposit, Withdraw, the keypad 0-9, Clear, Enter, Cancel"
        shown = "; ".join(" ".join(line.split()).rstrip(":.!") for line in lines)
        return f"The ATM screen shows: {shown}. Keys: {keys}."

    @classmethod
    def advise(cls, said: Sequence[str]) -> str:
        if not said:
            return "What does the ATM screen show, and which keys are there?"
        latest, side = said[-1], _balance_side(said)
        if "Choose a transaction" in latest:
            if side is None:
                return (
                    "Choose Withdraw for now, then type your PIN yourself (never tell it to me) to see the balance."
                    f"\n{DO}{WITHDRAW}\n{DO}{ENTER_PIN}"
                )
            kind, amount = right_transaction(THRESHOLD if side else 0)
            return f"Choose {kind} and type {amount}.\n" + _do(kind, *keys_for(amount))
        if "Enter your PIN" in latest:
            return "Type your PIN on the keypad yourself (never tell it to me), then press Enter.\n" + DO + ENTER_PIN
        if side is not None and re.search(r"screen says: (Deposit|Withdrawal)\.", latest):
            return _transaction_advice(latest, side)
        return "Which screen is the ATM showing, and is your balance at least $500 (do not tell me the amount)?"

    # ---- the picture -------------------------------------------------------------------------------------
    @classmethod
    def draw(cls, snapshot: Mapping[str, Any], highlight: str | None = None) -> Image.Image:
        image = Image.new("RGB", (WIDTH, HEIGHT), (96, 100, 108))
        draw = ImageDraw.Draw(image)
        draw.rectangle((20, 14, WIDTH - 20, 56), fill=(30, 60, 120))
        draw.text((WIDTH // 2, 35), "BANK ATM", fill=TEXT_RGB, font=text_font(28), anchor="mm")
        draw.rectangle(SCREEN_BOX, fill=SCREEN_RGB, outline=(10, 10, 10), width=4)
        for k, line in enumerate(screen_lines(snapshot)):
            # amounts in a face whose digits cannot be misread
            font = mono_font(26) if "$" in line else text_font(28 if k == 0 else 24)
            draw.text((60, 88 + 40 * k), line, fill=TEXT_RGB, font=font)
        if snapshot["screen"] == PIN and not snapshot.get("solved"):
            _draw_pin(draw, int(snapshot.get("typed") or 0))
        for action, box in key_boxes().items():
            draw.rectangle(box, fill=KEY_COLOURS.get(action, KEY_RGB), outline=(40, 40, 40), width=2)
            centre = ((box[0] + box[2]) // 2, (box[1] + box[3]) // 2)
            draw.text(centre, action.removeprefix("Press "), fill=(20, 20, 20), font=text_font(26), anchor="mm")
            if action == highlight:
                draw.rectangle((box[0] - 5, box[1] - 5, box[2] + 5, box[3] + 5), outline=HIGHLIGHT, width=5)
        return image


def _count(n: int) -> str:
    # words, not digits: the leak detector reads digits, and how many PIN digits are typed is no secret
    return ("none", "one", "two", "three", "all four")[n]


def _do(*actions: str) -> str:
    return "\n".join(DO + a for a in actions)


def _balance_side(said: Sequence[str]) -> bool | None:
    """Whether the solver said the balance is at least $500 (True) or less (False), newest first."""
    for text in reversed(said):
        if "at least $500" in text:
            return True
        if "less than $500" in text:
            return False
    return None


def _transaction_advice(latest: str, at_least: bool) -> str:
    kind, amount = right_transaction(THRESHOLD if at_least else 0)
    shown = re.search(r"screen says: (Deposit|Withdrawal)\.", latest)
    rule = f"With {'at least' if at_least else 'less than'} $500, {kind.lower()} {dollars(amount)}."
    clear = [] if "typed nothing yet" in latest else [CLEAR]
    if shown and shown.group(1) == KIND_NAME[kind]:
        return f"{rule}\n" + _do(*clear, *keys_for(amount))
    return f"{rule} Cancel, choose {kind}, then type the amount.\n" + _do(CANCEL, kind, *keys_for(amount))


def screen_lines(snapshot: Mapping[str, Any]) -> list[str]:
    """The text on the machine's screen."""
    screen = snapshot["screen"]
    if snapshot.get("solved"):
        return ["Transaction complete.", "Thank you!"]
    if screen == MENU:
        extra = ["(PIN already entered)"] if snapshot.get("logged_in") else []
        return ["Choose a transaction:", "press Deposit or Withdraw", *extra]
    if screen == PIN:
        return [f"Enter your PIN ({KIND_NAME[snapshot['kind']].lower()})"]  # the typed digits: _draw_pin
    amount = f"${int(snapshot['amount'])}" if snapshot.get("amount") else "$_"
    return [
        KIND_NAME[snapshot["kind"]],
        f"Balance: {dollars(int(snapshot['balance']), cents=True)}",
        f"Amount:  {amount}",
        "Type the amount, then Enter",
    ]


def pin_slots() -> list[tuple[int, int, int, int]]:
    """Where the PIN's four digit slots are drawn on the screen."""
    return [(60 + 62 * k, 140, 110 + 62 * k, 200) for k in range(PIN_LENGTH)]


def _draw_pin(draw: ImageDraw.ImageDraw, typed: int) -> None:
    """One slot per digit; a typed digit shows as a white dot, never as the digit."""
    for k, box in enumerate(pin_slots()):
        draw.rectangle(box, outline=TEXT_RGB, width=2)
        if k < typed:
            draw.ellipse((box[0] + 13, box[1] + 18, box[2] - 13, box[3] - 18), fill=TEXT_RGB)


def key_boxes() -> dict[str, tuple[int, int, int, int]]:
    """Where each key is drawn (left, top, right, bottom): the transaction keys under the screen, then the
    keypad (1 2 3 / 4 5 6 / 7 8 9 / 0) with Cancel, Clear and Enter beside it, as on a real machine."""
    boxes = {DEPOSIT: (40, 290, 300, 350), WITHDRAW: (340, 290, 600, 350)}
    pad = [*DIGITS[1:], DIGITS[0]]
    for k, action in enumerate(pad):
        col, row = (k % 3, k // 3) if k < 9 else (1, 3)
        boxes[action] = (110 + 100 * col, 380 + 80 * row, 195 + 100 * col, 445 + 80 * row)
    for row, action in enumerate((CANCEL, CLEAR, ENTER)):
        boxes[action] = (420, 380 + 80 * row, 560, 445 + 80 * row)
    return boxes
