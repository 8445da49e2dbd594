"""protocol.series: what the next series seats when entrants have forfeited."""

from __future__ import annotations

from protocol.events import Event, SeatWithdrawn, TableOpened
from protocol.series import draw_series
from protocol.skat.rules import Rules
from protocol.tournament import TournamentConfig, TournamentCreated, TournamentState, schedule

ENTRANTS = ["a", "b", "c", "d", "e", "f"]


def _state(pairing: str) -> tuple[TournamentConfig, TournamentState]:
    config = TournamentConfig(
        id="t", entrants=ENTRANTS, bots={e: "random" for e in ENTRANTS}, series=3, pairing=pairing,  # type: ignore[arg-type]
        rules=Rules(rounds=1),
    )  # fmt: skip
    state = TournamentState()
    state.apply(TournamentCreated(config=config, tables=schedule(config)))
    return config, state


def _withdrawn(config: TournamentConfig, table: str, players: list[str], seat: int) -> list[Event]:
    return [TableOpened(table=table, players=players, rules=config.rules, seed="s"), SeatWithdrawn(seat=seat, missed=1)]


def test_a_swiss_series_with_too_few_left_is_drawn_with_everyone_and_says_why() -> None:
    """Six entrants, one forfeited: five cannot sit at Skat tables of 3 and 4. The series is not
    skipped: everyone is seated, the forfeited seat played by the default action, and the reason
    is in the log."""
    config, state = _state("swiss")
    first = state.series_of(1)
    logs = {first[0].table: _withdrawn(config, first[0].table, first[0].players, 0)}
    drawn = draw_series(config, state, 2, logs, started=False)
    assert drawn is not None and drawn.series == 2
    assert sorted(p for t in drawn.tables for p in t.players) == sorted(ENTRANTS)
    assert first[0].players[0] in drawn.reason and "seated all the same" in drawn.reason


def test_a_round_robin_series_seating_a_forfeited_entrant_is_drawn_anew_without_it() -> None:
    config = TournamentConfig(
        id="t", entrants=[*ENTRANTS, "g"], bots={e: "random" for e in [*ENTRANTS, "g"]}, series=2,
        rules=Rules(rounds=1),
    )  # fmt: skip
    state = TournamentState()
    state.apply(TournamentCreated(config=config, tables=schedule(config)))
    first = state.series_of(1)
    out = first[0].players[1]
    logs = {first[0].table: _withdrawn(config, first[0].table, first[0].players, 1)}
    drawn = draw_series(config, state, 2, logs, started=False)
    assert drawn is not None and out in drawn.reason
    assert sorted(p for t in drawn.tables for p in t.players) == sorted(e for e in config.entrants if e != out)
    # A series that has begun is never drawn again.
    assert draw_series(config, state, 2, logs, started=True) is None
