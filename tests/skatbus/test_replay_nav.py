"""``skat replay`` beyond one event per Enter: moving both ways, by trick and deal, across an
archive's tables; ``--summary``/``--verify``/``--list`` over every table; Kontra/Re/Bock marked;
Ctrl-C and unwritable or unreadable paths end with one line, not a traceback.

The archive is a real tournament run (``localrun``: the runner's schedule and ``write_results``,
played through the pure engine). Expected positions come from the events themselves, not from
the navigator, so a test fails when a key lands somewhere else.
"""

from __future__ import annotations

import argparse
import io
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from protocol.events import DealDealt, DealScored, Event, TrickTaken
from protocol.skat.table import fold
from skatbus import replay_cli
from skatbus.cli import main as cli_main
from skatbus.replay import TableLog, read_archive
from skatbus.replay_nav import INTERRUPTED, KEYS
from tests.terminal import as_a_terminal_job

from .localrun import make_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def archive(run_dir: Path) -> Path:
    return run_dir / "archive.jsonl"


@pytest.fixture(scope="module")
def logs(archive: Path) -> list[TableLog]:
    return list(read_archive(archive).values())


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    replay_cli.register(parser.add_subparsers())
    return parser.parse_args(["replay", *argv])


def _script(*lines: str) -> tuple[list[str], object]:
    """A ``read`` that answers prompts with ``lines`` in turn (then end of input); the
    prompts it was shown are collected in the returned list."""
    prompts: list[str] = []
    answers = iter(lines)

    def read(prompt: str) -> str:
        prompts.append(prompt)
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    return prompts, read


def _shown(out: str) -> list[int]:
    """The positions of the events drawn, in order."""
    return [int(line[1:5]) for line in out.splitlines() if line.startswith("[") and line[1:5].strip().isdigit()]


def _positions(events: Iterable[Event], kind: type) -> list[int]:
    return [i for i, e in enumerate(events) if isinstance(e, kind)]


def test_keys_move_by_event_trick_and_deal(archive: Path, logs: list[TableLog]) -> None:
    events = logs[1].events
    starts = _positions(events, DealDealt)
    first_stop = min(_positions(events, TrickTaken) + _positions(events, DealScored))
    _, read = _script("2", "", "", "b", "t", "d", "p", "3", "e 10", "q")
    out = io.StringIO()
    assert replay_cli.run(_args(str(archive)), out, read) == 0  # type: ignore[arg-type]
    text = out.getvalue()
    assert text.startswith(" " + "  1  t-local-g0r0")  # the archive's tables, to choose from
    assert KEYS in text
    assert _shown(text) == [0, 1, 2, 1, first_stop, starts[1], starts[0], starts[2], 10]
    assert f"table {logs[1].table} opened" in text  # table 2, as chosen


def test_back_and_forward_stop_at_the_ends(logs: list[TableLog]) -> None:
    from skatbus.replay_nav import navigate

    last = len(logs[0].events) - 1
    _, read = _script("b", f"e {last}", "", "7000", "e 99999", "zz", "q")
    out = io.StringIO()
    assert navigate(logs, read, out) == 0  # type: ignore[arg-type]
    text = out.getvalue()
    assert "(at the first event)" in text and "(at the last event)" in text
    assert "(no deal 7000 (deals 1..9))" in text and f"(no event 99999 (events 0..{last}))" in text
    assert "unknown command 'zz'" in text
    assert _shown(text) == [0, 0, last, last, last, last, last]


def test_tables_listed_and_switched(logs: list[TableLog]) -> None:
    from skatbus.replay_nav import navigate

    _, read = _script("l", "l 3", "l 99", "?")
    out = io.StringIO()
    assert navigate(logs, read, out, deal=2) == 0  # type: ignore[arg-type]  # end of input: exit 0
    text = out.getvalue()
    for i, log in enumerate(logs, 1):
        assert f"{i:>3}  {log.table}" in text
    assert "*  1  t-local-g0r0" in text
    assert f"table {logs[2].table} opened" in text and "(no table 99 (tables 1..6))" in text
    starts = _positions(logs[0].events, DealDealt)
    assert _shown(text)[0] == starts[1]  # --deal 2: the replay opens at deal 2


def test_ctrl_c_ends_with_130(archive: Path) -> None:
    def interrupted(prompt: str) -> str:
        raise KeyboardInterrupt

    out = io.StringIO()
    assert replay_cli.run(_args(str(archive), "--table", "2"), out, interrupted) == INTERRUPTED


