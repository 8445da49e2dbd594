"""Ratings across tournaments: rebuilt from the archives alone, the same every time, ordering
the built-in bots as the evaluations do, and leaving out what does not verify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skatbus.cli import main as cli_main
from skatbus.ratings import matches, ratings_of, run_order, table_text, write_ratings
from tests.skatbus.localrun import make_run

EARLY, LATE = "t-aaaaaa-261130-090000-0001", "t-bbbbbb-261201-090000-0002"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    make_run(out, LATE, rounds=2, groups=2)  # written first, created later (by its id)
    make_run(out, EARLY, rounds=2, groups=2)
    return out


def test_the_built_in_bots_come_out_in_the_evaluations_order_with_intervals(runs: Path) -> None:
    r = ratings_of(runs)
    assert [p.player for p in r.players] == ["heuristic", "stepping", "random"]
    assert r.tournaments == [EARLY, LATE] and r.tables == len(matches(runs)) > 0
    for p in r.players:
        lo, hi = p.interval
        assert lo < p.mu < hi and p.sigma > 0 and p.tables == r.tables


def test_ratings_are_rebuilt_identically_from_the_logs(runs: Path) -> None:
    path = write_ratings(runs)
    first = path.read_text()
    assert json.loads(first) == ratings_of(runs).to_json()
    assert write_ratings(runs).read_text() == first


def test_tournaments_are_rated_in_the_order_they_were_created() -> None:
    assert sorted([Path(LATE), Path(EARLY), Path("t-old")], key=run_order) == [Path("t-old"), Path(EARLY), Path(LATE)]


def test_a_table_that_does_not_verify_is_left_out_and_said(runs: Path, tmp_path: Path) -> None:
    broken = tmp_path / "runs"
    run = make_run(broken, EARLY, rounds=1, groups=1)
    lines = (run / "archive.jsonl").read_bytes().splitlines(keepends=True)
    (run / "archive.jsonl").write_bytes(b"".join(lines[:-3]))  # the last table loses its end
    r = ratings_of(broken)
    assert r.skipped and ("not finished" in r.skipped[-1] or "does not verify" in r.skipped[-1])
    assert r.tables == len(matches(broken)) and r.tables >= 1


def test_skat_ratings_prints_them_and_refuses_a_missing_directory(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["ratings", "--runs", str(runs)]) == 0
    out = capsys.readouterr().out
    assert "heuristic" in out and "95 % interval" in out
    assert cli_main(["ratings", "--runs", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no such directory" in err


def test_a_remote_entrant_never_shares_a_rating_with_the_built_in_bot_of_its_name(tmp_path: Path) -> None:
    """An older run let a remote player call itself ``heuristic``: it is rated apart from the
    built-in bot (its identity has a kind), also from an archive written before kinds existed."""
    out = tmp_path / "runs"
    make_run(out, EARLY, rounds=1, groups=1)
    remote = make_run(out, LATE, rounds=1, groups=1)
    results = json.loads((remote / "results.json").read_text())
    del results["config"]["bots"]["heuristic"]  # in this run, "heuristic" connected by itself
    (remote / "results.json").write_text(json.dumps(results))
    r = ratings_of(out)
    named = [(p.player, p.kind) for p in r.players if p.player == "heuristic"]
    assert sorted(named) == [("heuristic", "bot"), ("heuristic", "remote")]
    both = {p.kind: p for p in r.players if p.player == "heuristic"}
    assert both["bot"].tables == both["remote"].tables == len(matches(out)) // 2
    assert "heuristic (remote)" in table_text(r)
    assert {(p["player"], p["kind"]) for p in r.to_json()["players"]} >= {("heuristic", "bot"), ("heuristic", "remote")}
    # results.json that does not say which entrants were built-in: all rated as remote.
    results.pop("config")
    (remote / "results.json").write_text(json.dumps(results))
    kinds = {(p.player, p.kind) for p in ratings_of(out).players}
    assert ("random", "remote") in kinds and ("random", "bot") in kinds


def test_a_withdrawn_seat_places_last_at_its_table(tmp_path: Path) -> None:
    """As in the standings: a seat withdrawn for missing its turns (here every turn of
    ``heuristic``) places below the others at that table, however many points it gathered."""
    from protocol.skat.rules import Rules
    from protocol.tournament import TableFinished, TournamentConfig, TournamentCreated, TournamentState, schedule
    from skatbus.bots import make_bot
    from skatbus.tournament import write_results
    from tests.skatbus.localrun import BOTS, play

    config = TournamentConfig(id=LATE, entrants=list(BOTS), bots=BOTS, groups=2, seed="withdrawn",
                              rules=Rules(rounds=1, seeger_fabian=True, max_timeouts=2))  # fmt: skip
    state, tables = TournamentState(), schedule(config)
    state.apply(TournamentCreated(config=config, tables=tables))
    logs = {}
    for spec in tables:
        bots = [make_bot(config.bots[p], p) for p in spec.players]
        run = play(spec.table, spec.players, bots, config.rules, spec.seed, "heuristic", 1)
        logs[spec.table] = run.log
        s = run.state
        state.apply(TableFinished(table=spec.table, deals=len(s.sheet), totals=s.totals, seeger_fabian=s.sf_totals))
    write_results(config, state, logs, tmp_path / "runs" / LATE)
    found = matches(tmp_path / "runs")
    assert found and all(m.withdrawn == [p == "heuristic" for p in m.players] for m in found)
    for m in found:
        ranks = m.ranks()
        assert ranks is not None and ranks[m.players.index("heuristic")] == max(ranks) > min(ranks)
    assert any(m.points[m.players.index("heuristic")] > min(m.points) for m in found), "no table tests the rule"
    assert ratings_of(tmp_path / "runs").players[-1].player == "heuristic"
