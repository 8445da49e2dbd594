"""``skat records check | export | import`` (skatbus/game_records.py, game_records_cli.py).

The records are those of tests/data/records/ (from the Thirty-one rules page's worked examples;
see make_records.py there). Exit codes are read from ``python -m skatbus.cli records ...`` run as
a child process, as a user meets them; the lines are read from the same runs or from ``main``.
Archives are written here from engine games (Thirty-one's property-test driver, a Skat table of
``skatbus.local``), their lines interleaved as a tournament writes many tables into one file.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol import registry
from protocol.archive import encode_line
from protocol.events import Event
from protocol.skat.rules import Rules
from protocol.thirty_one.records import read_record
from skatbus.bots import SteppingRandomBot
from skatbus.cli import main
from skatbus.game_records import RECORD_MODULES, records_module, table_id
from skatbus.local import play_table
from skatbus.replay import read_archive
from tests.protocol.thirty_one.test_properties import Game

ROOT = Path(__file__).parents[2]
DATA = ROOT / "tests" / "data" / "records"
AGREE, DIFFER, ERROR = DATA / "agree.jsonl", DATA / "differ.jsonl", DATA / "error.jsonl"


def count(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def skat(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``skat records ...`` as a child process (its exit code is what a shell sees)."""
    return subprocess.run(
        [sys.executable, "-m", "skatbus.cli", "records", *argv],
        cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def one_line_error(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skat records: ") and says in lines[0], done.stderr


# --- check ---------------------------------------------------------------------------------


def test_check_agrees_with_every_record_of_the_examples() -> None:
    done = skat("check", str(AGREE))
    n = count(AGREE)
    out = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout
    assert len(out) == n + 1
    assert out[0] == "line 1: agree"  # example 12, a whole game
    assert all(line.startswith(f"line {i}: agree") for i, line in enumerate(out[:-1], 1))
    assert out[2] == "line 3: agree (incomplete: deal 6 stops after action 1, not scored)"
    assert out[1] == "line 2: agree (cut short after deal 3)"
    assert out[-1] == f"{n} records: {n} agree, 0 differ, 0 error"
    assert done.stderr == ""


def test_check_names_each_differing_field_with_both_values() -> None:
    done = skat("check", str(DIFFER))
    out = done.stdout.splitlines()
    assert done.returncode == 1
    expected = [json.loads(line)["expect"] for line in DIFFER.read_text().splitlines()]
    for i, (line, fields) in enumerate(zip(out, expected), 1):
        assert line.startswith(f"line {i}: differs: "), line
        named = [part.split(": record ")[0] for part in line.removeprefix(f"line {i}: differs: ").split("; ")]
        assert named == fields, line
    assert out[3] == "line 4: differs: deals[2].result.coins: record [2,1,2], rules [2,0,3]"
    assert out[-1] == f"{len(expected)} records: 0 agree, {len(expected)} differ, 0 error"


def test_check_says_why_a_record_is_an_error() -> None:
    done = skat("check", str(ERROR))
    out = done.stdout.splitlines()
    n = count(ERROR)
    assert done.returncode == 1
    assert all(line.startswith(f"line {i}: error: ") for i, line in enumerate(out[:-1], 1))
    assert out[0].startswith("line 1: error: not JSON")
    assert 'line 28: error: deal 1, action 3 "1 discard S7": you do not hold S7' in out
    assert out[-1] == f"{n} records: 0 agree, 0 differ, {n} error"


def test_check_counts_a_mixed_file_and_numbers_lines_as_the_file_does(tmp_path: Path) -> None:
    good, bad = AGREE.read_text().splitlines(), DIFFER.read_text().splitlines()
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join([good[0], "", bad[3], "   ", "[1, 2]", good[4]]) + "\n")
    done = skat("check", str(mixed))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "line 1: agree",
        "line 3: differs: deals[2].result.coins: record [2,1,2], rules [2,0,3]",
        "line 5: error: a record is a JSON object, not an array",
        "line 6: agree (cut short after deal 1)",
        "4 records: 2 agree, 1 differ, 1 error",
    ]


def test_check_reads_stdin_and_gzip(tmp_path: Path) -> None:
    text = AGREE.read_text()
    done = skat("check", "-", stdin=text)
    assert done.returncode == 0 and done.stdout.splitlines()[-1].endswith(f"{count(AGREE)} agree, 0 differ, 0 error")
    packed = tmp_path / "records.jsonl.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    assert main(["records", "check", str(packed)]) == 0


