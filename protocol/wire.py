"""Messages between players, operators and the services (besides the events themselves).

Players send commands (``protocol.commands``) as msgpack or JSON and get a ``Reply`` in the
same encoding. The views service sends each player ``Update`` messages: its view of the
table and, when it is its turn, the legal actions and the deadline.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec

from .skat.commands import AnyCommand
from .skat.views import PlayerView


class Reply(msgspec.Struct, kw_only=True, omit_defaults=True, repr_omit_defaults=True):
    """The answer to a command or an operator request."""

    ok: bool
    code: str = ""
    """Why it was refused: out_of_turn, illegal, stale, malformed, not_seated, no_table,
    table_closed, busy, unavailable, rate_limited (see docs/protocol.md)."""
    reason: str = ""
    index: int = -1
    """Log position of the (last) event the command added."""


class OpenTable(msgspec.Struct, kw_only=True):
    """Operator request: open a table (``skat.admin.open``) of any registered game."""

    table: str
    players: list[str]
    rules: Any = None
    """The game's options: its rules struct (``protocol.rules.Rules`` for Skat), or the same by
    name as a map (an option left out has its default); none: the standard rules."""
    game: str = "skat"
    seed: str = ""
    formats: dict[str, Literal["msgpack", "json"]] = {}
    """Players that want JSON updates (msgpack is the default)."""
    feed: Literal["public", "withheld"] = "public"
    """Where its spectator feed goes (``protocol.events.FEEDS``): withheld from every player."""


class PauseTable(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Operator request: pause a table, or resume it (``skat.admin.pause``). While a table is
    paused no deadline runs and no command is taken; on resuming, the seat to move gets a whole
    turn. Answered with a ``Reply``: ``code`` "unchanged" when it was so already, "no_table",
    "table_closed" or "malformed" when refused."""

    table: str
    paused: bool = True
    reason: str = ""
    """Shown to the players (at most 200 characters)."""


class Hello(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """What a player may send on ``skat.hello.<player>`` (JSON; an empty message is fine too):
    "send me my pending prompts again", and optionally the encoding of its updates from now on
    (remembered across reconnects and restarts, and preferred over the table's setting)."""

    format: Literal["msgpack", "json", ""] = ""


class Update(msgspec.Struct, kw_only=True, omit_defaults=True, repr_omit_defaults=True):
    """What a player receives on ``skat.view.<player>.<table>``."""

    view: PlayerView
    your_turn: bool = False
    deadline: float = 0.0
    """Unix time by which the action must arrive (0 when it is not your turn)."""
    index: int = 0
    """Log position this view reflects: the events 0..index-1 have happened."""
    clock: float | None = None
    """At a table with a time control, the seconds left of the seat's budget (to the
    millisecond): in a prompt, as its turn began (``deadline`` already counts it). None (left
    out) without one (docs/time-control.md)."""
    increment: float | None = None
    """At a table with a time control, the seconds added to the seat's budget after each of its
    moves; None (left out) without one."""
    turn_seconds: float | None = None
    """At a table with a time control, the seat's per-move deadline in seconds, the budget
    aside (the table's turn time; 0 for a seat played by the default move): its turn lasts
    ``min(turn_seconds, clock)``. None (left out) without one (``view.rules.turn_seconds`` is
    the turn time then)."""


_COMMAND_DECODERS: Final[dict[str, Any]] = {
    "msgpack": msgspec.msgpack.Decoder(AnyCommand),
    "json": msgspec.json.Decoder(AnyCommand),
}
_ENCODERS: Final[dict[str, Any]] = {"msgpack": msgspec.msgpack.Encoder(), "json": msgspec.json.Encoder()}
ENCODINGS: Final = tuple(_ENCODERS)
"""The encodings a player may choose for what it receives (``Hello.format``)."""


def sniff(data: bytes) -> str:
    """JSON or msgpack? A JSON command is an object, so it starts with ``{`` (after spaces)."""
    return "json" if data.lstrip()[:1] == b"{" else "msgpack"


def decode_command(data: bytes) -> tuple[Any, str]:
    """(command, format); raises ``msgspec.DecodeError``/``ValidationError`` on bad input."""
    fmt = sniff(data)
    return _COMMAND_DECODERS[fmt].decode(data), fmt


def encode(obj: object, fmt: str = "msgpack") -> bytes:
    data: bytes = _ENCODERS[fmt].encode(obj)
    return data


def decode(data: bytes, kind: type[Any], fmt: str | None = None) -> Any:
    fmt = fmt or sniff(data)
    if fmt == "json":
        return msgspec.json.decode(data, type=kind)
    return msgspec.msgpack.decode(data, type=kind)
