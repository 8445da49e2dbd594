"""Random tables of any registered game, driven through ``protocol.game.Game`` only.

``Table(game, seed)`` opens a table with one of the game's standard test rules
(``STANDARD_RULES``) and plays it to its end with ``Table.play``: it appends what ``game.due``
owes, else a random listed action of the seat to move (or its default action, or a time-out,
sometimes recorded one event at a time), and now and then an operator's pause, resume or close,
as the services would. Hooks see every event as it is folded (``on_event``) and every turn
before it is played (``on_turn``); that is where the contract's checks run.

Everything game-specific the suite needs is in tables here, by registered name:
``STANDARD_RULES`` (the options the suite plays), ``NOT_IN_THE_INTERFACE`` (facts the interface
does not give: each one is a member ``protocol.game.Game`` should have) and ``KNOWN_GAPS`` (strict
checks a game does not meet yet, expected to fail there). What each seat may know is the suite's
own oracle, in ``knowledge.py``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Final

import msgspec
import pytest

from protocol import registry
from protocol.events import (
    Event,
    PlayerTimedOut,
    SeatWithdrawn,
    TableClosed,
    TableOpenedV2,
    TablePaused,
    TableResumed,
)
from protocol.game import Game, GameState
from protocol.rejection import Rejection

# --- per-game tables ---------------------------------------------------------------------


@dataclass(frozen=True)
class Standard:
    """A game's standard test rules: option sets by name (each must end a table by itself, so
    that every random table closes; ``Game.rules_type(**options)`` builds them) and the seat
    counts to draw from, within ``Game.players``."""

    options: tuple[dict[str, Any], ...] = ({},)
    seats: tuple[int, int] = (0, 99)


STANDARD_RULES: Final[dict[str, Standard]] = {
    "skat": Standard(
        options=(
            {"rounds": 1},
            {"rounds": 1, "kontra": True},
            {"rounds": 1, "ramsch": True, "profile": "classic"},
            {"rounds": 1, "players": 4, "kontra": True, "bock": True},
            {"rounds": 1, "seeger_fabian": True, "kontra": True, "max_timeouts": 1},
            {"rounds": 1, "players": 4, "ramsch": True, "max_timeouts": 2},
        )
    ),
    "thirty-one": Standard(
        options=(
            {"coins": 1, "max_turns": 60},
            {"coins": 2, "throw_down": True, "max_turns": 60},
            {
                "coins": 3,
                "county": False,
                "three_of_a_kind": "30.5",
                "straight_flush": True,
                "max_turns": 40,
                "max_deals": 8,
            },
            {
                "coins": 2,
                "min_knock": 21,
                "knock_in_first_round": False,
                "stock_out": "void",
                "max_deals": 3,
                "max_timeouts": 1,
            },
            {"coins": 3, "throw_down": True, "max_turns": 12, "max_deals": 4, "max_timeouts": 2},
            {"coins": 1, "three_of_a_kind": "30", "max_deals": 1},
        ),
        seats=(2, 6),
    ),
    "rummy": Standard(
        options=(
            {"variant": "a", "max_deals": 2, "target": 100},
            {"variant": "a", "layoff_credit": "owner", "ace_joins_low": False, "max_deals": 1, "max_timeouts": 1},
            {"variant": "b", "max_deals": 1},
            {"variant": "b", "packs": 2, "layoff_credit": "layer", "max_deals": 1, "max_timeouts": 2},
            {"variant": "c", "joker_doubling": "net", "max_deals": 2, "target": 60},
            {"variant": "c", "ace_joins_low": False, "max_deals": 1},
            {"variant": "d", "max_deals": 2, "target": 60, "max_timeouts": 1},
        ),
        seats=(2, 6),
    ),
}
"""Per game: the rules the suite plays. A game not listed plays ``rules_type()`` (which may
never end a table by itself: then add the game here)."""


def _pack(suits: str, ranks: str) -> frozenset[str]:
    return frozenset(s + r for s in suits for r in ranks)


@dataclass(frozen=True)
class Facts:
    """What the suite must know of a game that ``protocol.game.Game`` does not say."""

    cards: frozenset[str]
    """The codes of the game's cards (to find cards in a view's JSON). Proposed:
    ``Game.cards: ClassVar[tuple[str, ...]]``."""


NOT_IN_THE_INTERFACE: Final[dict[str, Facts]] = {
    "skat": Facts(cards=_pack("CSHD", "789TJQKA")),
    "thirty-one": Facts(cards=_pack("CSHD", "23456789TJQKA")),
    "rummy": Facts(
        cards=_pack("CSHD", "23456789TJQKA")
        | frozenset(c + "'" for c in _pack("CSHD", "23456789TJQKA"))
        | frozenset(("X1", "X2", "X3", "X4"))
    ),
}
"""Per game, the facts the interface lacks (each a proposed ``Game`` member, see ``Facts``)."""

KNOWN_GAPS: Final[dict[tuple[str, str], str]] = {}
"""(game, check) pairs of the strict checks a game does not meet yet, and why: those tests are
expected to fail there (``xfail(strict=True)``, so a fix shows as an unexpected pass and this
entry is to be removed)."""


def with_gaps(check: str) -> list[Any]:
    """The registered games as test parameters, those with a known gap in ``check`` xfailed."""
    out: list[Any] = []
    for name in registry.names():
        why = KNOWN_GAPS.get((name, check))
        out.append(
            pytest.param(name, marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=why)) if why else name
        )
    return out


LIFECYCLE: Final[tuple[type[Event], ...]] = (
    TableOpenedV2, PlayerTimedOut, SeatWithdrawn, TablePaused, TableResumed, TableClosed,
)  # fmt: skip
"""The table lifecycle's events (``protocol.lifecycle``), which every game's log may hold.
The interface does not list them (proposed: ``protocol.lifecycle.EVENT_TYPES``); Skat's own
opening, ``table_opened/1``, is one of Skat's events."""


