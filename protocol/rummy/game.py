"""The Russian rummy as a ``protocol.game.Game``: everything the services and tools need to host it.

The rules are the engine's (``protocol.rummy``: cards, rules, melds, actions, state, scoring);
around it are this game's events, commands, the table's fold (``table``), ``decide`` and the
views; this class gathers them behind the interface every game implements, and says which role
writes what: the dealer deals and closes, play records the seats' actions, the compulsory draws
and the deal's end, scoring scores each deal and ends the game (M26).
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

import msgspec

from ..events import Event, TableClosed, TableOpenedV2, TablePaused, TableResumed
from .commands import COMMAND_TYPES, Command, decode_command, parse_action
from .decide import decide, default_action, timeout
from .events import (
    EVENT_TYPES,
    SEAT_ACTIONS,
    RummyDealEnded,
    RummyDealScored,
    RummyDealt,
    RummyDrew,
    RummyGameOver,
)
from .rules import PLAYERS
from .table import GAME as NAME
from .table import RummyState, RummyTableRules, due, seated
from .views import RummyUpdate, redact, view

OWNER: Final[dict[type[Event], str]] = {
    RummyDealt: "dealer",
    TableClosed: "dealer",
    RummyDrew: "play",
    RummyDealEnded: "play",
    RummyDealScored: "scoring",
    RummyGameOver: "scoring",
}
"""Which role writes each derived event when it is due."""

WRITER: Final[dict[type[Event], str]] = {
    **OWNER,
    TableOpenedV2: "dealer",
    TablePaused: "dealer",
    TableResumed: "dealer",
    **dict.fromkeys(SEAT_ACTIONS, "play"),
}
"""Which role writes each kind of event (a time-out and a withdrawal: whoever's turn timed out)."""

_REFRESHING: Final = (RummyDealt, RummyDealEnded, RummyDealScored, RummyGameOver, TableClosed)
"""After these every seat gets its whole view: new hands, hands laid open, totals, the end.
Between them every card that moves is public, but a draw, which only its taker (then the seat
to move, whose prompt carries its view) sees."""


class Rummy:
    """The Russian rummy "Скат", variants a to d (``rules.variant``): rules M1-M49."""

    name: ClassVar[str] = NAME
    title: ClassVar[str] = "Russian rummy"
    rules_type: ClassVar[type[msgspec.Struct]] = RummyTableRules
    event_types: ClassVar[tuple[type[Event], ...]] = EVENT_TYPES
    command_types: ClassVar[tuple[type[msgspec.Struct], ...]] = COMMAND_TYPES
    update_type: ClassVar[type[msgspec.Struct]] = RummyUpdate
    seats: ClassVar[tuple[int, int]] = (2, 6)

    triggers: ClassVar[dict[str, tuple[str, ...]]] = {
        "dealer": ("rummy_deal_scored", "rummy_game_over"),  # the next deal; the close
        "play": ("rummy_dealt",),  # the first draw
        "scoring": ("rummy_deal_ended",),
    }
    """What each role acts on that another role wrote (the seats' actions are play's own)."""

    def players(self, rules: Any) -> tuple[int, int]:
        """The variant's seats (M46: the table's seats decide ``players``, ``open_event``)."""
        return PLAYERS[rules.variant]

    def new_state(self) -> RummyState:
        return RummyState()

    def open_event(
        self, table: str, players: list[str], rules: Any, seed: str, formats: dict[str, str], feed: str = "public"
    ) -> Event:
        """``table_opened/2`` with ``rules`` for ``len(players)`` seats, every default that
        depends on the seats written out; raises ``ValueError`` for a count the variant does not
        seat."""
        return TableOpenedV2(
            table=table,
            game=NAME,
            players=list(players),
            rules=msgspec.to_builtins(seated(rules, len(players))),
            seed=seed,
            formats=dict(formats),  # type: ignore[arg-type]
            feed=feed,  # type: ignore[arg-type]
        )

    def due(self, state: Any) -> Event | None:
        return due(state)

    def owner(self, event: Event) -> str | None:
        return OWNER.get(type(event))

    def writer(self, kind: type[Event]) -> str | None:
        return WRITER.get(kind)

    def command_role(self, command: Any) -> str:
        return "play"

    def command_type_role(self, kind: type[msgspec.Struct]) -> str:
        return "play"

    def refreshes_views(self, event: Event, state: Any = None) -> bool:
        return isinstance(event, _REFRESHING)

    def turn_role(self, state: Any) -> str | None:
        return "play" if state.to_move is not None else None

    def decode_command(self, data: bytes) -> tuple[Any, str]:
        return decode_command(data)

    def decide(self, state: Any, seat: int, command: Any) -> list[Event] | Any:
        return decide(state, seat, command)

    def timeout(self, state: Any) -> list[Event]:
        return timeout(state) or []

    def default_action(self, state: Any, seat: int) -> Any:
        return default_action(state, seat)

    def view(self, state: Any, seat: int) -> msgspec.Struct:
        return view(state, seat)

    def redact(self, event: Event, seat: int, state: Any = None) -> Event:
        return redact(event, seat)

    def action_text(self, command: Any) -> str:
        if not isinstance(command, Command):
            raise TypeError(f"not a command of the rummy: {command!r}")
        return str(command)

    def parse_action(self, text: str) -> Any:
        return parse_action(text)

    def standings(self, state: Any) -> list[int]:
        places: list[int] = state.places()
        return places


GAME: Final = Rummy()
