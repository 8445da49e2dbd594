"""Ratings across tournaments: rebuilt from the archives alone, the same every time, ordering
the built-in bots as the evaluations do, and leaving out what does not verify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skatbus.cli import main as cli_main
from skatbus.ratings import matches, ratings_of, run_order, write_ratings
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
