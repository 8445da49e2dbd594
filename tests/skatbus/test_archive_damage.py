"""Archives that explain themselves: a damaged line costs only its table, an event of a newer
skatbus is named as such, a changed event is named field by field.

The archives are real tables played through the pure engine (``skatbus.local``), written in the
runner's archive format; each test damages one the way a crash, a disk or an editor would, and
runs the commands a person would (``skat replay``, ``skat verify``, ``skat report``, the exports).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol.archive import encode_line
from protocol.events import CardPlayed, DealScored, Event, TableOpened
from protocol.skat.rules import Rules
from skatbus.archive_reader import NotAnArchive, read_tables
from skatbus.bots import SteppingRandomBot
from skatbus.cli import main
from skatbus.signing import load_or_create_key
from skatbus.verify import verify_run

from .fair_runs import Built, build, skat_legacy
from .thirty_one_tables import tables as thirty_one_tables
from .thirty_one_tables import write_archive as write_thirty_one

PLAYERS = ["alice", "bob", "carol"]
TABLES = ("t-a", "t-b", "t-c")


def _log(name: str) -> list[Event]:
    from skatbus.local import play_table

    bots = [SteppingRandomBot(f"{name}/{i}") for i in range(3)]
    return play_table(name, PLAYERS, bots, Rules(rounds=1, seeger_fabian=True), name).log  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def logs() -> dict[str, list[Event]]:
    return {name: _log(name) for name in TABLES}


def _lines(logs: dict[str, list[Event]]) -> list[bytes]:
    """The tables interleaved line by line, as a runner writing them as they come would."""
    out: list[bytes] = []
    longest = max(len(log) for log in logs.values())
    for i in range(longest):
        for name, log in logs.items():
            if i < len(log):
                out.append(encode_line(name, i, log[i]))
    return out


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    said = capsys.readouterr()
    return code, said.out, said.err


def _archive(tmp_path: Path, lines: list[bytes]) -> Path:
    path = tmp_path / "archive.jsonl"
    path.write_bytes(b"".join(lines))
    return path


def _cut_last(lines: list[bytes]) -> tuple[list[bytes], str, int]:
    """A half-written last line (the runner killed while writing it); ``table T, event N`` as
    the warning names it, and its line number."""
    entry = json.loads(lines[-1])
    return [*lines[:-1], lines[-1][: len(lines[-1]) // 2]], f"{entry['table']}, event {entry['index']}", len(lines)


def _newer_opening(lines: list[bytes], table: str) -> list[bytes]:
    """``table``'s table_opened as a newer skatbus would write it (``table_opened/9``)."""
    out = []
    for line in lines:
        entry = json.loads(line)
        if entry["table"] == table and entry["index"] == 0:
            entry["event"]["type"] = "table_opened/9"
            line = json.dumps(entry).encode() + b"\n"
        out.append(line)
    return out


# --- a damaged line costs only its table -----------------------------------------------------


