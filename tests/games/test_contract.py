"""The contract every registered game meets, checked over random tables (as OpenSpiel's
random_sim_test does for its games): parametrized by ``registry.names()``, so a game registered
tomorrow is checked by the same tests without a line here.

Each test plays random tables through ``protocol.game.Game`` only (``engine.Table``: one
hypothesis integer per table, a ``random.Random`` inside, as tests/protocol/test_properties.py
does) and checks one part of the contract the services rely on:

1. a table is driven by ``due``, ``decide`` on listed actions, time-outs (also recorded one event
   at a time) and the operator's pauses and closes until it is ``closed``; every listed action is
   accepted and folds; ``decide`` never changes the state; junk is refused;
2. folding the log (``registry.fold``) gives the live table, from any point, through a copy and
   through the codecs;
3. the default action does what one of the seat to move's listed actions does;
4. no view and no redacted event shows a seat a card it may not know (``knowledge.py``) or a seed;
5. events, commands, views and action texts survive their codecs;
6. roles: tags unique across games, every derived event and command has its role, ``triggers``
   names real events and wakes every role that has something to do.

At the end, strict checks that some game does not meet yet (``engine.KNOWN_GAPS``: expected to
fail there, and to fail the suite once they pass, so that the entry is removed).
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import registry
from protocol.events import JSON, MSGPACK, Event, TablePaused, TableResumed
from protocol.game import ROLES, Game
from protocol.lifecycle import LogError

from .engine import LIFECYCLE, Table, barred, cards_in, facts, sample_commands, secrets, snapshot, with_gaps
from .engine import tag as tag_of
from .engine import tag_name as kind_of
from .knowledge import KNOWLEDGE

GAMES = registry.names()
SEEDS = st.integers(min_value=0, max_value=2**64 - 1)


def runs(n: int) -> settings:
    """``n`` random tables per game; a table takes as long as it takes (no deadline)."""
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def lifecycle_tags() -> set[str]:
    return {tag_of(k) for k in LIFECYCLE}


def own_kinds(game: Game) -> set[type[Event]]:
    return {k for k in game.event_types if k not in LIFECYCLE}


# --- 1 and 3: driving a table through the interface ----------------------------------------


def check_turn(t: Table) -> None:
    """At a seat's turn: every listed action of every seat is accepted and its events fold; a
    seat that may not act is refused whatever it sends; the default action does what a listed
    action does (check 3; that it is listed as it is: ``test_the_default_action_is_listed_as_it_is``);
    junk is refused; and none of it changes the state."""
    game, state = t.game, t.state
    before = snapshot(game, state)
    assert snapshot(game, state.copy()) == before, "a copy differs from its original"
    mover = state.to_move
    assert mover is not None
    outcomes: list[list[Event]] = []
    for seat in range(state.n):
        legal = list(state.legal_actions(seat))
        if barred(state, seat):
            for action in legal:  # Skat lists them, Thirty-one does not; decide refuses both
                assert t.refused(seat, action), f"seat {seat} may not act, yet {action!r} was accepted"
            continue
        for action in legal:
            events = game.decide(state, seat, action)
            assert isinstance(events, list) and events, f"seat {seat}: listed {action!r} refused: {events}"
            trial = state.copy()
            for event in events:
                trial.apply(event)  # raises LogError if the fold refuses what decide wrote
            if seat == mover:
                outcomes.append(events)
    default = game.default_action(state, mover)
    if barred(state, mover):  # what a time-out will play for it, it may not send itself
        assert t.refused(mover, default), f"seat {mover} may not act, yet its default {default!r} was accepted"
    else:
        assert game.decide(state, mover, default) in outcomes, f"default action {default!r} does no listed action"
    send_junk(t)
    assert snapshot(game, state) == before, "decide (or a check) changed the state"


def send_junk(t: Table) -> None:
    """Commands that must be refused: from seats not at the table, out of turn, stamped with
    the wrong log position, another game's, and undecodable bytes."""
    game, state, rng = t.game, t.state, t.rng
    mover = state.to_move
    assert mover is not None
    legal = list(state.legal_actions(mover))
    for action in rng.sample(legal, min(2, len(legal))):
        for seat in (-1, state.n, state.n + 5):
            assert t.refused(seat, action), f"seat {seat} is not at the table, yet {action!r} was accepted"
        for seat in range(state.n):
            if seat != mover and action not in state.legal_actions(seat):
                assert t.refused(seat, action), f"{action!r} out of turn from seat {seat} was accepted"
        if "at" in type(action).__struct_fields__ and not barred(state, mover):
            # Not in the interface: commands carry ``at``, the log position of the prompt they answer.
            for wrong in (state.events + 1, state.events - 1):
                if wrong >= 0:
                    stamped = msgspec.structs.replace(action, at=wrong)
                    assert t.refused(mover, stamped), f"{stamped!r} at position {state.events} was accepted"
            right = msgspec.structs.replace(action, at=state.events)
            assert game.decide(state, mover, right) == game.decide(state, mover, action)
    for other in GAMES:
        if other != game.name:
            theirs = sample_commands(other)
            for command in rng.sample(theirs, min(2, len(theirs))):
                assert t.refused(mover, command), f"{other}'s {command!r} was accepted"
    for data in garbled(rng, legal):
        try:
            command, _ = game.decode_command(data)
        except msgspec.MsgspecError:
            continue
        t.refused(mover, command)  # decodable junk: answered (either way), the state untouched


