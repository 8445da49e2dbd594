"""Tests of protocol.seating: table sizes, the round robin's schedules (checked against an
exhaustive search where the schedules are few), their balance, Swiss pairings and the
crosstable.

The exhaustive oracle fixes the first series: every split of the entrants into tables of the
same sizes is a relabelling of any other, so the best schedule can start with any of them.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import seating
from protocol.seating import (
    Balance,
    PairResult,
    balance,
    crosstable,
    pair_counts,
    round_robin,
    swiss,
    table_sizes,
)

REPO = Path(__file__).resolve().parents[2]

SKAT = (3, 4, 3)
"""low, high, preferred: Skat's tables."""
THIRTY_ONE = (2, 9, 4)

Tables = list[list[str]]


def names(n: int) -> list[str]:
    return [f"p{i:02d}" for i in range(n)]


def score(schedule: Sequence[Sequence[Sequence[str]]], entrants: Sequence[str]) -> tuple[int, int]:
    """(most meetings of a pair, sum of squared meeting counts) over every pair of entrants."""
    counts = pair_counts(schedule)
    met = [counts.get(frozenset(p), 0) for p in itertools.combinations(entrants, 2)]
    return max(met), sum(c * c for c in met)


def seat_counts(schedule: Sequence[Sequence[Sequence[str]]], entrants: Sequence[str], seat: int) -> list[int]:
    held = dict.fromkeys(entrants, 0)
    for series in schedule:
        for table in series:
            if len(table) > seat:
                held[table[seat]] += 1
    return list(held.values())


# --------------------------------------------------------------------------------------------
# table_sizes


@pytest.mark.parametrize(
    ("entrants", "sizes"),
    [
        (3, [3]),
        (4, [4]),
        (6, [3, 3]),
        (7, [4, 3]),
        (8, [4, 4]),
        (9, [3, 3, 3]),
        (10, [4, 3, 3]),
        (11, [4, 4, 3]),
        (12, [3, 3, 3, 3]),
        (13, [4, 3, 3, 3]),
        (40, [4] + [3] * 12),
    ],
)
def test_skat_table_sizes(entrants: int, sizes: list[int]) -> None:
    assert table_sizes(entrants, *SKAT) == sizes


def test_thirty_one_table_sizes() -> None:
    assert table_sizes(2, *THIRTY_ONE) == [2]
    assert table_sizes(9, *THIRTY_ONE) == [5, 4]
    assert table_sizes(12, *THIRTY_ONE) == [4, 4, 4]


def test_five_entrants_cannot_sit_at_skat_tables() -> None:
    with pytest.raises(ValueError) as caught:
        table_sizes(5, *SKAT, what="Skat tables")
    assert str(caught.value) == "5 entrants cannot sit at Skat tables of 3 and 4: take 4 or 6 (or more)"


def test_too_few_entrants_are_told_every_count_that_works() -> None:
    with pytest.raises(
        ValueError, match=r"^2 entrants cannot sit at Skat tables of 3 and 4: take 3, 4 or 6 \(or more\)$"
    ):
        table_sizes(2, *SKAT, what="Skat tables")
    with pytest.raises(ValueError, match=r"^1 entrant cannot sit at tables of 2 to 9: take 2 \(or more\)$"):
        table_sizes(1, *THIRTY_ONE)


def test_tables_of_one_size_never_promise_more() -> None:
    with pytest.raises(ValueError) as caught:
        table_sizes(7, 3, 3, 3)
    assert str(caught.value) == "7 entrants cannot sit at tables of 3: take 6 or 9"


def test_sizes_out_of_order_are_refused() -> None:
    with pytest.raises(ValueError, match="low <= preferred <= high"):
        table_sizes(10, 4, 3, 3)


def listed_counts(message: str) -> tuple[list[int], bool]:
    match = re.search(r": take ([\d, or]+?)( \(or more\))?$", message)
    assert match, message
    return [int(n) for n in re.findall(r"\d+", match.group(1))], match.group(2) is not None


