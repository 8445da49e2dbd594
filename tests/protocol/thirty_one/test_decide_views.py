"""Tests of ``decide`` (its refusals in order), ``default_action``, ``timeout``, the views and
their redaction, and the ``Game`` interface of Thirty-one."""

from __future__ import annotations

import msgspec
import pytest

from protocol.events import PlayerTimedOut, SeatWithdrawn, TableClosed, TablePaused, TableResumed
from protocol.thirty_one import (
    GAME,
    Discard,
    Knock,
    Look,
    T31DealEnded,
    T31DealScored,
    T31Dealt,
    T31Discarded,
    T31Knocked,
    T31Restocked,
    T31Took,
    Take,
    ThirtyOneRules,
    ThirtyOneView,
    Throw,
    decide,
    decode_command,
    default_action,
    due,
    fold,
    parse_action,
    redact,
    timeout,
    view,
)
from protocol.thirty_one.events import JSON, MSGPACK, AnyEvent

from .helpers import Table

HANDS = {"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"], "C": ["H2", "H3", "H5"]}


def dealt(**options: object) -> Table:
    t = Table(3, **options)  # type: ignore[arg-type]
    t.deal(HANDS, pile="D6", stock=["HA", "SK"])
    return t


def test_refusals_in_order() -> None:
    t = Table(3)
    assert t.refuse("A", "take stock").code == "no_deal"  # opened, nothing dealt yet
    t.deal(HANDS, pile="D6")
    assert t.refuse(3, "take stock").code == "not_seated"
    assert t.refuse("B", "take stock").code == "out_of_turn"
    assert "seat 0 (A)" in t.refuse("B", "take stock").reason
    assert t.refuse("A", "discard C2").code == "illegal"
    stamped = decide(t.state, 0, Take(source="stock", at=t.state.events - 1))
    assert getattr(stamped, "code", "") == "stale"
    assert isinstance(decide(t.state, 0, Take(source="stock", at=t.state.events)), list)
    t.add(TablePaused(reason="lunch"))
    assert t.refuse("A", "take stock").code == "paused"
    assert t.state.to_move is None and t.state.legal_actions(0) == [] and due(t.state) is None
    t.add(TableResumed())
    t.add(TableClosed(reason="aborted"))
    assert t.refuse("A", "take stock").code == "table_closed"


def test_an_eliminated_seat_is_not_dealt_in() -> None:
    t = Table(3, coins=1, county=False)
    t.deal({"A": ["C2", "C3", "D4"], "B": ["S2", "S3", "D5"], "C": ["HA", "HK", "HQ"]}, pile="C5")
    assert t.state.active == [2]  # A and B out at once: C wins
    t2 = Table(4, coins=1, county=False)
    t2.deal(
        {"A": ["C2", "C3", "D4"], "B": ["HA", "HK", "HQ"], "C": ["S2", "S3", "D5"], "D": ["SA", "SK", "ST"]}, pile="C5"
    )
    assert t2.state.active == [1, 3]
    t2.deal({"B": ["C2", "C3", "D4"], "D": ["S2", "S3", "D5"]}, pile="C5")
    assert t2.refuse("A", "look").code == "not_seated"
    assert t2.view("A").hand == [] and t2.state.legal_actions(0) == []


def test_busy_while_derived_events_are_due() -> None:
    t = Table(3)
    owed = due(t.state)
    assert isinstance(owed, T31Dealt)
    from .helpers import build_deck

    t.add(
        T31Dealt(
            deal=1,
            dealer=2,
            order=[0, 1, 2],
            deck=build_deck([0, 1, 2], {0: ["HA", "HK", "HQ"], 1: ["C2", "C3", "C4"], 2: ["S2", "S3", "S4"]}, "D2"),
            seed="",
        )
    )
    assert t.refuse("A", "take stock").code == "busy"
    assert t.refuse("B", "take stock").code == "busy"


