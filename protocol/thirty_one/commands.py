"""Thirty-one's commands: what a player asks to do (T13-T19, T30, T31).

Commands are small frozen msgspec Structs in one tagged union, as Skat's are
(``protocol.commands``): a bot sends ``{"type": "take", "source": "stock"}`` as JSON or the
same map as msgpack, and never its seat (that comes from who sent it). Each has the text form of
game records (RECORDS.md): ``take stock``, ``take discard``, ``discard S7``, ``knock``, ``look``,
``throw``; ``str(command)`` prints it and ``parse_action(text)`` reads it back.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec

from .cards import PACK, PACK_SET, CardCode

Source = Literal["stock", "discard"]


class Command(msgspec.Struct, frozen=True, tag_field="type", kw_only=True, omit_defaults=True, repr_omit_defaults=True):
    """Base of every command. ``at`` (optional) is the log position of the prompt it answers:
    a command that arrives late or twice is then refused as stale instead of taken anew."""

    at: int = -1

    def __str__(self) -> str:
        return str(type(self).__struct_config__.tag)


class Take(Command, frozen=True, tag="take"):
    """Take the top card of the stock or of the discard pile (T13a)."""

    source: Source

    def __str__(self) -> str:
        return f"take {self.source}"


class Discard(Command, frozen=True, tag="discard"):
    """Discard a card face up (T13b); never the card just taken from the pile (T14)."""

    card: CardCode

    def __str__(self) -> str:
        return f"discard {self.card}"


class Knock(Command, frozen=True, tag="knock"):
    """Knock instead of taking a card: the whole turn (T19)."""


class Look(Command, frozen=True, tag="look"):
    """Look at one's dealt hand (option ``throw_down``; at any time, also out of turn)."""


class Throw(Command, frozen=True, tag="throw"):
    """Throw down unseen at the start of one's first turn (option ``throw_down``, T31)."""


AnyCommand = Take | Discard | Knock | Look | Throw
COMMAND_TYPES: Final[tuple[type[Command], ...]] = AnyCommand.__args__

# Shared instances: legal-action lists hand these out instead of building new objects.
TAKE_STOCK: Final = Take(source="stock")
TAKE_DISCARD: Final = Take(source="discard")
KNOCK: Final = Knock()
LOOK: Final = Look()
THROW: Final = Throw()
DISCARDS: Final[dict[str, Discard]] = {code: Discard(card=code) for code in PACK}
_SIMPLE: Final[dict[str, Command]] = {
    "take stock": TAKE_STOCK, "take discard": TAKE_DISCARD, "knock": KNOCK, "look": LOOK, "throw": THROW,
}  # fmt: skip


def parse_action(text: str) -> Command:
    """The command ``text`` names, as ``str(command)`` prints it (case and extra spaces do not
    matter). Raises ``ValueError`` with a hint if it names nothing. Whether it is legal now is
    the deal's question (``Deal.check``)."""
    words = text.lower().split()
    joined = " ".join(words)
    if joined in _SIMPLE:
        return _SIMPLE[joined]
    if len(words) == 2 and words[0] == "discard" and words[1].upper() in PACK_SET:
        return DISCARDS[words[1].upper()]
    raise ValueError(f"not an action: {text!r} (try take stock, take discard, discard S7, knock, look, throw)")


_DECODERS: Final[dict[str, Any]] = {
    "msgpack": msgspec.msgpack.Decoder(AnyCommand),
    "json": msgspec.json.Decoder(AnyCommand),
}


def decode_command(data: bytes) -> tuple[Command, str]:
    """(command, ``"json"``/``"msgpack"``): a JSON command is an object, so it starts with
    ``{``. Raises ``msgspec.DecodeError``/``ValidationError`` on bad input."""
    fmt = "json" if data.lstrip()[:1] == b"{" else "msgpack"
    command: Command = _DECODERS[fmt].decode(data)
    return command, fmt
