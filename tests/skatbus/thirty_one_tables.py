"""Thirty-one tables played through the pure engine, for the replay and report tests.

The games are played by seeded random players over the engine (``protocol.thirty_one``:
``due``, ``decide``, ``timeout``), so the logs are real ones, the archive is written in the
tournament runner's format (``protocol.archive.encode_line``), and nothing in them is typed in
by hand. A player knocks rarely (so deals run long enough to reach restocks, voids and the
turn limit), and every ``every``-th turn of the table times out (the time-out and the default
action, as the play service writes them).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path

from protocol.archive import encode_line
from protocol.events import Event
from protocol.thirty_one import GAME, Knock, Rejection, ThirtyOneRules, ThirtyOneState, Throw, decide, due, fold
from protocol.thirty_one.decide import timeout


def play(
    table: str, players: Sequence[str], rules: ThirtyOneRules, seed: str, knock: float = 0.08, every: int = 0
) -> list[Event]:
    """One whole game; its log. ``knock``: how often a player who may knock does (a throw-down
    as often)."""
    log: list[Event] = [GAME.open_event(table, list(players), rules, seed, {})]
    state: ThirtyOneState = fold(log)
    rng = random.Random(seed)
    turns = 0
    while not state.closed:
        owed = due(state)
        if owed is not None:
            events: list[Event] = [owed]
        else:
            seat = state.to_move
            assert seat is not None, "nothing is due and nobody is to move"
            turns += 1
            if every and turns % every == 0:
                events = timeout(state) or []
            else:
                legal = state.legal_actions(seat)
                bold = [c for c in legal if isinstance(c, (Knock, Throw))]
                calm = [c for c in legal if not isinstance(c, (Knock, Throw))]
                command = rng.choice(bold if bold and (not calm or rng.random() < knock) else calm)
                chosen = decide(state, seat, command)
                assert not isinstance(chosen, Rejection), chosen.reason
                events = chosen
        for event in events:
            state.apply(event)
            log.append(event)
    return log


def tables() -> dict[str, list[Event]]:
    """The test archive's tables: three players under the default rules; four under
    throw_down, an empty stock that voids the deal and a turn limit."""
    return {
        "t31-a": play("t31-a", ["ann", "bob", "cid"], ThirtyOneRules(), "t31/b", knock=0.01, every=23),
        "t31-b": play(
            "t31-b",
            ["ann", "bob", "cid", "dan"],
            ThirtyOneRules(coins=2, throw_down=True, stock_out="void", max_turns=80),
            "t31/c",
            knock=0.02,
        ),
    }


def write_archive(path: Path, logs: Mapping[str, Sequence[Event]]) -> Path:
    path.write_bytes(b"".join(encode_line(t, i, e) for t, events in logs.items() for i, e in enumerate(events)))
    return path


def example_12() -> list[Event]:
    """The log of the rules page's worked example 12, "a whole game": three players A, B, C
    (seats 0, 1, 2), 3 coins each, the county on, the deals as the example gives them (the same
    moves as tests/protocol/thirty_one/test_whole_game.py; a turn nobody needs is a "churn":
    take the stock's top card and discard it)."""
    from tests.protocol.thirty_one.helpers import Table

    t = Table(3, coins=3, county=True)
    # Deal 1, dealer C: A knocks on his first turn; shown A 25, B 17, C 22.
    t.deal({"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"], "C": ["DT", "D9", "D3"]}, pile="C5")
    t.act("A", "knock")
    t.churn("B", "C")
    # Deal 2, dealer A: C makes 31.
    t.deal({"A": ["C2", "C3", "D5"], "B": ["H2", "H3", "D6"], "C": ["SA", "SK", "D2"]}, pile="C5", stock=["C4", "SQ"])
    t.churn("B")
    t.play("C take stock", "C discard D2")
    # Deal 3, dealer B: B knocks; shown A 23, B 20, C 28.
    t.deal({"A": ["HK", "HQ", "H3"], "B": ["SK", "ST", "C2"], "C": ["DA", "DK", "D7"]}, pile="C5")
    t.churn("C", "A")
    t.act("B", "knock")
    t.churn("C", "A")
    # Deal 4, dealer C: C knocks; shown A 14, C 26.
    t.deal({"A": ["H9", "H5", "C2"], "C": ["DA", "DK", "D5"]}, pile="C5")
    t.churn("A")
    t.act("C", "knock")
    t.churn("A")
    # Deal 5, dealer A: A knocks; shown A 27, C 27: the knocker tied.
    t.deal({"A": ["HA", "HK", "H6"], "C": ["DA", "DQ", "D6"]}, pile="C5")
    t.churn("C")
    t.act("A", "knock")
    t.churn("C")
    # Deal 6, dealer C: A knocks; shown A 19, C 24: A alone lowest.
    t.deal({"A": ["HK", "H9", "C2"], "C": ["DA", "DK", "D3"]}, pile="C5")
    t.act("A", "knock")
    t.churn("C")
    return t.log
