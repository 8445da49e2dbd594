"""The interface a game implements, so that one protocol and one set of services host every game.

A game is one package (``protocol.skat``, ``protocol.thirty_one``) that exposes a ``Game``: its
rules type, its events and commands, how a table's log folds into a state, what the table owes
next and which role writes it, what a command does, what a time-out does, what each seat may
see, and the results. It is registered in ``protocol.registry``; the services, the tools and
the contract suite (``tests/games``) reach a game only through this interface.

The shape follows OpenSpiel (a game type, a state, an observer per player, one registry, one
conformance test) and python-chess (the record's header names the variant): a table's first
event, ``table_opened``, names the game, and everything after it is read with that game.

Roles. The four services are roles: ``dealer`` (opens, deals, pauses, closes), ``bidding``,
``play`` and ``scoring``. A game says which role answers each of its commands (``command_role``),
which role writes each derived event (``owner``), and which role enforces the turn now
(``turn_role``, whose deadline runs). A game without bidding simply never names that role: the
bidding service owns nothing at its tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

import msgspec

from .events import Event, UnknownEvent

ROLES = ("dealer", "bidding", "play", "scoring")


@runtime_checkable
class GameState(Protocol):
    """A table's state, as its game folds it. The generic part is ``protocol.lifecycle.TableBase``
    (players, seed, formats, log position, pauses, time-outs, closing); a game adds its deal."""

    table: str
    players: list[str]
    seed: str
    n: int
    events: int
    """How many events are folded: the log position the next event will have."""
    closed: bool
    paused: bool
    defaulting: int
    formats: dict[str, str]

    @property
    def opened(self) -> bool: ...

    @property
    def to_move(self) -> int | None:
        """The seat the table waits for, or None (a derived event is due, paused, closed)."""

    @property
    def rules(self) -> Any: ...

    def apply(self, event: Event | UnknownEvent) -> None:
        """Fold one event; raises ``protocol.lifecycle.LogError`` if the rules do not allow it."""

    def copy(self) -> Any: ...

    def withdrawn(self, seat: int) -> bool: ...

    def turn_seconds(self, seat: int | None) -> float: ...

    def legal_actions(self, seat: int) -> Sequence[Any]: ...


class Game(Protocol):
    """One game: everything the protocol, the services and the tools need to host its tables."""

    name: ClassVar[str]
    """The name in ``table_opened/2``, in records and on the command line (``thirty-one``)."""
    title: ClassVar[str]
    rules_type: ClassVar[type[msgspec.Struct]]
    """The options; every field has a default, so ``rules_type()`` is the standard game."""
    event_types: ClassVar[tuple[type[Event], ...]]
    """The game's own events (not the table lifecycle's). Tags are unique across all games."""
    command_types: ClassVar[tuple[type[msgspec.Struct], ...]]
    update_type: ClassVar[type[msgspec.Struct]]
    """What a player receives (``view``, ``your_turn``, ``deadline``, ``index``) with this
    game's view: ``protocol.registry.decode_update`` reads any game's."""
    seats: ClassVar[tuple[int, int]]
    """Fewest and most players a table of this game seats."""

    triggers: ClassVar[dict[str, tuple[str, ...]]]
    """Per role, the kinds of events (tag names, ``t31_dealt``) written by other roles that the
    role must act on: its consumer is filtered on them. The lifecycle's (``table_paused``,
    ``table_resumed``) are the services' own."""

    def players(self, rules: Any) -> tuple[int, int]:
        """Fewest and most players a table with ``rules`` seats."""

    def new_state(self) -> GameState:
        """An empty state; the first event it folds must be ``table_opened`` of this game."""

    def open_event(
        self, table: str, players: list[str], rules: Any, seed: str, formats: dict[str, str], feed: str = "public"
    ) -> Event:
        """The ``table_opened`` event that starts a table of this game."""

    def due(self, state: Any) -> Event | None:
        """The derived event the table waits for, or None when it waits for a player."""

    def owner(self, event: Event) -> str | None:
        """The role that writes ``event`` when it is due (``due``)."""

    def writer(self, kind: type[Event]) -> str | None:
        """The role that writes events of ``kind`` (derived or answering a command), if one does."""

    def command_role(self, command: Any) -> str:
        """The role that answers ``command``."""

    def command_type_role(self, kind: type[msgspec.Struct]) -> str:
        """The role that answers commands of type ``kind`` (for routing before decoding)."""

    def refreshes_views(self, event: Event, state: Any = None) -> bool:
        """Whether every seat gets its whole view after ``event`` (``state``: the table after
        it): when cards change hands or are laid open (a deal, an ouvert hand, a result, the
        close); in between, the public feed and the turn prompts suffice."""

    def turn_role(self, state: Any) -> str | None:
        """The role whose deadline runs for the seat to move, or None."""

    def decode_command(self, data: bytes) -> tuple[Any, str]:
        """(command, ``"json"``/``"msgpack"``); raises ``msgspec`` errors on bad input."""

    def decide(self, state: Any, seat: int, command: Any) -> list[Event] | Any:
        """The events ``seat`` doing ``command`` adds, or a ``protocol.decide.Rejection``."""

    def timeout(self, state: Any) -> list[Event]:
        """The seat to move missed its deadline: ``timed_out``, a withdrawal if due, and the
        default action (always legal), or only what is still missing of them."""

    def default_action(self, state: Any, seat: int) -> Any:
        """The action a time-out plays for ``seat`` (legal whenever it is ``seat``'s turn)."""

    def view(self, state: Any, seat: int) -> msgspec.Struct:
        """What ``seat`` sees (``-1``: a spectator)."""

    def redact(self, event: Event, seat: int, state: Any = None) -> Event:
        """``event`` as ``seat`` may see it; ``-1`` sees only what is public. ``state``, the
        table as it stands, where what a seat has seen so far matters (Thirty-one's
        ``throw_down``: a seat's own cards are hidden from it until it looked): whoever shows a
        seat its events must pass it."""

    def action_text(self, command: Any) -> str:
        """The text form of a command (records, logs, people)."""

    def parse_action(self, text: str) -> Any:
        """A command from its text form; raises ``ValueError``."""

    def standings(self, state: Any) -> list[int]:
        """The table's places so far (1 = first; equal places share, competition ranking)."""