def test_check_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["records", "check", str(DIFFER), "--json"])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1
    assert out[3] == {
        "line": 4, "status": "differ", "deals": 6, "complete": True,
        "differences": [{"field": "deals[2].result.coins", "record": [2, 1, 2], "rules": [2, 0, 3]}],
    }  # fmt: skip
    missing = next(o for o in out if o.get("differences", [{}])[0].get("field") == "result")
    assert "record" not in missing["differences"][0]  # the record has no value there
    assert out[-1] == {"summary": {"records": len(out) - 1, "agree": 0, "differ": len(out) - 1, "error": 0}}
    main(["records", "check", str(ERROR), "--json"])
    first = json.loads(capsys.readouterr().out.splitlines()[0])
    assert first["status"] == "error" and first["reason"].startswith("not JSON")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["check", "{tmp}/missing.jsonl"], "missing.jsonl: no such file or directory"),
        (["check", "{tmp}"], "is a directory"),
        (["check", "{tmp}/broken.gz"], "broken.gz: cannot be read"),
        (["export", "{tmp}/missing.jsonl"], "missing.jsonl: no such file"),
        (["export", "{tmp}/records.jsonl"], "not an archive line"),
        (["export", "{archive}", "--out", "{tmp}/records.jsonl/x"], "--out {tmp}/records.jsonl/x: not a directory"),
        (["import", "{tmp}/missing.jsonl", "--out", "{tmp}/in"], "missing.jsonl: no such file"),
        (["import", "{tmp}/records.jsonl", "--out", "{tmp}/records.jsonl"], "is a file"),
    ],
)
def test_a_mistake_is_one_line_and_exit_code_2(argv: list[str], says: str, tmp_path: Path) -> None:
    (tmp_path / "broken.gz").write_bytes(b"\x1f\x8b\x08\x00not gzip at all")
    (tmp_path / "records.jsonl").write_text(AGREE.read_text())
    archive = tmp_path / "archive.jsonl"
    write_archive(archive, [thirty_one_log(1)])
    places = {"tmp": str(tmp_path), "archive": str(archive)}
    done = skat(*(a.format(**places) for a in argv))
    one_line_error(done, says.format(**places))


# --- export --------------------------------------------------------------------------------


def thirty_one_log(seed: int, table: str = "") -> list[Event]:
    game = Game(seed)
    game.play()
    if table:
        first = game.log[0]
        game.log[0] = msgspec.structs.replace(first, table=table)
    return game.log


def write_archive(path: Path, logs: list[list[Event]], names: list[str] | None = None) -> None:
    """An archive with the tables' lines interleaved (round robin), as the tournament's groups
    write them."""
    names = names or [getattr(log[0], "table", f"t{i}") for i, log in enumerate(logs)]
    rows = [(i, k, name, e) for k, (name, log) in enumerate(zip(names, logs)) for i, e in enumerate(log)]
    rows.sort(key=lambda r: (r[0], r[1]))
    with open(path, "wb") as f:
        f.writelines(encode_line(name, i, e) for i, _, name, e in rows)


def skat_log() -> list[Event]:
    run = play_table("t-skat", ["a", "b", "c"], [SteppingRandomBot(s) for s in "abc"], Rules(rounds=1), "s")
    return run.log


def test_export_writes_a_record_per_thirty_one_table_and_skips_skat(tmp_path: Path) -> None:
    logs = [thirty_one_log(seed, f"t31-{seed}") for seed in range(4)]
    archive = tmp_path / "archive.jsonl"
    write_archive(archive, [logs[0], skat_log(), *logs[1:]], ["t31-0", "t-skat", "t31-1", "t31-2", "t31-3"])
    out = tmp_path / "records.jsonl"
    done = skat("export", str(archive), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "table t-skat: skipped: a table of skat: not written (skat iss export writes Skat's records)",
        f"exported 4 tables to {out}; 1 skipped",
    ]
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["table"] for r in records) == ["t31-0", "t31-1", "t31-2", "t31-3"]
    for record in records:
        log = logs[int(record["table"].split("-")[1])]
        assert record["result"] == msgspec.to_builtins(registry.fold(log).result())
    check = skat("check", str(out))
    assert check.returncode == 0 and check.stdout.splitlines()[-1] == "4 records: 4 agree, 0 differ, 0 error"


