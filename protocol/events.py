"""Events: what happened at a table. A table's log is a sequence of these, and nothing else.

Every event is a frozen msgspec Struct in one tagged union; the tag is ``<name>/<version>``.
On the wire and in the log each event travels inside an ``Envelope`` (type, version,
payload), so a reader that meets an event type or version it does not know skips it instead
of failing: decode the envelope, then the payload. Compatibility rules: a new field gets a
default; a changed meaning gets a new version (a new tag), and the old one stays decodable.

Seats in events are table seats (0..n-1 in the order of ``TableOpened.players``).
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec

from .skat.cards import CardCode
from .skat.games import Declaration
from .skat.rules import Rules
from .skat.scoring import DealResult

Feed = Literal["public", "withheld"]
FEEDS: Final = ("public", "withheld")
"""A table's spectator feed: ``public`` on ``skat.public.<table>``, which every player may read;
``withheld`` on ``skat.watch.<table>``, which no player may read (only the operator's tools). A
tournament withholds the feeds of tables that play the same deals as other tables at the same
time with remote entrants seated: a sibling table's feed would show them their own deal played
ahead of them (``protocol.tournament``)."""


class Event(msgspec.Struct, frozen=True, tag_field="type", kw_only=True, repr_omit_defaults=True):
    """Base of every event."""


class TableOpened(Event, frozen=True, tag="table_opened/1"):
    table: str
    players: list[str]
    rules: Rules
    seed: str
    """Deal seeds derive from it (``dealing.deal_seed``); equal seeds give equal deals."""
    formats: dict[str, Literal["msgpack", "json"]] = {}
    """How each player wants its updates encoded (msgpack unless listed)."""
    feed: Feed = "public"
    """Where the table's spectator feed goes (``FEEDS``)."""


class TableOpenedV2(Event, frozen=True, tag="table_opened/2"):
    """A table of any game: ``game`` names it (``protocol.registry``) and ``rules`` are that
    game's options by name (an option left out has its default). Skat tables are still opened
    with ``table_opened/1`` (so every reader of today's logs keeps working); that version
    means Skat."""

    table: str
    game: str
    players: list[str]
    rules: dict[str, Any] = {}
    seed: str = ""
    formats: dict[str, Literal["msgpack", "json"]] = {}
    feed: Feed = "public"
    """Where the table's spectator feed goes (``FEEDS``)."""


class DealDealt(Event, frozen=True, tag="deal_dealt/1"):
    deal: int
    """1-based number of the deal at this table."""
    dealer: int
    seats: tuple[int, int, int]
    """Table seats of forehand, middlehand, rearhand."""
    hands: tuple[list[CardCode], list[CardCode], list[CardCode]]
    """By position: forehand, middlehand, rearhand."""
    skat: list[CardCode]
    seed: str = ""
    """The seed the cards came from (empty for a deal imported from elsewhere)."""


class BidMade(Event, frozen=True, tag="bid/1"):
    seat: int
    value: int


class BidHeld(Event, frozen=True, tag="hold/1"):
    seat: int
    value: int


class Passed(Event, frozen=True, tag="pass/1"):
    """A pass while bidding, or declining to say Kontra or Re."""

    seat: int


class BiddingWon(Event, frozen=True, tag="bidding_won/1"):
    seat: int
    value: int


class AllPassed(Event, frozen=True, tag="all_passed/1"):
    """Everyone passed: the deal is passed in, or a Ramsch is played."""

    ramsch: bool


class SkatTaken(Event, frozen=True, tag="skat_taken/1"):
    seat: int
    cards: list[CardCode]


class Discarded(Event, frozen=True, tag="discarded/1"):
    seat: int
    cards: list[CardCode]


class GameDeclared(Event, frozen=True, tag="game_declared/1"):
    seat: int
    game: Declaration


class KontraSaid(Event, frozen=True, tag="kontra/1"):
    seat: int


class ReSaid(Event, frozen=True, tag="re/1"):
    seat: int


class CardPlayed(Event, frozen=True, tag="card_played/1"):
    seat: int
    card: CardCode


class TrickTaken(Event, frozen=True, tag="trick_taken/1"):
    seat: int
    """The winner."""
    trick: int
    """1-based trick number."""
    cards: list[CardCode]
    """In play order, the leader's card first."""
    points: int


class CardsShown(Event, frozen=True, tag="cards_shown/1"):
    """The declarer laid its remaining cards open (an offer to end the deal)."""

    seat: int
    cards: list[CardCode]


class Resigned(Event, frozen=True, tag="resigned/1"):
    seat: int


class DealEnded(Event, frozen=True, tag="deal_ended/1"):
    deal: int
    reason: str


class DealScored(Event, frozen=True, tag="deal_scored/1"):
    deal: int
    result: DealResult
    bock_rounds_added: int = 0
    bock_deals_left: int = 0
    """Bock deals still to come after this one."""


class PlayerTimedOut(Event, frozen=True, tag="timed_out/1"):
    """The seat to act missed its deadline; the default action follows as its own event."""

    seat: int


class SeatWithdrawn(Event, frozen=True, tag="seat_withdrawn/1"):
    """The seat missed ``Rules.max_timeouts`` turns in a row: from now on it is played by the
    default action at once and its commands are refused. Follows the time-out (and its default
    action) that made the count."""

    seat: int
    missed: int


class TablePaused(Event, frozen=True, tag="table_paused/1"):
    """The operator paused the table (``skat.admin.pause``): no deadline runs, no command is
    taken and nothing is derived until ``table_resumed``."""

    reason: str = ""


class TableResumed(Event, frozen=True, tag="table_resumed/1"):
    """The table plays on; the seat to move gets a full turn from this event's stored time."""


class TableClosed(Event, frozen=True, tag="table_closed/1"):
    reason: str


AnyEvent = (
    TableOpened | TableOpenedV2 | DealDealt | BidMade | BidHeld | Passed | BiddingWon | AllPassed | SkatTaken
    | Discarded | GameDeclared | KontraSaid | ReSaid | CardPlayed | TrickTaken | CardsShown
    | Resigned | DealEnded | DealScored | PlayerTimedOut | TableClosed | SeatWithdrawn | TablePaused
    | TableResumed
)  # fmt: skip

EVENT_TYPES: Final[tuple[type[Event], ...]] = AnyEvent.__args__
TAGS: Final[dict[type[Event], str]] = {t: t.__struct_config__.tag for t in EVENT_TYPES}  # type: ignore[misc]
BY_TAG: Final[dict[str, type[Event]]] = {tag: t for t, tag in TAGS.items()}


def split_tag(tag: str) -> tuple[str, int]:
    name, _, version = tag.partition("/")
    return name, int(version)


# --- the envelope ------------------------------------------------------------------------


class Envelope(msgspec.Struct, array_like=True):
    """``[type, version, payload]``: what every stored or sent event looks like on the outside."""

    type: str
    version: int
    payload: msgspec.Raw


class UnknownEvent(msgspec.Struct, frozen=True):
    """An event this version of skatbus does not know (kept so a reader can report it)."""

    type: str
    version: int


class Codec:
    """Encodes and decodes events in their envelope, in msgpack or JSON.

    Every registered game's events are known (``protocol.registry``). Decoding an unknown type
    or version gives ``UnknownEvent`` instead of an error; a known type with a broken payload
    raises ``msgspec.DecodeError`` / ``ValidationError``.
    """

    def __init__(self, fmt: str = "msgpack") -> None:
        if fmt == "msgpack":
            self._encoder: Any = msgspec.msgpack.Encoder()
            self._envelope: Any = msgspec.msgpack.Decoder(Envelope)
            self._decoder: Any = msgspec.msgpack.Decoder
        elif fmt == "json":
            self._encoder = msgspec.json.Encoder()
            self._envelope = msgspec.json.Decoder(Envelope)
            self._decoder = msgspec.json.Decoder
        else:
            raise ValueError(f"unknown format {fmt!r}: msgpack or json")
        self.format = fmt
        self._payloads: dict[str, Any] = {}
        self._names: dict[type, tuple[str, int]] = {}

    def _load(self) -> None:
        """The decoders of every registered game's events (on first use: the games import this
        module, so the registry cannot be asked while it is being imported)."""
        from .registry import event_types

        by_tag = event_types()
        self._payloads = {tag: self._decoder(t) for tag, t in by_tag.items()}
        self._names = {t: split_tag(tag) for tag, t in by_tag.items()}

    def encode(self, event: Event) -> bytes:
        if not self._names:
            self._load()
        name, version = self._names[type(event)]
        data: bytes = self._encoder.encode(Envelope(name, version, msgspec.Raw(self._encoder.encode(event))))
        return data

    def decode(self, data: bytes) -> Event | UnknownEvent:
        env = self._envelope.decode(data)
        if not self._payloads:
            self._load()
        decoder = self._payloads.get(f"{env.type}/{env.version}")
        if decoder is None:
            return UnknownEvent(env.type, env.version)
        event: Event = decoder.decode(env.payload)
        return event


MSGPACK: Final = Codec("msgpack")
JSON: Final = Codec("json")