@settings(max_examples=300, deadline=None)
@given(
    entrants=st.integers(0, 60),
    low=st.integers(1, 6),
    extra=st.integers(0, 4),
    above=st.integers(0, 4),
)
def test_table_sizes_follow_the_rule_or_name_counts_that_do(entrants: int, low: int, extra: int, above: int) -> None:
    preferred, high = low + extra, low + extra + above

    def works(n: int) -> bool:
        try:
            table_sizes(n, low, high, preferred)
        except ValueError:
            return False
        return True

    try:
        sizes = table_sizes(entrants, low, high, preferred)
    except ValueError as exc:
        counts, or_more = listed_counts(str(exc))
        assert counts and all(works(n) for n in counts)
        below = [n for n in counts if n < entrants]
        assert len(below) <= 1
        start = below[0] + 1 if below else 1
        assert not any(works(n) for n in range(start, entrants))
        above_counts = [n for n in counts if n > entrants]
        assert not any(works(n) for n in range(entrants + 1, above_counts[0]))
        if or_more:
            assert all(works(n) for n in range(counts[-1], counts[-1] + 60))
        return
    assert sum(sizes) == entrants
    assert sizes == sorted(sizes, reverse=True)
    assert sizes[0] - sizes[-1] <= 1
    assert low <= sizes[-1] and sizes[0] <= high
    assert len(sizes) in (entrants // preferred, -(-entrants // preferred))


# --------------------------------------------------------------------------------------------
# round_robin: shape and determinism


@st.composite
def schedules_asked(draw: st.DrawFn) -> tuple[list[str], int, list[int], str]:
    limits = draw(st.sampled_from([SKAT, THIRTY_ONE, (4, 4, 4), (2, 3, 2)]))
    n = draw(st.integers(limits[0], 11))
    try:
        sizes = table_sizes(n, *limits)
    except ValueError:
        sizes = [n]
    return names(n), draw(st.integers(0, 3)), sizes, draw(st.text(max_size=6))


@settings(max_examples=25, deadline=None)
@given(schedules_asked())
def test_every_entrant_sits_once_per_series_at_tables_of_the_sizes(
    asked: tuple[list[str], int, list[int], str],
) -> None:
    entrants, series, sizes, salt = asked
    schedule = round_robin(entrants, series, sizes, salt)
    assert len(schedule) == series
    for tables in schedule:
        assert [len(t) for t in tables] == sizes
        assert sorted(itertools.chain.from_iterable(tables)) == sorted(entrants)
    assert round_robin(entrants, series, sizes, salt) == schedule


def test_the_schedule_is_the_same_in_another_process() -> None:
    """Nothing may depend on hash() (salted per process) or set order: the schedule is public
    and must be recomputable by anybody."""
    args = (names(10), 3, [4, 3, 3], "tournament-7")
    code = (
        "import json, sys\n"
        "from protocol.seating import round_robin\n"
        "print(json.dumps(round_robin(*json.loads(sys.argv[1]))))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(args)], cwd=REPO, env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == round_robin(*args)


def test_the_salt_changes_the_draw() -> None:
    entrants = names(12)
    drawn = {json.dumps(round_robin(entrants, 3, [3, 3, 3, 3], f"t{i}")) for i in range(4)}
    assert len(drawn) > 1


def test_entrants_and_sizes_must_agree() -> None:
    with pytest.raises(ValueError, match="seat 7, not the 6 entrants"):
        round_robin(names(6), 2, [4, 3], "x")
    with pytest.raises(ValueError, match="distinct"):
        round_robin(["a", "b", "a"], 1, [3], "x")
    with pytest.raises(ValueError, match="needs a seat"):
        round_robin(names(3), 1, [3, 0], "x")


def test_no_series_no_tables() -> None:
    assert round_robin(names(6), 0, [3, 3], "x") == []


# --------------------------------------------------------------------------------------------
# round_robin: how good the schedules are


@pytest.mark.parametrize("salt", ["a", "b", "c", "league-2026"])
def test_twelve_entrants_at_tables_of_three_never_meet_twice_in_three_series(salt: str) -> None:
    entrants = names(12)
    schedule = round_robin(entrants, 3, [3, 3, 3, 3], salt)
    assert score(schedule, entrants)[0] == 1


@pytest.mark.parametrize("salt", ["a", "b", "c"])
def test_nine_entrants_over_four_series_meet_every_other_exactly_once(salt: str) -> None:
    """The affine plane of order 3 is a resolvable design: every pair at one table exactly once."""
    entrants = names(9)
    schedule = round_robin(entrants, 4, [3, 3, 3], salt)
    assert set(pair_counts(schedule).values()) == {1}
    assert len(pair_counts(schedule)) == 36


@pytest.mark.parametrize("salt", ["a", "b"])
def test_sixteen_entrants_over_five_series_at_tables_of_four_meet_exactly_once(salt: str) -> None:
    """The affine plane of order 4: 16 entrants, 5 series of four tables of four."""
    entrants = names(16)
    schedule = round_robin(entrants, 5, [4, 4, 4, 4], salt)
    assert set(pair_counts(schedule).values()) == {1}
    assert len(pair_counts(schedule)) == 120


def splits(n: int, sizes: Sequence[int]) -> list[list[frozenset[int]]]:
    """Every split of range(n) into tables of the given sizes (tables unordered)."""
    found: dict[frozenset[frozenset[int]], list[frozenset[int]]] = {}
    for order in itertools.permutations(range(n)):
        tables, start = [], 0
        for size in sizes:
            tables.append(frozenset(order[start : start + size]))
            start += size
        found.setdefault(frozenset(tables), tables)
    return list(found.values())


def best_score(n: int, sizes: Sequence[int], series: int) -> tuple[int, int]:
    """The best (max, sum of squares) over every schedule, by exhaustion."""
    pairs_of = [
        [frozenset(p) for t in split for p in itertools.combinations(sorted(t), 2)] for split in splits(n, sizes)
    ]
    every_pair = [frozenset(p) for p in itertools.combinations(range(n), 2)]
    best: tuple[int, int] | None = None
    for rest in itertools.combinations_with_replacement(range(len(pairs_of)), series - 1):
        counts = Counter(pairs_of[0])
        for i in rest:
            counts.update(pairs_of[i])
        met = [counts[p] for p in every_pair]
        found = (max(met), sum(c * c for c in met))
        best = found if best is None or found < best else best
    assert best is not None
    return best


@pytest.mark.parametrize(("n", "sizes", "series"), [(6, [3, 3], 3), (6, [3, 3], 4), (7, [4, 3], 3), (7, [4, 3], 4)])
def test_small_schedules_are_as_good_as_the_best_there_is(n: int, sizes: list[int], series: int) -> None:
    best = best_score(n, sizes, series)
    entrants = names(n)
    for salt in ("a", "b", "c"):
        assert score(round_robin(entrants, series, sizes, salt), entrants) == best


def test_forty_entrants_over_ten_series_never_meet_twice() -> None:
    entrants = names(40)
    sizes = table_sizes(40, *SKAT)
    schedule = round_robin(entrants, 10, sizes, "big")
    assert score(schedule, entrants)[0] == 1


@settings(max_examples=15, deadline=None)
@given(
    tables=st.integers(1, 4),
    size=st.integers(2, 4),
    series=st.integers(1, 6),
    salt=st.text(max_size=4),
)
def test_every_seat_is_shared_out_evenly_at_tables_of_one_size(tables: int, size: int, series: int, salt: str) -> None:
    """With tables of one size, each entrant can hold each seat series/size times (rounded
    either way); the first two seats always get there, later ones come within two."""
    entrants = names(tables * size)
    schedule = round_robin(entrants, series, [size] * tables, salt)
    for seat in range(size):
        held = seat_counts(schedule, entrants, seat)
        assert max(held) - min(held) <= (1 if seat < 2 else 2), (seat, held)
        assert sum(held) == tables * series


@pytest.mark.parametrize(("n", "series"), [(7, 3), (10, 3), (13, 6), (20, 6)])
def test_the_first_seat_is_shared_out_evenly_at_skat_tables(n: int, series: int) -> None:
    entrants = names(n)
    schedule = round_robin(entrants, series, table_sizes(n, *SKAT), "seats")
    held = seat_counts(schedule, entrants, 0)
    assert max(held) - min(held) <= 1


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), n=st.integers(4, 12), series=st.integers(1, 4), swaps=st.integers(0, 40))
def test_the_search_keeps_its_figures_right_through_any_swaps(seed: int, n: int, series: int, swaps: int) -> None:
    """The search updates the most meetings and the sum of squares swap by swap instead of
    recounting; a slip there would not show in a schedule, only in worse schedules."""
    rng = random.Random(seed)
    sizes = table_sizes(n, *THIRTY_ONE)
    search = seating._PairSearch(n, sizes, series, rng)
    for _ in range(swaps):
        s, a, b = rng.randrange(series), rng.randrange(n), rng.randrange(n)
        if search.table_of[s][a] != search.table_of[s][b]:
            search._swap(s, a, b)
    entrants = list(range(n))
    tables = [[[str(e) for e in t] for t in ts] for ts in search.members]
    assert search.score == score(tables, [str(e) for e in entrants])


