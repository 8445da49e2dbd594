"""``skat iss check | import | export`` (services/records.py), through the command line.

The expected verdict of every real record comes from provenance.tsv (written independently of
the engine); round trips compare parsed records, so they test what the format means, not
how one writer happens to spell it.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
from pathlib import Path

import msgspec
import pytest

from protocol.events import DealScored, TableClosed
from protocol.skat.commands import Discard
from protocol.skat.iss import COMPARED_FIELDS, IssRecord, check, parse_record, replay
from protocol.skat.rules import Rules
from protocol.skat.table import fold
from skatbus.bots import SteppingRandomBot
from skatbus.cli import main
from skatbus.heuristic import HeuristicBot
from skatbus.local import play_table
from skatbus.records import archive_line, read_archive

DATA = Path(__file__).parents[1] / "data" / "iss"
SGF = DATA / "iss-records.sgf"
LINES = SGF.read_text().splitlines()
PROVENANCE = {r["game_id"]: r for r in csv.DictReader((DATA / "provenance.tsv").open(), delimiter="\t")}
SKIPPED = {"penalty (timeout/left before contract)": "penalty", "timeout": "timeout", "corrupt (?? move)": "corrupt"}
EXPECTED = {gid: SKIPPED.get(row["class"], "agree") for gid, row in PROVENANCE.items()}
COMPARABLE = [l for l in LINES if EXPECTED[parse_record(l).game_id] == "agree"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = main(list(argv))
    return code, capsys.readouterr().out.splitlines()


# --- check -------------------------------------------------------------------------------


def test_check_agrees_on_every_comparable_record_and_skips_the_rest(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "iss", "check", str(SGF))
    assert code == 0
    assert len(out) == 48
    for line in out[:-1]:
        gid, status = line.split()[:2]
        want = EXPECTED[gid]
        if want == "agree":
            assert status == "agree", line
        else:
            assert status == "skipped" and line.split()[2] == f"{want}:", line
    assert out[-1].startswith("47 records: 43 agree, 0 differ, 4 skipped (corrupt 1, penalty 2, timeout 1), 0 error;")
    assert "records/s" in out[-1]


def test_check_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "iss", "check", str(SGF), "--json")
    assert code == 0
    rows = [json.loads(l) for l in out]
    *records, summary = rows
    assert len(records) == 47
    for r in records:
        want = EXPECTED[r["game_id"]]
        assert r["status"] == ("agree" if want == "agree" else "skipped")
        if want != "agree":
            assert r["skip"] == want
    s = summary["summary"]
    assert (s["records"], s["agree"], s["differ"], s["skipped"], s["error"]) == (47, 43, 0, 4, 0)
    assert s["skipped_by_reason"] == {"corrupt": 1, "penalty": 2, "timeout": 1}
    assert s["records_per_s"] > 0


def test_a_wrong_published_result_differs_and_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = next(l for l in LINES if "ID[684159]" in l)
    f = tmp_path / "bad.sgf"
    f.write_text(line.replace("v:96", "v:72").replace("p:85", "p:84") + "\n")
    code, out = run(capsys, "iss", "check", str(f))
    assert code == 1
    assert "differ" in out[0] and "value 72 vs 96" in out[0] and "points 84 vs 85" in out[0]
    code, out = run(capsys, "iss", "check", str(f), "--json")
    assert json.loads(out[0])["differences"]["value"] == {"published": 72, "engine": 96}


def test_garbage_and_illegal_moves_are_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = next(l for l in LINES if "ID[541932]" in l)
    f = tmp_path / "bad.sgf"
    f.write_text("garbage\n\n" + good.replace("0 SA 1 S7", "0 SA 1 HA") + "\n" + good + "\n")
    code, out = run(capsys, "iss", "check", str(f))
    assert code == 1
    assert out[0].startswith("    line 1  error")
    assert "541932  error" in out[1] and "not in your hand" in out[1]
    assert "541932  agree" in out[2]
    assert " 1 agree, 0 differ, 0 skipped, 2 error" in out[3]


@pytest.mark.parametrize("suffix", [".bz2", ".gz", "-"])
def test_compressed_files_and_stdin(
    suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = SGF.read_bytes()
    if suffix == "-":
        monkeypatch.setattr("sys.stdin", io.StringIO(data.decode()))
        path = "-"
    else:
        f = tmp_path / f"records.sgf{suffix}"
        f.write_bytes(bz2.compress(data) if suffix == ".bz2" else gzip.compress(data))
        path = str(f)
    code, out = run(capsys, "iss", "check", path)
    assert code == 0
    assert out[-1].startswith("47 records: 43 agree")


# --- import ------------------------------------------------------------------------------


def imported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, list[str]]:
    code, out = run(capsys, "iss", "import", str(SGF), "--out", str(tmp_path / "imp"))
    assert code == 0
    return tmp_path / "imp" / "archive.jsonl", out


def test_import_writes_one_folding_table_per_comparable_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive, out = imported(tmp_path, capsys)
    skipped = {l.split()[0]: l.split()[2].rstrip(":") for l in out if "  skipped  " in l}
    assert skipped == {gid: want for gid, want in EXPECTED.items() if want != "agree"}
    assert any(l.startswith("imported 43 tables") for l in out)
    tables: dict[str, list] = {}
    for row in read_archive(archive.read_text().splitlines()):
        assert row.index == len(tables.setdefault(row.table, []))
        tables[row.table].append(row.event)
    assert len(tables) == 43
    for table, events in tables.items():
        state = fold(events)  # the log follows the rules, derived events included
        assert state.closed and len(state.sheet) == 1 and state.table == table
        assert isinstance(events[-2], DealScored) and isinstance(events[-1], TableClosed)
        record = parse_record(next(l for l in LINES if f"ID[{table[4:]}]" in l))
        assert state.players == record.players
        result = events[-2].result
        assert record.result is not None
        if record.result.passed:
            assert result.kind == "passed"
        else:
            assert result.game_score == record.result.value
            assert result.declarer_points == record.result.points


def test_archive_lines_are_what_the_tournament_writes() -> None:
    """skatbus.tournament.write_results spells each line this way; keep them in step."""
    from protocol.events import TableClosed as Closed

    line = archive_line("t-1", 7, Closed(reason="x"))
    assert json.loads(line) == {"table": "t-1", "index": 7, "event": {"type": "table_closed/1", "reason": "x"}}
    assert line.endswith(b"}\n")


# --- export ------------------------------------------------------------------------------


def modeled(record: IssRecord, resigned: bool = True) -> tuple[object, ...]:
    """What a round trip must keep: the cards, the moves the engine plays (ISS logs some
    after the deal is decided), the compared result fields and resignation (older records
    have no ``r:``; ``resigned=False`` leaves it out)."""
    played = len(replay(record).history)
    r = record.result
    assert r is not None
    fields = tuple(getattr(r, f) for f in (*COMPARED_FIELDS, "passed", *(("resigned",) if resigned else ())))
    moves = [(pos, _unordered(c)) for pos, c in record.moves[:played]]
    return record.hands, record.skat, moves, fields, record.players, record.game_id


def _unordered(command: object) -> object:
    """A discard is a set of two cards: our events list it sorted (``decide``), ISS as clicked."""
    return frozenset(command.cards) if isinstance(command, Discard) else command


def test_import_then_export_round_trips_every_comparable_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive, _ = imported(tmp_path, capsys)
    sgf = tmp_path / "back.sgf"
    code, out = run(capsys, "iss", "export", str(archive), "--out", str(sgf))
    assert code == 0 and out == [f"exported 43 deals to {sgf}; 0 not exportable"]
    back = {r.game_id: r for r in map(parse_record, sgf.read_text().splitlines())}
    assert len(back) == len(COMPARABLE) == 43
    for line in COMPARABLE:
        original = parse_record(line)
        again = back[original.game_id]
        has_r = " r:" in original.header["R"]
        assert modeled(again, has_r) == modeled(original, has_r), original.game_id
        assert again.header["MV"].split()[1] == original.header["MV"].split()[1]  # cards in ISS order
        assert check(again).status == "agree"
    code, out = run(capsys, "iss", "check", str(sgf))
    assert code == 0 and out[-1].startswith("43 records: 43 agree")


def write_archive(path: Path, runs: list) -> int:  # type: ignore[type-arg]
    with open(path, "wb") as f:
        for run_ in runs:
            f.writelines(archive_line(run_.table, i, e) for i, e in enumerate(run_.log))
    return sum(len(r.state.sheet) for r in runs)


def test_export_of_a_tournament_archive_checks_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    players = ["heuristic", "random-a", "random-b"]
    runs = [
        play_table(
            f"t-x-g{g}", players, [HeuristicBot("h"), SteppingRandomBot(f"a{g}"), SteppingRandomBot(f"b{g}")],
            Rules(rounds=3, seeger_fabian=True, kontra=g == 1, bock=g == 1), f"tx/{g}",
        )
        for g in range(3)
    ]  # fmt: skip
    runs.append(play_table("t-x-4p", [*players, "d"], [SteppingRandomBot(str(i)) for i in range(4)],
                           Rules(rounds=1, players=4), "tx/4p"))  # fmt: skip
    archive = tmp_path / "archive.jsonl"
    deals = write_archive(archive, runs)
    sgf = tmp_path / "t.sgf"
    code, out = run(capsys, "iss", "export", str(archive), "--out", str(sgf))
    assert code == 0 and out == [f"exported {deals} deals to {sgf}; 0 not exportable"]
    records = [parse_record(l) for l in sgf.read_text().splitlines()]
    assert len(records) == deals == 3 * 9 + 4
    for record in records:
        assert check(record).status == "agree", (record.game_id, check(record))
    # Seats rotate: P0 is forehand of that deal, and the dealer of a 4-player table sits out.
    first = {r.game_id: r for r in records}
    assert first["t-x-g0/1"].players == players
    assert first["t-x-g0/2"].players == [players[1], players[2], players[0]]
    assert first["t-x-4p/1"].players == players  # deal 1: seat 3 deals and sits out
    assert first["t-x-4p/4"].players == ["d", "heuristic", "random-a"]
    code, out = run(capsys, "iss", "check", str(sgf))
    assert code == 0 and out[-1].startswith(f"{deals} records: {deals} agree")


def test_ramsch_deals_are_reported_not_exported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_ = play_table("t-r", ["a", "b", "c"], [SteppingRandomBot(s) for s in "abc"], Rules(rounds=4, ramsch=True), "r")
    ramsch = sum(1 for row in run_.state.sheet if row.result.kind == "ramsch")
    archive = tmp_path / "archive.jsonl"
    deals = write_archive(archive, [run_])
    sgf = tmp_path / "r.sgf"
    code = main(["iss", "export", str(archive), "--out", str(sgf)])
    said = capsys.readouterr()
    assert code == 0 and ramsch
    # Said once for all of them (on stderr, as skat records export says what it skips), not per deal.
    assert said.err.splitlines() == [
        f"{ramsch} Ramsch deal{'s' * (ramsch != 1)} not exported: ISS records have no Ramsch",
        f"{deals - ramsch} deals with no stored time in the archive: dated at the export",  # an archive without at
    ]
    assert said.out.splitlines() == [f"exported {deals - ramsch} deals to {sgf}; {ramsch} not exportable"]
    assert len(sgf.read_text().splitlines()) == deals - ramsch


def test_a_broken_archive_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "a.jsonl"
    # A known event with a broken field (an unknown type would be skipped, as in the store).
    archive.write_text('{"table":"t","index":0,"event":{"type":"bid/1","seat":"x","value":18}}\n')
    code = main(["iss", "export", str(archive), "--out", str(tmp_path / "x.sgf")])
    assert code == 1
    assert "archive line 1" in capsys.readouterr().err


def test_msgspec_event_json_is_the_archive_payload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive, _ = imported(tmp_path, capsys)
    first = json.loads(archive.read_text().splitlines()[0])
    assert first["event"]["type"] == "table_opened/1"
    assert first["event"]["rules"]["rounds"] == 0  # open-ended, closed after its one deal
    assert msgspec.json.decode(json.dumps(first["event"]["rules"]), type=Rules) == Rules()


def test_check_in_worker_processes_gives_the_same_lines(capsys: pytest.CaptureFixture[str]) -> None:
    _, one = run(capsys, "iss", "check", str(SGF), "--json")
    code, two = run(capsys, "iss", "check", str(SGF), "--json", "--jobs", "2")
    assert code == 0 and one[:-1] == two[:-1]
