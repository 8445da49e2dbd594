"""Golden test of the worked example 12 of the Thirty-one rules page, a whole game, and of the
details of the game's end (T26, T27, T36-T39)."""

from __future__ import annotations

from protocol.events import TableClosed
from protocol.thirty_one import GAME, T31DealEnded, T31DealScored, fold, view

from .helpers import Table


def test_example_12_a_whole_game() -> None:
    """Example 12: "Three players A, B, C (seats 0, 1, 2), 3 coins each, the county on."

    | deal | dealer | what happens | lives lost | coins A B C | kitty |
    | 1 | C | A knocks on his first turn; shown A 25, B 17, C 22 | B 1 | 3 2 3 | 1 |
    | 2 | A | C makes 31 | A 1, B 1 | 2 1 3 | 3 |
    | 3 | B | B knocks; shown A 23, B 20, C 28: B alone lowest | B 2: pays 1, owes 1, eliminated (3rd) | 2 0 3 | 4 |
    | 4 | C | C knocks; shown A 14, C 26 | A 1 | 1 - 3 | 5 |
    | 5 | A | A knocks; shown A 27, C 27: the knocker tied | C 1 | 1 - 2 | 6 |
    | 6 | C | A knocks; shown A 19, C 24: A alone lowest | A 2: pays 1, owes 1, eliminated (2nd) | 0 - 2 | 7 |

    "C wins and takes the kitty: 2 + 7 = 9 coins, every coin of the game. Dealers: deal 1 the
    last seat C; then clockwise; after B's elimination in deal 3 the deal passes from B's seat
    to C." """
    t = Table(3, coins=3, county=True)
    rows = []

    def row() -> None:
        scored = t.last(T31DealScored)
        rows.append((scored.deal, "ABC"[t.state.dealer], scored.lives, scored.coins, scored.kitty, scored.eliminated))

    # Deal 1, dealer C: A knocks on his first turn; shown A 25, B 17, C 22.
    t.deal({"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"], "C": ["DT", "D9", "D3"]}, pile="C5")
    t.act("A", "knock")
    t.churn("B", "C")
    assert [t.value(s) for s in "ABC"] == [25, 17, 22]
    row()
    # Deal 2, dealer A (order B C A): C makes 31.
    t.deal({"A": ["C2", "C3", "D5"], "B": ["H2", "H3", "D6"], "C": ["SA", "SK", "D2"]}, pile="C5", stock=["C4", "SQ"])
    t.churn("B")
    t.play("C take stock", "C discard D2")
    assert t.last(T31DealEnded).end == "thirty_one"
    row()
    # Deal 3, dealer B (order C A B): B knocks; shown A 23, B 20, C 28.
    t.deal({"A": ["HK", "HQ", "H3"], "B": ["SK", "ST", "C2"], "C": ["DA", "DK", "D7"]}, pile="C5")
    t.churn("C", "A")
    t.act("B", "knock")
    t.churn("C", "A")
    assert [t.value(s) for s in "ABC"] == [23, 20, 28]
    row()
    # Deal 4, dealer C (the deal passes from B's seat to C; order A C): C knocks; A 14, C 26.
    t.deal({"A": ["H9", "H5", "C2"], "C": ["DA", "DK", "D5"]}, pile="C5")
    t.churn("A")
    t.act("C", "knock")
    t.churn("A")
    assert t.last(T31DealEnded).shown == [["H9", "H5", "C2"], [], ["DA", "DK", "D5"]]
    row()
    # Deal 5, dealer A (order C A): A knocks; A 27, C 27: the knocker tied.
    t.deal({"A": ["HA", "HK", "H6"], "C": ["DA", "DQ", "D6"]}, pile="C5")
    t.churn("C")
    t.act("A", "knock")
    t.churn("C")
    row()
    # Deal 6, dealer C (order A C): A knocks; A 19, C 24: A alone lowest.
    t.deal({"A": ["HK", "H9", "C2"], "C": ["DA", "DK", "D3"]}, pile="C5")
    t.act("A", "knock")
    t.churn("C")
    row()

    assert rows == [
        (1, "C", [0, 1, 0], [3, 2, 3], 1, []),
        (2, "A", [1, 1, 0], [2, 1, 3], 3, []),
        (3, "B", [0, 2, 0], [2, 0, 3], 4, [1]),
        (4, "C", [1, 0, 0], [1, 0, 3], 5, []),
        (5, "A", [0, 0, 1], [1, 0, 2], 6, []),
        (6, "C", [2, 0, 0], [0, 0, 2], 7, [0]),
    ]
    # T27, T36: one player is left; he wins and takes the kitty: 2 + 7 = 9 coins.
    closed = t.log[-1]
    assert closed == TableClosed(reason="one player left")
    result = t.state.result()
    assert result.coins == [0, 0, 9] and result.kitty == 0 and result.complete
    assert result.places == [2, 3, 1]  # "eliminated (3rd)", "eliminated (2nd)"
    assert GAME.standings(t.state) == [2, 3, 1]
    assert [r.dealer for r in t.state.sheet] == [2, 0, 1, 2, 0, 2]
    assert view(t.state, -1).places == [2, 3, 1] and view(t.state, -1).phase == "closed"
    # The log replays to the same result.
    assert fold(t.log).result() == result