def _read_until(fd: int, wanted: bytes, seconds: float = 90.0) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return seen


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
def test_on_a_terminal_keys_work_and_ctrl_c_leaves_no_traceback(archive: Path) -> None:
    """The real command on a pseudo-terminal: it is interactive because stdin and stdout are
    a terminal; a key moves it; SIGINT (what Ctrl-C sends) ends it with 130, quietly."""
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "skatbus.cli", "replay", str(archive), "--table", "1"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=ROOT,
        env={**os.environ, "TERM": "dumb"},
        preexec_fn=as_a_terminal_job,  # Ctrl-C not ignored, even when this suite's is
    )
    os.close(slave)
    try:
        seen = _read_until(master, b"> ")
        assert b"event 0/" in seen, seen[-2000:]
        os.write(master, b"d\n")
        seen += _read_until(master, b"deal 1/9")
        assert b"deal 1 dealt" in seen, seen[-2000:]
        # CPython notices a signal that lands between printing input()'s prompt and blocking in
        # read() only when read() returns; a person's Ctrl-C comes while it waits. So: wait a
        # moment, and should the signal land in that window all the same, press again.
        time.sleep(1.0)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            proc.send_signal(signal.SIGINT)
            seen += _read_until(master, b"\x00", seconds=5.0)  # keep the terminal drained
        assert proc.poll() == INTERRUPTED, seen[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert b"Traceback" not in seen and b"KeyboardInterrupt" not in seen


def test_piped_output_still_prints_a_deal_without_asking(
    archive: Path, logs: list[TableLog], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["replay", str(archive), "--deal", "2"]) == 0
    out = capsys.readouterr().out
    events = logs[0].events
    start = _positions(events, DealDealt)[1]
    end = _positions(events, DealScored)[1]
    assert _shown(out) == list(range(start, end + 1)) and "[n b t d p" not in out


# --- every table -----------------------------------------------------------------------------


def test_summary_covers_every_table(archive: Path, logs: list[TableLog], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["replay", str(archive), "--summary"]) == 0
    out = capsys.readouterr().out
    for log in logs:
        state = fold(log.events)  # type: ignore[arg-type]
        section = out.split(f"table {log.table}: ", 1)[1].split("totals after", 1)[0]
        rows = [ln for ln in section.splitlines() if ln[:4].strip().isdigit()]
        assert [int(r[:4]) for r in rows] == [row.deal for row in state.sheet]
    assert out.rstrip().endswith(f"{len(logs)} tables")


def test_summary_marks_kontra_re_and_bock(
    archive: Path, logs: list[TableLog], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["replay", str(archive), "--summary"]) == 0
    out = capsys.readouterr().out
    marked = {"Kontra": 0, "Re": 0, "Bock": 0}
    for log in logs:
        section = out.split(f"table {log.table}: ", 1)[1]
        rows = {int(ln[:4]): ln for ln in section.split("totals after", 1)[0].splitlines() if ln[:4].strip().isdigit()}
        for e in log.events:
            if isinstance(e, DealScored):
                words = rows[e.deal].split()
                for word, on in (("Kontra", e.result.kontra), ("Re", e.result.re), ("Bock", e.result.bock)):
                    assert (word in words) == on, (log.table, e.deal, rows[e.deal])
                    marked[word] += on
    assert all(marked.values()), marked  # the run has every kind, so the test tests something


def test_verify_covers_every_table(
    tmp_path: Path, archive: Path, logs: list[TableLog], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["replay", str(archive), "--verify"]) == 0
    total = sum(len(log.events) for log in logs)
    assert capsys.readouterr().out.strip() == f"all {len(logs)} tables verify ({total} events)"
    lines = archive.read_bytes().splitlines(keepends=True)
    last_table = logs[-1].table.encode()
    k = max(i for i, line in enumerate(lines) if last_table in line and b'"card_played/1"' in line)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(lines[:k] + lines[k + 1 :]))  # the last table's last card, gone
    assert cli_main(["replay", str(bad), "--verify"]) == 1
    out = capsys.readouterr().out
    assert f"{logs[-1].table}: event " in out and f"1 of {len(logs)} tables do not verify" in out


def test_list_and_table_by_number(archive: Path, logs: list[TableLog], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["replay", str(archive), "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [ln.split()[1] for ln in listed] == [log.table for log in logs]
    assert cli_main(["replay", str(archive), "--table", "3", "--summary"]) == 0
    assert capsys.readouterr().out.startswith(f"table {logs[2].table}: ")
    assert cli_main(["replay", str(archive), "--table", "7", "--summary"]) == 2
    assert "tables 1..6" in capsys.readouterr().err


# --- one line, exit 2 ------------------------------------------------------------------------


def _skat(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skatbus.cli", *argv], capture_output=True, text=True, cwd=cwd, timeout=60
    )


def test_unwritable_html_is_one_line(archive: Path) -> None:
    done = _skat("replay", str(archive), "--html", "/nonexistent/x.html")
    assert done.returncode == 2, done.stderr
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    assert "/nonexistent/x.html" in done.stderr


@pytest.mark.parametrize("target", ["missing.sgf", "."])
def test_iss_check_of_a_missing_file_or_a_directory_is_one_line(tmp_path: Path, target: str) -> None:
    done = _skat("iss", "check", target, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    assert "no such file" in done.stderr.lower() if target == "missing.sgf" else "directory" in done.stderr.lower()
