"""Reproducible randomness for bots: one random source per decision.

On its own so that every bot (the built-in ones in ``bots``, ``heuristic``, ``pimc``) can use it
without importing the registry of bots that imports them.
"""

from __future__ import annotations

import hashlib
import random

from protocol.wire import Update


def decision_rng(seed: str, obs: Update) -> random.Random:
    """A random source for one decision, from (seed, table, log position, seat) only: so a
    bot's choices never depend on timing or on the order it sees its tables in, and a
    tournament with a given seed plays the same way twice, over the bus or in the pure engine."""
    key = f"{seed}/{obs.view.table}/{obs.index}/{obs.view.seat}".encode()
    return random.Random(int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big"))
