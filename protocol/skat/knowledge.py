"""What one seat knows about the deal in progress, worked out from its own view alone.

Every card-playing bot needs the same facts: which cards are gone, who has shown a void in
which suit, which cards it has not seen (they are in the other hands or the skat), who its
partner is, how many points each side has taken. ``Knowledge.of(view)`` derives them once from
``PlayerView`` (its history holds the deal's public events and the seat's own cards), so no bot
rebuilds them from ``view.history`` by hand. It uses nothing the view does not carry, so it can
never tell a bot more than the rules have revealed to it.

Cards are sets as in ``protocol.cards``: an ``int`` with bit ``i`` set for card ``i``
(``C.codes(mask)`` lists them as "CJ", ...); suits are classes of the game's card order
(``order.klass[card]``: 0-3 the suits CSHD, 4 trump)::

    k = Knowledge.of(view)
    k.unseen                      # cards I have not seen anywhere
    k.possible(k.next_seat())     # what the next player may hold, voids taken into account
    k.is_void(seat, C.TRUMP)      # has ``seat`` shown it has no trump left?
"""

from __future__ import annotations

from typing import Final

from ..events import CardPlayed, DealDealt, GameDeclared
from . import cards as C
from .cards import INDEX, ORDERS, POINTS, CardOrder
from .games import Declaration
from .views import PlayerView

RAMSCH: Final = "R"
"""The card-order kind of a ramsch (jacks trump, no declarer)."""


class SeenTrick:
    """A completed trick as a seat saw it: table seats, cards in play order, winner, points."""

    __slots__ = ("leader", "seats", "cards", "winner", "points")

    def __init__(self, seats: tuple[int, ...], cards: tuple[int, ...], winner: int) -> None:
        self.leader = seats[0]
        self.seats = seats
        self.cards = cards
        self.winner = winner
        self.points = sum(POINTS[c] for c in cards)

    def __repr__(self) -> str:
        return f"SeenTrick(leader={self.leader}, cards={C.fmt(self.cards)}, winner={self.winner})"


