"""Worlds: the hidden cards dealt out in one way consistent with what a seat has seen.

A world gives every card this seat has not seen (``Knowledge.unseen``) to one of the other two
hands or to the skat, so that each hand gets exactly as many cards as it still holds, no hand
gets a card of a class it has shown void in, and cards laid open stay where they are. Cards
that fit in fewer places are placed first, and each card goes to a place chosen in proportion
to the room left there, which keeps the sample close to uniform over the consistent deals
(exactly uniform without voids) and never dead-ends unless the constraints are nearly tight,
in which case it starts over.
"""

from __future__ import annotations

import random

from protocol.skat import cards as C
from protocol.skat.knowledge import Knowledge

SKAT = -1
"""The skat, as a place a hidden card can be in."""


class World:
    """One consistent deal of the hidden cards: the hands by deal position, and the hidden
    skat (empty when this seat knows the skat)."""

    __slots__ = ("hands", "skat")

    def __init__(self, hands: list[int], skat: int) -> None:
        self.hands = hands
        self.skat = skat


def hand_sizes(k: Knowledge) -> dict[int, int]:
    """How many cards each seat still holds: ten, less what it played (a declarer who picked up
    the skat discarded two, so it also holds ten before the first trick)."""
    played = {s: 0 for s in k.seats}
    for trick in k.tricks:
        for s in trick.seats:
            played[s] += 1
    for s in k.trick_seats:
        played[s] += 1
    return {s: 10 - n for s, n in played.items()}


def sample(k: Knowledge, rng: random.Random, attempts: int = 50) -> World:
    """One world consistent with ``k``; raises ``ValueError`` if none was found."""
    sizes = hand_sizes(k)
    others = [s for s in k.seats if s != k.seat]
    room: dict[int, int] = {s: sizes[s] - C.count(k.open_cards.get(s, 0) & ~k.played) for s in others}
    room[SKAT] = max(0, 2 - C.count(k.skat))  # hidden unless this seat has seen it
    hidden = C.cards_of(k.unseen)
    places = {c: [p for p in (*others, SKAT) if p == SKAT or not k.is_void(p, k.order.klass[c])] for c in hidden}
    if sum(max(r, 0) for r in room.values()) != len(hidden):
        raise ValueError(f"{len(hidden)} hidden cards for {room} places: the view is inconsistent")
    hidden.sort(key=lambda c: len(places[c]))
    for _ in range(attempts):
        left = dict(room)
        held = {p: 0 for p in left}
        for c in hidden:
            options = [p for p in places[c] if left[p] > 0]
            if not options:
                break
            weights = [left[p] for p in options]
            p = rng.choices(options, weights)[0]
            held[p] |= 1 << c
            left[p] -= 1
        else:
            return _world(k, held)
    raise ValueError("no consistent world found")


def _world(k: Knowledge, held: dict[int, int]) -> World:
    hands = [0, 0, 0]
    for pos, seat in enumerate(k.seats):
        if seat == k.seat:
            hands[pos] = k.hand
        else:
            hands[pos] = held[seat] | (k.open_cards.get(seat, 0) & ~k.played)
    return World(hands, held[SKAT])
