"""What the command line prints (issue 25's smaller items): argparse's own mistakes in one line,
``--help`` with the defaults, the replay's bid and its way from ``--table`` to the other tables,
``skat up`` without a line per partition, and the docs and README saying what the commands do.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shlex
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from protocol.events import BiddingWon, DealDealt, DealScored, Passed, TableOpened
from skatbus import replay_cli
from skatbus.cli import main
from skatbus.cli_parser import DefaultsHelpFormatter, SkatParser
from skatbus.replay import read_archive

from .localrun import make_run

ROOT = Path(__file__).resolve().parents[2]
TID = "t-261202-035232-ecc85f5820b4482e"
"""A tournament id of the form the runner makes (time and 64 random bits)."""


def every_parser() -> dict[str, argparse.ArgumentParser]:
    """Every ``skat`` parser by its command (``skat iss check`` and the like included)."""
    found: dict[str, argparse.ArgumentParser] = {}
    original = argparse.ArgumentParser.parse_args

    def capture(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> object:
        def walk(parser: argparse.ArgumentParser, name: str) -> None:
            found[name] = parser
            for action in parser._actions:
                if isinstance(action, argparse._SubParsersAction):
                    for sub, child in action.choices.items():
                        walk(child, f"{name} {sub}")

        walk(self, "skat")
        raise SystemExit(0)

    argparse.ArgumentParser.parse_args = capture  # type: ignore[method-assign,assignment]
    try:
        with pytest.raises(SystemExit):
            main(["schema"])
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]
    return found


# --- argparse's mistakes: one line -----------------------------------------------------------

ARGPARSE_MISTAKES: dict[str, tuple[list[str], str, str]] = {
    # name: (arguments, the command the line names, what it must say)
    "a bad number": (["tournament", "--rounds", "x"], "skat tournament", "argument --rounds: invalid int value: 'x'"),
    "a bad number to skat run": (["run", "--groups", "many"], "skat run", "invalid int value: 'many'"),
    "an unknown option": (["local", "--tabels", "3"], "skat local", "unrecognized arguments: --tabels 3"),
    "an unknown option to a tournament": (["tournament", "--bogus"], "skat tournament", "unrecognized arguments"),
    "an unknown option to a nested command": (
        ["iss", "export", "a.jsonl", "--out", "b.sgf", "--bogus"],
        "skat iss export",
        "unrecognized arguments: --bogus",
    ),
    "an unknown option before any command": (["--bogus", "local"], "skat local", "unrecognized arguments: --bogus"),
    "an empty seed to skat match": (["match", "--seed", ""], "skat match", "argument --seed: must not be empty"),
    "a missing argument": (["replay"], "skat replay", "the following arguments are required: source"),
    "an unknown command": (["tournamnt"], "skat", "invalid choice: 'tournamnt'"),
    "no command": ([], "skat", "the following arguments are required: command"),
    "a nested command's mistake": (["iss", "check"], "skat iss check", "required: file"),
    "a bad choice": (["service", "dealr"], "skat service", "invalid choice: 'dealr'"),
    "check-bot": (["check-bot", "--port", "x"], "skat check-bot", "argument --port: invalid int value"),
    "skat up": (["up", "--cluster", "three"], "skat up", "argument --cluster: invalid int value"),
}


@pytest.mark.parametrize("case", list(ARGPARSE_MISTAKES))
def test_an_argparse_mistake_is_one_line_naming_the_help(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv, prog, says = ARGPARSE_MISTAKES[case]
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err  # one line, no usage block
    assert err.startswith(f"{prog}: error: ") and says in err, err
    assert err.rstrip().endswith(f"(see {prog} --help)"), err


def _entry_points() -> dict[str, tuple[Callable[[list[str]], Any], list[str]]]:
    from bench.__main__ import main as bench
    from skatbus.check_bot import main as check_bot
    from skatbus.duplicate import main as duplicate
    from skatbus.evaluate import main as evaluate
    from skatbus.heuristic_fit import main as heuristic_fit
    from skatbus.thirty_one_eval import main as thirty_one_eval

    return {
        "python -m skatbus.check_bot": (check_bot, ["--port", "x"]),
        "python -m skatbus.evaluate": (evaluate, ["--deals", "x"]),
        "python -m skatbus.duplicate": (duplicate, ["pimc"]),
        "python -m skatbus.thirty_one_eval": (thirty_one_eval, ["--games", "x"]),
        "python -m skatbus.heuristic_fit": (heuristic_fit, ["--deals", "x"]),
        "python -m bench": (bench, ["--repeats", "x"]),
    }


@pytest.mark.parametrize("prog", ["python -m skatbus.duplicate", "python -m skatbus.thirty_one_eval"])
def test_an_empty_seed_is_refused_in_one_line(prog: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--seed ''`` would deal from no seed anyone meant: refused as the tournament refuses it."""
    run, _ = _entry_points()[prog]
    argv = ["pimc", "heuristic", "--seed", ""] if prog.endswith("duplicate") else ["--seed", ""]
    with pytest.raises(SystemExit) as stopped:
        run(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"{prog}: error: argument --seed: must not be empty"), err


