"""What one seat knows about the rummy deal in progress, worked out from its own view alone.

A rummy bot needs the same few facts every time: its hand, which cards each other seat is known
to hold (taken from the row and not laid or discarded since, or laid open at the deal's end),
every card it has seen in this deal (its own, the row, the melds, the hands shown), and which
cards it has never seen (they are in the stock or in other hands). ``Knowledge.of(view)``
derives them from ``RummyView`` (its history holds the deal's events as the seat may see them),
so it can never tell a bot more than the rules have shown it::

    k = Knowledge.of(view)
    k.held[seat]          # cards ``seat`` is known to hold
    k.unseen              # cards of the pack I have not seen in this deal
    k.possible(seat)      # what ``seat`` may hold
"""

from __future__ import annotations

from .events import (
    HIDDEN,
    RummyClaimed,
    RummyDealEnded,
    RummyDealt,
    RummyDiscarded,
    RummyDrew,
    RummyLaidOff,
    RummyMelded,
    RummySwapped,
    RummyTook,
)
from .views import RummyView


def physical(token: str) -> str:
    """The physical card of a token: ``X1=HQ`` -> ``X1``, ``HQ'`` -> ``HQ'``."""
    return token.partition("=")[0]


class Knowledge:
    """One seat's knowledge of the deal in its view (see the module docstring)."""

    __slots__ = ("seat", "pack", "hand", "held", "seen")

    def __init__(self, seat: int, n: int, pack: tuple[str, ...]) -> None:
        self.seat = seat
        self.pack = pack
        self.hand: list[str] = []
        self.held: list[set[str]] = [set() for _ in range(n)]
        """Per seat, the cards it is known to hold (for oneself: the whole hand)."""
        self.seen: set[str] = set()
        """Every card this seat has seen in this deal, wherever it is now."""

    @classmethod
    def of(cls, view: RummyView) -> Knowledge:
        k = cls(view.seat, len(view.players), view.rules.pack)
        for event in view.history:
            k._see(event)
        k.hand = list(view.hand)
        if 0 <= view.seat < len(k.held):
            k.held[view.seat] = set(view.hand)
        k.seen.update(view.hand)
        k.seen.update(view.row)
        for meld in view.melds:
            k.seen.update(physical(t) for t in meld.cards)
        return k

    def _see(self, event: object) -> None:
        if isinstance(event, RummyDealt):
            self.seen = {c for c in event.deck if c != HIDDEN}
            self.held = [set() for _ in self.held]
        elif isinstance(event, RummyDrew):
            if event.card != HIDDEN:
                self.seen.add(event.card)
        elif isinstance(event, RummyTook):
            self.held[event.seat].update(event.cards)  # the named one is laid next (M14, M27)
            self.seen.update(event.cards)
        elif isinstance(event, RummyMelded | RummyClaimed):
            self._laid(event.seat, [physical(t) for t in event.cards])
        elif isinstance(event, RummyLaidOff | RummyDiscarded):
            self._laid(event.seat, [physical(event.card)])
        elif isinstance(event, RummySwapped):
            self._laid(event.seat, [event.card])
            self.seen.add(event.joker)
            self.held[event.seat].add(event.joker)
        elif isinstance(event, RummyDealEnded):
            for s, hand in enumerate(event.hands):
                self.held[s] = set(hand)
                self.seen.update(hand)

    def _laid(self, seat: int, cards: list[str]) -> None:
        self.held[seat].difference_update(cards)
        self.seen.update(cards)

    @property
    def unseen(self) -> set[str]:
        """Cards of the pack this seat has not seen in this deal: in the stock or other hands."""
        return set(self.pack) - self.seen

    def possible(self, seat: int) -> set[str]:
        """The cards ``seat`` may hold: those it is known to hold, and any unseen card."""
        if seat == self.seat:
            return set(self.hand)
        return self.held[seat] | self.unseen