def garbled(rng: random.Random, legal: list[Any]) -> list[bytes]:
    """Listed commands' encodings with a byte changed or cut short."""
    out: list[bytes] = []
    for action in rng.sample(legal, min(2, len(legal))):
        data = bytearray(rng.choice([msgspec.json.encode, msgspec.msgpack.encode])(action))
        i = rng.randrange(len(data))
        data[i] = rng.randrange(256)
        out += [bytes(data), bytes(data[: rng.randrange(len(data))])]
    return out


@pytest.mark.parametrize("name", GAMES)
@runs(50)
@given(seed=SEEDS)
def test_a_table_is_driven_to_its_close_through_the_interface(name: str, seed: int) -> None:
    """Checks 1 and 3. Also: after a pause every command waits; after the close every command
    ever listed is refused from every seat, and nothing is due or to move."""
    t = Table(registry.get(name), seed)
    offered: dict[bytes, Any] = {}

    def at_turn(t: Table) -> None:
        for seat in range(t.state.n):
            for action in t.state.legal_actions(seat):
                offered.setdefault(msgspec.json.encode(action), action)
        check_turn(t)

    def on_event(t: Table, event: Event, writer: str | None) -> None:
        if type(event) is TablePaused:
            before = snapshot(t.game, t.state)
            for action in list(offered.values())[-8:]:
                for seat in range(t.state.n):
                    assert t.refused(seat, action), f"{action!r} from seat {seat} accepted while paused"
            assert snapshot(t.game, t.state) == before

    t.on_event.append(on_event)
    t.play(at_turn)
    state = t.state
    assert state.closed and state.to_move is None and t.game.due(state) is None
    assert snapshot(t.game, registry.fold(t.log)) == snapshot(t.game, state), (
        "the live table is not its log's fold: decide changed what no view shows"
    )
    for action in offered.values():
        for seat in t.seats():
            assert t.refused(seat, action), f"{action!r} from seat {seat} accepted at a closed table"


# --- 2: the fold of the log is the live table ------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
@runs(100)
@given(seed=SEEDS)
def test_the_fold_of_the_log_is_the_live_table(name: str, seed: int) -> None:
    """Check 2. Every service rebuilds a table by folding its log (``registry.fold``), from the
    start or from a copy of an earlier state, and after the log went through a codec: each must
    give what the live table shows every seat, the spectator and the standings."""
    t = Table(registry.get(name), seed)
    cut_at = random.Random(seed ^ 0xF01D)
    points: list[tuple[int, bytes]] = []

    def remember(t: Table, event: Event, writer: str | None) -> None:
        if cut_at.random() < 0.03:
            points.append((len(t.log), snapshot(t.game, t.state)))

    t.on_event.append(remember)
    t.play()
    game, log = t.game, t.log
    live = snapshot(game, t.state)
    assert snapshot(game, registry.fold(log)) == live
    assert snapshot(game, registry.fold([JSON.decode(JSON.encode(e)) for e in log])) == live
    assert snapshot(game, registry.fold([MSGPACK.decode(MSGPACK.encode(e)) for e in log])) == live
    for k, then in points:
        prefix = registry.fold(log[:k])
        assert snapshot(game, prefix) == then, f"the fold of the first {k} events is not the table it was"
        copied = prefix.copy()
        for event in log[k:]:
            copied.apply(event)
        assert snapshot(game, copied) == live, f"a copy at event {k}, folded on, is not the live table"
        assert snapshot(game, prefix) == then, "folding on a copy changed its original"