@pytest.mark.parametrize("prog", list(_entry_points()))
def test_the_other_entry_points_say_it_in_one_line_too(prog: str, capsys: pytest.CaptureFixture[str]) -> None:
    run, argv = _entry_points()[prog]
    with pytest.raises(SystemExit) as stopped:
        run(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"{prog}: error: ") and f"(see {prog} --help)" in err, err


def test_every_parser_is_the_one_parser_class() -> None:
    """One class in one place (``skatbus.cli_parser``): every subcommand inherits it."""
    parsers = every_parser()
    assert {"skat tournament", "skat iss check", "skat records import", "skat check-bot", "skat play"} <= set(parsers)
    wrong = [name for name, p in parsers.items() if not isinstance(p, SkatParser)]
    assert wrong == []
    plain = [name for name, p in parsers.items() if p.formatter_class is not DefaultsHelpFormatter]
    assert plain == []


# --- --help shows the defaults ---------------------------------------------------------------


def test_help_shows_every_meaningful_default_and_no_empty_one() -> None:
    """Every option whose default is a value is explained with it (by its own words or an added
    ``(default: X)``); nothing says ``default: None``, ``False`` or ``[]``."""
    parsers = every_parser()
    for name, parser in parsers.items():
        text = " ".join(parser.format_help().split())
        for empty in ("(default: None)", "(default: False)", "(default: True)", "(default: [])", "(default: )"):
            assert empty not in text, (name, empty)
    local = " ".join(parsers["skat local"].format_help().split())
    assert "(default: 3)" in local and "(default: 4)" in local and "(default: skatbus)" in local
    tournament = " ".join(parsers["skat tournament"].format_help().split())
    assert "the default move is played for it (default: 30)" in tournament  # "default move" is no default
    unexplained = []
    formatter = DefaultsHelpFormatter("skat")
    for name, parser in parsers.items():
        for action in parser._actions:
            if action.nargs == 0 or not action.option_strings or action.default in (None, "", [], argparse.SUPPRESS):
                continue
            shown = formatter._get_help_string(action) or ""
            if "default" not in shown.lower():
                unexplained.append(f"{name} {action.option_strings[0]}")
    assert unexplained == []


def test_the_tournament_help_spells_out_the_standings_abbreviations() -> None:
    text = " ".join(every_parser()["skat tournament"].format_help().split())
    assert "SF is Seeger-Fabian points" in text and "SF/deal Seeger-Fabian points per deal" in text


# --- skat replay -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("runs") / "runs", TID)


def _args(*argv: str) -> argparse.Namespace:
    parser = SkatParser()
    replay_cli.register(parser.add_subparsers())
    return parser.parse_args(["replay", *argv])


def _script(*lines: str) -> Callable[[str], str]:
    answers = iter(lines)

    def read(prompt: str) -> str:
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    return read


