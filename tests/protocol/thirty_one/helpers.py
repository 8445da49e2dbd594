"""A table to script Thirty-one games in tests: explicit decks, actions by their record text.

Golden tests reproduce the rules page's worked examples exactly, so they deal explicit decks
(``t31_dealt`` with seed ``""``) in the order RECORDS.md gives: one card at a time to each active
player from the dealer's left until each holds three, then the discard pile's first card, then
the stock, top card first. ``Table.deal`` builds that deck from the hands by seat letter; the
stock's cards not named follow in pack order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from protocol.events import Event, TableClosed
from protocol.thirty_one import (
    GAME,
    PACK,
    Rejection,
    T31Dealt,
    T31Restocked,
    ThirtyOneRules,
    ThirtyOneState,
    ThirtyOneView,
    decide,
    due,
    fold,
    parse_action,
    view,
)

LETTERS = "ABCDEFGHI"


def seat_of(who: int | str) -> int:
    return LETTERS.index(who) if isinstance(who, str) else who


def build_deck(
    order: Sequence[int], hands: Mapping[int, Sequence[str]], pile: str, stock: Sequence[str] = ()
) -> list[Any]:
    """The deck that deals ``hands`` (by seat) to the seats of ``order``, turns up ``pile`` and
    puts ``stock`` on top of the stock (then the unnamed cards in pack order)."""
    m = len(order)
    deck: list[str] = [""] * (3 * m)
    for j, seat in enumerate(order):
        cards = list(hands[seat])
        assert len(cards) == 3, (seat, cards)
        for i, code in enumerate(cards):
            deck[i * m + j] = code
    named = deck + [pile] + list(stock)
    assert len(set(named)) == len(named), f"a card is named twice: {named}"
    assert all(code in PACK for code in named), named
    return named + [code for code in PACK if code not in named]


class Table:
    """A table folded event by event, with the events it was built from in ``log``."""

    def __init__(self, n: int = 3, rules: ThirtyOneRules | None = None, seed: str = "", **options: Any) -> None:
        self.rules = rules if rules is not None else ThirtyOneRules(**options)
        self.log: list[Event] = [GAME.open_event("golden", list(LETTERS[:n]), self.rules, seed, {})]
        self.state: ThirtyOneState = fold(self.log)

    def add(self, *events: Event) -> None:
        for event in events:
            self.state.apply(event)
            self.log.append(event)

    def deal(self, hands: Mapping[str, Sequence[str]], pile: str, stock: Sequence[str] = ()) -> T31Dealt:
        """Deal an explicit deck (an imported deal, seed ""), then what follows by itself."""
        owed = due(self.state)
        assert isinstance(owed, T31Dealt), owed
        by_seat = {seat_of(k): v for k, v in hands.items()}
        assert set(by_seat) == set(owed.order), (by_seat, owed.order)
        event = T31Dealt(
            deal=owed.deal,
            dealer=owed.dealer,
            order=owed.order,
            deck=build_deck(owed.order, by_seat, pile, stock),
            seed="",
        )
        self.add(event)
        self.settle()
        return event

    def seeded_deal(self) -> T31Dealt:
        owed = due(self.state)
        assert isinstance(owed, T31Dealt), owed
        self.add(owed)
        self.settle()
        return owed

    def act(self, who: int | str, text: str) -> list[Event]:
        """``who`` does ``text`` (record text); it must be accepted. Then what follows by itself."""
        events = decide(self.state, seat_of(who), parse_action(text))
        assert isinstance(events, list), f"{who} {text}: {events}"
        self.add(*events)
        self.settle()
        return events

    def refuse(self, who: int | str, text: str) -> Rejection:
        """``who`` tries ``text``: it must be refused (the state is unchanged)."""
        before = self.state.events
        answer = decide(self.state, seat_of(who), parse_action(text))
        assert isinstance(answer, Rejection), f"{who} {text} was accepted: {answer}"
        assert self.state.events == before
        return answer

    def play(self, *lines: str) -> None:
        """Several actions, each ``"<letter> <action>"`` as in a record."""
        for line in lines:
            who, _, text = line.partition(" ")
            self.act(who, text)

    def churn(self, *whos: int | str) -> None:
        """Each of ``whos`` in turn takes the stock's top card and discards it: a turn that
        leaves the hand as it was."""
        for who in whos:
            deal = self.state.deal
            assert deal is not None and deal.stock, "churn needs a card in the stock"
            card = deal.stock[0]
            self.act(who, "take stock")
            self.act(who, f"discard {card}")

    def restock(self, stock: Sequence[str]) -> None:
        self.add(T31Restocked(stock=list(stock)))  # type: ignore[arg-type]
        self.settle()

    def settle(self) -> None:
        """Append every derived event now due, up to (not including) the next deal."""
        while True:
            owed = due(self.state)
            if owed is None or isinstance(owed, T31Dealt):
                return
            self.add(owed)
            if isinstance(owed, TableClosed):
                return

    def view(self, who: int | str = -1) -> ThirtyOneView:
        return view(self.state, seat_of(who))

    def value(self, who: int | str) -> float:
        deal = self.state.deal
        assert deal is not None
        return deal.value(seat_of(who)) / 2

    def last(self, kind: type[Event]) -> Any:
        return next(e for e in reversed(self.log) if isinstance(e, kind))
