"""``python -m bench thirty-one`` runs beside the engine section and labels what each figure
is a multiple of. No speed is asserted here; the workloads are checked to do the work."""

from __future__ import annotations

import pytest

from bench import Options, format_rows, thirty_one
from bench import __main__ as cli

TINY = {"base": 200, "skat": 5, "2p": 3, "3p": 3, "6p": 2, "9p": 1, "deals": 10, "aec": 2}


def test_the_section_is_registered_right_after_the_skat_engine() -> None:
    names = list(cli.SECTIONS)
    assert names[names.index("engine") + 1] == "thirty-one"
    assert cli.SECTIONS["thirty-one"].module == "bench.thirty_one"


def test_the_section_runs_and_says_what_each_figure_is_a_multiple_of(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(thirty_one, "_sizes", lambda opts: TINY)
    rows = thirty_one.run(Options(quick=True, repeats=1))
    names = [r.name for r in rows]
    assert names == [
        "interpreter baseline",
        "Skat random deals (reference)",
        "Thirty-one random games, 2 players",
        "Thirty-one random games, 3 players",
        "Thirty-one random games, 6 players",
        "Thirty-one random games, 9 players",
        "Thirty-one random deals, Deal only, 3 players",
        "Thirty-one AEC env, masked random policy, 3 players",
    ]
    assert all(r.value > 0 for r in rows)
    assert all(r.vs.endswith("x interpreter baseline's units/s") for r in rows)
    by_name = {r.name: r for r in rows}
    skat = by_name["Skat random deals (reference)"].value
    for name in names[2:7]:
        row = by_name[name]
        ratio = f"{row.value / skat:.3g}x the Skat random deals/s row"
        assert row.note.startswith(ratio), row.note
    assert "x the 3-player games row's actions/s" in by_name[names[-1]].note
    table = format_rows("[thirty-one]", rows)
    assert all(name in table for name in names)


def test_random_games_play_to_the_end() -> None:
    actions, deals = thirty_one.play_random_games(["a", "b"], 1, 3)
    assert deals >= 2 and actions > deals  # every deal but a dealt 31 has turns
    assert thirty_one.play_random_games(["a", "b"], 1, 3) == (actions, deals)  # identical repeats
    assert thirty_one.play_random_deals_t31(["a", "b", "c"], 1) > 3
    assert thirty_one.aec_steps(2, 1) > 0
