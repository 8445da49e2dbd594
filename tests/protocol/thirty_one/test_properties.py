"""Property tests of the Thirty-one engine over random games: 2 to 9 players, random options,
random (legal and illegal) commands, time-outs, withdrawals, pauses.

What must hold at every step of every game: every card is in exactly one place (52 in the
hands, the discard pile and the stock); every action ``legal_actions`` lists is accepted by
``decide`` and folds, and ``decide`` accepts nothing else; ``decide`` never mutates; the default
action is legal; no view of a seat holds a card of another seat's hand or of the stock that
the rules have not shown it (checked on the encoded view against an oracle written here from
the rules, T8, T13, T30); coins and kitty add up to the coins dealt out. At the end: the game
ended with one active player or at ``max_deals``; ``fold(log)`` equals the live state; the
same game imported (seed "" everywhere, restocks from the log) folds to the same results;
events, commands and views survive both codecs and action texts ``parse_action``.

A game is driven by a ``random.Random`` seeded from one hypothesis integer, as in
tests/protocol/test_properties.py; the failing seed is what hypothesis reports.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.events import Event, TableOpenedV2, TablePaused, TableResumed
from protocol.thirty_one import (
    GAME,
    PACK,
    AnyCommand,
    Command,
    Discard,
    Knock,
    Look,
    Rejection,
    T31DealEnded,
    T31Dealt,
    T31Discarded,
    T31Looked,
    T31Restocked,
    T31Took,
    Take,
    ThirtyOneRules,
    ThirtyOneState,
    ThirtyOneView,
    Throw,
    decide,
    decode_command,
    default_action,
    due,
    fold,
    parse_action,
    timeout,
    view,
)
from protocol.thirty_one.events import JSON, MSGPACK, AnyEvent
from protocol.thirty_one.state import MAX_DEALS, ONE_LEFT

SEEDS = st.integers(min_value=0, max_value=2**64 - 1)
CHECKED = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WHOLE = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

CARD_IN_JSON = re.compile(rb'"([CSHD][2-9TJQKA])"')
EVENT_JSON = msgspec.json.Decoder(AnyEvent)
EVENT_MSGPACK = msgspec.msgpack.Decoder(AnyEvent)
VIEW_JSON = msgspec.json.Decoder(ThirtyOneView)
VIEW_MSGPACK = msgspec.msgpack.Decoder(ThirtyOneView)
COMMAND_MSGPACK = msgspec.msgpack.Decoder(AnyCommand)


def random_rules(rng: random.Random, max_deals: int | None = None) -> ThirtyOneRules:
    return ThirtyOneRules(
        coins=rng.choice([1, 1, 2, 3]),
        county=rng.random() < 0.7,
        three_of_a_kind=rng.choice(["off", "off", "30", "30.5"]),
        straight_flush=rng.random() < 0.3,
        min_knock=rng.choice([0, 0, 0, 17, 21]),
        knock_in_first_round=rng.random() < 0.7,
        throw_down=rng.random() < 0.35,
        stock_out=rng.choice(["reshuffle", "reshuffle", "void"]),
        max_turns=rng.choice([300, 300, 8, 30, 60]),
        max_deals=max_deals if max_deals is not None else rng.choice([500, 500, 1, 4, 12]),
        max_timeouts=rng.choice([0, 0, 0, 1, 3]),
    )


# --- an oracle of what each seat may have seen (from the rules, not from views.py) ----------


class Oracle:
    """The cards each seat may know in the deal in progress: the public ones (the discard pile's
    first card, every discard, every card taken from the pile, the hands shown at the end, T8,
    T13) and its own (its dealt hand unless it has not looked under throw_down, the cards it
    took from the stock, T30)."""

    def __init__(self, n: int, rules: ThirtyOneRules) -> None:
        self.n = n
        self.blind = rules.throw_down
        self.public: set[str] = set()
        self.own: list[set[str]] = [set() for _ in range(n)]
        self.dealt: list[list[str]] = [[] for _ in range(n)]

    def see(self, event: Event) -> None:
        if isinstance(event, T31Dealt):
            m = len(event.order)
            self.public = {event.deck[3 * m]}
            self.dealt = [[] for _ in range(self.n)]
            for j, seat in enumerate(event.order):
                self.dealt[seat] = [event.deck[j], event.deck[m + j], event.deck[2 * m + j]]
            self.own = [set() if self.blind else set(h) for h in self.dealt]
        elif isinstance(event, T31Looked):
            self.own[event.seat] |= set(self.dealt[event.seat])
        elif isinstance(event, T31Took):
            if self.blind:
                self.own[event.seat] |= set(self.dealt[event.seat])
            (self.own[event.seat] if event.source == "stock" else self.public).add(event.card)
        elif isinstance(event, T31Discarded):
            self.public.add(event.card)
        elif isinstance(event, T31DealEnded):
            for hand in event.shown:
                self.public |= set(hand)

    def allowed(self, seat: int) -> set[str]:
        return self.public | self.own[seat] if 0 <= seat < self.n else self.public


# --- snapshots and checks -------------------------------------------------------------------


def snapshot(state: ThirtyOneState) -> tuple[Any, ...]:
    """Everything a state holds that the rules care about (to compare states)."""
    d = state.deal
    deal = (
        None
        if d is None
        else (
            [list(h) for h in d.hands], list(d.stock), list(d.pile), d.seat, d.step, d.taken, d.knocker, d.thrower,
            list(d.owed), list(d.looked), list(d.played), d.turns, d.restocks, d.wants_restock, d.ended, d.end,
            list(d.holders), d.order, d.seed,
        )
    )  # fmt: skip
    return (
        state.events, state.n, list(state.coins), state.kitty, list(state.active), list(state.out_deal),
        state.deal_no, state.dealer, state.closed, state.close_reason, state.complete, state.paused,
        state.defaulting, list(state.missed), list(state.announced), state.scored, state.end_logged,
        list(state.sheet), list(state.lives), len(state.deal_events), deal,
    )  # fmt: skip


def check_cards(state: ThirtyOneState) -> None:
    deal = state.deal
    if deal is None:
        return
    held = [c for h in deal.hands for c in h] + deal.pile + deal.stock
    assert sorted(held) == sorted(PACK), "a card is missing or in two places"
    for seat in range(state.n):
        assert len(deal.hands[seat]) in ((3, 4) if deal.dealt_in(seat) else (0,))


def check_coins(state: ThirtyOneState) -> None:
    assert sum(state.coins) + state.kitty == state.rules.coins * state.n
    assert all(c >= 0 for c in state.coins) and state.active
    for seat in range(state.n):
        if state.out_deal[seat]:
            assert state.coins[seat] == 0 and seat not in state.active


def check_views(state: ThirtyOneState, oracle: Oracle) -> None:
    for seat in range(-1, state.n):
        v = view(state, seat)
        data = msgspec.json.encode(v)
        leaked = {m.decode() for m in CARD_IN_JSON.findall(data)} - oracle.allowed(seat)
        assert not leaked, f"seat {seat} sees {sorted(leaked)}"
        for e in v.history:
            if isinstance(e, T31Restocked):
                assert set(e.stock) <= {""}, "a view shows the order of a new stock"
        assert VIEW_JSON.decode(data) == v
        assert VIEW_MSGPACK.decode(msgspec.msgpack.encode(v)) == v
        deal = state.deal
        if deal is not None and deal.dealt_in(seat) and deal.sees_hand(seat):
            assert v.hand == deal.hands[seat]


def check_actions(state: ThirtyOneState) -> None:
    """Every listed action is accepted and folds; the default action is legal; decide never
    mutates."""
    before = snapshot(state)
    for seat in range(state.n):
        for action in state.legal_actions(seat):
            events = decide(state, seat, action)
            assert isinstance(events, list), (seat, action, events)
            trial = state.copy()
            for e in events:
                trial.apply(e)
            assert parse_action(str(action)) == action
            assert decode_command(msgspec.json.encode(action))[0] == action
            assert COMMAND_MSGPACK.decode(msgspec.msgpack.encode(action)) == action
    mover = state.to_move
    if mover is not None:
        action = default_action(state, mover)
        assert state.deal is not None and state.deal.check(mover, action) == ""
        if state.defaulting < 0 and not state.withdrawn(mover):
            assert action in state.legal_actions(mover)
        assert not isinstance(action, (Knock, Look, Throw))
    assert snapshot(state) == before, "checking the actions changed the state"


def garbage(rng: random.Random, n: int) -> tuple[int, Command]:
    seat = rng.randrange(-1, n + 1)
    kind = rng.randrange(5)
    command: Command
    if kind == 0:
        command = Take(source=rng.choice(["stock", "discard"]))
    elif kind == 1:
        command = Discard(card=rng.choice(PACK))
    elif kind == 2:
        command = Knock()
    elif kind == 3:
        command = Look()
    else:
        command = Throw()
    return seat, command


# --- the driver -----------------------------------------------------------------------------


class Game:
    """One random game, played to its end with the checks ``check`` asks for at every step."""

    def __init__(self, seed: int, players: int | None = None, max_deals: int | None = None) -> None:
        self.rng = rng = random.Random(seed)
        self.n = players if players is not None else rng.randint(2, 9)
        self.rules = random_rules(rng, max_deals)
        opened = GAME.open_event("prop", [f"p{i}" for i in range(self.n)], self.rules, f"seed {seed}", {})
        self.log: list[Event] = [opened]
        self.state = fold(self.log)
        self.oracle = Oracle(self.n, self.rules)
        self.p_knock = rng.choice([0.03, 0.1, 0.3])
        self.p_throw = rng.choice([0.0, 0.2])
        self.p_look = rng.choice([0.0, 0.05, 0.2])
        self.p_timeout = rng.choice([0.0, 0.0, 0.03])
        self.p_pause = rng.choice([0.0, 0.01])
        self.p_garbage = rng.choice([0.0, 0.1])

    def add(self, events: list[Event]) -> None:
        for event in events:
            self.state.apply(event)
            self.log.append(event)
            self.oracle.see(event)

    def step(self) -> None:
        state, rng = self.state, self.rng
        owed = due(state)
        if owed is not None:
            self.add([owed])
            return
        if state.paused:
            self.add([TableResumed()])
            return
        seat = state.to_move
        assert seat is not None, "a seeded game waits for nobody"
        if state.withdrawn(seat) or rng.random() < self.p_timeout:
            events = timeout(state)
            assert events
            self.add(events)
            return
        r = rng.random()
        if r < self.p_pause:
            self.add([TablePaused(reason="test")])
            return
        if r < self.p_garbage:
            who, command = garbage(rng, self.n)
            answer = decide(state, who, command)
            assert isinstance(answer, list) == (command in state.legal_actions(who)), (who, command, answer)
            if isinstance(answer, list):
                self.add(answer)
            return
        if r < self.p_garbage + self.p_look:
            lookers = [s for s in state.active if Look() in state.legal_actions(s)]
            if lookers:
                who = rng.choice(lookers)
                answer = decide(state, who, Look())
                assert isinstance(answer, list), answer
                self.add(answer)
                return
        legal = state.legal_actions(seat)
        special = [a for a in legal if isinstance(a, (Knock, Throw))]
        if special and rng.random() < (self.p_throw if isinstance(special[-1], Throw) else self.p_knock):
            action: Command = rng.choice(special)
        else:
            plain = [a for a in legal if isinstance(a, (Take, Discard))]
            action = default_action(state, seat) if rng.random() < 0.5 else rng.choice(plain)
        answer = decide(state, seat, action)
        assert isinstance(answer, list), (seat, action, answer)
        self.add(answer)

    def play(self, check: Callable[[Game], None] | None = None, limit: int = 200_000) -> None:
        for _ in range(limit):
            if self.state.closed:
                return
            self.step()
            if check is not None:
                check(self)
        raise AssertionError("the game did not end")


def check_every_step(game: Game) -> None:
    state = game.state
    assert snapshot(state.copy()) == snapshot(state)
    check_cards(state)
    check_coins(state)
    check_actions(state)
    check_views(state, game.oracle)


def check_end(game: Game) -> None:
    state = game.state
    assert state.closed and state.complete
    if len(state.active) == 1:
        assert state.close_reason == ONE_LEFT and state.kitty == 0
        assert state.coins[state.active[0]] == state.rules.coins * state.n  # T36: every coin of the game
        assert state.places().count(1) == 1
    else:
        assert state.close_reason == MAX_DEALS and state.deal_no == state.rules.max_deals
    assert state.deal_no <= state.rules.max_deals
    assert sorted(state.places()) == sorted(state.places()) and min(state.places()) == 1
    replay = fold(game.log)
    assert snapshot(replay) == snapshot(state)
    assert replay.result() == state.result()
    for event in game.log:
        assert EVENT_JSON.decode(msgspec.json.encode(event)) == event
        assert EVENT_MSGPACK.decode(msgspec.msgpack.encode(event)) == event
        assert JSON.decode(JSON.encode(event)) == event
        assert MSGPACK.decode(MSGPACK.encode(event)) == event


def imported(log: list[Event]) -> list[Event]:
    """The same game as a record would give it: no seeds; every restock is in the log already."""
    out: list[Event] = []
    for event in log:
        if isinstance(event, (TableOpenedV2, T31Dealt)):
            event = msgspec.structs.replace(event, seed="")
        out.append(event)
    return out


@CHECKED
@given(SEEDS)
def test_every_step_of_short_random_games(seed: int) -> None:
    game = Game(seed, max_deals=random.Random(seed).choice([1, 2, 4]))
    game.play(check_every_step)
    check_end(game)


@WHOLE
@given(SEEDS)
def test_whole_random_games(seed: int) -> None:
    game = Game(seed)

    def cheap(g: Game) -> None:
        check_cards(g.state)
        check_coins(g.state)

    game.play(cheap)
    check_end(game)
    state = game.state
    again = fold(imported(game.log))
    assert again.result() == state.result() and again.sheet == state.sheet
    assert not again.deal or not again.deal.seed


@WHOLE
@given(SEEDS, st.integers(min_value=2, max_value=9))
def test_garbage_is_refused_without_a_trace(seed: int, players: int) -> None:
    """Any command from any seat (also not seated ones) at any point: refused with a
    ``Rejection`` and no change, or accepted exactly when it is listed as legal."""
    game = Game(seed, players=players, max_deals=2)
    rng = random.Random(seed ^ 0x5EED)

    def poke(g: Game) -> None:
        before = snapshot(g.state)
        for _ in range(3):
            who, command = garbage(rng, g.n)
            answer = decide(g.state, who, command)
            assert isinstance(answer, list) == (command in g.state.legal_actions(who))
            assert isinstance(answer, (list, Rejection))
        assert snapshot(g.state) == before

    game.play(poke)
    check_end(game)