# --- 4: no view leaks -------------------------------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
@runs(50)
@given(seed=SEEDS)
def test_no_seat_is_shown_what_it_may_not_know(name: str, seed: int) -> None:
    """Check 4. After every event, for every seat and the spectator: the JSON of its view and
    of the event redacted for it hold only cards it may know at that point (``knowledge.py``:
    worked out from the log, independently of the game's views) and no seed."""
    t = Table(registry.get(name), seed)
    make = KNOWLEDGE.get(name)
    assert make is not None, f"add {name!r} to KNOWLEDGE in tests/games/knowledge.py"
    knows = make(t.rules, t.n)
    cards = facts(t.game).cards
    hidden: set[str] = set()

    def check(t: Table, event: Event, writer: str | None) -> None:
        knows.see(msgspec.to_builtins(event))
        hidden.update(secrets([event]))
        for seat in t.seats():
            for what, data, may in (
                ("view", msgspec.json.encode(t.game.view(t.state, seat)), knows.may_know(seat)),
                (f"redacted {kind_of(type(event))}", msgspec.json.encode(t.game.redact(event, seat)), knows.may_know_redacted(seat)),
            ):  # fmt: skip
                seen = cards_in(data, cards)
                assert seen <= may, f"{what} of seat {seat} at event {len(t.log) - 1} shows {sorted(seen - may)}"
                assert not any(s.encode() in data for s in hidden), f"{what} of seat {seat} shows a seed"

    t.on_event.append(check)
    t.play()
    assert hidden, "the log holds no seed: the seed check checked nothing"


@pytest.mark.parametrize("name", GAMES)
def test_the_leak_check_sees_cards(name: str) -> None:
    """The leak check is not empty: its card scan finds the cards a seat's own view shows."""
    cards = facts(registry.get(name)).cards
    shown = 0

    def count(t: Table, event: Event, writer: str | None) -> None:
        nonlocal shown
        shown += sum(bool(cards_in(msgspec.json.encode(t.game.view(t.state, s)), cards)) for s in range(t.n))

    for seed in range(3):
        t = Table(registry.get(name), seed)
        t.on_event.append(count)
        t.play()
    assert shown, "no seat's view ever showed a card"


# --- 5: codecs ---------------------------------------------------------------------------------

JUNK_BYTES = (
    b"", b"   ", b"{", b"[]", b"null", b'{"type": 7}', b'{"type": "no such command"}', b"\xc1", b"\xff\xfe",
    msgspec.msgpack.encode(42), msgspec.msgpack.encode([1, 2]), msgspec.msgpack.encode({"type": "no such command"}),
)  # fmt: skip


def check_codecs(t: Table) -> None:
    """Every listed command through msgspec JSON and msgpack and ``decode_command``, and
    through ``action_text``/``parse_action``; every seat's view through both encodings."""
    game, state = t.game, t.state
    for seat in range(state.n):
        for action in state.legal_actions(seat):
            assert game.decode_command(msgspec.json.encode(action)) == (action, "json")
            assert game.decode_command(msgspec.msgpack.encode(action)) == (action, "msgpack")
            text = game.action_text(action)
            assert isinstance(text, str) and text.strip()
            assert game.parse_action(text) == action, f"{text!r} reads back as {game.parse_action(text)!r}"
    for seat in t.seats():
        view = game.view(state, seat)
        assert msgspec.json.decode(msgspec.json.encode(view), type=type(view)) == view
        assert msgspec.msgpack.decode(msgspec.msgpack.encode(view), type=type(view)) == view


@pytest.mark.parametrize("name", GAMES)
@runs(30)
@given(seed=SEEDS)
def test_events_commands_views_and_texts_survive_their_codecs(name: str, seed: int) -> None:
    """Check 5. The log is stored and sent through ``protocol.events.MSGPACK``/``JSON`` (which
    know every registered game's events), commands arrive as JSON or msgpack, records and
    people use action texts: each must read back as what was written."""
    t = Table(registry.get(name), seed)
    t.play(check_codecs)
    for event in t.log:
        assert MSGPACK.decode(MSGPACK.encode(event)) == event, event
        assert JSON.decode(JSON.encode(event)) == event, event