def test_interactive_replay_with_table_reaches_the_other_tables(run_dir: Path) -> None:
    import io

    tables = list(read_archive(run_dir / "archive.jsonl"))
    assert len(tables) >= 3
    out = io.StringIO()
    code = replay_cli.run(_args(str(run_dir / "archive.jsonl"), "--table", tables[1]), out, _script("l", "l 3", "q"))
    assert code == 0
    text = out.getvalue()
    assert text.startswith(f"[   0] table {tables[1]} opened")  # --table first
    assert f"*  2  {tables[1]}" in text  # the list knows every table, this one marked
    assert f"table {tables[2]} opened" in text  # and l 3 opened another
    by_number = io.StringIO()
    assert replay_cli.run(_args(str(run_dir / "archive.jsonl"), "--table", "3"), by_number, _script("l", "q")) == 0
    assert f"*  3  {tables[2]}" in by_number.getvalue()


def test_the_summary_gives_each_deals_bid_and_who_passed(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = next(iter(read_archive(run_dir / "archive.jsonl").values()))
    players: list[str] = []
    want: list[tuple[str, str]] = []
    passes: list[str] = []
    won = False
    for event in log.events:
        if isinstance(event, TableOpened):
            players = list(event.players)
        elif isinstance(event, DealDealt):
            passes, won = [], False
        elif isinstance(event, BiddingWon):
            won = True
        elif isinstance(event, Passed) and not won:
            passes.append(players[event.seat])
        elif isinstance(event, DealScored):
            r = event.result
            want.append((str(r.bid) if r.kind == "game" else "", ", ".join(passes)))
    assert main(["replay", str(run_dir / "archive.jsonl"), "--table", log.table, "--summary"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[1]
    assert header.split()[5] == "bid" and header.rstrip().endswith("passed")
    bid_at, passed_at = header.index(" bid") + 1, header.index("passed")
    rows = lines[2 : 2 + len(want)]
    got = [(row[bid_at : bid_at + 3].strip(), row[passed_at:].strip()) for row in rows]
    assert got == want
    assert any(b for b, _ in want) and all(p for _, p in want)  # bids were made, and passes said


# --- the README's replay examples ------------------------------------------------------------


def _readme_commands() -> Iterator[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Replays and game records", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    for line in block.splitlines():
        command = line.split("  #", 1)[0].strip()
        if command.startswith(".venv/bin/skat "):
            yield command


def test_the_readme_replay_examples_run_as_written(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each example, with ``ID`` the id of a run of today's form, in the folder the run was made
    from (``runs/ID``); only those that need a server or a file of the reader's are left out."""
    monkeypatch.chdir(run_dir.parent.parent)
    (Path("tests/data/iss")).mkdir(parents=True, exist_ok=True)
    (Path("tests/data/iss/iss-records.sgf")).write_bytes((ROOT / "tests/data/iss/iss-records.sgf").read_bytes())
    ran = []
    for command in _readme_commands():
        if "--nats URL" in command or "FILE.sgf" in command:
            continue
        argv = shlex.split(command.replace("ID", TID))[1:]
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 0, (command, err)
        ran.append(argv[0])
    assert ran.count("replay") == 5 and "report" in ran and "iss" in ran
    assert f"--table {TID}-g0r0" in " ".join(_readme_commands()).replace("ID", TID)
    assert TID.startswith("t-") and (Path("runs") / TID / "archive.jsonl").is_file()


# --- docs/operations.md ----------------------------------------------------------------------


def test_operations_md_gives_the_modes_skat_auth_writes(tmp_path: Path) -> None:
    """The table of what ``skat auth`` writes states each file's mode as ``ls -l`` shows it
    under the usual umask 022."""
    doc = (ROOT / "docs" / "operations.md").read_text()
    table = doc.split("| file | what | who gets it |", 1)[1].split("\n\n", 1)[0]
    said = {name: int(mode, 8) for name, mode in re.findall(r"`([^`]+)` \((0\d{3})\)", table)}
    assert {"ca.pem", "server-cert.pem", "ca-key.pem", "server-key.pem"} <= set(said)
    old = os.umask(0o022)
    try:
        assert main(["auth", "--players", "ann", "--out", str(tmp_path / "auth"), "--tls"]) == 0
    finally:
        os.umask(old)
    for name, mode in said.items():
        path = tmp_path / "auth" / name.replace("<player>", "ann")
        assert stat.S_IMODE(path.stat().st_mode) == mode, name
    assert stat.S_IMODE((tmp_path / "auth").stat().st_mode) == 0o700


def test_operations_md_says_skat_up_starts_the_live_page() -> None:
    doc = " ".join((ROOT / "docs" / "operations.md").read_text().split())
    running = doc.split("- `skat up`:", 1)[1].split("- `skat service NAME", 1)[0]
    assert "then starts the live page" in running and "http://127.0.0.1:8470" in running
    assert "does not start the live page" not in doc


def test_nothing_in_the_repository_points_at_shared_files_outside_it() -> None:
    """The repository stands alone: no doc, docstring or test names ``shared/...`` or
    ``../shared`` (the files a test needs are in tests/data)."""
    found = []
    pattern = re.compile(r"\.\./shared|(?<![\w/.-])shared/[A-Za-z]")
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in (".venv", ".git", "node_modules") or "egg-info" in rel.parts[0] or not path.is_file():
            continue
        if path.suffix not in (".py", ".md", ".toml", ".cfg", ".yml", ".yaml") and path.name != "Makefile":
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if pattern.search(line) and path.name != Path(__file__).name:
                found.append(f"{rel}:{n}: {line.strip()}")
    assert found == []


# --- skat up: no line per partition ----------------------------------------------------------


async def test_skat_up_logs_no_line_per_partition_until_one_changes_hands(tmp_path: Path) -> None:
    """Starting, each service claims every partition: service_started lists them, and nothing
    else is said of them before "up" (it was 40 lines); stopping says service_stopped only. A
    partition handed to another instance of a service later is news, and is logged."""
    from tests.services.test_up import Up

    log = tmp_path / "up.log"
    with log.open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "skatbus.cli", "up", "--no-web",
            stdout=asyncio.subprocess.PIPE, stderr=err, env={**os.environ, "SKAT_LOG_LEVEL": "info"},
        )  # fmt: skip
    up = Up(proc, log)
    second: subprocess.Popen[bytes] | None = None
    try:
        url = await up.ready()
        await up.all_started()
        events = [r.get("event") for r in up.log()]
        assert "partition_claimed" not in events and events.count("service_started") == 5
        assert all(r["partitions"] == list(range(8)) for r in up.log() if r.get("event") == "service_started")
        with (tmp_path / "second.log").open("wb") as err2:
            second = subprocess.Popen(
                [sys.executable, "-m", "services", "play", "--nats", url],
                stderr=err2, env={**os.environ, "SKAT_LOG_LEVEL": "info"},
            )  # fmt: skip
        end = time.monotonic() + 30
        while not any(r.get("event") == "partition_released" and r["service"] == "play" for r in up.log()):
            assert time.monotonic() < end, "the second play instance never took a partition over"
            await asyncio.sleep(0.1)
        second.send_signal(signal.SIGTERM)
        second.wait(20)
        end = time.monotonic() + 30  # the partitions come back to the first: news too
        while not any(r.get("event") == "partition_claimed" and r["service"] == "play" for r in up.log()):
            assert time.monotonic() < end, "the partitions never came back"
            await asyncio.sleep(0.1)
        before_stop = len(up.log())
        assert await up.interrupt() < 20 and proc.returncode == 0
        stopping = [r.get("event") for r in up.log()[before_stop:]]
        assert "partition_released" not in stopping and stopping.count("service_stopped") == 5
    finally:
        if second is not None and second.poll() is None:
            second.kill()
            second.wait()
        await up.shutdown()