# --------------------------------------------------------------------------------------------
# balance and pair_counts


def test_balance_of_a_small_schedule() -> None:
    schedule = [[["a", "b"], ["c", "d"]], [["a", "c"], ["b", "d"]]]
    found = balance(schedule, ["a", "b", "c", "d"])
    assert found == Balance(
        entrants=4,
        series=2,
        pairs=6,
        pair_min=0,
        pair_max=1,
        pair_mean=4 / 6,
        never_met=2,
        first_seat_min=0,
        first_seat_max=2,
    )
    assert found.describe() == "6 pairs: each met 0-1 times (mean 0.67), 2 never; first seat 0-2 times each"
    assert msgspec.json.decode(msgspec.json.encode(msgspec.to_builtins(found)))["never_met"] == 2


def test_balance_of_a_perfect_schedule_says_so() -> None:
    entrants = names(9)
    line = balance(round_robin(entrants, 4, [3, 3, 3], "x"), entrants).describe()
    assert line == "36 pairs: each met once (mean 1.00), every pair met; first seat 1-2 times each"


def test_pair_counts_take_tables_or_a_schedule() -> None:
    schedule = [[["a", "b", "c"], ["d", "e", "f"]], [["a", "b", "d"], ["c", "e", "f"]]]
    by_schedule = pair_counts(schedule)
    assert by_schedule == pair_counts(itertools.chain.from_iterable(schedule))
    assert by_schedule[frozenset("ab")] == 2
    assert by_schedule[frozenset("ad")] == 1
    assert frozenset("af") not in by_schedule
    assert sum(by_schedule.values()) == 12


