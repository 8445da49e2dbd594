"""Think times per player from hand-made stored times: computed, written into results.json and
the archive (each line's ``at``), printed, shown by ``skat report``, and the ISS export dating
each record by when its deal was played."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from protocol.archive import decode_line
from protocol.clocks import stamp_text
from protocol.events import Event, PlayerTimedOut
from protocol.skat.rules import Rules
from protocol.skat.table import TableState
from protocol.tournament import TableFinished, TournamentConfig, TournamentCreated, TournamentState, schedule
from skatbus.bots import make_bot
from skatbus.cli import main
from skatbus.records import iss_date
from skatbus.report import build_report
from skatbus.report_html import render_report
from skatbus.think_times import archive_think_times, format_think_times, think_times, think_times_json
from skatbus.tournament import write_results
from tests.skatbus.localrun import BOTS, play

THINK = {"heuristic": 0.25, "stepping": 0.5, "random": 1.125}
"""How long each entrant thinks over every move of its own, in the stamps made below."""
START = 1_764_662_400.0  # 2025-12-02T08:00:00Z


def _stamps(log: list[Event], start: float = START, late: int = -1) -> list[float]:
    """Stored times for ``log``: a derived event 10 ms after the one before it; a seat's own move
    its player's think time after it; a time-out 30 s after. ``late``: that event comes an hour
    after the one before (the services were away)."""
    state = TableState()
    at = start
    times: list[float] = []
    for i, event in enumerate(log):
        kind, seat, _ = state.clock_step(event) if state.clock is not None else ("other", -1, 0.0)
        if i == late:
            at += 3600.0
        elif kind == "move":
            at += THINK[state.players[seat]]
        elif kind == "timeout":
            at += 30.0
        else:
            at += 0.01
        state.apply(event, at)
        times.append(at)
    return times


def _own_moves(log: list[Event]) -> dict[str, int]:
    state = TableState()
    count: dict[str, int] = {}
    for event in log:
        if state.clock is not None:
            kind, seat, _ = state.clock_step(event)
            if kind == "move":
                count[state.players[seat]] = count.get(state.players[seat], 0) + 1
        state.apply(event)
    return count


def _table(slow: str = "random", every: int = 3) -> list[Event]:
    players = list(BOTS)
    bots = [make_bot(BOTS[p], f"think/{p}") for p in players]
    return play("t-think", players, bots, Rules(rounds=1), "think", slow, every).log


def test_each_players_think_times_are_its_own_moves() -> None:
    log = _table()
    found = think_times([(log, _stamps(log))])
    moves = _own_moves(log)
    assert set(found) == set(BOTS)
    for player, t in found.items():
        assert t.moves == moves[player] and t.unmeasured == 0 and t.budget_out == 0
        assert t.median == t.p95 == t.longest == THINK[player]
    assert any(isinstance(e, PlayerTimedOut) for e in log)  # time-outs are no moves: not measured


def test_a_move_after_the_services_were_away_is_unmeasured() -> None:
    log = _table(every=0)
    state = TableState()
    late = -1
    for i, event in enumerate(log):  # the first move of the deal
        if state.clock is not None and state.clock_step(event)[0] == "move":
            late, who = i, state.players[state.clock_step(event)[1]]
            break
        state.apply(event)
    found = think_times([(log, _stamps(log, late=late))])
    assert found[who].unmeasured == 1 and found[who].moves == _own_moves(log)[who] - 1
    assert found[who].longest == THINK[who]  # the hour is nobody's think time


def test_without_stored_times_nothing_is_measured() -> None:
    log = _table()
    found = think_times([(log, [None] * len(log))])
    assert all(t.moves == 0 and t.median is None for t in found.values())
    assert sum(t.unmeasured for t in found.values()) == sum(_own_moves(log).values())
    assert format_think_times(think_times_json([(log, [])])) == ""


def test_the_printed_table_has_a_row_per_player() -> None:
    log = _table()
    text = format_think_times(think_times_json([(log, _stamps(log))]))
    lines = text.splitlines()
    assert lines[0] == "think times (s)" and len(lines) == 2 + len(BOTS)
    assert re.search(r"random\s+\d+\s+1\.125\s+1\.125\s+1\.125\s+0\s+0$", text, re.M), text


def _run(out: Path, timed: bool = True) -> tuple[Path, dict[str, list[str]]]:
    """A two-table tournament written by the runner's own ``write_results``, with the server's
    stamps (nanoseconds) when ``timed``."""
    config = TournamentConfig(id="t-think", entrants=list(BOTS), bots=BOTS, rules=Rules(rounds=1), groups=2, seed="tt")
    state = TournamentState()
    tables = schedule(config)
    state.apply(TournamentCreated(config=config, tables=tables))
    logs: dict[str, list[Event]] = {}
    times: dict[str, list[str]] = {}
    for n, spec in enumerate(tables):
        bots = [make_bot(BOTS[p], f"tt/{p}") for p in spec.players]
        run = play(spec.table, spec.players, bots, config.rules, spec.seed, "random", 3)
        logs[spec.table] = run.log
        stamps = _stamps(run.log, START + 86_400 * n)
        times[spec.table] = [stamp_text(t)[:-1] + "456789Z" for t in stamps]  # as the server writes them
        s = run.state
        state.apply(TableFinished(table=spec.table, deals=len(s.sheet), totals=s.totals, seeger_fabian=s.sf_totals))
    write_results(config, state, logs, out / "t-think", times=times if timed else None)
    return out / "t-think", times


def test_the_runner_writes_stored_times_into_the_archive_and_think_times_into_results(tmp_path: Path) -> None:
    run, times = _run(tmp_path)
    lines = [decode_line(raw) for raw in (run / "archive.jsonl").read_bytes().splitlines()]
    assert lines and all(line.at is not None for line in lines)
    first = lines[0]
    assert first.at == times[first.table][0][:23] + "Z"  # to the millisecond
    results = json.loads((run / "results.json").read_text())
    section = results["think_times"]
    assert set(section) == set(BOTS)
    assert {p: section[p]["median"] for p in BOTS} == THINK
    assert all(section[p]["moves"] > 0 and set(section[p]) >= {"moves", "median", "p95", "longest"} for p in BOTS)
    assert archive_think_times(run / "archive.jsonl") == section  # the archive alone says the same


def test_an_archive_without_stored_times_still_reads(tmp_path: Path) -> None:
    run, _ = _run(tmp_path, timed=False)
    lines = [decode_line(raw) for raw in (run / "archive.jsonl").read_bytes().splitlines()]
    assert all(line.at is None for line in lines) and b'"at"' not in (run / "archive.jsonl").read_bytes()
    assert all(t["moves"] == 0 for t in json.loads((run / "results.json").read_text())["think_times"].values())
    report, _ = build_report(run / "results.json", run / "archive.jsonl")
    assert "Think times" not in render_report(report)


def test_the_report_shows_think_times(tmp_path: Path) -> None:
    run, _ = _run(tmp_path)
    report, _ = build_report(run / "results.json", run / "archive.jsonl")
    assert {p: t["median"] for p, t in report.think_times.items()} == THINK
    page = render_report(report)
    assert 'id="think-times"' in page and "1.125" in page


def test_iss_export_dates_each_record_by_when_its_deal_was_played(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, times = _run(tmp_path)
    sgf = tmp_path / "out.sgf"
    assert main(["iss", "export", str(run / "archive.jsonl"), "--out", str(sgf)]) == 0
    said = capsys.readouterr()
    assert "no stored time" not in said.err
    records = sgf.read_text().splitlines()
    assert records
    dealt: dict[str, list[str]] = {}
    for line in (decode_line(raw) for raw in (run / "archive.jsonl").read_bytes().splitlines()):
        if b"deal_dealt/" in bytes(line.event):
            assert line.time is not None
            dealt.setdefault(line.table, []).append(iss_date(datetime.fromtimestamp(line.time, UTC)))
    dates = [re.search(r"DT\[([^\]]*)\]", r)[1] for r in records]  # type: ignore[index]
    assert sorted(dates) == sorted(d for ds in dealt.values() for d in ds)
    assert min(dates).startswith("2025-12-02/08:00:")


def test_iss_export_of_an_archive_without_stored_times_says_so_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, _ = _run(tmp_path, timed=False)
    sgf = tmp_path / "out.sgf"
    assert main(["iss", "export", str(run / "archive.jsonl"), "--out", str(sgf)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if "no stored time" in line] == [
        f"{len(sgf.read_text().splitlines())} deals with no stored time in the archive: dated at the export"
    ]


def test_an_iss_import_keeps_each_records_date_and_the_export_gives_it_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = Path(__file__).parent.parent / "data" / "iss" / "iss-records.sgf"
    first = source.read_text().splitlines()[:3]
    sgf = tmp_path / "in.sgf"
    sgf.write_text("\n".join(first) + "\n")
    assert main(["iss", "import", str(sgf), "--out", str(tmp_path / "imported")]) in (0, 1)
    archive = tmp_path / "imported" / "archive.jsonl"
    lines = [decode_line(raw) for raw in archive.read_bytes().splitlines()]
    dated = [line for line in lines if line.at is not None]
    assert dated and all(b"table_opened" in bytes(d.event) or b"deal_dealt" in bytes(d.event) for d in dated)
    # No think time is made up: the moves carry no stored time.
    assert all(t["moves"] == 0 for t in archive_think_times(archive).values())
    out = tmp_path / "out.sgf"
    capsys.readouterr()
    assert main(["iss", "export", str(archive), "--out", str(out)]) == 0
    wanted = sorted(re.search(r"DT\[([^\]]*)\]", r)[1] for r in first)  # type: ignore[index]
    got = sorted(re.search(r"DT\[([^\]]*)\]", r)[1] for r in out.read_text().splitlines())  # type: ignore[index]
    assert got and set(got) <= set(wanted)
    assert "no stored time" not in capsys.readouterr().err