@pytest.mark.parametrize("name", GAMES)
def test_junk_does_not_decode(name: str) -> None:
    """Bytes that are no command raise msgspec's errors (the services answer "malformed"), and
    text that is no action raises ``ValueError``: nothing else escapes."""
    game = registry.get(name)
    for data in JUNK_BYTES:
        with pytest.raises(msgspec.MsgspecError):
            game.decode_command(data)
    for text in ("", "   ", "no such action at all"):
        with pytest.raises(ValueError):
            game.parse_action(text)


# --- 6: registry facts and roles ---------------------------------------------------------------


def test_event_tags_are_unique_across_games() -> None:
    """A tag in a log names one event of one game (the log subject carries its name)."""
    owner: dict[str, str] = {}
    for name in GAMES:
        game = registry.get(name)
        tags = [tag_of(k) for k in own_kinds(game)]
        assert len(set(tags)) == len(tags), f"{name} has an event tag twice"
        for tag in tags:
            assert tag not in lifecycle_tags()
            assert owner.setdefault(tag, name) == name, f"{tag} is {owner[tag]}'s and {name}'s"
    known = registry.event_types()
    assert all(known[tag_of(k)] is k for k in LIFECYCLE)
    for name in GAMES:
        assert all(known[tag_of(k)] is k for k in registry.get(name).event_types)


@pytest.mark.parametrize("name", GAMES)
def test_registry_facts(name: str) -> None:
    """What the registry and the services read off a game before any table: its name, its
    rules, its seats, its opening, the roles of its commands and events, its triggers."""
    game = registry.get(name)
    assert game.name == name and name in registry.names()
    low, high = game.seats
    assert 1 <= low <= high
    rules = game.rules_type()  # every option has a default
    lo, hi = game.players(rules)
    assert low <= lo <= hi <= high
    opened = game.open_event("facts", [f"p{i}" for i in range(lo)], rules, "", {})
    assert registry.game_of(opened) is game and registry.is_opening(opened)
    state = registry.new_state(opened)
    state.apply(opened)
    assert state.opened and not state.closed and state.n == lo and state.events == 1
    for other in GAMES:  # a table of another game is not read as this one
        if other != name:
            theirs = registry.get(other)
            their_rules = theirs.rules_type()
            seated = [f"p{i}" for i in range(theirs.players(their_rules)[0])]
            first = theirs.open_event("facts", seated, their_rules, "", {})
            with pytest.raises(LogError):
                game.new_state().apply(first)
    tags = [tag_of(k) for k in game.command_types]
    assert len(set(tags)) == len(tags), f"{name} has a command tag twice"
    for command_type in game.command_types:
        assert game.command_type_role(command_type) in ROLES
        assert any(g is game for g, _ in registry.games_knowing(tag_of(command_type)))
    for event_type in game.event_types:
        assert game.writer(event_type) in (*ROLES, None), f"{event_type.__name__}: writer {game.writer(event_type)!r}"
    own = {kind_of(k) for k in own_kinds(game)}
    lifecycle = {kind_of(k) for k in LIFECYCLE}
    by_name = {kind_of(k): k for k in (*game.event_types, *LIFECYCLE)}
    for role, kinds in game.triggers.items():
        assert role in ROLES, f"triggers name {role!r}, not a role"
        for trigger in kinds:
            assert trigger in own | lifecycle, (
                f"{role} is triggered by {trigger!r}: no event of {name} or the lifecycle"
            )
            writer = game.writer(by_name[trigger])
            assert writer != role, f"{role} is triggered by {trigger!r}, which it writes itself"


def check_roles(t: Table, event: Event, writer: str | None) -> None:
    """Whoever wrote ``event`` is the role the game says writes it; then whatever is owed next
    (a derived event, a seat's deadline) belongs to a role that wrote ``event`` itself or is
    triggered by its kind: a service consuming only its ``triggers`` misses nothing."""
    game, state = t.game, t.state
    assert writer in ROLES, f"{kind_of(type(event))} written by {writer!r}"
    declared = game.writer(type(event))
    assert declared in (writer, None), f"{kind_of(type(event))}: written by {writer}, writer() says {declared}"
    if type(event) in (TablePaused, TableResumed):
        return  # the lifecycle's: every service acts on them (``Game.triggers``)
    woken = {writer} | {role for role, kinds in game.triggers.items() if kind_of(type(event)) in kinds}
    owed = game.due(state)
    if owed is not None:
        owner = game.owner(owed)
        assert owner in ROLES, f"due {kind_of(type(owed))} has owner {owner!r}"
        assert game.writer(type(owed)) == owner
        assert owner in woken, f"{owner} owes {kind_of(type(owed))} after {kind_of(type(event))}, but is not woken"
    role = game.turn_role(state)
    assert (role is None) == (state.to_move is None), f"turn_role {role!r} with seat {state.to_move} to move"
    if role is not None:
        assert role in ROLES
        assert role in woken, f"{role} runs seat {state.to_move}'s deadline after {kind_of(type(event))}, unwoken"


