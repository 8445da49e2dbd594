"""Duplicate comparison: the luck of the cards cancels out."""

from __future__ import annotations

import pytest

from skatbus.duplicate import duplicate, main


def test_a_bot_against_itself_is_exactly_even() -> None:
    duel = duplicate("stepping-random", "stepping-random", deals=9, seed="self")
    assert duel.deals == 9 and duel.mean == 0 and duel.half_width == 0
    assert "not separated" in duel.summary()


def test_random_play_is_clearly_weaker_than_the_heuristic() -> None:
    duel = duplicate("random", "heuristic", deals=30, seed="weak")
    assert duel.mean + duel.half_width < 0
    assert "random is weaker" in duel.summary()
    times = [s for t in duel.tables for s in t.decision_seconds]
    assert times and all(s >= 0 for s in times)


def test_a_mistake_is_one_line_and_exit_2() -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["pimc", "nosuchbot", "--deals", "3"])
    assert stopped.value.code == 2