def facts(game: Game) -> Facts:
    found = NOT_IN_THE_INTERFACE.get(game.name)
    assert found is not None, f"add {game.name!r} to NOT_IN_THE_INTERFACE in tests/games/engine.py"
    return found


def tag(kind: type[Event] | type[msgspec.Struct]) -> str:
    return str(kind.__struct_config__.tag)


def tag_name(kind: type[Event]) -> str:
    """The kind of an event as triggers and log subjects name it: its tag without the version."""
    return tag(kind).partition("/")[0]


# --- reading what a seat is shown ----------------------------------------------------------


def strings(data: bytes) -> set[str]:
    """Every string in a JSON document, keys included (decoded, not matched: a pattern over
    the text can fall out of step with its quotes)."""
    found: set[str] = set()
    todo: list[Any] = [msgspec.json.decode(data)]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, list):
            todo.extend(item)
        elif isinstance(item, dict):
            todo.extend(item)
            todo.extend(item.values())
    return found


def cards_in(data: bytes, cards: frozenset[str]) -> set[str]:
    """The card codes that appear as strings in the JSON ``data``."""
    return strings(data) & cards


def secrets(log: Iterable[Event]) -> set[str]:
    """The seeds in a log (the table's and each deal's): they give every card, so no view and
    no redacted event may hold one."""
    return {seed for e in log if isinstance(seed := getattr(e, "seed", ""), str) and seed}


def snapshot(game: Game, state: GameState) -> bytes:
    """Everything the interface shows of ``state``, encoded: equal snapshots, equal tables as
    far as any service or seat can tell."""
    n = state.n
    return msgspec.json.encode(
        [
            state.events, state.opened, state.closed, state.paused, state.defaulting, state.to_move,
            game.due(state) if state.opened else None, [game.view(state, s) for s in range(-1, n)],
            [list(state.legal_actions(s)) for s in range(n)], [state.withdrawn(s) for s in range(n)],
            game.standings(state), [state.turn_seconds(s) for s in range(n)], game.turn_role(state),
        ]
    )  # fmt: skip


def barred(state: GameState, seat: int) -> bool:
    """``seat`` may not act itself: its time-out is being recorded, or it was withdrawn."""
    return state.defaulting == seat or state.withdrawn(seat)


@cache
def sample_commands(name: str) -> tuple[Any, ...]:
    """Commands of game ``name`` as its seats were offered them in one short table (to send
    them to the other games' tables, where they must be refused)."""
    table = Table(registry.get(name), 1)
    seen: dict[bytes, Any] = {}

    def collect(t: Table) -> None:
        for seat in range(t.state.n):
            for action in t.state.legal_actions(seat):
                seen.setdefault(msgspec.json.encode(action), action)

    table.play(on_turn=collect)
    return tuple(seen.values())


# --- the driver ----------------------------------------------------------------------------

EventHook = Callable[["Table", Event, "str | None"], None]
TurnHook = Callable[["Table"], None]


@dataclass
class Style:
    """How a random table is played (drawn once per table, so tables differ in kind too)."""

    p_default: float
    p_timeout: float
    p_partial: float
    """A time-out's events recorded one at a time (as when their writer dies halfway)."""
    p_other: float
    """A seat not to move does one of its listed actions (Thirty-one's ``look``)."""
    p_pause: float
    p_close: float

    @staticmethod
    def draw(rng: random.Random) -> Style:
        return Style(
            p_default=rng.choice([0.0, 0.5, 0.9]),
            p_timeout=rng.choice([0.0, 0.03, 0.15]),
            p_partial=rng.choice([0.0, 0.5]),
            p_other=rng.choice([0.0, 0.1]),
            p_pause=rng.choice([0.0, 0.0, 0.02]),
            p_close=rng.choice([0.0] * 7 + [0.01]),
        )


