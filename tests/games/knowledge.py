"""What each seat may know at each point of a table, worked out from the log alone, per game.

The contract's leak check compares every view and every redacted event with these sets: a card
code in what a seat is shown that is not in ``may_know(seat)`` is a leak. The rules here are
written from the games' rules (Skat: a seat's own hand, the skat for the declarer who picks it
up, played and shown cards, an ouvert hand once the doubling round is over, the skat after the
deal; Thirty-one T8, T13, T30: the own hand, once looked at under ``throw_down``, the discard
pile, cards taken from it, the pile's first card, the hands shown at the end, never the stock
nor a card another seat took from it; the rummy M9, M11, M13, M14: the own dealt and drawn
cards, everything laid in the row or on the table, every hand at the deal's end), not from the
games' views modules. They read events in their wire form (``msgspec.to_builtins``: a map with
the tag in ``type``), so they share no code with what they check. Seat ``-1`` is a spectator:
it may know the public cards only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class Knowledge(Protocol):
    """The cards each seat may know in the deal in progress (or, between deals, the last)."""

    def see(self, event: dict[str, Any]) -> None:
        """Take in the next event of the log (its wire form)."""

    def may_know(self, seat: int) -> set[str]:
        """The cards ``seat`` may have seen by now (a view of it may show these, no other)."""

    def may_know_redacted(self, seat: int) -> set[str]:
        """What ``Game.redact(event, seat)`` may show: ``may_know`` unless the game's redact
        cannot tell (it has no state), then a superset, said where."""


class SkatKnowledge:
    """Skat: three seats in a deal (the dealer of four sits out and sees the public cards only)."""

    def __init__(self, rules: Any, n: int) -> None:
        self.kontra = bool(rules.kontra)
        self._new_deal([])

    def _new_deal(self, seats: list[int]) -> None:
        self.seats = seats
        self.public: set[str] = set()
        self.own: dict[int, set[str]] = {}
        self.dealt: dict[int, set[str]] = {}
        self.skat: set[str] = set()
        self.took_part: set[int] = set()
        self.taken: set[str] = set()
        self.discard: set[str] = set()
        self.declarer = -1
        self.ouvert = False
        self.doubling = False
        self.asking: list[int] = []
        """The defenders still to be asked for Kontra (those that bid or held, forehand first)."""
        self.answering = False
        """A Kontra was said: the declarer answers with Re or a pass, then play begins."""

    def see(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "deal_dealt/1":
            self._new_deal(list(event["seats"]))
            for seat, hand in zip(event["seats"], event["hands"]):
                self.dealt[seat] = set(hand)
                self.own[seat] = set(hand)
            self.skat = set(event["skat"])
        elif kind in ("bid/1", "hold/1"):
            self.took_part.add(event["seat"])
        elif kind == "skat_taken/1":
            self.taken = set(event["cards"])
            self.own[event["seat"]] |= self.taken
        elif kind == "discarded/1":
            self.discard = set(event["cards"])
        elif kind == "game_declared/1":
            self.declarer = event["seat"]
            self.ouvert = bool(event["game"].get("ouvert", False))
            self.asking = [s for s in self.seats if s != self.declarer and s in self.took_part] if self.kontra else []
            self.doubling = bool(self.asking)
            if not self.doubling:
                self._doubling_over()
        elif kind == "kontra/1" and self.doubling:
            self.answering = True
        elif kind == "re/1" and self.doubling:
            self._doubling_over()
        elif kind == "pass/1" and self.doubling:
            if not self.answering:
                self.asking.pop(0)
            if self.answering or not self.asking:
                self._doubling_over()
        elif kind == "card_played/1":
            self.public.add(event["card"])
        elif kind in ("trick_taken/1", "cards_shown/1"):
            self.public |= set(event["cards"])
        elif kind == "deal_ended/1":
            self.public |= self.skat

    def _doubling_over(self) -> None:
        self.doubling = False
        if self.ouvert:  # the hand is laid open when play begins
            self.public |= (self.dealt[self.declarer] | self.taken) - self.discard

    def may_know(self, seat: int) -> set[str]:
        return self.public | self.own.get(seat, set())

    def may_know_redacted(self, seat: int) -> set[str]:
        return self.may_know(seat)


class ThirtyOneKnowledge:
    """Thirty-one: the active seats of ``t31_dealt``'s ``order`` hold three cards each."""

    def __init__(self, rules: Any, n: int) -> None:
        self.blind = bool(rules.throw_down)
        self.last = ""
        """The kind of the last event seen (the one being redacted)."""
        self.public: set[str] = set()
        self.own: dict[int, set[str]] = {}
        self.dealt: dict[int, set[str]] = {}

    def see(self, event: dict[str, Any]) -> None:
        kind = self.last = event["type"]
        if kind == "t31_dealt/1":
            order, deck = event["order"], event["deck"]
            m = len(order)
            self.public = {deck[3 * m]}  # the discard pile's first card is turned up (T8)
            self.dealt = {seat: {deck[j], deck[m + j], deck[2 * m + j]} for j, seat in enumerate(order)}
            self.own = {seat: set() if self.blind else set(hand) for seat, hand in self.dealt.items()}
        elif kind == "t31_looked/1":
            self.own[event["seat"]] |= self.dealt[event["seat"]]
        elif kind == "t31_took/1":
            seat = event["seat"]
            self.own[seat] |= self.dealt[seat]  # taking a card is looking at one's hand (T30)
            (self.own[seat] if event["source"] == "stock" else self.public).add(event["card"])
        elif kind == "t31_discarded/1":
            self.public.add(event["card"])
        elif kind == "t31_deal_ended/1":
            for hand in event["shown"]:
                self.public |= set(hand)

    def may_know(self, seat: int) -> set[str]:
        return self.public | self.own.get(seat, set())

    def may_know_redacted(self, seat: int) -> set[str]:
        # Known limitation: ``GAME.redact(event, seat)`` has no state, so under ``throw_down`` it
        # cannot know whether ``seat`` has looked at its dealt hand yet and shows the seat its own
        # dealt cards in ``t31_dealt``. Exactly that is allowed here (that event, those cards);
        # the view check, which has the state, still holds the seat to ``may_know``.
        if self.blind and self.last == "t31_dealt/1":
            return self.may_know(seat) | self.dealt.get(seat, set())
        return self.may_know(seat)