def test_export_to_stdout_and_a_table_still_open(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --out the records go to stdout (the notes to stderr); a table that has not closed
    is written too: complete false, or the rules' result if its game has ended."""
    log = thirty_one_log(5, "open")
    archive = tmp_path / "archive.jsonl"
    write_archive(archive, [log[: len(log) // 2]])
    assert main(["records", "export", str(archive)]) == 0
    out, err = capsys.readouterr()
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert record["table"] == "open" and record["result"]["complete"] is False
    assert err == "exported 1 table\n"


def test_export_reports_a_table_it_cannot_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, gap, broken = thirty_one_log(1, "good"), thirty_one_log(2, "gap"), thirty_one_log(3, "broken")
    broken.insert(3, broken[1])  # a deal dealt in the middle of a deal
    archive = tmp_path / "archive.jsonl"
    write_archive(archive, [good, gap, broken])
    lines = archive.read_bytes().splitlines(keepends=True)
    archive.write_bytes(b"".join(l for l in lines if not l.startswith(b'{"table":"gap","index":4,')))
    code = main(["records", "export", str(archive), "--out", str(tmp_path / "r.jsonl")])
    err = capsys.readouterr().err.splitlines()
    assert code == 1
    assert any(l.startswith("table gap: not exported: line ") and "event 4 of the table is missing" in l for l in err)
    assert any(l.startswith("table broken: not exported: its log breaks the rules at event 3") for l in err)
    assert err[-1] == f"exported 1 table to {tmp_path / 'r.jsonl'}; 2 not exported"


# --- import --------------------------------------------------------------------------------


def test_import_writes_an_archive_of_every_record_that_can_be_replayed(tmp_path: Path) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text(AGREE.read_text() + DIFFER.read_text().splitlines()[0] + "\n" + ERROR.read_text())
    done = skat("import", str(records), "--out", str(tmp_path / "in"))
    n_agree, n_error = count(AGREE), count(ERROR)
    out = done.stdout.splitlines()
    assert done.returncode == 1
    assert (
        out[0]
        == f"line {n_agree + 1}: differs: deals[0].dealer: record 0, rules 2 (imported anyway as record-{n_agree + 1})"
    )
    assert all(line.endswith("(not imported)") for line in out[1:-2]) and len(out) == n_error + 3
    archive = tmp_path / "in" / "archive.jsonl"
    assert out[-2] == f"imported {n_agree + 1} tables into {archive}"
    assert out[-1] == f"{n_agree + 1 + n_error} records: {n_agree} agree, 1 differ, {n_error} error"
    logs = read_archive(archive, None)  # the reader skat replay uses
    assert list(logs) == [f"record-{i}" for i in range(1, n_agree + 2)]
    wanted = [json.loads(line) for line in AGREE.read_text().splitlines()]
    for i, record in enumerate(wanted, 1):
        log = logs[f"record-{i}"]
        assert log.problem is None
        state = registry.fold(log.events)
        assert registry.state_game(state).name == "thirty-one"
        assert msgspec.to_builtins(state.result()) == record["result"]
        assert state.closed


def test_skat_replay_verifies_an_imported_archive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The archive ``import`` writes is one ``skat replay`` reads: every table verifies."""
    assert main(["records", "import", str(AGREE), "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["replay", str(tmp_path / "archive.jsonl"), "--verify"]) == 0
    assert f"all {count(AGREE)} tables verify" in capsys.readouterr().out


def test_import_then_export_round_trips(tmp_path: Path) -> None:
    """Records -> archive -> records: the same games (players, rules, decks, restocks, actions,
    results); the tables keep the names ``table`` gives them."""
    assert main(["records", "import", str(AGREE), "--out", str(tmp_path)]) == 0
    back = tmp_path / "back.jsonl"
    assert main(["records", "export", str(tmp_path / "archive.jsonl"), "--out", str(back)]) == 0
    again = [json.loads(line) for line in back.read_text().splitlines()]
    for i, (original, mine) in enumerate(zip(AGREE.read_text().splitlines(), again), 1):
        a, b = read_record(json.loads(original)), read_record(mine)
        assert mine["table"] == f"record-{i}"
        assert (a.players, a.rules, a.deals, a.result) == (b.players, b.rules, b.deals, b.result)
    assert len(again) == count(AGREE)
    assert main(["records", "import", str(back), "--out", str(tmp_path / "twice")]) == 0
    tables = list(read_archive(tmp_path / "twice" / "archive.jsonl", None))
    assert tables == [f"record-{i}" for i in range(1, len(again) + 1)]


def test_imported_tables_are_named_by_their_table_key_when_it_is_usable() -> None:
    used: set[str] = set()
    assert table_id("t-7", 1, used) == "t-7"
    used.add("t-7")
    assert table_id("t-7", 2, used) == "record-2"  # taken
    assert table_id("bad id*", 3, used) == "record-3"
    assert table_id(None, 4, used) == "record-4"
    used |= {"record-5"}
    assert table_id("record-5", 5, used) == "record-5-2"


def test_every_game_with_records_has_the_module_interface() -> None:
    for game in RECORD_MODULES:
        module: Any = records_module(game)
        assert module.GAME == game and registry.get(game).name == game
        assert all(callable(getattr(module, name)) for name in ("check", "records_of", "events_of"))
    assert records_module("skat") is None
