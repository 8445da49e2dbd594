"""Seeded, unbiased shuffles of a pack of any size (36, 52, 54, 108 cards).

``shuffle(seed, cards)`` is part of the protocol: equal seeds give equal orders on every machine
and in every version, so it uses no library RNG. It is a Fisher-Yates shuffle whose random
numbers are read from SHAKE-256 (an extendable-output hash) of the seed: for ``i`` from the last
position down to 1, eight bytes are read as a big-endian number ``x``; a number at or above the
largest multiple of ``i + 1`` below 2^64 is thrown away and the next eight bytes are read (so
every ``j`` in ``0..i`` is exactly equally likely); then positions ``i`` and ``j = x % (i + 1)``
are swapped. The stream is as long as it needs to be, so every order of the pack can come out.

Skat keeps its own mapping (``protocol.dealing``, a SHA-256 digest read as a Lehmer code): its
seeds must deal the cards they always dealt.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Final, TypeVar

T = TypeVar("T")

_DOMAIN: Final = b"skatbus shuffle/1\x00"
_WORD: Final = 8
_SPAN: Final = 1 << 64


def random_words(seed: str, count: int) -> list[int]:
    """The first ``count`` 64-bit numbers of the seed's stream."""
    data = hashlib.shake_256(_DOMAIN + seed.encode("utf-8")).digest(_WORD * count)
    return [int.from_bytes(data[k : k + _WORD], "big") for k in range(0, len(data), _WORD)]


def shuffle(seed: str, cards: Sequence[T]) -> list[T]:
    """``cards`` in the order ``seed`` gives (see the module docstring for the exact algorithm)."""
    out = list(cards)
    n = len(out)
    words = random_words(seed, n + 8)
    k = 0
    for i in range(n - 1, 0, -1):
        bound = i + 1
        limit = _SPAN - _SPAN % bound
        while True:
            if k == len(words):
                words = random_words(seed, 2 * len(words))
            x = words[k]
            k += 1
            if x < limit:
                break
        j = x % bound
        out[i], out[j] = out[j], out[i]
    return out
