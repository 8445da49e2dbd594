"""The fixed action index of the RL environments: every action of a deal as one integer.

A policy network needs one output per action, the same output for the same action in every
state, so the environments number every action a deal can ever offer once and for all
(``N_ACTIONS`` = 629) and say which are legal now with a mask over that index:

=========  =====  ==================================================================
index      count  action
=========  =====  ==================================================================
0-31         32   play a card: index = card (``protocol.cards``: C7 C8 ... CA S7 ... DA)
32-98        67   bid a value: ``BID_VALUES`` ascending (both profiles' ladders; the
                  classic-only values 252 288 324 360 are never legal under ISkO)
99            1   hold
100           1   pass (while bidding, and declining Kontra or Re)
101           1   pick up the skat
102-597     496   discard two cards: the pairs (a, b), a < b, in lexicographic order
598-619      22   declare a hand game, ``protocol.commands.HAND_DECLARES`` order
                  (clubs, + schneider, + schwarz, + ouvert; spades ...; grand ...;
                  null, null ouvert)
620-626       7   declare after picking up, ``PICKUP_DECLARES`` order (clubs, spades,
                  hearts, diamonds, grand, null, null ouvert)
627           1   kontra
628           1   re
=========  =====  ==================================================================

A hand game and the same game after the pickup are different indices: they are different
decisions (the engine tells them apart by whether the skat was picked up). Resigning and
showing cards are left out, as ``Deal.legal_actions()`` leaves them out: they are offers
that end or change nothing a learner needs, and the deal is always played to its end.

``legal_bits(deal)`` is the mask as an ``int`` (bit i = index i), ``legal_mask(deal)`` as the
``int8`` array PettingZoo and Gymnasium expect; both equal ``Deal.legal_actions()`` exactly
(tests/skatbus/rl checks it over random deals).
"""

from __future__ import annotations

import bisect
from typing import Final

import msgspec
import numpy as np

from protocol.skat.cards import INDEX
from protocol.skat.commands import (
    BIDS,
    DISCARDS,
    HAND_DECLARES,
    HOLD,
    KONTRA,
    PASS,
    PICKUP,
    PICKUP_DECLARES,
    PLAY,
    RE,
    Command,
    Declare,
    Discard,
)
from protocol.skat.deal import BIDDING, DISCARD, DOUBLING, PLAYING, SKAT, Deal
from protocol.skat.games import BID_LADDERS

BID_VALUES: Final[tuple[int, ...]] = tuple(sorted({v for ladder in BID_LADDERS.values() for v in ladder}))
"""Every bid value of either profile's ladder, ascending: the bid part of the index."""

PLAY_OFFSET: Final = 0
BID_OFFSET: Final = 32
HOLD_INDEX: Final = BID_OFFSET + len(BID_VALUES)
PASS_INDEX: Final = HOLD_INDEX + 1
PICKUP_INDEX: Final = PASS_INDEX + 1
DISCARD_OFFSET: Final = PICKUP_INDEX + 1
DISCARD_PAIRS: Final[tuple[tuple[int, int], ...]] = tuple((a, b) for a in range(32) for b in range(a + 1, 32))
HAND_DECLARE_OFFSET: Final = DISCARD_OFFSET + len(DISCARD_PAIRS)
PICKUP_DECLARE_OFFSET: Final = HAND_DECLARE_OFFSET + len(HAND_DECLARES)
KONTRA_INDEX: Final = PICKUP_DECLARE_OFFSET + len(PICKUP_DECLARES)
RE_INDEX: Final = KONTRA_INDEX + 1
N_ACTIONS: Final = RE_INDEX + 1

ACTIONS: Final[tuple[Command, ...]] = (
    *PLAY,
    *(BIDS[v] for v in BID_VALUES),
    HOLD,
    PASS,
    PICKUP,
    *(DISCARDS[p] for p in DISCARD_PAIRS),
    *HAND_DECLARES,
    *PICKUP_DECLARES,
    KONTRA,
    RE,
)
"""The command of every index (a declaration's index also says hand or not: see the module)."""

assert len(ACTIONS) == N_ACTIONS == 629

