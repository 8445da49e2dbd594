"""Every snippet of docs/bots.md is tested: each code block carries a marker a test here (or the
named one elsewhere) runs, the engine session is a doctest, the Skat bot plays normal and Ramsch
deals, the command and field tables are the classes the wire reads, the workflow runs as printed
over a real stack, and the JSON bot's transcript is what a fresh run records."""

from __future__ import annotations

import asyncio
import doctest
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from protocol.events import DealScored
from protocol.skat import commands as skat_commands
from protocol.skat.rules import Rules
from protocol.skat.views import PlayerView
from protocol.thirty_one import commands as t31_commands
from protocol.thirty_one.views import ThirtyOneUpdate, ThirtyOneView
from protocol.wire import Update, decode_command
from services.main import wait_ready
from services.natsserver import free_port
from skatbus import RandomBot
from skatbus.local import play_table
from skatbus.tournament_end import finished_announcement
from tests.bus import Stack
from tests.examples import json_transcript
from tests.skatbus.test_bot_ends import ENV, Proc

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "bots.md"
TEXT = DOC.read_text()

TESTED_ELSEWHERE = {
    "thirty-one python bot": "tests/skatbus/test_check_bot_thirty_one.py (check-bot passes it)",
    "thirty-one json bot": "tests/skatbus/test_check_bot_thirty_one.py (check-bot passes it)",
}
TESTED_HERE = {"workflow", "skat view bot", "finished announcement", "engine"}


def example(name: str) -> str:
    """The code block after ``<!-- example: NAME -->``."""
    start = TEXT.index(f"<!-- example: {name} -->")
    block = re.search(r"```\w+\n(.*?)```", TEXT[start:], re.S)
    assert block is not None, name
    return block.group(1)


def test_every_code_block_is_one_a_test_runs() -> None:
    """A new snippet without a marker (or with one no test knows) fails here."""
    markers = re.findall(r"<!-- example: (.+?) -->", TEXT)
    assert sorted(markers) == sorted(TESTED_HERE | set(TESTED_ELSEWHERE)), markers
    fenced = [m.start() for m in re.finditer(r"^```\w+$", TEXT, re.M)]
    for start in fenced:
        before = TEXT[:start].rstrip().splitlines()[-1]
        known = (
            before.startswith("<!-- example: ")
            or before.startswith(json_transcript.BEGIN)  # test_the_json_bot_transcript_is_what_a_run_records
            or before == "`examples/trump_counter.py`, whole:"  # tests/examples/test_trump_counter.py
            # the Thirty-one view: tests/skatbus/test_check_bot_thirty_one.py, field for field
            or TEXT.startswith("\n### The view, in JSON", TEXT.rfind("\n### ", 0, start))
        )
        assert known, f"docs/bots.md: an untested code block after {before!r}"


