"""A double-dummy solver for the trick play of one Skat deal: every hand known.

``solve(position)`` says how many card points the declarer takes in the remaining tricks with
best play on both sides (suit and grand games), or whether the declarer can be forced to take a
trick (null). Perfect-information Monte Carlo (``skatbus.pimc.bot``) asks it, for each world
sampled from what a seat knows, how each legal card would turn out.

The search is alpha-beta over single cards, with what makes it fast enough in Python:

* **Transpositions** at trick boundaries: there the future depends only on the three hands and
  who leads (the points already taken just add up), so one table entry per position holds a
  bound on the future points, reused across root moves and across the PIMC worlds' searches of
  the same deal when they meet (they rarely do; the table is per search).
* **Equivalent cards**: of cards in one hand, in one class, with no card of another hand
  between them in strength and with the same points, trying one is enough (7-8-9 of a suit,
  adjacent jacks, ...).
* **Move ordering**: cheap winning cards first when the trick can be won, cheap discards when it
  cannot; high cards to a partner who is winning the trick (Schmieren).
* **Zero-window tests** for the root moves when only "can the declarer reach N?" matters.

Positions use deal positions 0..2 and ``protocol.cards`` bit masks; ``order`` is the game's
``CardOrder``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from protocol.skat import cards as C
from protocol.skat.cards import POINTS, TRUMP, CardOrder

try:  # the same search in C (setup.py builds it where a compiler is present)
    from . import _dds as _core
except ImportError:  # pragma: no cover - machines without a C compiler
    _core = None  # type: ignore[assignment]

_INF = 1 << 20
_POINT_BYTES = bytes(POINTS)
HAVE_CORE = _core is not None
"""Whether the C core is built: ``Solver(..., use_core=True)`` then runs searches in C."""


class SearchAborted(Exception):
    """A search went over its node limit."""


class Position:
    """Trick play to be solved: the hands (deal positions), the trick on the table, who plays
    next, who declares, and the card order. ``null`` games are solved for "declarer takes a
    trick" instead of for points."""

    __slots__ = ("hands", "trick", "to_move", "declarer", "order", "null")

    def __init__(
        self,
        hands: Sequence[int],
        trick: Sequence[int],
        to_move: int,
        declarer: int,
        order: CardOrder,
        null: bool = False,
    ) -> None:
        self.hands = list(hands)
        self.trick = list(trick)
        self.to_move = to_move
        self.declarer = declarer
        self.order = order
        self.null = null


