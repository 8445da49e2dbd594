"""Provably fair deals: a commitment before the first deal, the entrants' nonces, a reveal at the end.

Why. Every card of a tournament follows from its seed. An operator who may choose that seed
could choose the deals, and one who keeps a weak seed lets an entrant recover it from its own
hand and predict every later deal. Online card rooms answer both with commit and reveal, and so
does skatbus:

1. Before anything is dealt the tournament publishes ``commitment(seed)``, a hash of a secret
   server seed of at least 128 random bits (``secrets.token_hex(32)`` unless the operator gives
   one).
2. Until the nonces close, each entrant may send a nonce of its own choosing. The deals depend on
   all of them (``nonces_digest``), so the operator, who fixed the seed before seeing them,
   cannot have chosen the deals; and no entrant can, because it does not know the seed.
3. Every table of one duplicate group (a series, or a set of seat rotations) gets the table seed
   ``group_seed(seed, tournament, group, digest)``; deal ``n`` of a table then follows from its
   table seed as every table's deals always have (``protocol.skat.dealing.deal_seed``).
4. At the end the seed is published. Anyone holding the commitment and the nonces can check the
   seed against the commitment and re-derive every card (``skat verify``).

All hashes are SHA-256 over a domain string, so a value of one kind is never mistaken for
another. The exact byte strings are part of the protocol (docs/protocol.md): changing them would
make old runs unverifiable, so a new scheme gets a new number (``SCHEME``).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Mapping
from typing import Final

SCHEME: Final = 1
"""The derivation this module implements (``TournamentConfig.fair``); 0 is the legacy one
(``f"{seed}/{group}"``, no commitment), which old logs keep."""

NONCE_MIN_HEX: Final = 16
NONCE_MAX_HEX: Final = 128
_NONCE: Final = re.compile(r"[0-9a-f]{16,128}")


def new_server_seed() -> str:
    """256 random bits as 64 hex digits: the secret that decides every card until it is revealed."""
    return secrets.token_hex(32)


def commitment(seed: str) -> str:
    """What the tournament publishes before the first deal: binds it to ``seed`` without telling it."""
    return hashlib.sha256(b"skatbus commitment/1\x00" + seed.encode("utf-8")).hexdigest()


def check_nonce(nonce: object) -> str:
    """An entrant's nonce as it counts (lower case), or ``ValueError`` saying why it is refused:
    16 to 128 hex digits, so that a nonce is a plain token that every language can make."""
    if not isinstance(nonce, str):
        raise ValueError("a nonce must be a string of 16 to 128 hex digits")
    value = nonce.strip().lower()
    if not _NONCE.fullmatch(value):
        raise ValueError(f"a nonce must be {NONCE_MIN_HEX} to {NONCE_MAX_HEX} hex digits")
    return value


def nonces_digest(nonces: Mapping[str, str]) -> str:
    """One hash of every entrant's nonce, in the order of the entrants' ids (so the order in
    which they arrived does not matter). No nonces at all is a digest too."""
    text = "".join(f"{player}={nonce}\n" for player, nonce in sorted(nonces.items()))
    return hashlib.sha256(b"skatbus nonces/1\x00" + text.encode("utf-8")).hexdigest()


def group_seed(seed: str, tournament: str, group: int, digest: str) -> str:
    """The table seed of every table of duplicate group ``group`` (the tables that play the same
    deals): a function of the server seed, the tournament, the group and the nonces' digest."""
    text = f"{seed}\x00{tournament}\x00{group}\x00{digest}"
    return hashlib.sha256(b"skatbus deals/1\x00" + text.encode("utf-8")).hexdigest()


def bot_seed(seed: str, entrant: str) -> str:
    """The seed of a built-in bot's own random choices. A hash, so that a bot's moves, which
    every other player sees, say nothing about the server seed."""
    return hashlib.sha256(b"skatbus bot/1\x00" + f"{seed}\x00{entrant}".encode()).hexdigest()
