"""Commands: what a player asks to do. The engine answers each with events or a rejection.

Commands are small frozen msgspec Structs in one tagged union, so a bot in any language sends
``{"type": "play", "card": "CJ"}`` as JSON or the same map as msgpack. Commands never carry
the sender's seat: the seat comes from who sent it (the NATS subject), never from the payload.

Each command also has a text form for people, tests and logs: ``str(command)`` prints it and
``parse_action(text)`` reads it back ("CJ", "bid 18", "hold", "pass", "pickup",
"discard CJ SA", "declare grand hand schneider", "kontra", "re", "show", "resign").
"""

from __future__ import annotations

from typing import Final

import msgspec

from .cards import CODES, INDEX, CardCode
from .games import BID_LADDERS, GAME_NAMES, HAND_DECLARATIONS, PICKUP_DECLARATIONS, GameKind


class Command(msgspec.Struct, frozen=True, tag_field="type", kw_only=True, omit_defaults=True, repr_omit_defaults=True):
    """Base of every player command.

    ``at`` (optional) is the log position of the prompt the command answers. With it, a command
    that arrives late or twice (a retry after a lost reply) is refused as stale instead of being
    taken as a new move: without it, a retried "hold" could hold a bid its sender never saw.
    """

    at: int = -1

    def __str__(self) -> str:
        return str(type(self).__struct_config__.tag)


class Bid(Command, frozen=True, tag="bid"):
    value: int

    def __str__(self) -> str:
        return f"bid {self.value}"


class Hold(Command, frozen=True, tag="hold"):
    """Forehand (or the survivor) holds the bid just named."""


class Pass(Command, frozen=True, tag="pass"):
    """Pass while bidding, or decline to say Kontra / Re."""


class PickUpSkat(Command, frozen=True, tag="pickup"):
    pass


class Discard(Command, frozen=True, tag="discard"):
    cards: tuple[CardCode, CardCode]

    def __str__(self) -> str:
        return f"discard {self.cards[0]} {self.cards[1]}"


class Declare(Command, frozen=True, tag="declare", omit_defaults=True):
    """Declare a game. A game declared before picking up the skat is a hand game."""

    game: GameKind
    schneider: bool = False
    schwarz: bool = False
    ouvert: bool = False

    def __str__(self) -> str:
        words = [GAME_NAMES[self.game]] + [w for w in _ANNOUNCEMENTS if getattr(self, w)]
        return "declare " + " ".join(words)


class Kontra(Command, frozen=True, tag="kontra"):
    pass


class Re(Command, frozen=True, tag="re"):
    pass


class PlayCard(Command, frozen=True, tag="play"):
    card: CardCode

    def __str__(self) -> str:
        return self.card


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


_ANNOUNCEMENTS: Final = ("schneider", "schwarz", "ouvert")
_SIMPLE: Final[dict[str, Command]] = {
    "hold": HOLD, "pass": PASS, "pickup": PICKUP, "kontra": KONTRA, "re": RE, "show": SHOW, "resign": RESIGN,
}  # fmt: skip
_GAME_WORDS: Final[dict[str, GameKind]] = {
    **{name: GameKind(letter) for letter, name in GAME_NAMES.items()},
    **{letter.lower(): GameKind(letter) for letter in GAME_NAMES},
}


def parse_action(text: str) -> Command:
    """The command ``text`` names, as ``str(command)`` prints it (case and extra spaces do not
    matter; "play CJ" is also read). Raises ``ValueError`` with a hint if it names nothing.
    Whether the command is legal now is the deal's question (``Deal.parse``)."""
    words = text.lower().split()
    if not words:
        raise ValueError("empty action")
    head, rest = words[0], words[1:]
    if head in _SIMPLE and not rest:
        return _SIMPLE[head]
    if head == "play" and len(rest) == 1:
        head, rest = rest[0], []
    if not rest and head.upper() in INDEX:
        return PLAY[INDEX[head.upper()]]
    if head == "bid" and len(rest) == 1 and rest[0].isdigit():
        return Bid(value=int(rest[0]))
    if head == "discard" and len(rest) == 2 and all(w.upper() in INDEX for w in rest):
        return Discard(cards=(rest[0].upper(), rest[1].upper()))  # type: ignore[arg-type]
    if head == "declare" and rest and rest[0] in _GAME_WORDS:
        extras = set(rest[1:]) - {"hand"}  # "hand" is implied by not having picked up the skat
        if extras - set(_ANNOUNCEMENTS):
            raise ValueError(f"unknown announcement in {text!r}: use schneider, schwarz, ouvert")
        return Declare(game=_GAME_WORDS[rest[0]], **{w: True for w in extras})
    raise ValueError(
        f"not an action: {text!r} (try CJ, bid 18, hold, pass, pickup, discard CJ SA, "
        "declare grand, kontra, re, show, resign)"
    )
