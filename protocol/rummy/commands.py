"""The rummy's commands: what a player asks to do, one per action of the engine
(``protocol.rummy.actions``): ``take N``, ``meld C C C``, ``layoff M C``, ``swap M C``,
``claim C C C``, ``discard C``.

Commands are small frozen msgspec Structs in one tagged union, as Thirty-one's are: a bot sends
``{"type": "meld", "cards": ["H7", "H8", "X1=H9"]}`` as JSON or the same map as msgpack, and
never its seat (that comes from who sent it). They are the engine's actions with ``at``, the log
position of the prompt a command answers (a late or repeated command is then refused as stale
instead of taken anew), which the engine's actions do not carry: hence types of their own, with
the same tags and fields. ``str(command)`` is the record text (the engine's), ``parse_action``
reads it back. The compulsory draw (M11) is no command: the table does it.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from . import actions as engine


class Command(msgspec.Struct, frozen=True, tag_field="type", kw_only=True, omit_defaults=True, repr_omit_defaults=True):
    """Base of every command. ``at`` (optional): the log position of the prompt it answers."""

    at: int = -1

    def action(self) -> engine.AnyAction:
        """The engine's action this command asks for."""
        raise NotImplementedError

    def __str__(self) -> str:
        return str(self.action())


class Take(Command, frozen=True, tag="take"):
    """Take the ``n``-th card of the row (1 = the oldest) and every card after it (M14)."""

    n: int

    def action(self) -> engine.AnyAction:
        return engine.Take(n=self.n)


class Meld(Command, frozen=True, tag="meld"):
    """Lay a new meld from the hand (tokens; a run low end first, M39)."""

    cards: tuple[str, ...]

    def action(self) -> engine.AnyAction:
        return engine.Lay(cards=tuple(self.cards))


class LayOff(Command, frozen=True, tag="layoff"):
    """Lay one card (a token) off onto meld ``meld`` (numbered from 1 in the order laid)."""

    meld: int
    card: str

    def action(self) -> engine.AnyAction:
        return engine.LayOff(meld=self.meld, card=self.card)


class Swap(Command, frozen=True, tag="swap"):
    """Put the natural ``card`` in the place of meld ``meld``'s joker and take the joker (M18)."""

    meld: int
    card: str

    def action(self) -> engine.AnyAction:
        return engine.Swap(meld=self.meld, card=self.card)


class Claim(Command, frozen=True, tag="claim"):
    """c, d: lay a new meld of one card from the hand and cards out of the row (M21)."""

    cards: tuple[str, ...]

    def action(self) -> engine.AnyAction:
        return engine.Claim(cards=tuple(self.cards))


class Discard(Command, frozen=True, tag="discard"):
    """Discard a card to the end of the row; ends the turn (M13)."""

    card: str

    def action(self) -> engine.AnyAction:
        return engine.Discard(card=self.card)


AnyCommand = Take | Meld | LayOff | Swap | Claim | Discard
COMMAND_TYPES: Final[tuple[type[Command], ...]] = AnyCommand.__args__


def command_of(action: engine.Action) -> Command:
    """The command asking for the engine's ``action``."""
    if isinstance(action, engine.Take):
        return Take(n=action.n)
    if isinstance(action, engine.Lay):
        return Meld(cards=tuple(action.cards))
    if isinstance(action, engine.LayOff):
        return LayOff(meld=action.meld, card=action.card)
    if isinstance(action, engine.Swap):
        return Swap(meld=action.meld, card=action.card)
    if isinstance(action, engine.Claim):
        return Claim(cards=tuple(action.cards))
    if isinstance(action, engine.Discard):
        return Discard(card=action.card)
    raise TypeError(f"not an action of the rummy: {action!r}")


def parse_action(text: str) -> Command:
    """The command ``text`` names, as ``str(command)`` prints it (the engine's reading: case
    and extra spaces do not matter). Raises ``ValueError`` with a hint if it names nothing.
    Whether it is legal now is the deal's question."""
    return command_of(engine.parse_action(text))


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
