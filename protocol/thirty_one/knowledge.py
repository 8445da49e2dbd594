"""What one seat knows about the deal in progress, worked out from its own view alone.

A Thirty-one bot needs the same few facts every time: its hand, the cards it has seen (its
own, every discard, every card taken from the pile, hands shown), which cards each other seat
is known to hold (taken from the discard pile and not discarded since), and which cards it has
never seen (they are in other hands or the stock). ``Knowledge.of(view)`` derives them from
``ThirtyOneView`` (its history holds the deal's events as the seat may see them), so it can
never tell a bot more than the rules have shown it::

    k = Knowledge.of(view)
    k.held[seat]          # cards ``seat`` is known to hold
    k.unseen              # cards I have not seen in this deal
    k.possible(seat)      # what ``seat`` may hold
"""

from __future__ import annotations

from .cards import HIDDEN, PACK_SET
from .events import T31DealEnded, T31Dealt, T31Discarded, T31Restocked, T31Took
from .views import ThirtyOneView


class Knowledge:
    """One seat's knowledge of the deal in its view (see the module docstring)."""

    __slots__ = ("seat", "hand", "pile", "held", "seen", "restocked")

    def __init__(self, seat: int, n: int) -> None:
        self.seat = seat
        self.hand: list[str] = []
        self.pile: list[str] = []
        """The discard pile, bottom first."""
        self.held: list[set[str]] = [set() for _ in range(n)]
        """Per seat, the cards it is known to hold (for oneself: the whole hand once seen)."""
        self.seen: set[str] = set()
        """Every card this seat has seen in this deal, wherever it is now."""
        self.restocked: set[str] = set()
        """Cards a restock put in the stock that this seat has not seen leave it: each is in
        the stock or was taken from it by another seat."""

    @classmethod
    def of(cls, view: ThirtyOneView) -> Knowledge:
        k = cls(view.seat, len(view.players))
        me = view.seat
        for event in view.history:
            kind = type(event)
            if kind is T31Dealt:
                e: T31Dealt = event  # type: ignore[assignment]
                m = len(e.order)
                k.pile = [e.deck[3 * m]]
                k.seen = {c for c in e.deck if c != HIDDEN}
                if me in e.order:
                    own = [e.deck[i] for i in range(e.order.index(me), 3 * m, m) if e.deck[i] != HIDDEN]
                    k.held[me] = set(own)
            elif kind is T31Took:
                t: T31Took = event  # type: ignore[assignment]
                card = t.card
                if t.source == "discard":
                    k.pile.pop()
                if card != HIDDEN:
                    k.held[t.seat].add(card)
                    k.seen.add(card)
                    k.restocked.discard(card)
            elif kind is T31Discarded:
                d: T31Discarded = event  # type: ignore[assignment]
                k.held[d.seat].discard(d.card)
                k.pile.append(d.card)
                k.seen.add(d.card)
            elif kind is T31Restocked:
                k.restocked = set(k.pile[:-1])
                k.pile = k.pile[-1:]
            elif kind is T31DealEnded:
                ended: T31DealEnded = event  # type: ignore[assignment]
                for s, hand in enumerate(ended.shown):
                    if hand:
                        k.held[s] = set(hand)
                        k.seen.update(hand)
        k.hand = list(view.hand)
        if view.hand:
            k.held[me] = set(view.hand)
            k.seen.update(view.hand)
        return k

    @property
    def unseen(self) -> set[str]:
        """Cards this seat has not seen in this deal: in other hands or in the stock."""
        return set(PACK_SET - self.seen)

    def possible(self, seat: int) -> set[str]:
        """The cards ``seat`` may hold: those it is known to hold, and any card that is unseen
        or restocked and not known to be held by someone else."""
        if seat == self.seat and self.hand:
            return set(self.hand)
        others = set().union(*(h for s, h in enumerate(self.held) if s != seat))
        return self.held[seat] | ((self.unseen | self.restocked) - others)