def test_pair_counts_refuse_an_entrant_twice_at_a_table() -> None:
    with pytest.raises(ValueError, match="sits twice"):
        pair_counts([["a", "b", "a"]])
    with pytest.raises(TypeError):
        pair_counts(["abc"])


# --------------------------------------------------------------------------------------------
# swiss


def repeats(tables: Sequence[Sequence[str]], met: dict[frozenset[str], int]) -> int:
    return sum(met.get(frozenset(p), 0) for t in tables for p in itertools.combinations(t, 2))


def test_swiss_seats_the_standings_in_order() -> None:
    ranked = names(10)
    assert swiss(ranked, [4, 3, 3], {}) == [ranked[0:4], ranked[4:7], ranked[7:10]]


def test_swiss_avoids_an_avoidable_repeat_by_the_closest_ranks() -> None:
    ranked = ["a", "b", "c", "d", "e", "f"]
    # a and b met before: b (2nd) and d (4th) change tables, the closest ranks that help
    assert swiss(ranked, [3, 3], {frozenset("ab"): 1}) == [["a", "c", "d"], ["b", "e", "f"]]


def test_swiss_keeps_a_repeat_nobody_can_avoid() -> None:
    met = {frozenset("ab"): 2}
    assert swiss(["a", "b", "c"], [3], met) == [["a", "b", "c"]]


def test_swiss_moves_nobody_two_tables() -> None:
    """The leader has met everybody at the first two tables: only the third table would
    spare it a repeat, and that is two tables from its rank group, so it stays put."""
    ranked = names(9)
    met = {frozenset((ranked[0], o)): 1 for o in ranked[1:6]}
    assert swiss(ranked, [3, 3, 3], met) == [ranked[0:3], ranked[3:6], ranked[6:9]]


def test_swiss_rotates_the_seats() -> None:
    assert swiss(["a", "b", "c", "d", "e", "f"], [3, 3], {}, rotate=1) == [["b", "c", "a"], ["e", "f", "d"]]


@st.composite
def standings(draw: st.DrawFn) -> tuple[list[str], list[int], dict[frozenset[str], int]]:
    n = draw(st.integers(3, 14))
    ranked = draw(st.permutations(names(n)))
    try:
        sizes = table_sizes(n, *SKAT)
    except ValueError:
        sizes = [3, 2]  # 5 entrants: no Skat tables, but Swiss works for any sizes
    pairs = list(itertools.combinations(ranked, 2))
    met = draw(st.dictionaries(st.sampled_from(pairs), st.integers(1, 3), max_size=len(pairs)))
    return list(ranked), sizes, {frozenset(p): c for p, c in met.items()}