def test_t37_shared_places_skip_the_places_they_take() -> None:
    """T37: "Shared places skip the places they take: 1, 2, 2, 4 (competition ranking)."
    County off, one coin: D is out in deal 1; B and C together in deal 2; A wins."""
    t = Table(4, coins=1, county=False)
    t.deal(
        {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"], "C": ["DT", "D9", "D3"], "D": ["C3", "C4", "S2"]}, pile="C5"
    )
    t.act("A", "knock")
    t.churn("B", "C", "D")
    assert t.last(T31DealScored).eliminated == [3]
    # Deal 2: dealer A (the next active seat after D), order B C A.
    t.deal({"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"], "C": ["D9", "D8", "C3"]}, pile="C5")
    t.churn("B", "C")
    t.act("A", "knock")
    t.churn("B", "C")
    assert t.last(T31DealScored).eliminated == [1, 2]
    assert t.log[-1] == TableClosed(reason="one player left")
    assert t.state.result().places == [1, 2, 2, 4]
    assert t.state.result().coins == [4, 0, 0, 0]


def test_t38_max_deals_ranks_the_active_by_coins_and_keeps_the_kitty() -> None:
    """T38: "A game that reaches max_deals has complete: true; nobody takes the kitty; the
    active players are ranked by coins (equal coins share), then the eliminated in reverse
    order of elimination." """
    t = Table(4, coins=1, county=False, max_deals=1)
    t.deal(
        {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"], "C": ["DA", "DK", "D3"], "D": ["C3", "C4", "S2"]}, pile="C5"
    )
    t.act("A", "knock")
    t.churn("B", "C", "D")
    assert t.last(T31DealScored).lives == [0, 0, 0, 1]
    assert t.log[-1] == TableClosed(reason="max_deals reached")
    result = t.state.result()
    assert result.complete and result.kitty == 1 and result.coins == [1, 1, 1, 0]
    assert result.places == [1, 1, 1, 4]
    t2 = Table(3, max_deals=1)
    t2.deal({"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"], "C": ["DA", "DK", "D3"]}, pile="C5")
    t2.act("A", "knock")
    t2.churn("B", "C")
    assert t2.state.result().places == [1, 3, 1] and t2.state.result().coins == [3, 2, 3]


def test_t38_a_game_cut_short_shares_place_one() -> None:
    """T38: "A record cut short (complete: false): all active players share place 1." Also a
    table closed early by its operator: not complete, nobody takes the kitty."""
    t = Table(3)
    t.deal({"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"], "C": ["DA", "DK", "D3"]}, pile="C5")
    t.act("A", "knock")
    t.churn("B", "C")
    result = t.state.result()
    assert not result.complete and result.places == [1, 1, 1] and result.coins == [3, 2, 3]
    t.add(TableClosed(reason="aborted by the operator"))
    result = t.state.result()
    assert not result.complete and result.places == [1, 1, 1] and result.kitty == 1


def test_t39_lives_beyond_what_can_be_paid() -> None:
    """T39: "lives are the lives lost, even beyond what could be paid (a knocker alone lowest with
    one coin: lives 2, one coin paid); eliminated seats have 0 coins; eliminated is in seat
    order." """
    t = Table(3, coins=1)
    t.deal({"A": ["C2", "C3", "D4"], "B": ["S2", "S3", "D5"], "C": ["HA", "HK", "HQ"]}, pile="C5")
    scored = t.last(T31DealScored)  # C is dealt 31: A and B each lose a life and pay their coin
    assert scored.lives == [1, 1, 0] and scored.coins == [0, 0, 1] and scored.eliminated == []
    # Deal 2, dealer A, order B C A: A knocks alone lowest: 2 lives, no coin to pay: out.
    t.deal({"A": ["C2", "C3", "D4"], "B": ["SA", "SK", "D5"], "C": ["HA", "HK", "D2"]}, pile="C5")
    t.churn("B", "C")
    t.act("A", "knock")
    t.churn("B", "C")
    scored = t.last(T31DealScored)
    assert scored.lives == [2, 0, 0] and scored.coins == [0, 0, 1] and scored.kitty == 2
    assert scored.eliminated == [0]


def test_t26_eliminated_together_in_seat_order() -> None:
    """T26, T39: players eliminated by one deal share their place; ``eliminated`` lists them in
    seat order."""
    t = Table(4, coins=1, county=False)
    t.deal(
        {"A": ["C2", "C3", "D4"], "B": ["HA", "HK", "HQ"], "C": ["S2", "S3", "D5"], "D": ["SA", "SK", "ST"]}, pile="C5"
    )
    scored = t.last(T31DealScored)
    assert scored.eliminated == [0, 2] and t.state.places() == [3, 1, 3, 1]
    assert t.state.active == [1, 3]
