"""Seating a tournament of many entrants: table sizes, round-robin-like and Swiss schedules, the
schedule's balance, and the crosstable of results between pairs of entrants.

A tournament of N entrants plays in *series*: in each series every entrant sits at exactly one
table, and the tables of a series seat everybody. Who sits with whom decides how fair the
standings are: an entrant that keeps meeting the strongest bot is handicapped against one that
keeps meeting the weakest. Two schedules are offered, as tournament directors know them:

- ``round_robin``: fixed before the first deal, every pair at one table about equally often
  (the round robin of chess, made to fit tables of three or four), every entrant in each seat
  about equally often (at Skat the seat decides who is forehand first).
- ``swiss``: the next series from the standings so far, the leaders together, as in a Swiss
  tournament, moving entrants by at most one table to avoid repeated meetings.

Everything here is pure and deterministic: the same arguments give the same schedule on every
machine and every Python run, so a published schedule can be recomputed by anybody. The only
randomness is a ``random.Random`` seeded from a public salt (the tournament id) through
sha256, never from ``hash()`` (salted per process) and never from anything secret.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, cast

import msgspec

__all__ = [
    "Balance",
    "PairResult",
    "balance",
    "crosstable",
    "pair_counts",
    "round_robin",
    "swiss",
    "table_sizes",
]

Schedule = list[list[list[str]]]
"""``schedule[s][t]`` is the seat order of table ``t`` in series ``s``."""

_SALT_DOMAIN: Final = b"skatbus seating/1\x00"

_SEARCH_EVALUATIONS: Final = 40_000
"""Swaps the round robin's search weighs at most: enough for the small designs (9 entrants
over 4 series, 16 over 5 at tables of 4) to reach their optimum, few enough that 40 entrants
over 10 series take a fraction of a second."""

_PATIENCE: Final = 100
"""Steps without a better schedule before the search shakes the schedule up."""

_GIVE_UP: Final = 20
"""Shake-ups in a row without a better schedule before the search stops: the best it found
is then as good as it gets (small schedules whose bound no schedule reaches stop early)."""

_KICK_SWAPS: Final = 3
"""Random swaps made regardless of the score to leave a local optimum."""

_CONFLICT_DRAWS: Final = 4
"""Draws to find an entrant sitting with one it meets most often (the swaps that can help)."""


# --------------------------------------------------------------------------------------------
# Table sizes


def table_sizes(entrants: int, low: int, high: int, preferred: int, what: str = "tables") -> list[int]:
    """How ``entrants`` are split into the tables of one series, bigger tables first.

    The rule, in a director's words: as many tables of the preferred size as the entrants fill
    (``entrants // preferred``), the ones left over spread one each over the tables; if that
    makes a table too big, one table more (``ceil(entrants / preferred)``), the missing seats
    spread one each. Tables then differ by at most one seat, and every table seats ``low`` to
    ``high``. Skat (3 to 4, preferably 3): 7 entrants sit 4 + 3, 10 sit 4 + 3 + 3, 12 sit four
    tables of 3.

    Raises ``ValueError`` when neither works (5 entrants at Skat: 3 + 2 or 5), with a one-line
    reason naming the nearest counts that do; ``what`` names the tables in it ("Skat tables").
    """
    if not 1 <= low <= preferred <= high:
        raise ValueError(f"table sizes must satisfy 1 <= low <= preferred <= high, not {low}, {preferred}, {high}")
    sizes = _sizes(entrants, low, high, preferred)
    if sizes is None:
        raise ValueError(_no_sizes_reason(entrants, low, high, preferred, what))
    return sizes


def _sizes(entrants: int, low: int, high: int, preferred: int) -> list[int] | None:
    """The rule of ``table_sizes``, or None where it finds no split."""
    if entrants < low:
        return None
    for tables in (entrants // preferred, -(-entrants // preferred)):
        if tables < 1:
            continue
        small, bigger = divmod(entrants, tables)
        sizes = [small + 1] * bigger + [small] * (tables - bigger)
        if low <= sizes[-1] and sizes[0] <= high:
            return sizes
    return None


def _no_sizes_reason(entrants: int, low: int, high: int, preferred: int, what: str) -> str:
    """Why ``entrants`` find no tables, naming the nearest count below that works and the
    counts above up to where every count works ("4 or 6 (or more)")."""
    seats = f"{low}" if low == high else f"{low} and {high}" if high == low + 1 else f"{low} to {high}"

    def fits(n: int) -> bool:
        return _sizes(n, low, high, preferred) is not None

    fewer = next((n for n in range(entrants - 1, 0, -1) if fits(n)), None)
    more = next(n for n in itertools.count(entrants + 1) if fits(n))
    # From preferred * (preferred - 1) entrants on a table's share of the leftovers is at most
    # one seat, so every count fits if the tables may grow or shrink by one (checked up to
    # there, not assumed); the counts listed end where every count fits.
    horizon = max(more, preferred * preferred) + preferred
    if high > preferred or low < preferred:
        last_gap = max((n for n in range(more, horizon + 1) if not fits(n)), default=more - 1)
        every_from = last_gap + 1 if last_gap < horizon else None
    else:
        every_from = None
    above = [n for n in range(more, (every_from or more) + 1) if fits(n)]
    counts = ([fewer] if fewer is not None else []) + above
    listed = ", ".join(str(n) for n in counts[:-1]) + (" or " if len(counts) > 1 else "") + str(counts[-1])
    entrants_ = f"{entrants} entrant" + ("" if entrants == 1 else "s")
    return f"{entrants_} cannot sit at {what} of {seats}: take {listed}" + (" (or more)" if every_from else "")


# --------------------------------------------------------------------------------------------
# Pair counts and balance


def pair_counts(
    schedule_or_tables: Iterable[Sequence[str]] | Iterable[Sequence[Sequence[str]]],
) -> dict[frozenset[str], int]:
    """How often each pair of entrants shared a table. Takes tables (entrants by seat), or a
    whole schedule (series of tables); pairs that never met are not in the result."""
    counts: dict[frozenset[str], int] = {}
    for table in _tables(schedule_or_tables):
        for a, b in itertools.combinations(table, 2):
            pair = frozenset((a, b))
            counts[pair] = counts.get(pair, 0) + 1
    return counts


def _tables(schedule_or_tables: Iterable[Sequence[str]] | Iterable[Sequence[Sequence[str]]]) -> Iterable[list[str]]:
    """Every table of a schedule or a list of tables, each checked to seat nobody twice."""
    for item in schedule_or_tables:
        if isinstance(item, str):
            raise TypeError(f"a table is a sequence of entrants, not the string {item!r}")
        if not item:
            continue
        if isinstance(item[0], str):
            yield _checked(cast(Sequence[str], item))
        else:
            for table in item:
                yield _checked(table)


def _checked(table: Sequence[str]) -> list[str]:
    seats = list(table)
    if len(set(seats)) != len(seats):
        raise ValueError(f"an entrant sits twice at the table {seats}")
    return seats


class Balance(msgspec.Struct, frozen=True, kw_only=True):
    """How evenly a schedule mixes its entrants: what a director checks before publishing it."""

    entrants: int
    series: int
    pairs: int
    """Pairs of entrants there are (``entrants * (entrants - 1) / 2``)."""
    pair_min: int
    pair_max: int
    pair_mean: float
    """Times a pair shared a table: the fewest, the most, and the mean over all pairs."""
    never_met: int
    """Pairs that never shared a table."""
    first_seat_min: int
    first_seat_max: int
    """Times an entrant sat in the first seat (seat 0: forehand of the first deal at Skat)."""

    def describe(self) -> str:
        """One line for the console and the results, e.g. ``66 pairs: each met 0-2 times (mean
        0.82), 11 never; first seat 0-1 times each``."""
        never = "every pair met" if self.never_met == 0 else f"{self.never_met} never"
        return (
            f"{self.pairs} pairs: each met {_times(self.pair_min, self.pair_max)} (mean {self.pair_mean:.2f}), "
            f"{never}; first seat {_times(self.first_seat_min, self.first_seat_max)} each"
        )


def _times(low: int, high: int) -> str:
    if low == high:
        return "once" if low == 1 else f"{low} times"
    return f"{low}-{high} times"


def balance(schedule: Sequence[Sequence[Sequence[str]]], entrants: Sequence[str]) -> Balance:
    """The balance of a schedule (``schedule[s][t]`` = table ``t`` of series ``s`` by seat) over
    the given entrants: an entrant never seated counts as never meeting anybody."""
    names = list(dict.fromkeys(entrants))
    counts = pair_counts(schedule)
    met = [counts.get(frozenset(pair), 0) for pair in itertools.combinations(names, 2)]
    first = dict.fromkeys(names, 0)
    for series in schedule:
        for table in series:
            if table and table[0] in first:
                first[table[0]] += 1
    return Balance(
        entrants=len(names),
        series=len(schedule),
        pairs=len(met),
        pair_min=min(met, default=0),
        pair_max=max(met, default=0),
        pair_mean=sum(met) / len(met) if met else 0.0,
        never_met=met.count(0),
        first_seat_min=min(first.values(), default=0),
        first_seat_max=max(first.values(), default=0),
    )


# --------------------------------------------------------------------------------------------
# Round robin


def round_robin(entrants: Sequence[str], series: int, sizes: Sequence[int], salt: str) -> Schedule:
    """A schedule fixed in advance: ``result[s][t]`` is the seat order of table ``t`` in series ``s``.

    Every entrant sits at exactly one table per series, the tables of every series having the
    given ``sizes``. Who sits together is chosen so that every pair shares a table about equally
    often: first as few meetings as possible for the pair that meets most, then counts as even
    as possible (the sum of the squared counts as small as possible). The seat order then gives
    every entrant each seat about equally often, the first seat before all others.

    How: a greedy draw series by series (each entrant to the open table where it has met the
    fewest so far), improved by swapping two entrants of different tables of one series while
    that makes the schedule no worse, for a bounded number of swaps (stopping early when no
    schedule can be better, see ``_PairSearch``); then the seats of each table are ordered to
    even out the seat counts (``_seat_orders``). The draw is random, from ``random.Random``
    seeded with sha256 of ``salt`` (the public tournament id): the same arguments give the
    same schedule everywhere.
    """
    names = list(entrants)
    if len(set(names)) != len(names):
        raise ValueError("entrants must be distinct")
    if series < 0:
        raise ValueError(f"series must be 0 or more, not {series}")
    if any(size < 1 for size in sizes):
        raise ValueError(f"every table needs a seat: sizes {list(sizes)}")
    if sum(sizes) != len(names):
        raise ValueError(f"tables of {list(sizes)} seat {sum(sizes)}, not the {len(names)} entrants")
    rng = random.Random(int.from_bytes(hashlib.sha256(_SALT_DOMAIN + salt.encode()).digest(), "big"))
    search = _PairSearch(len(names), list(sizes), series, rng)
    search.improve(_SEARCH_EVALUATIONS)
    seated = _seat_orders(search.members, len(names))
    return [[[names[e] for e in table] for table in tables] for tables in seated]


class _PairSearch:
    """The round robin's local search over who sits together (entrants as indices).

    The score of a schedule is (most meetings of any pair, sum of squared meeting counts),
    smaller is better, compared as a pair. A swap of entrant ``a`` at table A with ``b`` at
    table B changes only the pairs of ``a`` and of ``b`` with the others at A and B, each by
    exactly one, so both figures are updated from a histogram of the counts without a rescan.

    A step takes an entrant of a random series, preferably one that sits with somebody it
    meets most often, weighs its swaps with everybody at the other tables of that series, and
    makes the best of them unless it makes the schedule worse (equal is taken: moving along
    a plateau finds its exits). After ``_PATIENCE`` steps without a better schedule a few
    random swaps shake it up; the best schedule seen is the result.
    """

    def __init__(self, entrants: int, sizes: list[int], series: int, rng: random.Random) -> None:
        self.n = entrants
        self.rng = rng
        self.count = [[0] * entrants for _ in range(entrants)]
        self.members: list[list[list[int]]] = []
        self.table_of: list[list[int]] = []
        for _ in range(series):
            self._draw_series(sizes)
        self.hist: dict[int, int] = {}
        self.sumsq = 0
        self.max = 0
        self._tally()
        total = sum(c * k for c, k in self.hist.items())
        pairs = entrants * (entrants - 1) // 2
        # No schedule beats counts all equal to the mean's floor or ceiling.
        q, r = divmod(total, pairs) if pairs else (0, 0)
        self.best_possible = (q + (1 if r else 0), (pairs - r) * q * q + r * (q + 1) * (q + 1))

    def _tally(self) -> None:
        """The histogram, the sum of squares and the maximum of the pair counts, from scratch."""
        self.hist = {}
        for a, b in itertools.combinations(range(self.n), 2):
            c = self.count[a][b]
            self.hist[c] = self.hist.get(c, 0) + 1
        self.sumsq = sum(c * c * k for c, k in self.hist.items())
        self.max = max(self.hist, default=0)

    @property
    def score(self) -> tuple[int, int]:
        return self.max, self.sumsq

    def _draw_series(self, sizes: list[int]) -> None:
        """Seat one series greedily: in random order, each entrant at the table with room
        where it has met the fewest (ties to a random one of them)."""
        tables: list[list[int]] = [[] for _ in sizes]
        table_of = [0] * self.n
        order = list(range(self.n))
        self.rng.shuffle(order)
        for e in order:
            best: list[int] = []
            best_cost = -1
            for t, size in enumerate(sizes):
                if len(tables[t]) >= size:
                    continue
                cost = sum(self.count[e][o] for o in tables[t])
                if best_cost < 0 or cost < best_cost:
                    best, best_cost = [t], cost
                elif cost == best_cost:
                    best.append(t)
            t = best[self.rng.randrange(len(best))]
            for o in tables[t]:
                self.count[e][o] += 1
                self.count[o][e] += 1
            tables[t].append(e)
            table_of[e] = t
        self.members.append(tables)
        self.table_of.append(table_of)

    def improve(self, evaluations: int) -> None:
        """Search until ``evaluations`` swaps were weighed, the best possible score is reached,
        or ``_GIVE_UP`` shake-ups in a row found nothing better; leaves the best schedule seen."""
        series = len(self.members)
        if series == 0 or len(self.members[0]) < 2:
            return
        n, rng = self.n, self.rng
        best_score = self.score
        best_members = [[list(t) for t in tables] for tables in self.members]
        stalled = kicks = weighed = 0
        while weighed < evaluations and best_score > self.best_possible and kicks <= _GIVE_UP:
            stalled += 1
            if stalled > _PATIENCE:
                for _ in range(_KICK_SWAPS):
                    s, a, b = rng.randrange(series), rng.randrange(n), rng.randrange(n)
                    if self.table_of[s][a] != self.table_of[s][b]:
                        self._swap(s, a, b)
                stalled = 0
                kicks += 1
                continue
            s, a = self._conflicted(series)
            best, partners, tried = self._best_swaps(s, a)
            weighed += tried
            if best is None or best > self.score:
                continue
            self._swap(s, a, partners[rng.randrange(len(partners))])
            if self.score < best_score:
                best_score, stalled, kicks = self.score, 0, 0
                best_members = [[list(t) for t in tables] for tables in self.members]
        self.members = best_members
        self._recount_all()

    def _recount_all(self) -> None:
        """The pair counts and their figures from ``members``, from scratch."""
        self.count = [[0] * self.n for _ in range(self.n)]
        for tables in self.members:
            for table in tables:
                for a, b in itertools.combinations(table, 2):
                    self.count[a][b] += 1
                    self.count[b][a] += 1
        self.table_of = [[0] * self.n for _ in self.members]
        for s, tables in enumerate(self.members):
            for t, table in enumerate(tables):
                for e in table:
                    self.table_of[s][e] = t
        self._tally()

    def _conflicted(self, series: int) -> tuple[int, int]:
        """A random series and an entrant in it, preferably one that sits with somebody it
        meets most often (a few draws)."""
        rng, count, top = self.rng, self.count, self.max
        for _ in range(_CONFLICT_DRAWS):
            s, a = rng.randrange(series), rng.randrange(self.n)
            table = self.members[s][self.table_of[s][a]]
            if any(count[a][o] >= top for o in table if o != a):
                break
        return s, a

    def _changes(self, s: int, a: int, b: int) -> tuple[list[int], list[int], list[int], list[int]]:
        """For a swap of ``a`` and ``b`` in series ``s``: the others at a's table and at b's,
        and the counts of the pairs it separates and of the pairs it brings together."""
        tables, table_of, count = self.members[s], self.table_of[s], self.count
        others_a = [o for o in tables[table_of[a]] if o != a]
        others_b = [o for o in tables[table_of[b]] if o != b]
        losing = [count[a][o] for o in others_a] + [count[b][o] for o in others_b]
        gaining = [count[a][o] for o in others_b] + [count[b][o] for o in others_a]
        return others_a, others_b, losing, gaining

    def _best_swaps(self, s: int, a: int) -> tuple[tuple[int, int] | None, list[int], int]:
        """Weighs swapping ``a`` with everybody at the other tables of series ``s``: the best
        score reachable, the partners that reach it, and how many swaps were weighed."""
        tables, table_of, count = self.members[s], self.table_of[s], self.count
        home = table_of[a]
        row_a = count[a]
        others_a = [o for o in tables[home] if o != a]
        lost_a = [row_a[o] for o in others_a]
        sumsq = self.sumsq
        best: tuple[int, int] | None = None
        partners: list[int] = []
        tried = 0
        for t, table in enumerate(tables):
            if t == home:
                continue
            for b in table:
                tried += 1
                row_b = count[b]
                others_b = [o for o in table if o != b]
                losing = lost_a + [row_b[o] for o in others_b]
                gaining = [row_a[o] for o in others_b] + [row_b[o] for o in others_a]
                after = (self._new_max(losing, gaining), sumsq + _square_change(losing, gaining))
                if best is None or after < best:
                    best, partners = after, [b]
                elif after == best:
                    partners.append(b)
        return best, partners, tried

    def _new_max(self, losing: list[int], gaining: list[int]) -> int:
        top = self.max
        if top in gaining:
            return top + 1
        if self.hist.get(top, 0) - losing.count(top) + gaining.count(top - 1) > 0:
            return top
        return top - 1

    def _swap(self, s: int, a: int, b: int) -> None:
        """Swap ``a`` and ``b`` (at different tables of series ``s``), keeping every figure."""
        others_a, others_b, losing, gaining = self._changes(s, a, b)
        self.max = self._new_max(losing, gaining)
        self.sumsq += _square_change(losing, gaining)
        for c in losing:
            self._recount(c, c - 1)
        for c in gaining:
            self._recount(c, c + 1)
        count = self.count
        for o in others_a:
            count[a][o] -= 1
            count[o][a] -= 1
            count[b][o] += 1
            count[o][b] += 1
        for o in others_b:
            count[b][o] -= 1
            count[o][b] -= 1
            count[a][o] += 1
            count[o][a] += 1
        tables, table_of = self.members[s], self.table_of[s]
        ta, tb = table_of[a], table_of[b]
        tables[ta][tables[ta].index(a)] = b
        tables[tb][tables[tb].index(b)] = a
        table_of[a], table_of[b] = tb, ta

    def _recount(self, old: int, new: int) -> None:
        self.hist[old] -= 1
        self.hist[new] = self.hist.get(new, 0) + 1


def _square_change(losing: list[int], gaining: list[int]) -> int:
    """Change of the sum of squared counts when the ``losing`` counts fall by one and the
    ``gaining`` ones rise by one."""
    return sum(1 + 2 * c for c in gaining) + sum(1 - 2 * c for c in losing)


def _seat_orders(members: list[list[list[int]]], entrants: int) -> list[list[list[int]]]:
    """Seat orders for the tables found, the first seat balanced first, then the second
    (without moving anybody out of the first), and so on.

    For one seat: an entrant that holds it more often than another can give one of its turns
    away along a chain: at a table where it holds the seat it changes places with a later seat's
    entrant, who then gives up one of its own turns at that seat elsewhere, and so on, until
    an entrant that holds the seat at least two times fewer takes it. Each chain lowers the sum
    of the squared counts, and when no chain is left that sum is as small as it can be, which
    makes the counts as even as the tables allow (a flow argument). Balancing one seat at a
    time can leave the last seats uneven: a last pass evens the seats after the first."""
    ordered = [[list(table) for table in tables] for tables in members]
    seats = max((len(t) for tables in ordered for t in tables), default=0)
    for seat in range(seats - 1):
        while _give_turn_away(ordered, entrants, seat):
            pass
    _even_later_seats(ordered, entrants, seats)
    return ordered


def _even_later_seats(ordered: list[list[list[int]]], entrants: int, seats: int) -> None:
    """Swaps two entrants in seats after the first at a table while that lowers the sum of the
    squared seat counts over those seats (the chains balance one seat at a time, and can
    leave the last seats uneven); the first seat is kept. Ends: the sum falls with each swap."""
    held = [[0] * seats for _ in range(entrants)]
    for table in itertools.chain.from_iterable(ordered):
        for seat, e in enumerate(table):
            held[e][seat] += 1
    improved = True
    while improved:
        improved = False
        for table in itertools.chain.from_iterable(ordered):
            for i, j in itertools.combinations(range(1, len(table)), 2):
                e, f = table[i], table[j]
                # e from seat i to j and f from j to i: the change of the sum of squares, halved
                if held[e][j] - held[e][i] + held[f][i] - held[f][j] + 2 < 0:
                    held[e][i] -= 1
                    held[e][j] += 1
                    held[f][j] -= 1
                    held[f][i] += 1
                    table[i], table[j] = f, e
                    improved = True


def _give_turn_away(ordered: list[list[list[int]]], entrants: int, seat: int) -> bool:
    """One chain of ``_seat_orders`` for ``seat`` (breadth first, from the entrants holding it
    most); whether there was one."""
    held = [0] * entrants
    # For each entrant, the (table, later seat) where it could hand its turn to another.
    gives: list[list[tuple[list[int], int]]] = [[] for _ in range(entrants)]
    for table in itertools.chain.from_iterable(ordered):
        if len(table) > seat:
            held[table[seat]] += 1
            gives[table[seat]].extend((table, later) for later in range(seat + 1, len(table)))
    for source in sorted(range(entrants), key=lambda e: (-held[e], e)):
        came_from: dict[int, tuple[int, list[int], int]] = {source: (source, [], 0)}
        queue = [source]
        for e in queue:
            if held[e] <= held[source] - 2:
                while e != source:
                    previous, table, later = came_from[e]
                    table[seat], table[later] = e, previous
                    e = previous
                return True
            for table, later in gives[e]:
                f = table[later]
                if f not in came_from:
                    came_from[f] = (e, table, later)
                    queue.append(f)
    return False


# --------------------------------------------------------------------------------------------
# Swiss


def swiss(
    ranked: Sequence[str], sizes: Sequence[int], met: Mapping[frozenset[str], int], rotate: int = 0
) -> list[list[str]]:
    """The next series by the standings, the tables of a Swiss tournament for tables of three
    or more: the next series' tables, each as its seat order.

    The rule, in a director's words: the entrants in order of the standings fill the tables in
    order, the best ones at the first table, the next ones at the second, and so on (the table
    an entrant lands on is its *rank group*). Then two entrants of neighbouring tables change
    places when that lowers the number of earlier meetings at the tables (each pair at a table
    counts the times it has met before, from ``met``), as long as nobody ends up more than one
    table away from its rank group. Of the changes that lower it the most, the one between the
    closest ranks is made, then the next, until no change helps. At each table the seats go in
    the order of the standings, rotated by ``rotate`` places (pass the series number so that
    the leader does not always sit first).
    """
    names = list(ranked)
    if len(set(names)) != len(names):
        raise ValueError("entrants must be distinct")
    if any(size < 1 for size in sizes):
        raise ValueError(f"every table needs a seat: sizes {list(sizes)}")
    if sum(sizes) != len(names):
        raise ValueError(f"tables of {list(sizes)} seat {sum(sizes)}, not the {len(names)} entrants")
    rank = {name: i for i, name in enumerate(names)}
    tables: list[list[str]] = []
    start = 0
    for size in sizes:
        tables.append(names[start : start + size])
        start += size
    home = {name: t for t, table in enumerate(tables) for name in table}

    def repeats_of(name: str, others: Iterable[str]) -> int:
        return sum(met.get(frozenset((name, o)), 0) for o in others if o != name)

    while True:
        best: tuple[int, int, int, int] | None = None
        chosen: tuple[int, str, str] | None = None
        for t in range(len(tables) - 1):
            upper, lower = tables[t], tables[t + 1]
            for a, b in itertools.product(upper, lower):
                if abs(home[a] - (t + 1)) > 1 or abs(home[b] - t) > 1:
                    continue
                before = repeats_of(a, upper) + repeats_of(b, lower)
                after = repeats_of(a, (o for o in lower if o != b)) + repeats_of(b, (o for o in upper if o != a))
                gain = before - after
                if gain <= 0:
                    continue
                key = (-gain, abs(rank[a] - rank[b]), rank[a], rank[b])
                if best is None or key < best:
                    best, chosen = key, (t, a, b)
        if chosen is None:
            break
        t, a, b = chosen
        tables[t][tables[t].index(a)] = b
        tables[t + 1][tables[t + 1].index(b)] = a
    seated = []
    for table in tables:
        order = sorted(table, key=rank.__getitem__)
        shift = rotate % len(order)
        seated.append(order[shift:] + order[:shift])
    return seated


# --------------------------------------------------------------------------------------------
# Crosstable


class PairResult(msgspec.Struct, frozen=True, kw_only=True):
    """Entrant a's results against entrant b at the tables they shared."""

    tables: int
    """Tables a and b sat at together."""
    ahead: int
    behind: int
    level: int
    """Of those, the tables where a finished above b, below b, level with b."""
    margin: float
    """a's score minus b's, summed over those tables, in a's favour: positive when a did
    better (with ``higher_is_better=False`` it is b's score minus a's)."""


def crosstable(
    tables: Iterable[tuple[Sequence[str], Sequence[float]]], higher_is_better: bool = True
) -> dict[str, dict[str, PairResult]]:
    """Each pair's results when they shared a table: ``cross[a][b]`` is a's record against b.

    Every item is one table: its entrants by seat and each seat's score there (Seeger-Fabian
    points per deal, place points, or places with ``higher_is_better=False``). Only pairs that
    shared a table appear; the table is symmetric: ``cross[a][b].ahead == cross[b][a].behind``
    and ``cross[a][b].margin == -cross[b][a].margin``.
    """
    sign = 1.0 if higher_is_better else -1.0
    finishes: dict[str, dict[str, list[int]]] = {}  # a -> b -> [tables, ahead, behind, level]
    margins: dict[str, dict[str, float]] = {}
    for seats, scores in tables:
        players, points = _checked(seats), list(scores)
        if len(players) != len(points):
            raise ValueError(f"{len(players)} entrants but {len(points)} scores at the table {players}")
        for a, score_a in zip(players, points):
            row, margin = finishes.setdefault(a, {}), margins.setdefault(a, {})
            for b, score_b in zip(players, points):
                if a == b:
                    continue
                lead = sign * (score_a - score_b)
                cell = row.setdefault(b, [0, 0, 0, 0])
                cell[0] += 1
                cell[1 if lead > 0 else 2 if lead < 0 else 3] += 1
                margin[b] = margin.get(b, 0.0) + lead
    return {
        a: {
            b: PairResult(tables=c[0], ahead=c[1], behind=c[2], level=c[3], margin=margins[a][b])
            for b, c in row.items()
        }
        for a, row in finishes.items()
    }