@settings(max_examples=100, deadline=None)
@given(standings())
def test_swiss_leaves_no_allowed_swap_that_helps(asked: tuple[list[str], list[int], dict[frozenset[str], int]]) -> None:
    ranked, sizes, met = asked
    tables = swiss(ranked, sizes, met)
    assert [len(t) for t in tables] == sizes
    assert sorted(itertools.chain.from_iterable(tables)) == sorted(ranked)
    rank = {name: i for i, name in enumerate(ranked)}
    assert all(t == sorted(t, key=rank.__getitem__) for t in tables)
    starts = list(itertools.accumulate([0, *sizes]))
    home = {name: next(g for g in range(len(sizes)) if rank[name] < starts[g + 1]) for name in ranked}
    where = {name: t for t, table in enumerate(tables) for name in table}
    assert all(abs(where[name] - home[name]) <= 1 for name in ranked)
    first = [ranked[starts[g] : starts[g + 1]] for g in range(len(sizes))]
    now = repeats(tables, met)
    assert now <= repeats(first, met)
    for t in range(len(tables) - 1):
        for a, b in itertools.product(tables[t], tables[t + 1]):
            if abs(home[a] - (t + 1)) > 1 or abs(home[b] - t) > 1:
                continue
            swapped = [list(x) for x in tables]
            swapped[t][swapped[t].index(a)] = b
            swapped[t + 1][swapped[t + 1].index(b)] = a
            assert repeats(swapped, met) >= now


# --------------------------------------------------------------------------------------------
# crosstable


def test_crosstable_by_hand() -> None:
    cross = crosstable([(["a", "b", "c"], [10.0, 5.0, 5.0]), (["b", "a"], [3.0, 1.0])])
    assert cross["a"]["b"] == PairResult(tables=2, ahead=1, behind=1, level=0, margin=3.0)
    assert cross["b"]["a"] == PairResult(tables=2, ahead=1, behind=1, level=0, margin=-3.0)
    assert cross["a"]["c"] == PairResult(tables=1, ahead=1, behind=0, level=0, margin=5.0)
    assert cross["b"]["c"] == PairResult(tables=1, ahead=0, behind=0, level=1, margin=0.0)
    assert set(cross["c"]) == {"a", "b"}
    assert msgspec.to_builtins(cross)["c"]["a"] == {"tables": 1, "ahead": 0, "behind": 1, "level": 0, "margin": -5.0}


def test_crosstable_by_places_where_lower_is_better() -> None:
    cross = crosstable([(["a", "b", "c"], [1, 3, 2])], higher_is_better=False)
    assert cross["a"]["b"] == PairResult(tables=1, ahead=1, behind=0, level=0, margin=2.0)
    assert cross["b"]["c"].behind == 1


def test_crosstable_refuses_tables_that_do_not_add_up() -> None:
    with pytest.raises(ValueError, match="2 entrants but 3 scores"):
        crosstable([(["a", "b"], [1.0, 2.0, 3.0])])
    with pytest.raises(ValueError, match="sits twice"):
        crosstable([(["a", "a"], [1.0, 2.0])])


@st.composite
def played(draw: st.DrawFn) -> list[tuple[list[str], list[float]]]:
    entrants = names(6)
    tables = []
    for _ in range(draw(st.integers(0, 8))):
        seats = draw(st.lists(st.sampled_from(entrants), min_size=2, max_size=4, unique=True))
        scores = draw(st.lists(st.integers(-120, 120).map(float), min_size=len(seats), max_size=len(seats)))
        tables.append((seats, scores))
    return tables


@settings(max_examples=100, deadline=None)
@given(played(), st.booleans())
def test_crosstable_is_symmetric_and_counts_the_shared_tables(
    tables: list[tuple[list[str], list[float]]], higher_is_better: bool
) -> None:
    cross = crosstable(tables, higher_is_better)
    shared = pair_counts(seats for seats, _ in tables)
    for a, row in cross.items():
        for b, r in row.items():
            other = cross[b][a]
            assert (r.ahead, r.behind, r.level, r.margin) == (other.behind, other.ahead, other.level, -other.margin)
            assert r.tables == r.ahead + r.behind + r.level == shared[frozenset((a, b))]
    assert sum(len(row) for row in cross.values()) == 2 * len(shared)