def test_default_action() -> None:
    """Take the stock (the pile when only that is allowed); discard the card whose loss leaves
    the highest hand value, never the card just taken from the pile, ties the first in hand
    order; never knock, look or throw."""
    t = dealt(throw_down=True)
    assert default_action(t.state, 0) == Take(source="stock")
    with pytest.raises(ValueError):
        default_action(t.state, 1)
    t.act("A", "take stock")  # HA: C2 C3 C5 HA
    assert default_action(t.state, 0) == Discard(card="C2")  # C3 C5 HA = 11 ... every loss but HA's
    t.act("A", "discard C2")
    t.act("B", "take discard")  # C2 from the pile: S9 S8 D4 C2; C2 may not go
    assert default_action(t.state, 1) == Discard(card="D4")  # S9 S8 = 17 beats keeping D4 or C2 (T14)
    t3 = dealt()
    t3.churn("A")
    t3.act("B", "take discard")  # HA: S9 S8 D4 HA -> losing D4 keeps 17, losing S9 / S8 leaves 11
    assert default_action(t3.state, 1) == Discard(card="D4")


def test_default_action_ties_take_the_first_card_in_hand_order() -> None:
    t = Table(2)
    t.deal({"A": ["C2", "S2", "H2"], "B": ["S9", "S8", "D4"]}, pile="D6", stock=["D3"])
    t.act("A", "take stock")  # C2 S2 H2 D3: losing C2, S2 or H2 leaves 3; losing D3 leaves 2
    assert default_action(t.state, 0) == Discard(card="C2")


def test_timeout_like_skat() -> None:
    """The time-out, the withdrawal when it makes max_timeouts, the default action; only what is
    missing when the time-out is already in the log."""
    t = dealt(max_timeouts=2)
    first = timeout(t.state)
    assert first == [PlayerTimedOut(seat=0), T31Took(seat=0, source="stock", card="HA")]
    t.add(first[0])
    assert timeout(t.state) == first[1:]
    assert t.refuse("A", "discard C2").code == "stale"
    assert t.refuse("B", "look").code in ("busy", "illegal")
    t.add(first[1])
    assert t.state.missed[0] == 1
    second = timeout(t.state)
    assert second == [PlayerTimedOut(seat=0), SeatWithdrawn(seat=0, missed=2), T31Discarded(seat=0, card="C2")]
    t.add(*second)
    t.settle()
    assert t.state.withdrawn(0) and t.state.turn_seconds(0) == 0.0
    assert t.refuse("A", "look").code == "withdrawn"
    assert GAME.timeout(fold(t.log[:1])) == []


def test_redact() -> None:
    t = dealt()
    opened, dealt_event = t.log[0], t.log[1]
    assert redact(opened, 0).seed == ""  # type: ignore[attr-defined]
    assert isinstance(dealt_event, T31Dealt)
    mine = redact(dealt_event, 1)
    assert isinstance(mine, T31Dealt)
    assert [c for c in mine.deck if c] == ["S9", "S8", "D4", "D6"]  # B's three cards and the pile's first
    assert mine.seed == "" and len(mine.deck) == 52
    public = redact(dealt_event, -1)
    assert [c for c in public.deck if c] == ["D6"]  # type: ignore[attr-defined]
    assert [c for c in redact(dealt_event, 1, blind=True).deck if c] == ["D6"]  # type: ignore[attr-defined]
    took = T31Took(seat=0, source="stock", card="HA")
    assert redact(took, 0) == took and redact(took, 1).card == "" and redact(took, -1).card == ""  # type: ignore[attr-defined]
    from_pile = T31Took(seat=0, source="discard", card="D6")
    assert redact(from_pile, 2) == from_pile
    restock = T31Restocked(stock=["C2", "C3"])
    assert redact(restock, 0) == T31Restocked(stock=["", ""])