_PAIR_INDEX: Final[dict[tuple[int, int], int]] = {p: DISCARD_OFFSET + i for i, p in enumerate(DISCARD_PAIRS)}
_HAND_INDEX: Final[dict[Declare, int]] = {d: HAND_DECLARE_OFFSET + i for i, d in enumerate(HAND_DECLARES)}
_PICKUP_INDEX: Final[dict[Declare, int]] = {d: PICKUP_DECLARE_OFFSET + i for i, d in enumerate(PICKUP_DECLARES)}
_OTHER_INDEX: Final[dict[Command, int]] = {
    **{a: i for i, a in enumerate(ACTIONS[:DISCARD_OFFSET])},
    KONTRA: KONTRA_INDEX,
    RE: RE_INDEX,
}
_LADDER_INDICES: Final[dict[str, tuple[int, ...]]] = {
    profile: tuple(BID_OFFSET + BID_VALUES.index(v) for v in ladder) for profile, ladder in BID_LADDERS.items()
}
_BIDS_FROM: Final[dict[str, tuple[int, ...]]] = {
    # [k]: the bits of the ladder's bids from its k-th value up, plus pass: what may be said
    # when k values are at or below the bid standing.
    profile: tuple(sum(1 << i for i in indices[k:]) | 1 << PASS_INDEX for k in range(len(indices) + 1))
    for profile, indices in _LADDER_INDICES.items()
}
_ANSWER_BITS: Final = 1 << HOLD_INDEX | 1 << PASS_INDEX
_DOUBLING_BITS: Final = (1 << KONTRA_INDEX | 1 << PASS_INDEX, 1 << RE_INDEX | 1 << PASS_INDEX)
_MASK_BYTES: Final = (N_ACTIONS + 7) // 8
_declare_cache: dict[tuple[str, int], int] = {}


def index_of(action: Command, deal: Deal) -> int:
    """The index of ``action`` in the state of ``deal`` (a declaration is a hand game before the
    pickup, hence the deal). Raises ``KeyError`` for an action outside the index (resign, show)."""
    if isinstance(action, Declare):
        table = _HAND_INDEX if deal.phase == SKAT else _PICKUP_INDEX
        return table[
            Declare(game=action.game, schneider=action.schneider, schwarz=action.schwarz, ouvert=action.ouvert)
        ]
    if isinstance(action, Discard):
        a, b = sorted((INDEX[action.cards[0]], INDEX[action.cards[1]]))
        return _PAIR_INDEX[(a, b)]
    return _OTHER_INDEX[action if action.at == -1 else msgspec.structs.replace(action, at=-1)]


def action_of(index: int) -> Command:
    """The command of ``index`` (``ACTIONS[index]``); whether it is legal now is the deal's question."""
    return ACTIONS[index]


def legal_bits(deal: Deal) -> int:
    """The legal actions of the player to move as a bit set over the index (0 once the deal is over).

    Trick play is the hot path: the legal cards are already a bit set at indices 0-31. Bidding
    and the Kontra round are a few table lookups. Skat and declaration depend only on the
    phase and the bid, so each (phase, bid) is worked out once from the engine and cached."""
    if deal.to_move is None:
        return 0
    phase = deal.phase
    if phase == PLAYING:
        return deal.legal_cards()
    if phase == BIDDING:
        if deal.awaiting_answer:
            return _ANSWER_BITS
        return _BIDS_FROM[deal.rules.profile][bisect.bisect_right(deal.ladder, deal.bid)]
    if phase == DOUBLING:
        return _DOUBLING_BITS[deal.kontra]
    if phase == DISCARD:
        bits = 0
        for action in deal.legal_actions():
            cards = action.cards  # type: ignore[attr-defined]
            bits |= 1 << _PAIR_INDEX[(INDEX[cards[0]], INDEX[cards[1]])]
        return bits
    key = (phase, deal.bid)
    found = _declare_cache.get(key)
    if found is None:
        found = 0
        for action in deal.legal_actions():
            found |= 1 << index_of(action, deal)
        _declare_cache[key] = found
    return found


def bits_to_mask(bits: int) -> np.ndarray:
    """A bit set over the index as the ``int8`` 0/1 array of length ``N_ACTIONS``."""
    raw = np.frombuffer(bits.to_bytes(_MASK_BYTES, "little"), np.uint8)
    return np.unpackbits(raw, count=N_ACTIONS, bitorder="little").view(np.int8)


def legal_mask(deal: Deal) -> np.ndarray:
    """The legal actions of the player to move as an ``int8`` 0/1 array over the index."""
    return bits_to_mask(legal_bits(deal))


def legal_indices(deal: Deal) -> list[int]:
    """The indices of the legal actions, ascending."""
    bits = legal_bits(deal)
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out