class Knowledge:
    """One seat's knowledge of the current deal (``Knowledge.of(view)``). Seats are table seats,
    as in the view; every card set is a bit mask (see the module docstring)."""

    __slots__ = (
        "seat", "seats", "declarer", "partner", "game", "kind", "order", "hand", "legal_cards", "played",
        "tricks", "trick", "trick_seats", "voids", "open_cards", "skat", "unseen", "points",
    )  # fmt: skip

    def __init__(self, view: PlayerView) -> None:
        self.seat: int = view.seat
        """The seat this knowledge belongs to."""
        self.hand: int = C.parse(view.hand)
        self.legal_cards: int = C.parse(a.card for a in view.legal if hasattr(a, "card"))
        """The cards this seat may play now (empty unless it is to play a card)."""
        seats: tuple[int, ...] = ()
        game: Declaration | None = None
        plays: list[tuple[int, int]] = []
        for e in view.history:
            kind = type(e)
            if kind is CardPlayed:
                plays.append((e.seat, INDEX[e.card]))  # type: ignore[union-attr]
            elif kind is DealDealt:
                seats = e.seats  # type: ignore[union-attr]
            elif kind is GameDeclared:
                game = e.game  # type: ignore[union-attr,assignment]
        self.seats: tuple[int, ...] = seats
        """Table seats of forehand, middlehand and rearhand (the order of play)."""
        self.game: Declaration | None = game
        self.declarer: int | None = view.declarer
        self.partner: int | None = (
            next((s for s in seats if s not in (self.seat, view.declarer)), None)
            if view.declarer is not None and view.declarer != self.seat
            else None
        )
        """The other defender, for a defender; None for the declarer and in a ramsch."""
        self.kind: str = game.game if game is not None else (RAMSCH if plays or view.phase == "playing" else "G")
        """The card order in force: the game's letter, or "R" for a ramsch."""
        order = ORDERS[self.kind]
        self.order: CardOrder = order
        self._read_tricks(plays, len(view.trick))
        self.open_cards: dict[int, int] = {s: C.parse(cards) for s, cards in view.open_cards.items() if s != self.seat}
        """Cards other seats have laid open and still hold (an ouvert or shown declarer)."""
        self.skat: int = C.parse(view.skat) | C.parse(view.discarded)
        """Skat cards this seat knows (as the declarer who picked it up, or after the deal)."""
        known = self.hand | self.played | self.skat
        for cards in self.open_cards.values():
            known |= cards
        self.unseen: int = C.ALL & ~known
        """Cards this seat has seen nowhere: they are in the other hands or the skat."""

    @classmethod
    def of(cls, view: PlayerView) -> Knowledge:
        """What ``view.seat`` knows about the deal ``view`` shows."""
        return cls(view)

    def _read_tricks(self, plays: list[tuple[int, int]], on_table: int) -> None:
        order = self.order
        self.voids: dict[int, int] = {s: 0 for s in self.seats}
        """Per seat, the classes (bit k for ``order.klass`` k) it has shown it cannot follow."""
        self.points: dict[int, int] = {s: 0 for s in self.seats}
        """Per seat, the card points of the tricks it has won."""
        self.tricks: list[SeenTrick] = []
        played = 0
        done = len(plays) - on_table
        for i in range(0, len(plays), 3):
            chunk = plays[i : i + 3]
            led = order.klass[chunk[0][1]]
            for seat, c in chunk:
                played |= 1 << c
                if order.klass[c] != led:
                    self.voids[seat] = self.voids.get(seat, 0) | 1 << led
            if i + 3 <= done:
                cards = tuple(c for _, c in chunk)
                trick = SeenTrick(tuple(s for s, _ in chunk), cards, chunk[order.trick_winner(list(cards))][0])
                self.tricks.append(trick)
                self.points[trick.winner] = self.points.get(trick.winner, 0) + trick.points
        self.played: int = played
        """Every card played in this deal, the trick on the table included."""
        self.trick: list[int] = [c for _, c in plays[done:]]
        """The cards on the table, in play order."""
        self.trick_seats: list[int] = [s for s, _ in plays[done:]]
        """Who played each card on the table."""

    # --- questions ---------------------------------------------------------------------------

    def next_seat(self, seat: int | None = None) -> int:
        """The seat that plays after ``seat`` (default: after this one)."""
        s = self.seat if seat is None else seat
        return self.seats[(self.seats.index(s) + 1) % 3]

    def still_to_play(self) -> list[int]:
        """The seats that play after this one in the current trick."""
        out: list[int] = []
        s = self.seat
        for _ in range(2 - len(self.trick)):
            s = self.next_seat(s)
            out.append(s)
        return out

    def is_void(self, seat: int, klass: int) -> bool:
        """Has ``seat`` shown that it holds no card of ``klass`` (0-3 a suit, 4 trump)?"""
        return bool(self.voids.get(seat, 0) >> klass & 1)

    def possible(self, seat: int) -> int:
        """The cards ``seat`` may hold as far as this seat can tell: its open cards if it laid
        them open, else the unseen cards of the classes it has not shown void in."""
        if seat == self.seat:
            return self.hand
        if seat in self.open_cards:
            return self.open_cards[seat] & ~self.played
        cards = self.unseen
        for k in range(5):
            if self.voids.get(seat, 0) >> k & 1:
                cards &= ~self.order.class_masks[k]
        return cards

    def side_points(self) -> tuple[int, int]:
        """Card points taken in tricks so far: (declarer, defenders); the skat not counted."""
        mine = self.points.get(self.declarer, 0) if self.declarer is not None else 0
        return mine, sum(self.points.values()) - mine

    def __repr__(self) -> str:
        return (
            f"<Knowledge seat={self.seat} declarer={self.declarer} partner={self.partner} kind={self.kind} "
            f"played={len(self.tricks)} tricks, trick [{C.fmt(self.trick)}], unseen {C.count(self.unseen)} cards>"
        )
