"""``protocol.shuffle``: the seeded shuffle of every pack but Skat's. Its mapping is part of the
protocol (a seed must deal the same cards in every version), so the first orders are pinned
here, computed independently from the algorithm's statement in the module docstring."""

from __future__ import annotations

import hashlib
import math
from collections import Counter

import pytest

from protocol.shuffle import shuffle


def by_the_docstring(seed: str, n: int) -> list[int]:
    """The algorithm exactly as its docstring states it, written again without the module."""
    stream = hashlib.shake_256(b"skatbus shuffle/1\x00" + seed.encode()).digest(8 * 4 * n + 64)
    words = iter(int.from_bytes(stream[k : k + 8], "big") for k in range(0, len(stream), 8))
    out = list(range(n))
    for i in range(n - 1, 0, -1):
        limit = (2**64 // (i + 1)) * (i + 1)
        x = next(words)
        while x >= limit:
            x = next(words)
        j = x % (i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def test_pinned_orders() -> None:
    """Changing these changes every Thirty-one and rummy deal ever dealt: never do."""
    assert shuffle("skatbus", list(range(12))) == [7, 2, 6, 3, 11, 5, 0, 4, 10, 9, 1, 8]


@pytest.mark.parametrize("n", [1, 2, 36, 52, 54, 108])
@pytest.mark.parametrize("seed", ["", "a", "table/1", "ünïcode/7"])
def test_every_pack_size_is_a_permutation_as_the_docstring_says(seed: str, n: int) -> None:
    order = shuffle(seed, list(range(n)))
    assert sorted(order) == list(range(n))
    assert order == by_the_docstring(seed, n)


def test_shuffle_keeps_the_items_and_does_not_touch_its_input() -> None:
    cards = ["HA", "S7", "DT", "C2"]
    assert sorted(shuffle("x", cards)) == sorted(cards)
    assert cards == ["HA", "S7", "DT", "C2"]


def test_the_orders_of_three_are_equally_likely() -> None:
    """6,000 seeds over the 6 orders of 3 cards: a chi-square statistic far beyond 5 degrees of
    freedom's 99.99 % point (25.7) would mean a bias; a fair shuffle exceeds it once in 10,000."""
    counts = Counter(tuple(shuffle(f"seed-{i}", [0, 1, 2])) for i in range(6000))
    assert len(counts) == 6
    chi2 = sum((c - 1000) ** 2 / 1000 for c in counts.values())
    assert chi2 < 25.7, counts


def test_different_seeds_give_different_orders_of_a_full_pack() -> None:
    orders = {tuple(shuffle(f"deal/{i}", list(range(52)))) for i in range(200)}
    assert len(orders) == 200
    assert math.factorial(52) > 2**225  # why the stream is extended: no fixed digest reaches them all