def test_a_half_written_last_line_costs_only_its_table(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    lines, where, lineno = _cut_last(_lines(logs))
    table = where.partition(",")[0]
    path = _archive(tmp_path, lines)
    code, out, err = _cli(capsys, "replay", str(path), "--list")
    assert code == 0
    assert [line.split()[1] for line in out.splitlines()] == list(TABLES)  # every table still lists
    assert err.splitlines() == [
        f"skat replay: warning: {path}: line {lineno}: table {where} does not decode (cut off); "
        "the table is read up to there"
    ]
    code, out, err = _cli(capsys, "replay", str(path), "--verify")
    others = [t for t in TABLES if t != table]
    assert code == 1 and len(err.splitlines()) == 1
    assert out.splitlines() == [
        f"{table}: event {len(logs[table]) - 1}: line {lineno} does not decode (cut off)",
        f"1 of {len(TABLES)} tables do not verify",
    ]
    for other in others:  # the others replay and verify one by one too
        code, out, _ = _cli(capsys, "replay", str(path), "--table", other, "--verify")
        assert code == 0 and out.startswith("ok: "), out


def test_garbage_in_the_middle_costs_only_the_table_it_names(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines(logs)
    k = 40
    table, index = json.loads(lines[k])["table"], json.loads(lines[k])["index"]
    lines[k] = lines[k][:30] + b"\x00\xff garbage" + lines[k][30:]
    path = _archive(tmp_path, lines)
    code, out, err = _cli(capsys, "replay", str(path), "--summary")
    assert code == 1
    assert f"line {k + 1}: table {table}, event {index} does not decode" in err and len(err.splitlines()) == 1
    assert out.count("totals after") == len(TABLES)  # every table summarised, the damaged one up to there
    assert f"event {index}: line {k + 1} does not decode" in out


def test_the_summary_names_a_table_it_cannot_read(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    """A table whose table_opened is of a newer skatbus has no players to head its sheet with
    (it once crashed the summary): it is named, the other tables are summarised."""
    path = _archive(tmp_path, _newer_opening(_lines(logs), "t-a"))
    code, out, err = _cli(capsys, "replay", str(path), "--summary")
    assert code == 1 and err == ""
    assert "table t-a: cannot be read (event 0: table_opened/9 was written by a newer skatbus" in out
    assert out.count("totals after") == len(TABLES) - 1
    assert out.splitlines()[-1] == "1 of 3 tables cannot be read whole: t-a"


def test_a_line_that_names_no_table_is_one_warning(tmp_path: Path, logs: dict[str, list[Event]]) -> None:
    lines = _lines(logs)
    lines.insert(10, b"this is not JSON at all\n")
    found = read_tables(lines)
    (said,) = found.warnings.lines()
    assert said.startswith("line 11: not an archive line (JSON is malformed") and said.endswith(
        "its table cannot be told"
    )
    assert [t for t, read in found.tables.items() if read.problem is None] == list(TABLES)


def test_many_damaged_lines_are_counted_after_a_few(logs: dict[str, list[Event]]) -> None:
    lines = _lines(logs)
    for k in range(5, 45, 4):
        lines[k] = b"{broken\n"
    said = read_tables(lines).warnings.lines()
    assert len(said) == 6 and said[-1] == "... and 5 more damaged lines"


def test_a_file_that_is_no_archive_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("shopping list\nmilk\n")
    with pytest.raises(NotAnArchive):
        read_tables(path.read_bytes().splitlines())
    code, _, err = _cli(capsys, "replay", str(path), "--list")
    assert code == 2 and err.startswith(f"skat replay: {path}: line 1: not an archive line")


def test_a_damaged_archive_still_reports(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    lines, where, lineno = _cut_last(_lines(logs))
    path = _archive(tmp_path, lines)
    code, out, err = _cli(capsys, "report", str(path), "--no-replays")
    assert code == 0, err
    page = (tmp_path / "report.html").read_text()
    assert f"line {lineno}: table {where} does not decode" in page
    assert f"skat report: warning: {path}: line {lineno}: table {where}" in err
    for other in TABLES:
        assert other in page


def test_a_damaged_archive_still_exports_iss_records(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    lines, where, lineno = _cut_last(_lines(logs))
    table, cut = where.partition(",")[0], int(where.rpartition(" ")[2])
    path = _archive(tmp_path, lines)
    sgf = tmp_path / "out.sgf"
    code, out, err = _cli(capsys, "iss", "export", str(path), "--out", str(sgf))
    whole = sum(isinstance(e, DealScored) for t, log in logs.items() if t != table for e in log)
    damaged = sum(isinstance(e, DealScored) for e in logs[table][:cut])  # the deals before the cut
    assert damaged == sum(isinstance(e, DealScored) for e in logs[table])  # the cut line held no deal
    assert code == 0  # every deal was exported: the damage is a warning, not a failed export
    assert out.splitlines() == [f"exported {whole + damaged} deals to {sgf}; 0 not exportable"]
    damage = (
        f"skat iss export: warning: archive line {lineno}: table {where} does not decode (cut off); "
        "the table is read up to there"
    )
    assert [line for line in err.splitlines() if "does not decode" in line] == [damage]  # said once, as a warning


def test_a_damaged_line_that_costs_deals_fails_the_iss_export(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    """A damaged line in the middle of a table keeps its later deals from the export: exit 1."""
    lines = _lines(logs)
    first = next(i for i, line in enumerate(lines) if b'"t-b"' in line and b"deal_dealt" in line)
    lines[first + 3] = lines[first + 3][:20] + b"\n"  # t-b's first deal cut short (the lines interleave by 3)
    path = _archive(tmp_path, lines)
    sgf = tmp_path / "out.sgf"
    code, out, err = _cli(capsys, "iss", "export", str(path), "--out", str(sgf))
    whole = sum(isinstance(e, DealScored) for t, log in logs.items() if t != "t-b" for e in log)
    assert code == 1
    assert out.splitlines() == [f"exported {whole} deals to {sgf}; 0 not exportable"]
    assert "skat iss export: warning: archive line 8: table t-b does not decode" in err


def test_an_unopenable_table_is_named_by_the_iss_export(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    """A table whose table_opened is of a newer skatbus: that table is named and left out (it
    once crashed the export with an IndexError), the others are exported."""
    path = _archive(tmp_path, _newer_opening(_lines(logs), "t-a"))
    sgf = tmp_path / "out.sgf"
    code, out, err = _cli(capsys, "iss", "export", str(path), "--out", str(sgf))
    whole = sum(isinstance(e, DealScored) for t, log in logs.items() if t != "t-a" for e in log)
    assert code == 1
    assert out.splitlines() == [f"exported {whole} deals to {sgf}; 0 not exportable"]
    assert "table t-a not exported from event 0 on: table_opened/9 was written by a newer skatbus" in err


def test_a_damaged_thirty_one_archive_still_exports_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "archive.jsonl"
    games = thirty_one_tables()
    write_thirty_one(archive, games)  # two tables, one after the other
    lines = archive.read_bytes().splitlines(keepends=True)
    cut, where, lineno = _cut_last(lines)
    archive.write_bytes(b"".join(cut))
    code, out, err = _cli(capsys, "records", "export", str(archive))
    assert code == 1
    assert len(games) == 2 and len(out.splitlines()) == 1  # the whole table
    assert f"table {where.partition(',')[0]}: not exported: line {lineno}:" in err


def test_a_damaged_run_still_verifies_its_other_tables(tmp_path: Path) -> None:
    run = build(tmp_path, skat_legacy(), load_or_create_key(tmp_path / "k.nk"), "cid")
    archive = run.folder / "archive.jsonl"
    lines, where, lineno = _cut_last(archive.read_bytes().splitlines(keepends=True))
    table = where.partition(",")[0]
    archive.write_bytes(b"".join(lines))
    problems = verify_run(run.folder).problems
    assert problems[0] == f"archive.jsonl line {lineno}: not an archived event (cut off; table {table})"
    assert not any("cannot be checked" in p for p in problems)
    assert all(table in p or p.startswith(("archive.jsonl", "signature", "results.json")) for p in problems), problems


# --- an event of a newer skatbus is named as such --------------------------------------------


def _raw(log: list[Event]) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(e) | {"type": type(e).__struct_config__.tag} for e in log]  # type: ignore[attr-defined]


def _write(path: Path, table: str, events: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps({"table": table, "index": i, "event": e}) + "\n" for i, e in enumerate(events)))
    return path


def test_a_newer_card_played_is_not_a_broken_rule(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    raw = _raw(logs["t-a"])
    k = next(i for i, e in enumerate(logs["t-a"]) if isinstance(e, CardPlayed))
    raw[k]["type"] = "card_played/7"
    path = _write(tmp_path / "a.jsonl", "t-a", raw)
    said = f"event {k}: card_played/7 was written by a newer skatbus (this one reads card_played/1); upgrade to read it"
    code, out, _ = _cli(capsys, "replay", str(path), "--verify")
    assert code == 1 and out.strip() == f"t-a: {said}"  # not "TrickTaken does not follow"
    code, out, _ = _cli(capsys, "replay", str(path), "--summary")
    assert f"({said}; deals up to there)" in out and "breaks the rules" not in out


def test_a_newer_table_opened_is_not_a_missing_opening(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    raw = _raw(logs["t-b"])
    assert raw[0]["type"] == TableOpened.__struct_config__.tag
    raw[0]["type"] = "table_opened/9"
    path = _write(tmp_path / "b.jsonl", "t-b", raw)
    code, out, _ = _cli(capsys, "replay", str(path), "--verify")
    assert code == 1
    assert out.strip() == (
        "t-b: event 0: table_opened/9 was written by a newer skatbus (this one reads table_opened/1..2); upgrade to read it"
    )
    code, out, _ = _cli(capsys, "replay", str(path), "--list")
    assert "[has table_opened/9: written by a newer skatbus]" in out


def test_skat_verify_names_a_newer_event(tmp_path: Path) -> None:
    run: Built = build(tmp_path, skat_legacy(), load_or_create_key(tmp_path / "k.nk"), "cid")
    archive = run.folder / "archive.jsonl"
    lines = archive.read_bytes().splitlines(keepends=True)
    k = next(i for i, line in enumerate(lines) if b'"card_played/1"' in line)
    entry = json.loads(lines[k])
    entry["event"]["type"] = "card_played/7"
    lines[k] = json.dumps(entry).encode() + b"\n"
    archive.write_bytes(b"".join(lines))
    problems = verify_run(run.folder).problems
    want = (
        f"table {entry['table']}, event {entry['index']}: card_played/7 was written by a newer skatbus "
        "(this one reads card_played/1); upgrade to read it"
    )
    assert want in problems
    assert not any("against the rules" in p for p in problems)


def test_the_services_fold_blames_the_newer_event(logs: dict[str, list[Event]]) -> None:
    """The fold the services run on a stored log: a newer event, then what seems to break a rule."""
    from protocol.events import UnknownEvent
    from protocol.lifecycle import NewerEvent
    from protocol.registry import fold

    log: list[Any] = list(logs["t-c"])
    k = next(i for i, e in enumerate(log) if isinstance(e, CardPlayed))
    log[k] = UnknownEvent("card_played", 7)
    with pytest.raises(NewerEvent, match=rf"^event {k}: card_played/7 was written by a newer skatbus"):
        fold(log)


# --- a changed event is named field by field ---------------------------------------------------


def test_an_edited_score_is_named_by_its_field(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    raw = _raw(logs["t-a"])
    k = next(i for i, e in enumerate(logs["t-a"]) if isinstance(e, DealScored) and e.result.kind == "game")
    right = list(raw[k]["result"]["scores"])
    wrong = [s * 10 for s in right]
    raw[k]["result"]["scores"] = wrong
    path = _write(tmp_path / "s.jsonl", "t-a", raw)
    code, out, _ = _cli(capsys, "replay", str(path), "--verify")
    line = out.strip()
    assert code == 1
    assert line == (
        f"t-a: event {k}: DealScored does not follow: result.scores: expected {json.dumps(right)}, found {json.dumps(wrong)}"
    )
    assert len(line) <= 120
