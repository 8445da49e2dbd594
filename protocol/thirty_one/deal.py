"""One deal of Thirty-one as a pure state machine: no events, no table, no coins.

``Deal`` holds the hands, the stock (top card first), the discard pile (bottom first) and whose
turn it is, and moves on with ``push(seat, command_or_event)``; ``legal_actions(seat)`` lists
what a seat may do and ``check(seat, command)`` says why something is not allowed (``""`` when
it is). It follows rules T7-T22, T28, T30-T35 and T40-T43; the table (``state``) adds what
happens between deals (lives, coins, eliminations) and records the derived events.

Seats are table seats: ``order`` lists the active ones in turn order, the dealer last. When a
turn ends with an empty stock under ``stock_out = reshuffle`` the deal waits for a new stock
(``wants_restock``, then ``restock(cards)``); the table derives it from a seed or takes it from a
record (T42).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ..errors import IllegalAction
from .cards import PACK_SET, THIRTY_ONE, CardCode, hand_value, points
from .commands import (
    DISCARDS,
    KNOCK,
    LOOK,
    TAKE_DISCARD,
    TAKE_STOCK,
    THROW,
    Command,
    Discard,
    Knock,
    Look,
    Take,
    Throw,
)
from .events import T31Discarded, T31Knocked, T31Looked, T31Threw, T31Took
from .rules import ThirtyOneRules

TAKE: Final = "take"
DISCARD: Final = "discard"

THIRTY_ONE_END: Final = "thirty_one"
SHOWDOWN: Final = "showdown"
THROW_DOWN: Final = "throw_down"
VOID: Final = "void"
TURN_LIMIT: Final = "turn_limit"


class Deal:
    """One deal in progress (see the module docstring). Build it from the dealt ``deck``."""

    __slots__ = (
        "rules", "n", "order", "seed", "hands", "stock", "pile", "seat", "step", "taken", "knocker",
        "thrower", "owed", "looked", "played", "turns", "restocks", "wants_restock", "ended", "end",
        "holders", "_in",
    )  # fmt: skip

    def __init__(
        self, rules: ThirtyOneRules, n: int, order: Sequence[int], deck: Sequence[str], seed: str = ""
    ) -> None:
        m = len(order)
        if m < 2 or len(set(order)) != m or not all(0 <= s < n for s in order):
            raise ValueError(f"a deal needs 2 or more different seats of 0..{n - 1}, not {list(order)}")
        if len(deck) != len(PACK_SET) or set(deck) != PACK_SET:
            raise ValueError("the deck must hold each of the 52 cards once")
        self.rules = rules
        self.n = n
        self.order = list(order)
        self.seed = seed
        """The deal's seed (restocks derive from it); empty for an imported deal."""
        self.hands: list[list[str]] = [[] for _ in range(n)]
        for i in range(3):
            for j, s in enumerate(order):
                self.hands[s].append(deck[i * m + j])
        self.pile: list[str] = [deck[3 * m]]
        """The discard pile, bottom first: its order is public (T8)."""
        self.stock: list[str] = list(deck[3 * m + 1 :])
        """Top card first."""
        self.seat = self.order[0]
        """Whose turn it is (the next one's while a restock is due; see ``to_move``)."""
        self.step = TAKE
        self.taken = ""
        """The card taken from the discard pile in this turn: not to be discarded now (T14)."""
        self.knocker = -1
        self.thrower = -1
        self.owed: list[int] = []
        """After a knock, the seats still owed their last turn, the one on turn first (T21)."""
        self.looked = [False] * n
        """Option ``throw_down``: whether each seat has looked at its hand (T30, T40)."""
        self.played = [False] * n
        """Whether each seat has had a turn in this deal (a throw-down needs the first, T31)."""
        self.turns = 0
        """Turns ended: normal turns and the knock, not looks (T34)."""
        self.restocks = 0
        self.wants_restock = False
        self.ended = False
        self.end = ""
        self.holders: list[int] = []
        """The seats holding 31 when the deal ended so (T16, T18)."""
        self._in = [False] * n
        for s in order:
            self._in[s] = True
        # T16, T18: a dealt 31 ends the deal before any turn (and before any throw-down, T32).
        holders = [s for s in self.order if hand_value(self.hands[s], rules) == THIRTY_ONE]
        if holders:
            self.holders = holders
            self._finish(THIRTY_ONE_END)

    # --- questions -------------------------------------------------------------------------

    @property
    def to_move(self) -> int | None:
        """The seat whose action the deal waits for, or None (ended, or a restock is due)."""
        if self.ended or self.wants_restock:
            return None
        return self.seat

    @property
    def running(self) -> bool:
        """Whether a seat can act (the deal has not ended and no restock is due)."""
        return not self.ended and not self.wants_restock

    def dealt_in(self, seat: int) -> bool:
        return 0 <= seat < self.n and self._in[seat]

    def sees_hand(self, seat: int) -> bool:
        """Whether ``seat`` knows its own hand: always, except under ``throw_down`` before it
        looked or took a card (T30)."""
        return not self.rules.throw_down or self.looked[seat]

    def value(self, seat: int) -> int:
        """The seat's hand value in half points."""
        return hand_value(self.hands[seat], self.rules)

    @property
    def lives_knocker(self) -> int:
        """The seat that counts as the knocker for lives: the knocker, or the thrower (T31)."""
        return self.knocker if self.knocker >= 0 else self.thrower

    def legal_actions(self, seat: int) -> list[Command]:
        """Every action ``seat`` may take now (only ``look`` when it is not its turn)."""
        if not self.running or not self.dealt_in(seat):
            return []
        may_look = self.rules.throw_down and not self.looked[seat]
        if seat != self.seat:
            return [LOOK] if may_look else []
        if self.step == DISCARD:
            taken = self.taken
            return [DISCARDS[c] for c in self.hands[seat] if c != taken]
        out: list[Command] = [TAKE_STOCK] if self.stock else []
        out.append(TAKE_DISCARD)
        if not self._knock_error(seat):
            out.append(KNOCK)
        if not self._throw_error(seat):
            out.append(THROW)
        if may_look:
            out.append(LOOK)
        return out

    def check(self, seat: int, command: Command) -> str:
        """Why ``seat`` may not do ``command`` now, in words a player understands; ``""`` if it may."""
        if self.ended:
            return "the deal is over"
        if self.wants_restock:
            return "the stock is being rebuilt from the discard pile"
        if not self.dealt_in(seat):
            return "you are not dealt in (you are no longer active)"
        kind = type(command)
        if kind is Look:
            if not self.rules.throw_down:
                return "there is nothing to look at: hands are dealt face up to their holders (no throw_down)"
            if self.looked[seat]:
                return "you have looked at your hand already"
            return ""
        if seat != self.seat:
            return f"it is seat {self.seat}'s turn"
        if kind is Take:
            if self.step != TAKE:
                return "you have taken a card: discard one now"
            if command.source == "stock" and not self.stock:  # type: ignore[attr-defined]
                return "the stock is empty: take the discard pile's top card (stock_out void)"
            return ""
        if kind is Discard:
            if self.step != DISCARD:
                return "take a card first (from the stock or the discard pile)"
            card: str = command.card  # type: ignore[attr-defined]
            if card not in self.hands[seat]:
                return f"you do not hold {card}"
            if card == self.taken:
                return f"you took {card} from the discard pile in this turn: discard another card (T14)"
            return ""
        if kind is Knock:
            return self._knock_error(seat)
        if kind is Throw:
            return self._throw_error(seat)
        return f"not a command of Thirty-one: {command!r}"

    def _knock_error(self, seat: int) -> str:
        if self.step != TAKE:
            return "knock at the start of your turn, instead of taking a card"
        if self.knocker >= 0:
            return f"seat {self.knocker} has knocked already: nobody may knock again in this deal"
        rules = self.rules
        if not rules.knock_in_first_round and self.turns < len(self.order):
            return "nobody may knock before every player has had a turn (knock_in_first_round off)"
        if rules.min_knock:
            v = self.value(seat)
            if v < 2 * rules.min_knock:
                return f"you may knock only with a hand worth {rules.min_knock} or more; yours is worth {points(v):g}"
        return ""

    def _throw_error(self, seat: int) -> str:
        if not self.rules.throw_down:
            return "throwing down is not played at this table (no throw_down)"
        if self.step != TAKE or self.played[seat]:
            return "a throw-down is made at the start of your first turn only"
        if self.looked[seat]:
            return "you have looked at your hand: only an unseen hand may be thrown down"
        if self.knocker >= 0:
            return "nobody may throw down after a knock"
        return ""

    # --- moving on -------------------------------------------------------------------------

    def push(self, seat: int, action: Command | T31Took | T31Discarded | T31Knocked | T31Looked | T31Threw) -> None:
        """Do ``action`` (a command, or the event recording it) for ``seat``; raises
        ``IllegalAction`` with the reason if the rules do not allow it (the deal is unchanged)."""
        kind = type(action)
        if kind is T31Took:
            took: T31Took = action  # type: ignore[assignment]
            command: Command = TAKE_STOCK if took.source == "stock" else TAKE_DISCARD
            err = self.check(seat, command)
            if not err:
                top = self.stock[0] if took.source == "stock" else self.pile[-1]
                if took.card != top:
                    err = f"the top card of the {took.source} is {top}, not {took.card or 'hidden'}"
        else:
            if kind is T31Discarded:
                command = DISCARDS[action.card]  # type: ignore[union-attr]
            elif kind is T31Knocked:
                command = KNOCK
            elif kind is T31Looked:
                command = LOOK
            elif kind is T31Threw:
                command = THROW
            else:
                command = action  # type: ignore[assignment]
            err = self.check(seat, command)
        if err:
            raise IllegalAction(command, err)
        self._do(seat, command)

    def _do(self, seat: int, command: Command) -> None:
        kind = type(command)
        if kind is Take:
            if command.source == "stock":  # type: ignore[attr-defined]
                card = self.stock.pop(0)
                self.taken = ""
            else:
                card = self.pile.pop()
                self.taken = card
            self.hands[seat].append(card)
            self.step = DISCARD
            if self.rules.throw_down:
                self.looked[seat] = True  # taking a card counts as looking (T30, T40)
        elif kind is Discard:
            card = command.card  # type: ignore[attr-defined]
            hand = self.hands[seat]
            hand.remove(card)
            self.pile.append(card)
            self.taken = ""
            self.step = TAKE
            if hand_value(hand, self.rules) == THIRTY_ONE:  # T16: checked after every discard
                self.holders = [seat]
                self._finish(THIRTY_ONE_END)
            self._end_turn(seat)
        elif kind is Knock:
            self.knocker = seat
            m = len(self.order)
            k = self.order.index(seat)
            self.owed = [self.order[(k + i) % m] for i in range(1, m)]
            self._end_turn(seat)
        elif kind is Look:
            self.looked[seat] = True
        elif kind is Throw:
            self.thrower = seat
            self._finish(THROW_DOWN)

    def _end_turn(self, seat: int) -> None:
        """The end of a turn, in the order of T33: a 31 (already ended), the showdown after the
        last of the last turns, ``max_turns``, then an empty stock."""
        self.turns += 1
        self.played[seat] = True
        if self.ended:
            return
        if self.knocker >= 0:
            if seat != self.knocker:
                self.owed.remove(seat)
            if not self.owed:
                self._finish(SHOWDOWN)
                return
            self.seat = self.owed[0]
        else:
            if self.turns >= self.rules.max_turns:
                self._finish(TURN_LIMIT)
                return
            order = self.order
            self.seat = order[(order.index(seat) + 1) % len(order)]
        if not self.stock:
            if self.rules.stock_out == "reshuffle":
                self.wants_restock = True
            elif self.knocker < 0:
                self._finish(VOID)

    def restock_cards(self) -> list[str]:
        """The cards a restock shuffles: the discard pile but its top card, bottom first."""
        return self.pile[:-1]

    def restock(self, stock: Sequence[str]) -> None:
        """The new stock, top card first (T28); raises ``ValueError`` unless one is due and
        ``stock`` holds exactly the discard pile but its top card (T42)."""
        if not self.wants_restock:
            raise ValueError("no restock is due: the stock is not empty at the end of a turn")
        if sorted(stock) != sorted(self.pile[:-1]):
            raise ValueError("a new stock must be the discard pile but its top card")
        self.stock = list(stock)
        self.pile = self.pile[-1:]
        self.restocks += 1
        self.wants_restock = False

    def _finish(self, end: str) -> None:
        self.ended = True
        self.end = end
        self.wants_restock = False

    # --- the end ---------------------------------------------------------------------------

    def shown(self) -> list[list[CardCode]]:
        """Per seat, the hand shown at the deal's end: every active hand at a showdown or a
        throw-down, the 31 holders' at a 31, nothing otherwise."""
        out: list[list[CardCode]] = [[] for _ in range(self.n)]
        if self.end in (SHOWDOWN, THROW_DOWN):
            seats: list[int] = self.order
        elif self.end == THIRTY_ONE_END:
            seats = self.holders
        else:
            seats = []
        for s in seats:
            out[s] = list(self.hands[s])  # type: ignore[arg-type]
        return out

    def lives(self) -> list[int]:
        """Lives lost per seat by the ended deal (T17, T18, T23; T31: the thrower counts as the
        knocker)."""
        lost = [0] * self.n
        if self.end == THIRTY_ONE_END:
            for s in self.order:
                if s not in self.holders:
                    lost[s] = 1
        elif self.end in (SHOWDOWN, THROW_DOWN):
            values = {s: self.value(s) for s in self.order}
            low = min(values.values())
            lowest = [s for s, v in values.items() if v == low]
            knocker = self.lives_knocker
            if lowest == [knocker]:
                lost[knocker] = 2  # T23a
            else:
                for s in lowest:
                    if s != knocker:
                        lost[s] = 1  # T23b, T23c
        return lost

    def copy(self) -> Deal:
        new = Deal.__new__(Deal)
        for name in Deal.__slots__:
            setattr(new, name, getattr(self, name))
        new.order = list(self.order)
        new.hands = [list(h) for h in self.hands]
        new.stock = list(self.stock)
        new.pile = list(self.pile)
        new.owed = list(self.owed)
        new.looked = list(self.looked)
        new.played = list(self.played)
        new.holders = list(self.holders)
        new._in = list(self._in)
        return new

    def __repr__(self) -> str:
        hands = " / ".join(f"{s}: {' '.join(self.hands[s])}" for s in self.order)
        return (
            f"<Deal {self.end or self.step} seat={self.seat} hands={hands} pile={' '.join(self.pile)} "
            f"stock={len(self.stock)} knocker={self.knocker}>"
        )
