"""The seed-to-deal mapping is part of the protocol: it must never change."""

from __future__ import annotations

import hashlib
import math

from protocol.skat import cards as C
from protocol.skat.dealing import deal_from_seed, deal_seats, dealer_seat


def _spec_deal(seed: str) -> tuple[list[str], ...]:
    """The mapping as docs/rules-choices.md and dealing.py describe it, written out plainly."""
    n = int.from_bytes(hashlib.sha256(seed.encode()).digest(), "big") % math.factorial(32)
    deck = [s + r for s in "CSHD" for r in "789TJQKA"]
    order = []
    for i in range(32):
        n, k = divmod(n, 32 - i)
        order.append(deck.pop(k))
    hands: tuple[list[str], ...] = ([], [], [], [])
    # 3 each, 2 to the skat, 4 each, 3 each.
    pattern = [0] * 3 + [1] * 3 + [2] * 3 + [3] * 2 + [0] * 4 + [1] * 4 + [2] * 4 + [0] * 3 + [1] * 3 + [2] * 3
    for receiver, code in zip(pattern, order):
        hands[receiver].append(code)
    return hands


def test_seed_mapping_is_pinned() -> None:
    hands, skat = deal_from_seed("x")
    assert [C.fmt(h) for h in hands] == [
        "C8 CQ S7 SJ SK SA H8 H9 HJ HA",
        "C7 C9 CJ S9 ST HT HK DT DJ DQ",
        "CT CK CA S8 H7 HQ D7 D8 D9 DK",
    ]
    assert C.fmt(skat) == "SQ DA"


def test_seed_mapping_follows_its_written_specification() -> None:
    for i in range(200):
        seed = f"spec/{i}"
        spec = _spec_deal(seed)
        hands, skat = deal_from_seed(seed)
        assert [set(C.codes(h)) for h in (*hands, skat)] == [set(p) for p in spec]


def test_dealer_rotation() -> None:
    assert [dealer_seat(n, 3) for n in (1, 2, 3, 4)] == [2, 0, 1, 2]
    assert [deal_seats(n, 3) for n in (1, 2)] == [(0, 1, 2), (1, 2, 0)]
    assert [dealer_seat(n, 4) for n in (1, 2, 3, 4, 5)] == [3, 0, 1, 2, 3]
    assert deal_seats(2, 4) == (1, 2, 3)