@dataclass
class Table:
    """One random table of ``game``: ``log`` and ``state`` grow together as it is played."""

    game: Game
    seed: int
    rng: random.Random = field(init=False)
    rules: Any = field(init=False)
    n: int = field(init=False)
    style: Style = field(init=False)
    log: list[Event] = field(default_factory=list, init=False)
    state: GameState = field(init=False)
    due_kinds: set[type[Event]] = field(default_factory=set, init=False)
    """The kinds of derived event ``due`` gave."""
    on_event: list[EventHook] = field(default_factory=list, init=False)
    owed_rest: list[Event] | None = field(default=None, init=False)
    """The rest of a time-out recorded one event at a time: what ``timeout`` must give next."""

    def __post_init__(self) -> None:
        game = self.game
        self.rng = rng = random.Random(self.seed)
        standard = STANDARD_RULES.get(game.name, Standard())
        self.rules = game.rules_type(**rng.choice(standard.options))
        low, high = game.players(self.rules)
        low, high = max(low, standard.seats[0]), min(high, standard.seats[1])
        self.n = rng.randint(low, high)
        self.style = Style.draw(rng)
        self.state = game.new_state()
        assert not self.state.opened and not self.state.closed

    def open(self) -> Event:
        """The table's first event (``Game.open_event``): a seed that shows nowhere else."""
        return self.game.open_event(
            f"contract-{self.seed % 1000}",
            [f"player{i}" for i in range(self.n)],
            self.rules,
            f"secret seed {self.seed} of the contract",
            {"player0": "json"},
        )

    def add(self, events: list[Event], writer: str | None) -> None:
        """Fold and log ``events``, written by role ``writer`` (None: no service, as a test)."""
        for event in events:
            self.state.apply(event)
            self.log.append(event)
            for hook in self.on_event:
                hook(self, event, writer)

    def play(self, on_turn: TurnHook | None = None, limit: int = 20_000) -> None:
        """Play until the table is closed. ``on_turn(table)`` runs whenever a seat is to move."""
        self.add([self.open()], "dealer")
        for _ in range(limit):
            if self.state.closed:
                return
            self.step(on_turn)
        raise AssertionError(f"{self.game.name}: the table did not close within {limit} steps")

    def step(self, on_turn: TurnHook | None) -> None:
        game, state, rng, style = self.game, self.state, self.rng, self.style
        owed = game.due(state)
        if owed is not None:
            assert state.to_move is None, "a seat is to move while a derived event is due"
            assert state.defaulting < 0, "a derived event is due between a time-out and its default action"
            self.due_kinds.add(type(owed))
            self.add([owed], game.owner(owed))
            return
        if state.paused:
            assert state.to_move is None, "a seat is to move at a paused table"
            self.add([TableResumed()], "dealer")
            return
        seat = state.to_move
        assert seat is not None, "the table waits for nobody: no derived event, no seat, not paused"
        if on_turn is not None:
            on_turn(self)
        role = game.turn_role(state)
        if state.defaulting >= 0:  # a time-out recorded in part: whoever enforces the turn ends it
            assert state.defaulting == seat, "the seat to move is not the one whose time-out is recorded"
            rest = game.timeout(state)
            if self.owed_rest is not None:
                assert rest == self.owed_rest, "timeout() does not give what is still missing of a time-out"
            self.time_out(rest, role)
            return
        if state.withdrawn(seat) or rng.random() < style.p_timeout:
            self.time_out(game.timeout(state), role)
            return
        r = rng.random()
        if r < style.p_pause:
            self.add([TablePaused(reason="the contract pauses")], "dealer")
            return
        if r < style.p_pause + style.p_close:
            self.add([TableClosed(reason="the contract closes it")], "dealer")
            return
        if rng.random() < style.p_other:
            others = [s for s in range(state.n) if s != seat and not barred(state, s) and state.legal_actions(s)]
            if others:
                seat = rng.choice(others)
        legal = list(state.legal_actions(seat))
        assert legal, f"seat {seat} is to move and has no legal action"
        if seat == state.to_move and rng.random() < style.p_default:
            action = game.default_action(state, seat)
        else:
            action = rng.choice(legal)
        events = game.decide(state, seat, action)
        assert isinstance(events, list) and events, f"seat {seat}'s legal {action!r} was refused: {events}"
        self.add(events, game.command_role(action))

    def time_out(self, events: list[Event], role: str | None) -> None:
        assert events, "timeout() gave nothing for a seat to move"
        cut = 1 if len(events) > 1 and self.rng.random() < self.style.p_partial else len(events)
        self.owed_rest = events[cut:] or None
        self.add(events[:cut], role)

    # --- what the checks send -------------------------------------------------------------

    def seats(self) -> range:
        """Every seat and the spectator (-1)."""
        return range(-1, self.state.n)

    def refused(self, seat: int, command: Any) -> bool:
        """Whether ``decide`` refuses ``command`` from ``seat`` (it must answer with events or a
        ``Rejection``, nothing else)."""
        answer = self.game.decide(self.state, seat, command)
        assert isinstance(answer, list | Rejection), f"decide answered {answer!r}"
        if isinstance(answer, Rejection):
            assert answer.reason.strip(), "a rejection without a reason"
            return True
        return False
