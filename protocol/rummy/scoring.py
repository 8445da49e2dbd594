"""Scoring a deal and a game (rules M8, M24-M26, M34, M35, M41, M42).

``score(deal)`` gives each seat's plus, minus and score for a deal as it stands (ended, or cut
at the end of the stock, M16); ``Match`` carries a game over its deals: totals, the deal
results (a record's ``deals[].result``), the dealer rotation (M8) and the end at ``target`` or
``max_deals`` (M26), with places in competition ranking (M35).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from .actions import Action
from .cards import is_joker, points
from .rules import RummyRules
from .state import Deal, apply, deal

JOKER_IN_HAND_B = 50
"""M24, B9: a joker left in hand costs 50 in b."""


class DealScore(msgspec.Struct, frozen=True, kw_only=True):
    """A record's ``deals[].result`` without ``totals``: ``end``, ``out`` (None: nobody went
    out), ``plus``, ``minus`` and ``score`` per seat."""

    end: str
    out: int | None
    plus: tuple[int, ...]
    minus: tuple[int, ...]
    score: tuple[int, ...]


def credited(state: Deal) -> list[int]:
    """Plus per seat (M24): the points of the table's cards that count for it. A meld's cards
    count for its owner under ``layoff_credit = owner``; under ``layer`` each card for the seat
    that laid it (a swapped-in card for the swapper, M41; a claim's row cards for the claimer,
    M42). A joker counts the rank it stands for."""
    plus = [0] * state.n
    owner = state.rules.credit == "owner"
    for meld in state.melds:
        for p in meld.cards:
            plus[meld.owner if owner else p.by] += points(p.card, p.stands)
    return plus


def hand_minus(hand: Sequence[str], rules: RummyRules) -> tuple[int, int]:
    """(minus, doubling factor) of a hand left (M24, M34): the points of its natural cards; a
    joker costs 50 in b; in c and d each joker doubles (the factor is ``2 ** jokers``) and, with
    ``joker_doubling = hand``, the minus is doubled already (factor 1 returned)."""
    naturals = sum(points(c) for c in hand if not is_joker(c))
    jokers = sum(1 for c in hand if is_joker(c))
    if not rules.doubling:
        return naturals + JOKER_IN_HAND_B * jokers, 1
    if rules.joker_doubling == "hand":
        return naturals * 2**jokers, 1
    return naturals, 2**jokers


def score(state: Deal) -> DealScore:
    """The deal's plus, minus and score per seat (M24, M34: under ``net`` the score is the net
    doubled when negative, so not ``plus - minus``). Raises ``ValueError`` for a deal that
    has not ended: a deal stopped in the middle is never scored (RECORDS.md)."""
    if not state.ended:
        raise ValueError("the deal has not ended: only an ended deal is scored")
    plus = credited(state)
    minus: list[int] = []
    total: list[int] = []
    for seat, hand in enumerate(state.hands):
        m, factor = hand_minus(hand, state.rules)
        net = plus[seat] - m
        minus.append(m)
        total.append(net * factor if net < 0 else net)
    return DealScore(
        end=state.end,
        out=state.out if state.out >= 0 else None,
        plus=tuple(plus),
        minus=tuple(minus),
        score=tuple(total),
    )


def places(totals: Sequence[int]) -> list[int]:
    """Places by total, highest first; equal totals share a place and skip the places they
    take: 1, 2, 2, 4 (M26, M35)."""
    return [1 + sum(1 for t in totals if t > mine) for mine in totals]


class DealResult(msgspec.Struct, frozen=True, kw_only=True):
    """One scored deal: its dealer and what a record's ``deals[].result`` holds."""

    dealer: int
    end: str
    out: int | None
    plus: tuple[int, ...]
    minus: tuple[int, ...]
    score: tuple[int, ...]
    totals: tuple[int, ...]


class GameResult(msgspec.Struct, frozen=True, kw_only=True):
    """A record's ``result``."""

    places: tuple[int, ...]
    totals: tuple[int, ...]
    complete: bool


class Match(msgspec.Struct, frozen=True, kw_only=True):
    """A game over its deals. ``deal`` is the deal in progress (None between deals); a deal
    that ends is scored at once into ``results`` and ``totals``; ``complete`` once M26 ends
    the game."""

    rules: RummyRules
    totals: tuple[int, ...]
    results: tuple[DealResult, ...] = ()
    deal: Deal | None = None
    complete: bool = False

    @property
    def deals(self) -> int:
        """Deals begun."""
        return len(self.results) + (1 if self.deal is not None else 0)

    def next_dealer(self) -> int:
        """M8: the last seat deals first; the deal passes one seat clockwise."""
        n = self.rules.players
        if not self.results:
            return n - 1
        return (self.results[-1].dealer + 1) % n

    def result(self) -> GameResult:
        return GameResult(places=tuple(places(self.totals)), totals=self.totals, complete=self.complete)


def new_match(rules: RummyRules) -> Match:
    return Match(rules=rules, totals=(0,) * rules.players)


def start_deal(match: Match, deck: Sequence[str]) -> Match:
    """The next deal, dealt from ``deck`` by the next dealer (M8). Raises ``ValueError``."""
    if match.complete:
        raise ValueError("the game is over")
    if match.deal is not None:
        raise ValueError("a deal is in progress")
    return msgspec.structs.replace(match, deal=deal(match.rules, match.next_dealer(), deck))


def play(match: Match, action: Action) -> Match:
    """``action`` in the deal in progress; a deal that ends is scored and the game may end
    (M25, M26). Raises ``IllegalAction`` (or ``ValueError`` between deals)."""
    if match.deal is None:
        raise ValueError("no deal in progress")
    state = apply(match.deal, action)
    if not state.ended:
        return msgspec.structs.replace(match, deal=state)
    return finish_deal(match, state)


def finish_deal(match: Match, state: Deal) -> Match:
    """Score the ended deal ``state`` into the match; M26 decides whether the game ends."""
    s = score(state)
    totals = tuple(t + d for t, d in zip(match.totals, s.score))
    row = DealResult(
        dealer=state.dealer, end=s.end, out=s.out, plus=s.plus, minus=s.minus, score=s.score, totals=totals
    )
    results = (*match.results, row)
    rules = match.rules
    complete = any(t >= rules.target for t in totals) or len(results) >= rules.max_deals
    return msgspec.structs.replace(match, totals=totals, results=results, deal=None, complete=complete)