class RummyKnowledge:
    """The Russian rummy (M9, M11, M13, M14, M24): a seat knows the cards dealt to it and those
    it drew; every card that reaches the row, a meld or a claim is public (tokens such as
    ``X1=HQ`` name the physical card before ``=``), and so is every hand once the deal is over."""

    def __init__(self, rules: Any, n: int) -> None:
        self.public: set[str] = set()
        self.own: dict[int, set[str]] = {}

    @staticmethod
    def _card(token: str) -> str:
        return token.partition("=")[0]

    def see(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "rummy_dealt/1":
            order, size, deck = event["order"], event["size"], event["deck"]
            m = len(order)
            self.public = set()
            self.own = {seat: {deck[i] for i in range(j, size * m, m)} for j, seat in enumerate(order)}
        elif kind == "rummy_drew/1":
            self.own.setdefault(event["seat"], set()).add(event["card"])
        elif kind in ("rummy_melded/1", "rummy_claimed/1", "rummy_took/1"):
            self.public |= {self._card(t) for t in event["cards"]}
        elif kind in ("rummy_laid_off/1", "rummy_discarded/1"):
            self.public.add(self._card(event["card"]))
        elif kind == "rummy_swapped/1":
            self.public |= {event["card"], event["joker"]}
        elif kind == "rummy_deal_ended/1":
            for hand in event["hands"]:
                self.public |= set(hand)

    def may_know(self, seat: int) -> set[str]:
        return self.public | self.own.get(seat, set())

    def may_know_redacted(self, seat: int) -> set[str]:
        return self.may_know(seat)


KNOWLEDGE: dict[str, Callable[[Any, int], Knowledge]] = {
    "skat": SkatKnowledge,
    "thirty-one": ThirtyOneKnowledge,
    "rummy": RummyKnowledge,
}
"""Per game (by registered name): what each seat may know, from ``(rules, players)``."""
