"""The registered games, and the one set of event types every reader of a log decodes.

A game is looked up by its name (``get("thirty-one")``) or from a table's first event
(``game_of``): ``table_opened/1`` means Skat, ``table_opened/2`` names its game. Registering a
game whose event tags are already taken is refused, so a tag in a log names one event of one
game (the log subject carries the tag's name). The built-in games register themselves the first
time the registry is asked anything, so that importing a game's modules never imports every
other game.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import msgspec

from .events import EVENT_TYPES, Event, TableOpened, TableOpenedV2, UnknownEvent
from .game import Game
from .wire import sniff

_GAMES: dict[str, Game] = {}
_TAGS: dict[str, type[Event]] = {}
_OWNER_OF_TAG: dict[str, str] = {}
_LOADED = False
DEFAULT: Final = "skat"


def _tag(kind: type[Event]) -> str:
    return str(kind.__struct_config__.tag)


def _load_builtins() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for kind in EVENT_TYPES:  # the table lifecycle's events and Skat's: the protocol's own
        _TAGS[_tag(kind)] = kind
        _OWNER_OF_TAG[_tag(kind)] = "protocol"
    from .rummy.game import GAME as RUMMY
    from .skat.game import GAME as SKAT
    from .thirty_one.game import GAME as THIRTY_ONE

    for game in (SKAT, THIRTY_ONE, RUMMY):
        register(game)


def register(game: Game) -> None:
    """Add ``game``; raises ``ValueError`` if its name or one of its event tags is taken."""
    _load_builtins()
    if game.name in _GAMES:
        raise ValueError(f"a game named {game.name!r} is registered already")
    tags = [_tag(kind) for kind in game.event_types if kind not in EVENT_TYPES]
    for tag in tags:
        if tag in _TAGS:
            raise ValueError(f"{game.name}: event tag {tag!r} is taken (by {_OWNER_OF_TAG[tag]})")
    for kind, tag in zip([k for k in game.event_types if k not in EVENT_TYPES], tags):
        _TAGS[tag] = kind
        _OWNER_OF_TAG[tag] = game.name
    _GAMES[game.name] = game


def names() -> list[str]:
    """The registered games' names, Skat first."""
    _load_builtins()
    return list(_GAMES)


def get(name: str) -> Game:
    """The game called ``name``; raises ``ValueError`` naming the games there are."""
    _load_builtins()
    game = _GAMES.get(name)
    if game is None:
        raise ValueError(f"no game {name!r}: the games are {', '.join(_GAMES)}")
    return game


def game_of(first: Event | UnknownEvent) -> Game:
    """The game of a table whose log starts with ``first``: ``table_opened/1`` is Skat, as every
    log written before there were other games; anything else that is not ``table_opened/2`` is
    read as Skat too (whose fold then says the log must start with ``table_opened``)."""
    if type(first) is TableOpenedV2:
        return get(first.game)
    return get(DEFAULT)


def new_state(first: Event | UnknownEvent | None = None) -> Any:
    """An empty state of the game that ``first`` opens (Skat's when not known yet)."""
    return (game_of(first) if first is not None else get(DEFAULT)).new_state()


def state_game(state: Any) -> Game:
    """The game of a folded state."""
    return get(getattr(state, "game", DEFAULT) or DEFAULT)


def fold(events: Iterable[Event | UnknownEvent]) -> Any:
    """Fold a whole log with the game its first event names."""
    state: Any = None
    for event in events:
        if state is None:
            state = new_state(event)
        state.apply(event)
    return state if state is not None else new_state()


def event_types() -> dict[str, type[Event]]:
    """Every event type of every registered game (and the lifecycle's), by tag."""
    _load_builtins()
    return dict(_TAGS)


def is_opening(event: Event | UnknownEvent) -> bool:
    return type(event) is TableOpened or type(event) is TableOpenedV2


# --- commands: which game knows a command type, which role answers it ----------------------


class _Head(msgspec.Struct):
    type: str


_HEADS: Final[dict[str, msgspec.json.Decoder[_Head] | msgspec.msgpack.Decoder[_Head]]] = {
    "json": msgspec.json.Decoder(_Head),
    "msgpack": msgspec.msgpack.Decoder(_Head),
}
_KNOWING: dict[str, list[tuple[Game, str]]] = {}


def command_head(data: bytes) -> tuple[str, str]:
    """(the command's ``type``, its encoding): enough to route it before its game is known.
    Raises ``msgspec`` errors if it is not a map with a string ``type``."""
    fmt = sniff(data)
    return _HEADS[fmt].decode(data).type, fmt


def games_knowing(kind: str) -> list[tuple[Game, str]]:
    """The games with a command of type ``kind`` and the role answering it there, Skat first."""
    if not _KNOWING:
        _load_builtins()
        for game in _GAMES.values():
            for command_type in game.command_types:
                tag = str(command_type.__struct_config__.tag)
                _KNOWING.setdefault(tag, []).append((game, game.command_type_role(command_type)))
    return _KNOWING.get(kind, [])


def role_in(game: Game, kind: str) -> str | None:
    """The role answering commands of type ``kind`` at ``game``'s tables, or None."""
    return next((role for g, role in games_knowing(kind) if g is game), None)


def triggers_of(role: str) -> tuple[str, ...]:
    """What any registered game asks ``role`` to act on (``Game.triggers``)."""
    _load_builtins()
    return tuple(dict.fromkeys(kind for game in _GAMES.values() for kind in game.triggers.get(role, ())))


def roles_answering() -> set[str]:
    """The roles that answer some game's commands."""
    _load_builtins()
    return {g.command_type_role(k) for g in _GAMES.values() for k in g.command_types}


# --- updates: what a player receives, read with the game its view names ----------------------


class _ViewHead(msgspec.Struct):
    game: Any = None
    """Every game's view names its game in ``game`` but Skat's, where ``game`` has always been
    the declaration (a map, or absent): a view without a string ``game`` is Skat's."""


class _UpdateHead(msgspec.Struct):
    view: _ViewHead


_UPDATE_HEADS: Final[dict[str, msgspec.json.Decoder[_UpdateHead] | msgspec.msgpack.Decoder[_UpdateHead]]] = {
    "json": msgspec.json.Decoder(_UpdateHead),
    "msgpack": msgspec.msgpack.Decoder(_UpdateHead),
}


def decode_update(data: bytes) -> Any:
    """A player's update of any game: its view's ``game`` (none: Skat, as every update before
    there were other games) picks the type. Raises ``msgspec`` errors and ``ValueError`` (an
    unknown game) on bad input."""
    fmt = "json" if data.lstrip()[:1] == b"{" else "msgpack"
    named = _UPDATE_HEADS[fmt].decode(data).view.game
    game = get(named if isinstance(named, str) else DEFAULT)
    if fmt == "json":
        return msgspec.json.decode(data, type=game.update_type)
    return msgspec.msgpack.decode(data, type=game.update_type)
