"""Standings over tables where a seat was withdrawn (``Rules.max_timeouts``): turns still counted
right with ``seat_withdrawn`` after the default action, every withdrawal a forfeit, and a
forfeited entrant below every entrant that finished, whatever its points; at Skat and at
Thirty-one (ranked by places)."""

from __future__ import annotations

from protocol import registry
from protocol.events import Event, PlayerTimedOut, SeatWithdrawn, TableOpened
from protocol.skat.commands import Bid, Command, Hold, Pass, Resign, ShowCards
from protocol.skat.decide import decide, timeout
from protocol.skat.rules import Rules
from protocol.skat.table import TableState, due
from protocol.thirty_one.commands import Knock
from protocol.thirty_one.rules import ThirtyOneRules
from protocol.tournament import count_turns, forfeits, place_standings, standings


def _play(
    table: str,
    players: list[str],
    dead: dict[str, int],
    max_timeouts: int,
    seed: str,
    flaky: str = "",
) -> list[Event]:
    """A table to its end through the pure engine: the players in ``dead`` answer that many
    turns, then time out on every turn (``protocol.decide.timeout``, as the services write
    it); ``flaky`` times out on every other turn; everybody else answers every turn."""
    rules = Rules(rounds=1, seeger_fabian=True, max_timeouts=max_timeouts)
    state, log = TableState(), []

    def append(event: Event) -> None:
        state.apply(event)
        log.append(event)

    append(TableOpened(table=table, players=players, rules=rules, seed=seed))
    answered = dict.fromkeys(players, 0)
    turns = dict.fromkeys(players, 0)
    while not state.closed:
        owed = due(state)
        if owed is not None:
            append(owed)
            continue
        seat = state.to_move
        assert seat is not None
        name = players[seat]
        turns[name] += 1
        if (name in dead and answered[name] >= dead[name]) or (name == flaky and turns[name] % 2 == 0):
            events = timeout(state)
            assert events is not None
        else:
            answered[name] += 1
            chosen = decide(state, seat, _choose(state.legal_actions(seat)))
            assert isinstance(chosen, list), chosen
            events = chosen
        for event in events:
            append(event)
    return log


def _choose(actions: list[Command]) -> Command:
    """Bid up to 20 (or hold), so that games are played, then the first legal card."""
    if any(isinstance(a, Bid | Hold) for a in actions):
        low = [a for a in actions if isinstance(a, Bid) and a.value <= 20]
        holds = [a for a in actions if isinstance(a, Hold)]
        return (low or holds or [a for a in actions if isinstance(a, Pass)])[0]
    return ([a for a in actions if not isinstance(a, Resign | ShowCards)] or actions)[0]


def test_a_withdrawn_seat_is_a_forfeit_and_every_turn_of_it_is_counted() -> None:
    log = _play("t-g0", ["ann", "dead", "bob"], {"dead": 0}, max_timeouts=3, seed="forfeit")
    withdrawals = [e for e in log if isinstance(e, SeatWithdrawn)]
    assert withdrawals == [SeatWithdrawn(seat=1, missed=3)]
    # The withdrawal comes with the third time-out (before its default action), and later
    # turns time out too.
    at = log.index(withdrawals[0])
    assert log[at - 1] == PlayerTimedOut(seat=1)
    timed_out = sum(isinstance(e, PlayerTimedOut) and e.seat == 1 for e in log)
    assert timed_out > 3
    turns = count_turns([log])
    assert (turns["dead"].answered, turns["dead"].timed_out) == (0, timed_out)
    assert turns["ann"].timed_out == turns["bob"].timed_out == 0 and turns["ann"].answered > 0
    [found] = forfeits([log])
    assert (found.player, found.table, found.deal, found.missed) == ("dead", "t-g0", 1, 3)


def test_missed_turns_count_in_a_row_only() -> None:
    """A seat that answers in between starts counting again: many time-outs, never two in a
    row, withdraw nobody; a seat that stops answering is withdrawn in a later turn."""
    log = _play("t-g1", ["ann", "flaky", "bob"], {}, max_timeouts=2, seed="row", flaky="flaky")
    assert count_turns([log])["flaky"].timed_out >= 3 and not forfeits([log])
    log = _play("t-g1", ["ann", "late", "bob"], {"late": 4}, max_timeouts=2, seed="row")
    [found] = forfeits([log])
    assert found.player == "late" and count_turns([log])["late"].answered == 4