class Solver:
    """One search's state: the transposition table and a node count (for the benchmark)."""

    def __init__(
        self,
        order: CardOrder,
        declarer: int,
        null: bool = False,
        node_limit: int = 1 << 62,
        deadline: float = float("inf"),
        use_core: bool = HAVE_CORE,
    ) -> None:
        self.order = order
        self.declarer = declarer
        self.null = null
        self.nodes = 0
        self.node_limit = min(node_limit, 1 << 62)
        self.deadline = deadline
        self.use_core = use_core and HAVE_CORE
        """Searches raise ``SearchAborted`` beyond ``node_limit`` nodes (checked every 1,024,
        so the bound is deterministic to that grain) or after ``deadline`` (``time.perf_counter``)."""
        self.table: dict[tuple[int, int, int, int], tuple[int, int]] = {}
        klass, strength = order.klass, order.strength
        # Per class, the cards from strongest to weakest: for equivalent cards and ordering.
        self._by_strength = [
            sorted((c for c in range(32) if klass[c] == k), key=lambda c: -strength[c]) for k in range(5)
        ]

    # --- public --------------------------------------------------------------------------------

    def move_values(self, pos: Position) -> dict[int, int]:
        """For each legal card of the player to move, the declarer's card points from here on
        (the trick on the table included) with best play after it; in null, 1 if the declarer
        can be made to take a trick, else 0."""
        if self.use_core:
            return self._core_root(pos, -_INF, _INF)
        hands = list(pos.hands)
        mover = pos.to_move
        out: dict[int, int] = {}
        for group in self._groups(hands, pos.trick, mover):
            c = group[0]
            hands[mover] ^= 1 << c
            v = self._after(hands, [*pos.trick, c], mover, -_INF, _INF)
            hands[mover] ^= 1 << c
            for d in group:  # equivalent cards: the same value
                out[d] = v
        return out

    def move_reaches(self, pos: Position, target: int) -> dict[int, bool]:
        """For each legal card of the player to move: does the declarer still reach ``target``
        future card points with best play after it? (Null: does the declarer take a trick?)
        Zero-window searches: far cheaper than exact values, and all a PIMC vote needs."""
        lo, hi = (0, 1) if self.null else (target - 1, target)
        if self.use_core:
            return {c: v >= hi for c, v in self._core_root(pos, lo, hi).items()}
        hands = list(pos.hands)
        mover = pos.to_move
        out: dict[int, bool] = {}
        for group in self._groups(hands, pos.trick, mover):
            c = group[0]
            hands[mover] ^= 1 << c
            reached = self._after(hands, [*pos.trick, c], mover, lo, hi) >= hi
            hands[mover] ^= 1 << c
            for d in group:
                out[d] = reached
        return out

    def value(self, pos: Position, alpha: int = -_INF, beta: int = _INF) -> int:
        """The declarer's future card points (null: 1 if it takes a trick) with best play."""
        return self._search(list(pos.hands), list(pos.trick), pos.to_move, alpha, beta)

    def _core_root(self, pos: Position, lo: int, hi: int) -> dict[int, int]:
        assert _core is not None
        order = self.order
        found = _core.root(
            (pos.hands[0], pos.hands[1], pos.hands[2]),
            tuple(pos.trick),
            pos.to_move,
            self.declarer,
            self.null,
            lo,
            hi,
            self.node_limit,
            bytes(order.klass),
            bytes(order.strength),
            _POINT_BYTES,
        )
        if found is None:
            raise SearchAborted(self.node_limit)
        values, nodes = found
        self.nodes += nodes
        return dict(values)

    # --- search --------------------------------------------------------------------------------

    def _after(self, hands: list[int], trick: list[int], mover: int, alpha: int, beta: int) -> int:
        """The value once ``mover`` has added the last card of ``trick``."""
        if len(trick) < 3:
            return self._search(hands, trick, (mover + 1) % 3, alpha, beta)
        leader = (mover + 1) % 3  # the one who led is the one after the third player
        winner = (leader + self.order.trick_winner(trick)) % 3
        if self.null:
            if winner == self.declarer:
                return 1
            if not hands[0] | hands[1] | hands[2]:
                return 0
            return self._search(hands, [], winner, alpha, beta)
        pts = POINTS[trick[0]] + POINTS[trick[1]] + POINTS[trick[2]] if winner == self.declarer else 0
        if not hands[0] | hands[1] | hands[2]:
            return pts
        return pts + self._search(hands, [], winner, alpha - pts, beta - pts)

    def _search(self, hands: list[int], trick: list[int], mover: int, alpha: int, beta: int) -> int:
        self.nodes += 1
        if self.nodes & 1023 == 0 and (self.nodes > self.node_limit or time.perf_counter() > self.deadline):
            raise SearchAborted(self.nodes)
        key = None
        if not trick:
            if not self.null:
                # The future points lie between 0 and what is left: outside the window, done.
                rest = C.points(hands[0] | hands[1] | hands[2])
                if rest <= alpha:
                    return rest
                if beta <= 0:
                    return 0
            key = (hands[0], hands[1], hands[2], mover)
            entry = self.table.get(key)
            if entry is not None:
                lo, hi = entry
                if lo >= beta or lo == hi:
                    return lo
                if hi <= alpha:
                    return hi
                alpha, beta = max(alpha, lo), min(beta, hi)
        # The declarer maximizes its points; in null it minimizes "took a trick".
        maximizing = (mover == self.declarer) != self.null
        a0, b0 = alpha, beta
        best = -_INF if maximizing else _INF
        for c in self._moves(hands, trick, mover):
            hands[mover] ^= 1 << c
            trick.append(c)
            v = self._after(hands, trick, mover, alpha, beta)
            trick.pop()
            hands[mover] ^= 1 << c
            if maximizing:
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
            else:
                if v < best:
                    best = v
                    if v < beta:
                        beta = v
            if alpha >= beta:
                break
        if key is not None:
            lo, hi = self.table.get(key, (-_INF, _INF))
            if best <= a0:
                hi = min(hi, best)
            elif best >= b0:
                lo = max(lo, best)
            else:
                lo = hi = best
            self.table[key] = (lo, hi)
        return best

    # --- moves ---------------------------------------------------------------------------------

    def _groups(self, hands: Sequence[int], trick: Sequence[int], mover: int) -> list[list[int]]:
        """The legal cards of ``mover`` in groups of equivalents (same class, same points, no
        other hand's card between them), strongest first within each group."""
        legal = self.order.legal(hands[mover], trick[0] if trick else None)
        others = (hands[0] | hands[1] | hands[2]) & ~hands[mover]
        groups: list[list[int]] = []
        for k in range(5):
            current: list[int] | None = None
            for c in self._by_strength[k]:
                bit = 1 << c
                if legal & bit:
                    if current is not None and POINTS[current[0]] == POINTS[c]:
                        current.append(c)
                    else:
                        current = [c]
                        groups.append(current)
                elif others & bit:
                    current = None
        return groups

    def _moves(self, hands: list[int], trick: list[int], mover: int) -> list[int]:
        """The legal cards worth trying (one per group of equivalents), best-first."""
        cards = [g[0] for g in self._groups(hands, trick, mover)]
        if len(cards) <= 1:
            return cards
        order = self.order
        klass, strength = order.klass, order.strength
        if not trick:
            # Leading: strong cards first (they take tricks or pull trumps), then the rest.
            return sorted(cards, key=lambda c: (-(klass[c] == TRUMP), -strength[c]))
        best = trick[0]
        for c in trick[1:]:
            if _beats(klass, strength, c, best):
                best = c
        leader = (mover - len(trick)) % 3
        best_by = (leader + trick.index(best)) % 3
        if self.null:
            # Whoever can duck does so with the highest card that still loses.
            return sorted(cards, key=lambda c: (_beats(klass, strength, c, best), -strength[c]))
        friend_winning = (best_by == self.declarer) == (mover == self.declarer)
        if friend_winning:
            return sorted(cards, key=lambda c: -POINTS[c])  # schmieren
        winners = [c for c in cards if _beats(klass, strength, c, best)]
        losers = [c for c in cards if not _beats(klass, strength, c, best)]
        winners.sort(key=lambda c: (POINTS[c] if klass[c] == TRUMP else 0, strength[c]))
        losers.sort(key=lambda c: POINTS[c])
        return winners + losers


def _beats(klass: Sequence[int], strength: Sequence[int], c: int, best: int) -> bool:
    """Does ``c`` beat ``best``, the card winning the trick so far?"""
    if klass[c] == klass[best]:
        return strength[c] > strength[best]
    return klass[c] == TRUMP