def test_the_engine_session_is_what_python_prints() -> None:
    parser = doctest.DocTestParser()
    test = parser.get_doctest(example("engine"), {}, "bots.md engine", str(DOC), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def _skat_view_bot() -> Any:
    scope: dict[str, Any] = {}
    exec(compile(example("skat view bot"), "bots.md", "exec"), scope)
    return scope["Cautious"]


def test_the_skat_view_bot_plays_normal_and_ramsch_deals() -> None:
    cautious = _skat_view_bot()
    run = play_table("doc", ["c", "r1", "r2"], [cautious(), RandomBot("1"), RandomBot("2")], Rules(rounds=2), "doc")
    assert run.state.closed and {r.kind for r in _results(run.log)} == {"game"}
    ramsch = play_table("doc", ["a", "b", "c"], [cautious(), cautious(), cautious()], Rules(ramsch=True, rounds=1), "r")
    assert ramsch.state.closed and [r.kind for r in _results(ramsch.log)] == ["ramsch"] * 3  # nobody ever bids


def _results(log: list[Any]) -> list[Any]:
    return [e.result for e in log if isinstance(e, DealScored)]


def _table_after(heading: str) -> list[list[str]]:
    """The rows of the first markdown table after ``heading``, as cells."""
    section = TEXT[TEXT.index(heading) :]
    lines = section[section.index("\n|") + 1 :].splitlines()
    rows = []
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def _codes(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def test_the_skat_commands_table_is_what_the_wire_reads() -> None:
    rows = _table_after("## Skat: the commands")
    classes = {c.__name__ for c in vars(skat_commands).values() if isinstance(c, type) and issubclass(c, skat_commands.Command) and c is not skat_commands.Command}  # fmt: skip
    assert {_codes(r[0])[0].split("(")[0] for r in rows} == classes
    for cls, wire, text, _ in rows:
        command, _ = decode_command(_codes(wire)[0].encode())
        assert type(command).__name__ == _codes(cls)[0].split("(")[0]
        assert skat_commands.parse_action(_codes(text)[0]) == command
        assert str(command) == _codes(text)[0]


def test_the_thirty_one_commands_table_is_what_the_wire_reads() -> None:
    rows = _table_after("### The commands, in JSON and as text")
    classes = {c for c in vars(t31_commands).values() if isinstance(c, type) and issubclass(c, t31_commands.Command) and c is not t31_commands.Command}  # fmt: skip
    decoded = [t31_commands.decode_command(_codes(r[0])[0].encode())[0] for r in rows]
    assert {type(c) for c in decoded} == classes
    for command, row in zip(decoded, rows):
        assert t31_commands.parse_action(_codes(row[1])[0]) == command and str(command) == _codes(row[1])[0]


def _named(rows: list[list[str]]) -> set[str]:
    return {name for row in rows for name in _codes(row[0])}


def test_the_field_tables_name_every_field() -> None:
    assert _named(_table_after("## The update (both games)")) == set(Update.__struct_fields__)
    assert set(Update.__struct_fields__) == set(ThirtyOneUpdate.__struct_fields__)
    assert _named(_table_after("## Skat: the view")) == set(PlayerView.__struct_fields__)
    assert _named(_table_after("### The view, in JSON")) == set(ThirtyOneView.__struct_fields__)


def test_the_finished_announcement_is_what_the_runner_sends() -> None:
    shown = json.loads(example("finished announcement"))
    assert shown == json.loads(finished_announcement("t-1", "skat", ["bob", "alice"]))


@pytest.mark.timeout(120)
async def test_the_workflow_runs_as_printed(tmp_path: Path) -> None:
    """``skat up``, a built-in bot, the JSON bot and a tournament, the four lines of the docs
    (another port; run in an empty directory): both bots stop by themselves at its end."""
    port = free_port()
    lines = [line for line in example("workflow").splitlines() if line.strip()]
    procs: list[Proc] = []

    async def start(line: str) -> Proc:
        words = line.replace("4222", str(port)).split()
        if words[0] == "skat":
            words[:1] = [sys.executable, "-m", "skatbus.cli"]
        else:
            assert words[:2] == ["python", "examples/json_bot.py"], words
            words[:2] = [sys.executable, str(ROOT / "examples" / "json_bot.py")]
        proc = await asyncio.create_subprocess_exec(
            *words, cwd=tmp_path, env=ENV, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        procs.append(Proc(proc))
        return procs[-1]

    try:
        await start(lines[0])
        await wait_ready(f"nats://127.0.0.1:{port}", timeout=60)
        alice, bob = await start(lines[1]), await start(lines[2])
        await alice.until("bot_started")
        runner = await start(lines[3])
        assert await runner.wait(90) == 0, runner.err[-10:]
        assert await alice.wait(30) == 0 and await bob.wait(30) == 0, (alice.err[-5:], bob.err[-5:])
    finally:
        for proc in reversed(procs):
            await proc.stop()
    tid = next(p.name for p in (tmp_path / "runs").iterdir() if p.is_dir() and p.name.startswith("t-"))
    assert alice.out == [f"skat bot: tournament {tid} is over; alice stops\n"], alice.out
    assert bob.out[-1] == f"tournament {tid} is over\n", bob.out
    results = json.loads((tmp_path / "runs" / tid / "results.json").read_text())
    assert {"alice", "bob"} <= {s["player"] for s in results["standings"]}
    assert len(results["fairness"]["nonces"]) == 2  # each bot gave its own


def _within(shown: Any, recorded: Any) -> bool:
    """Whether everything ``shown`` holds is in ``recorded`` (a newer service may add fields);
    deadlines differ from run to run."""
    if isinstance(shown, dict):
        return isinstance(recorded, dict) and all(
            k in recorded and (k == "deadline" or _within(v, recorded[k])) for k, v in shown.items()
        )
    if isinstance(shown, list):
        return isinstance(recorded, list) and len(shown) == len(recorded) and all(map(_within, shown, recorded))
    return bool(shown == recorded)


@pytest.mark.timeout(90)
async def test_the_json_bot_transcript_is_what_a_run_records(stack: Stack) -> None:
    shown = [json.loads(line) for line in json_transcript.read(DOC)]
    recorded = [json.loads(line) for line in await json_transcript.record(stack.url)]
    assert [next(iter(m)) for m in shown][:2] == ["send", "receive"] and len(shown) >= 6
    # A reply and the next update may pass each other on the way: compare in a stable order.
    key = lambda m: json.dumps({k: v for k, v in m.items() if k != "data"}, sort_keys=True)  # noqa: E731
    assert sorted(map(key, recorded)) == sorted(map(key, shown)), [key(m) for m in recorded]
    for m in shown:
        assert any(key(r) == key(m) and _within(m, r) for r in recorded), (
            f"docs/bots.md's transcript is out of date: python -m tests.examples.json_transcript --write docs/bots.md\n{m}"
        )
