"""Built-in bots: a policy is a function from the legal actions (and the state) to one action."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from protocol.commands import Bid, Command
from protocol.table import TableState


class Policy(Protocol):
    def __call__(self, state: TableState, seat: int, legal: list[Command]) -> Command: ...


def random_policy(rng: random.Random) -> Policy:
    """Uniform over the legal actions, except that a bid is always the next step up the ladder
    (a uniform pick among 60 bids would bid 200 on any hand and make every game an overbid)."""

    def choose(state: TableState, seat: int, legal: list[Command]) -> Command:
        steps = [a for a in legal if not isinstance(a, Bid)]
        bids = [a for a in legal if isinstance(a, Bid)]
        if bids:
            steps.append(bids[0])
        return rng.choice(steps)

    return choose


BOTS: dict[str, Callable[[random.Random], Policy]] = {"random": random_policy}


class KeyedPolicy(Protocol):
    def __call__(self, table: str, index: int, seat: int, legal: list[Command]) -> Command: ...


def hashed_policy(seed: str) -> KeyedPolicy:
    """A random-looking but reproducible player: the choice depends only on (seed, table, log
    position, seat), never on timing, so a table played over the bus and one played through the
    pure engine make the same moves. Bids climb one step at a time, as in ``random_policy``."""
    import hashlib

    def choose(table: str, index: int, seat: int, legal: list[Command]) -> Command:
        steps = [a for a in legal if not isinstance(a, Bid)]
        bids = [a for a in legal if isinstance(a, Bid)]
        if bids:
            steps.append(bids[0])
        digest = hashlib.blake2b(f"{seed}/{table}/{index}/{seat}".encode(), digest_size=8).digest()
        return steps[int.from_bytes(digest, "big") % len(steps)]

    return choose


def keyed_as_policy(keyed: KeyedPolicy) -> Policy:
    """Use a keyed policy where a ``Policy`` (state, seat, legal) is expected."""

    def choose(state: TableState, seat: int, legal: list[Command]) -> Command:
        return keyed(state.table, state.events, seat, legal)

    return choose