def test_view() -> None:
    t = dealt()
    t.act("A", "take stock")
    v = t.view("A")
    assert v.game == "thirty-one" and v.phase == "discard" and v.to_move == 0 and v.dealer == 2
    assert v.hand == ["C2", "C3", "C5", "HA"] and v.hand_value == 11
    assert v.pile == ["D6"] and v.stock == 41 and v.coins == [3, 3, 3] and v.kitty == 0
    assert [str(a) for a in v.legal] == ["discard C2", "discard C3", "discard C5", "discard HA"]
    other = t.view("B")
    assert other.hand == ["S9", "S8", "D4"] and other.legal == [] and "HA" not in msgspec.json.encode(other).decode()
    spectator = t.view()
    assert spectator.hand == [] and spectator.seat == -1
    t.act("A", "discard C2")
    t.act("B", "knock")
    v = t.view("C")
    assert v.knocker == 1 and v.last_turns == [2, 0] and v.phase == "take"
    t.churn("C", "A")
    v = t.view("C")
    assert v.phase == "between_deals" and v.lives == [0, 0, 1] and v.shown[1] == ["S9", "S8", "D4"]
    assert msgspec.json.decode(msgspec.json.encode(v), type=ThirtyOneView) == v
    assert msgspec.msgpack.decode(msgspec.msgpack.encode(v), type=ThirtyOneView) == v


def test_codecs_and_texts() -> None:
    t = dealt()
    t.churn("A")
    t.act("B", "knock")
    t.churn("C", "A")
    for event in t.log:
        for codec in (JSON, MSGPACK):
            assert codec.decode(codec.encode(event)) == event
        assert msgspec.json.decode(msgspec.json.encode(event), type=AnyEvent) == event
    for command in (Take(source="stock"), Take(source="discard"), Discard(card="S7"), Knock(), Look(), Throw()):
        text = GAME.action_text(command)
        assert parse_action(text) == command == GAME.parse_action(text.upper())
        assert decode_command(msgspec.json.encode(command)) == (command, "json")
        assert decode_command(msgspec.msgpack.encode(command)) == (command, "msgpack")
    assert [str(Take(source="stock")), str(Discard(card="S7"))] == ["take stock", "discard S7"]
    assert parse_action("  Take   STOCK ") == Take(source="stock")
    for bad in ("", "take", "take pile", "discard", "discard S1", "knock now", "play S7"):
        with pytest.raises(ValueError):
            parse_action(bad)
    with pytest.raises(msgspec.ValidationError):
        decode_command(b'{"type": "discard", "card": "S1"}')


def test_game_interface() -> None:
    t = dealt()
    assert GAME.name == "thirty-one" and GAME.seats == (2, 9) and GAME.players(ThirtyOneRules()) == (2, 9)
    assert GAME.rules_type is ThirtyOneRules and T31Dealt in GAME.event_types
    assert GAME.owner(T31Dealt(deal=1, dealer=0, order=[1, 0], deck=[])) == "dealer"
    assert GAME.owner(TableClosed(reason="x")) == "dealer"
    assert GAME.owner(T31Restocked(stock=[])) == "play"
    assert GAME.owner(T31DealEnded(deal=1, end="void", shown=[])) == "play"
    assert GAME.owner(T31DealScored(deal=1, lives=[], coins=[], kitty=0, eliminated=[])) == "scoring"
    assert GAME.owner(T31Knocked(seat=0)) is None and GAME.writer(T31Knocked) == "play"
    assert GAME.command_role(Knock()) == "play" and GAME.command_type_role(Take) == "play"
    assert GAME.turn_role(t.state) == "play"
    assert GAME.turn_role(fold(t.log[:1])) is None
    assert GAME.refreshes_views(t.log[1]) and not GAME.refreshes_views(T31Knocked(seat=0))
    assert isinstance(GAME.new_state(), type(t.state))
    assert GAME.standings(t.state) == [1, 1, 1]
    assert isinstance(GAME.view(t.state, 0), ThirtyOneView)
    assert GAME.decide(t.state, 0, Knock()) == [T31Knocked(seat=0)]
    assert GAME.default_action(t.state, 0) == Take(source="stock")
    assert GAME.due(t.state) is None
    assert view(t.state, 0) == GAME.view(t.state, 0)
