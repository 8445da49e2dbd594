"""Commands: what a player asks to do. The engine answers each with events or a rejection.

Commands are small frozen msgspec Structs in one tagged union, so a bot in any language sends
``{"type": "play", "card": "CJ"}`` as JSON or the same map as msgpack. Commands never carry
the sender's seat: the seat comes from who sent it (the NATS subject), never from the payload.
"""

from __future__ import annotations

from typing import Final

import msgspec

from .cards import CODES, CardCode
from .games import BID_LADDERS, HAND_DECLARATIONS, PICKUP_DECLARATIONS, GameType


class Command(msgspec.Struct, frozen=True, tag_field="type", kw_only=True, omit_defaults=True):
    """Base of every player command.

    ``at`` (optional) is the log position of the prompt the command answers. With it, a command
    that arrives late or twice (a retry after a lost reply) is refused as stale instead of being
    taken as a new move: without it, a retried "hold" could hold a bid its sender never saw.
    """

    at: int = -1


class Bid(Command, frozen=True, tag="bid"):
    value: int


class Hold(Command, frozen=True, tag="hold"):
    """Forehand (or the survivor) holds the bid just named."""


class Pass(Command, frozen=True, tag="pass"):
    """Pass while bidding, or decline to say Kontra / Re."""


class PickUpSkat(Command, frozen=True, tag="pickup"):
    pass


class Discard(Command, frozen=True, tag="discard"):
    cards: tuple[CardCode, CardCode]


class Declare(Command, frozen=True, tag="declare", omit_defaults=True):
    """Declare a game. A game declared before picking up the skat is a hand game."""

    game: GameType
    schneider: bool = False
    schwarz: bool = False
    ouvert: bool = False


class Kontra(Command, frozen=True, tag="kontra"):
    pass


class Re(Command, frozen=True, tag="re"):
    pass


class PlayCard(Command, frozen=True, tag="play"):
    card: CardCode


class ShowCards(Command, frozen=True, tag="show"):
    """The declarer lays its cards open to claim the rest: an offer that ends nothing itself."""


class Resign(Command, frozen=True, tag="resign"):
    """Give up the deal: the declarer concedes, or a defender concedes (both must)."""


AnyCommand = Bid | Hold | Pass | PickUpSkat | Discard | Declare | Kontra | Re | PlayCard | ShowCards | Resign

# Shared instances: legal-action lists hand these out instead of building new objects.
HOLD: Final = Hold()
PASS: Final = Pass()
PICKUP: Final = PickUpSkat()
KONTRA: Final = Kontra()
RE: Final = Re()
SHOW: Final = ShowCards()
RESIGN: Final = Resign()
PLAY: Final[tuple[PlayCard, ...]] = tuple(PlayCard(card=c) for c in CODES)  # type: ignore[arg-type]
BIDS: Final[dict[int, Bid]] = {v: Bid(value=v) for ladder in BID_LADDERS.values() for v in ladder}
HAND_DECLARES: Final[tuple[Declare, ...]] = tuple(
    Declare(game=d.game, schneider=d.schneider, schwarz=d.schwarz, ouvert=d.ouvert) for d in HAND_DECLARATIONS
)
PICKUP_DECLARES: Final[tuple[Declare, ...]] = tuple(Declare(game=d.game, ouvert=d.ouvert) for d in PICKUP_DECLARATIONS)
DISCARDS: Final[dict[tuple[int, int], Discard]] = {
    (a, b): Discard(cards=(CODES[a], CODES[b]))  # type: ignore[arg-type]
    for a in range(32)
    for b in range(a + 1, 32)
}