def check_command_roles(t: Table) -> None:
    """The role answering a seat's command is the one whose deadline runs for it."""
    game, state = t.game, t.state
    for seat in range(state.n):
        for action in state.legal_actions(seat):
            role = game.command_role(action)
            assert role in ROLES and game.command_type_role(type(action)) == role
            if seat == state.to_move:
                assert role == game.turn_role(state), (
                    f"{action!r} is answered by {role}, the turn is {game.turn_role(state)}'s"
                )


@pytest.mark.parametrize("name", GAMES)
@runs(150)
@given(seed=SEEDS)
def test_every_event_and_command_has_its_role(name: str, seed: int) -> None:
    """Check 6 at play: every derived event ``due`` gives has an owner role, every command a
    role, and ``triggers`` wakes each role that is owed something."""
    t = Table(registry.get(name), seed)
    t.on_event.append(check_roles)
    t.play(check_command_roles)
    game = t.game
    assert t.due_kinds, "due never gave anything"
    for kind in t.due_kinds:
        assert kind in game.event_types or kind in LIFECYCLE, f"due gave {kind.__name__}, not an event of {name}"
    assert all(type(e) in game.event_types or type(e) in LIFECYCLE for e in t.log)


# --- strict checks some game does not meet yet (engine.KNOWN_GAPS) ------------------------------

GAP_SEEDS = range(40)
"""Fixed seeds (no hypothesis: an expected failure should not be shrunk at every run)."""


@pytest.mark.parametrize("name", with_gaps("offers"))
def test_a_seat_that_may_not_act_is_offered_nothing(name: str) -> None:
    """``legal_actions(seat)`` is what ``decide`` accepts from ``seat``: nothing while its
    time-out is being recorded or once it is withdrawn (a prompt listing actions that are all
    refused misleads a bot)."""
    seen = 0

    def check(t: Table) -> None:
        nonlocal seen
        for seat in range(t.state.n):
            if barred(t.state, seat):
                seen += 1
                offered = list(t.state.legal_actions(seat))
                assert not offered, f"seat {seat} may not act but is offered {offered}"

    for seed in GAP_SEEDS:
        Table(registry.get(name), seed).play(check)
    assert seen, "no seat was ever barred: the check checked nothing"


@pytest.mark.parametrize("name", with_gaps("default"))
def test_the_default_action_is_listed_as_it_is(name: str) -> None:
    """Check 3, strictly: the default action is one of ``legal_actions`` as it is (a bot or a
    record comparing it with the listed actions finds it)."""
    seen = 0

    def check(t: Table) -> None:
        nonlocal seen
        mover = t.state.to_move
        assert mover is not None
        if not barred(t.state, mover):
            seen += 1
            default = t.game.default_action(t.state, mover)
            assert default in t.state.legal_actions(mover), f"default action {default!r} is not listed"

    for seed in GAP_SEEDS:
        Table(registry.get(name), seed).play(check)
    assert seen


@pytest.mark.parametrize("name", with_gaps("refresh"))
def test_between_refreshes_the_public_feed_shows_every_new_card(name: str) -> None:
    """After an event ``refreshes_views`` does not name, the services send the public feed (the
    event redacted for the spectator) and the prompt of the seat to move, nothing else: every
    other seat's and the spectator's view may gain only cards that event shows the public."""
    cards = facts(registry.get(name)).cards
    before: dict[int, set[str]] = {}

    def check(t: Table, event: Event, writer: str | None) -> None:
        game, state = t.game, t.state
        now = {seat: cards_in(msgspec.json.encode(game.view(state, seat)), cards) for seat in t.seats()}
        if before and not game.refreshes_views(event, state):
            public = cards_in(msgspec.json.encode(game.redact(event, -1)), cards)
            for seat in t.seats():
                if seat != state.to_move:
                    new = now[seat] - before[seat] - public
                    assert not new, f"after {kind_of(type(event))} seat {seat} sees {sorted(new)} from no feed"
        before.clear()
        before.update(now)

    for seed in GAP_SEEDS:
        before.clear()
        t = Table(registry.get(name), seed)
        t.on_event.append(check)
        t.play()
