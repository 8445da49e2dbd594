"""The fixed action index of the Thirty-one environments: every action of a game as one integer.

A policy network needs one output per action, the same output for the same action in every
state, so the environments number every action Thirty-one can ever offer once and for all
(``N_ACTIONS`` = 57) and say which are legal now with a mask over that index:

=========  =====  ==================================================================
index      count  action (``protocol.thirty_one.commands``, record text)
=========  =====  ==================================================================
0             1   take stock: the stock's top card (T13a)
1             1   take discard: the discard pile's top card (T13a)
2             1   knock, instead of taking a card (T19)
3             1   look at one's unseen hand (option ``throw_down``, T30)
4             1   throw down unseen, at the start of one's first turn (``throw_down``, T31)
5-56         52   discard card i (T13b): index = 5 + the card's place in
                  ``protocol.thirty_one.cards.PACK`` (C2 C3 ... CA S2 ... SA H2 ... DA)
=========  =====  ==================================================================

The mask of the seat to move is exactly ``Deal.legal_actions(seat)`` (tests/skatbus/rl
checks it at every step of random games under every option). ``look`` is also legal out of
turn at a table (T40); an environment steps one seat at a time, so it is offered in the seat's
own turn only: a hand does not change out of turn, so looking early shows nothing that looking
at the start of one's turn would not.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from protocol.thirty_one.cards import INDEX, PACK
from protocol.thirty_one.commands import DISCARDS, KNOCK, LOOK, TAKE_DISCARD, TAKE_STOCK, THROW, Command
from protocol.thirty_one.deal import Deal

TAKE_STOCK_INDEX: Final = 0
TAKE_DISCARD_INDEX: Final = 1
KNOCK_INDEX: Final = 2
LOOK_INDEX: Final = 3
THROW_INDEX: Final = 4
DISCARD_OFFSET: Final = 5
N_ACTIONS: Final = DISCARD_OFFSET + len(PACK)

ACTIONS: Final[tuple[Command, ...]] = (
    TAKE_STOCK,
    TAKE_DISCARD,
    KNOCK,
    LOOK,
    THROW,
    *(DISCARDS[code] for code in PACK),
)
"""The command of every index."""

assert len(ACTIONS) == N_ACTIONS == 57

_INDEX_OF: Final[dict[Command, int]] = {a: i for i, a in enumerate(ACTIONS)}
_DISCARD_BIT: Final[dict[str, int]] = {code: 1 << (DISCARD_OFFSET + i) for code, i in INDEX.items()}
_MASK_BYTES: Final = (N_ACTIONS + 7) // 8


def index_of(action: Command) -> int:
    """The index of ``action`` (any spelling: ``at`` is ignored). Raises ``KeyError`` for
    something that is not a Thirty-one command."""
    found = _INDEX_OF.get(action)
    if found is None:
        import msgspec

        found = _INDEX_OF[msgspec.structs.replace(action, at=-1)]
    return found


def action_of(index: int) -> Command:
    """The command of ``index`` (``ACTIONS[index]``); whether it is legal now is the deal's question."""
    return ACTIONS[index]


def legal_bits(deal: Deal | None, seat: int) -> int:
    """The legal actions of ``seat`` in its turn as a bit set over the index (bit i = index i):
    0 when it is not ``seat``'s turn or there is no deal running."""
    if deal is None or deal.to_move != seat:
        return 0
    if deal.step == "discard":
        taken = deal.taken
        bits = 0
        for code in deal.hands[seat]:
            if code != taken:
                bits |= _DISCARD_BIT[code]
        return bits
    bits = 0
    for action in deal.legal_actions(seat):
        bits |= 1 << _INDEX_OF[action]
    return bits


def bits_to_mask(bits: int) -> np.ndarray:
    """A bit set over the index as the ``int8`` 0/1 array of length ``N_ACTIONS``."""
    raw = np.frombuffer(bits.to_bytes(_MASK_BYTES, "little"), np.uint8)
    return np.unpackbits(raw, count=N_ACTIONS, bitorder="little").view(np.int8)


def indices(bits: int) -> list[int]:
    """The indices of a bit set, ascending."""
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out