def test_forfeited_entrants_rank_below_every_entrant_that_finished() -> None:
    """The finding: a dead seat gathers Seeger-Fabian points whenever a declarer loses (here
    more than anybody); withdrawn, it ranks last all the same."""
    logs = [
        _play(f"t-g{i}", players, {"dead": 0}, max_timeouts=2, seed=f"rank{i}")
        for i, players in enumerate((["ann", "dead", "bob"], ["bob", "ann", "dead"], ["dead", "bob", "ann"]))
    ]
    table = standings(logs)
    dead = next(s for s in table if s.player == "dead")
    assert dead.forfeit and all(dead.seeger_fabian > s.seeger_fabian for s in table if s is not dead)
    assert table[-1] is dead and not any(s.forfeit for s in table[:-1])
    assert [s.seeger_fabian for s in table[:-1]] == sorted((s.seeger_fabian for s in table[:-1]), reverse=True)
    # Without withdrawals (max_timeouts 0) the same dead seat is no forfeit, and ranks on points.
    logs = [_play("t-g9", ["ann", "dead", "bob"], {"dead": 0}, max_timeouts=0, seed="rank0")]
    assert not forfeits(logs) and not any(s.forfeit for s in standings(logs))


# --- Thirty-one: the same rules at a game ranked by places ------------------------------------


def _play_thirty_one(table: str, players: list[str], dead: str, max_timeouts: int, seed: str) -> list[Event]:
    """A Thirty-one table to its last survivor through the pure engine: ``dead`` times out on
    every turn (``Game.timeout``: the time-out, the withdrawal when due, the default action),
    everybody else plays the first legal action that is no knock (a knock when nothing else is
    left), so deals run long enough for the dead seat to miss turns in a row."""
    game = registry.get("thirty-one")
    state = game.new_state()
    log: list[Event] = []

    def append(event: Event) -> None:
        state.apply(event)
        log.append(event)

    append(game.open_event(table, players, ThirtyOneRules(coins=1, max_timeouts=max_timeouts), seed, {}))
    while not state.closed:
        owed = game.due(state)
        if owed is not None:
            append(owed)
            continue
        seat = state.to_move
        assert seat is not None
        if players[seat] == dead:
            events = game.timeout(state)
        else:
            legal = state.legal_actions(seat)
            chosen = game.decide(state, seat, ([a for a in legal if not isinstance(a, Knock)] or legal)[0])
            assert isinstance(chosen, list), chosen
            events = chosen
        for event in events:
            append(event)
    return log


def test_a_withdrawn_thirty_one_seat_forfeits_and_places_below_every_finisher() -> None:
    """As at Skat: the dead seat's turns are time-outs (a look would be no answer), it is
    withdrawn after ``max_timeouts`` in a row, and it ranks last whatever place its default
    moves reached (a seat that never knocks often outlives the others)."""
    seatings = (["ann", "dead", "bob"], ["bob", "ann", "dead"], ["dead", "bob", "ann"])
    logs = [_play_thirty_one(f"t31-g{i}", p, "dead", 2, f"t31-{i}") for i, p in enumerate(seatings)]
    for log, players in zip(logs, seatings, strict=True):
        seat = players.index("dead")
        assert [e for e in log if isinstance(e, SeatWithdrawn)] == [SeatWithdrawn(seat=seat, missed=2)]
    found = forfeits(logs)
    assert [(f.player, f.table, f.missed) for f in found] == [("dead", f"t31-g{i}", 2) for i in range(3)]
    assert all(f.deal == 1 for f in found)  # two turns in a row are missed in the first deal
    turns = count_turns(logs)
    assert turns["dead"].answered == 0 and turns["dead"].timed_out > 2
    assert turns["ann"].timed_out == 0 and turns["ann"].answered > 0
    table = place_standings(logs)
    dead = table[-1]
    assert dead.player == "dead" and dead.forfeit and not any(s.forfeit for s in table[:-1])
    assert dead.timeouts == turns["dead"].timed_out
    assert any(dead.per_table > s.per_table for s in table[:-1]), "no seating tests the rule: pick other seeds"
