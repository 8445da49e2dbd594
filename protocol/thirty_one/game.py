"""Thirty-one as a ``protocol.game.Game``: everything the services and tools need to host it.

The game's pieces live in this package (rules, events, commands, the deal, the table's fold,
decide, views); this class only gathers them behind the interface every game implements, and
says which role writes what: the dealer deals and closes, play records the seats' actions and
the deal's own derived events (restocks, the end), scoring scores each deal.
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
    T31DealEnded,
    T31DealScored,
    T31Dealt,
    T31Looked,
    T31Restocked,
)
from .rules import ThirtyOneRules
from .state import GAME as NAME
from .state import ThirtyOneState, due
from .views import ThirtyOneUpdate, redact, view

OWNER: Final[dict[type[Event], str]] = {
    T31Dealt: "dealer",
    TableClosed: "dealer",
    T31Restocked: "play",
    T31DealEnded: "play",
    T31DealScored: "scoring",
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

_REFRESHING: Final = (T31Dealt, T31Looked, T31DealEnded, T31DealScored, TableClosed)
"""After these every seat gets its whole view: new hands, a hand looked at out of turn
(``throw_down``), shown hands and coins, the end."""


class ThirtyOne:
    """The game of Thirty-one (Scat, Blitz): rules in docs/thirty-one.md, T1-T45."""

    name: ClassVar[str] = NAME
    title: ClassVar[str] = "Thirty-one"
    rules_type: ClassVar[type[msgspec.Struct]] = ThirtyOneRules
    event_types: ClassVar[tuple[type[Event], ...]] = EVENT_TYPES
    command_types: ClassVar[tuple[type[msgspec.Struct], ...]] = COMMAND_TYPES
    update_type: ClassVar[type[msgspec.Struct]] = ThirtyOneUpdate
    seats: ClassVar[tuple[int, int]] = (2, 9)

    triggers: ClassVar[dict[str, tuple[str, ...]]] = {
        "dealer": ("t31_deal_scored",),  # deal the next deal, or close the table
        "play": ("t31_dealt",),  # the first turn's deadline; a dealt 31 ends the deal at once
        "scoring": ("t31_deal_ended",),
    }
    """What each role acts on that another role wrote (the seats' actions are play's own)."""

    def players(self, rules: Any) -> tuple[int, int]:
        return self.seats

    def new_state(self) -> ThirtyOneState:
        return ThirtyOneState()

    def open_event(
        self, table: str, players: list[str], rules: Any, seed: str, formats: dict[str, str], feed: str = "public"
    ) -> Event:
        return TableOpenedV2(
            table=table,
            game=NAME,
            players=list(players),
            rules=msgspec.to_builtins(rules),
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
        deal = getattr(state, "deal", None)
        blind = bool(seat >= 0 and deal is not None and state.rules.throw_down and not deal.sees_hand(seat))
        return redact(event, seat, blind=blind)

    def action_text(self, command: Any) -> str:
        if not isinstance(command, Command):
            raise TypeError(f"not a command of Thirty-one: {command!r}")
        return str(command)

    def parse_action(self, text: str) -> Any:
        return parse_action(text)

    def standings(self, state: Any) -> list[int]:
        places: list[int] = state.places()
        return places


GAME: Final = ThirtyOne()
