"""Skat behind the game interface (``protocol.game``): the adapter the registry holds.

Skat's modules (``cards``, ``rules``, ``deal``, ``table``, ``decide``, ``views``, ...) stay
where every existing reader imports them from; this module only answers the interface's
questions with them, so every Skat behaviour, wire value and log is exactly what it was.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

import msgspec

from .. import wire
from ..events import EVENT_TYPES, DealDealt, DealScored, Event, GameDeclared, Passed, ReSaid, TableClosed, TableOpened
from ..rejection import Rejection
from .commands import AnyCommand, Command, PlayCard, Resign, ShowCards, parse_action
from .deal import PLAYING
from .decide import decide, default_action, timeout
from .rules import Rules
from .table import OWNER, WRITER, TableState, due
from .views import redact, view

_PLAY_COMMANDS: Final = (PlayCard, ShowCards, Resign)


class Skat:
    """The German card game (ISkO rules, ISS records): three at a table, or four with the
    dealer sitting out."""

    name: ClassVar[str] = "skat"
    title: ClassVar[str] = "Skat"
    rules_type: ClassVar[type[msgspec.Struct]] = Rules
    event_types: ClassVar[tuple[type[Event], ...]] = EVENT_TYPES
    command_types: ClassVar[tuple[type[msgspec.Struct], ...]] = AnyCommand.__args__
    update_type: ClassVar[type[msgspec.Struct]] = wire.Update
    seats: ClassVar[tuple[int, int]] = (3, 4)

    triggers: ClassVar[dict[str, tuple[str, ...]]] = {
        "dealer": ("deal_scored",),
        "bidding": ("deal_scored", "deal_dealt"),
        "play": ("game_declared", "pass", "re", "all_passed"),
        "scoring": ("deal_ended",),
    }

    def players(self, rules: Any) -> tuple[int, int]:
        return rules.players, rules.players

    def new_state(self) -> TableState:
        return TableState()

    def open_event(
        self, table: str, players: list[str], rules: Any, seed: str, formats: dict[str, str], feed: str = "public"
    ) -> Event:
        return TableOpened(table=table, players=players, rules=rules, seed=seed, formats=formats, feed=feed)  # type: ignore[arg-type]

    def due(self, state: Any) -> Event | None:
        return due(state)

    def owner(self, event: Event) -> str | None:
        return OWNER.get(type(event))

    def writer(self, kind: type[Event]) -> str | None:
        return WRITER.get(kind)

    def command_role(self, command: Any) -> str:
        return "play" if isinstance(command, _PLAY_COMMANDS) else "bidding"

    def command_type_role(self, kind: type[msgspec.Struct]) -> str:
        return "play" if issubclass(kind, _PLAY_COMMANDS) else "bidding"

    def refreshes_views(self, event: Event, state: Any = None) -> bool:
        if isinstance(event, (DealDealt, DealScored, TableClosed)):
            return True
        # An ouvert declarer's hand is laid open when the play begins (after the declaration, or
        # after the doubling round's last word): every seat and spectator must see it then.
        deal = getattr(state, "deal", None)
        return (
            isinstance(event, (GameDeclared, Passed, ReSaid))
            and deal is not None
            and deal.phase == PLAYING
            and deal.declaration is not None
            and deal.declaration.ouvert
            and not deal.tricks
            and not deal.trick
        )

    def turn_role(self, state: Any) -> str | None:
        deal = state.deal
        if state.to_move is None or deal is None:
            return None
        return "play" if deal.phase == PLAYING else "bidding"

    def decode_command(self, data: bytes) -> tuple[Any, str]:
        return wire.decode_command(data)

    def decide(self, state: Any, seat: int, command: Any) -> list[Event] | Rejection:
        return decide(state, seat, command)

    def timeout(self, state: Any) -> list[Event]:
        return timeout(state) or []

    def default_action(self, state: Any, seat: int) -> Command:
        return default_action(state.deal)

    def view(self, state: Any, seat: int) -> msgspec.Struct:
        return view(state, seat)

    def redact(self, event: Event, seat: int, state: Any = None) -> Event:
        return redact(event, seat)

    def action_text(self, command: Any) -> str:
        return str(command)

    def parse_action(self, text: str) -> Command:
        return parse_action(text)

    def standings(self, state: Any) -> list[int]:
        return competition_places(state.score)


def competition_places(scores: list[int]) -> list[int]:
    """Places from scores (higher is better), equal scores sharing: 1, 2, 2, 4."""
    return [1 + sum(other > mine for other in scores) for mine in scores]


GAME: Final = Skat()
