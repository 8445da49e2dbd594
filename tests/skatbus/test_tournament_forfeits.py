"""No dead entrant ranks second, and stopping is pausing: remote entrants that never connect,
connect and stay silent, or answer only with refused commands are withdrawn after
``--max-timeouts`` turns in a row, forfeit, rank below the built-in bots and are each warned
about as what they are; a table paused by the operator shows as paused and takes no time-out;
an interrupted tournament pauses its tables, and ``--resume`` resumes and finishes them."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import get_args

import nats
import pytest
from nats.aio.client import Client

from protocol.events import PlayerTimedOut, TablePaused, TableResumed
from protocol.skat.cards import CardCode
from protocol.skat.commands import PlayCard
from protocol.skat.rules import Rules
from protocol.subjects import command_subject
from protocol.tournament import TournamentConfig
from protocol.wire import Update, encode
from services.store import EventStore
from skatbus.bots import SteppingRandomBot
from skatbus.player import RemotePlayer
from skatbus.report import build_report, run_files
from skatbus.report_html import render_report
from skatbus.tournament import format_standings, run_tournament
from tests.bus import Stack

pytestmark = pytest.mark.timeout(180)
SKAT = [sys.executable, "-m", "skatbus.cli"]
ENV = {k: v for k, v in os.environ.items() if not k.startswith("SKAT_NATS")}


async def _skat(*argv: str, timeout: float = 60) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(*SKAT, *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def _until(check: object, timeout: float = 60.0, what: str = "") -> None:
    """Wait (polling) until ``check()`` (sync or async) is true."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        result = check()  # type: ignore[operator]
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if loop.time() > end:
            raise TimeoutError(f"not after {timeout} s: {what}")
        await asyncio.sleep(0.05)


class Mute(RemotePlayer):
    """Connects and says hello once it is seated, then never sends a command."""

    said = False

    async def _act(self, table: str, update: Update) -> None:
        if not self.said:
            self.said = True
            await self.hello()


class Junk(RemotePlayer):
    """Answers every prompt with bytes that are no command, then with a card it does not hold."""

    async def _act(self, table: str, update: Update) -> None:
        absent = next(c for c in get_args(CardCode) if c not in update.view.hand)
        for data in (b"\xc1 no command", encode(PlayCard(card=absent, at=update.index))):
            try:
                await self.inbox.request(command_subject(self.player, table), data, timeout=2.0)
            except Exception:
                pass  # no answer: the runner only counts what it hears


async def test_dead_and_broken_entrants_forfeit_and_rank_below_the_bots(
    stack: Stack, nc: Client, tmp_path: Path
) -> None:
    """The finding: a bot that never answers finished 2nd (Seeger-Fabian pays the defenders
    when a declarer loses). Now each is withdrawn after 2 missed turns in a row and ranks
    below the built-in bot, with what the runner heard of it."""
    remotes_nc = await nats.connect(stack.url)
    mute = Mute(remotes_nc, "mute", SteppingRandomBot("m"))
    junk = Junk(remotes_nc, "junk", SteppingRandomBot("j"))
    for p in (mute, junk):
        await p.start()
    await remotes_nc.flush()
    config = TournamentConfig(
        id="dead",
        entrants=["ghost", "mute", "junk", "random"],
        bots={"random": "random"},
        rules=Rules(rounds=1, players=4, seeger_fabian=True, turn_seconds=1.0, max_timeouts=2),
        groups=1,
        duplicate=False,
        seed="dead",
    )
    try:
        results = await run_tournament(nc, config, out_dir=tmp_path, out=io.StringIO())
    finally:
        for p in (mute, junk):
            await p.stop()
        await remotes_nc.close()
    rows = results["standings"]
    assert rows[0]["player"] == "random" and not rows[0]["forfeit"]
    assert {r["player"] for r in rows[1:]} == {"ghost", "mute", "junk"} and all(r["forfeit"] for r in rows[1:])
    assert sorted((f["player"], f["table"], f["missed"]) for f in results["forfeits"]) == [
        ("ghost", "dead-g0", 2), ("junk", "dead-g0", 2), ("mute", "dead-g0", 2)
    ]  # fmt: skip
    assert all(f["deal"] >= 1 for f in results["forfeits"])
    warnings = results["warnings"]

    def about(player: str) -> list[str]:
        return [w for w in warnings if w.startswith(f"{player} ")]

    assert [w for w in about("ghost") if "never connected (no hello and no command heard)" in w], warnings
    assert [w for w in about("mute") if "connected but never answered (1 hello, no command)" in w], warnings
    [junk_says] = [w for w in about("junk") if "answered only with refused commands: codes " in w]
    assert "malformed" in junk_says, junk_says
    assert all(any("forfeited" in w for w in about(p)) for p in ("ghost", "mute", "junk"))
    assert not about("random") and results["refused"] == {"random": 0}
    heard = results["heard"]
    assert heard["ghost"]["hellos"] == heard["ghost"]["commands"] == 0
    assert heard["mute"]["hellos"] == 1 and heard["mute"]["commands"] == 0
    assert heard["junk"]["commands"] > 0 and heard["junk"]["taken"] == 0 and heard["junk"]["refused"]
    # The files and the printed end say it too.
    with open(tmp_path / "dead" / "standings.csv") as f:
        csv_rows = list(csv.DictReader(f))
    assert [r["forfeit"] for r in csv_rows] == ["false", "true", "true", "true"]
    text = format_standings(results)
    assert "ghost (forfeit)" in text and "random (forfeit)" not in text
    assert json.loads((tmp_path / "dead" / "results.json").read_text())["forfeits"] == results["forfeits"]
    report, _ = build_report(*run_files(tmp_path / "dead"))
    page = render_report(report)
    assert page.count("(forfeit)</em>") == 3 and "forfeited: withdrawn at dead-g0" in page


async def test_an_operator_pause_stops_the_clock_and_shows_in_the_progress(
    stack: Stack, nc: Client, tmp_path: Path
) -> None:
    """``skat pause TABLE`` while the runner watches: no time-out while paused (the remote
    entrant never answers, at 0.4 s a turn), PAUSED in the progress; ``skat resume TABLE``
    and the tournament finishes."""
    config = TournamentConfig(
        id="op",
        entrants=["late", "random", "stepping-random"],
        bots={"random": "random", "stepping-random": "stepping-random"},
        rules=Rules(rounds=1, seeger_fabian=True, turn_seconds=0.4, max_timeouts=0),
        groups=1,
        duplicate=False,
        seed="op",
    )
    progress = io.StringIO()
    store = EventStore(nc)
    work = asyncio.ensure_future(run_tournament(nc, config, out_dir=tmp_path, out=progress))
    late = None
    try:

        async def timed_out() -> bool:
            return any(isinstance(s.event, PlayerTimedOut) for s in await store.read("op-g0"))

        await _until(timed_out, what="a time-out at op-g0")
        code, out, err = await _skat("pause", "op-g0", "--nats", stack.url, "--reason", "lunch")
        assert (code, out, err) == (0, "op-g0: paused\n", "")
        await _until(lambda: "PAUSED op-g0" in progress.getvalue(), what="PAUSED in the progress")
        log = [s.event for s in await store.read("op-g0")]
        assert log[-1] == TablePaused(reason="lunch")
        await asyncio.sleep(3 * config.rules.turn_seconds)  # a turn would have timed out meanwhile
        assert len(await store.read("op-g0")) == len(log)
        code, out, _ = await _skat("pause", "op-g0", "--nats", stack.url)
        assert (code, out) == (0, "op-g0: already paused\n")
        late_nc = await nats.connect(stack.url)
        late = RemotePlayer(late_nc, "late", SteppingRandomBot("late"))
        await late.start()
        await late_nc.flush()
        # By the tournament id: its runner is here (it plays the built-in bots), so this is allowed.
        code, out, _ = await _skat("resume", "op", "--nats", stack.url)
        assert (code, out) == (0, "op-g0: resumed\n")
        results = await asyncio.wait_for(work, 90)
    finally:
        if not work.done():
            work.cancel()
        if late is not None:
            await late.stop()
            await late.nc.close()
    assert len(results["tables"]) == 1 and not results["forfeits"]
    log = [s.event for s in await store.read("op-g0")]
    assert TableResumed() in log
    code, out, _ = await _skat("resume", "op", "--nats", stack.url)
    assert (code, out) == (0, "tournament op has finished: no table to resume\n")
    code, _, err = await _skat("pause", "nosuch", "--nats", stack.url)
    assert code == 2 and err.strip().splitlines() == [
        "skat pause: nosuch: there is no tournament and no table by this id on this server"
    ]


async def test_an_interrupted_tournament_pauses_its_tables_and_resume_finishes_them(
    stack: Stack, nc: Client, tmp_path: Path
) -> None:
    """The finding: after Ctrl-C against a separate stack (--nats) the clocks kept running
    (6 time-outs while "interrupted"). Now every open table is paused before the runner exits,
    and --resume resumes them before the bots say hello."""
    out = str(tmp_path / "runs")
    tables = [f"tp-g{g}" for g in range(2)]  # no duplicate rotations with a remote player
    argv = ["tournament", "--nats", stack.url, "--id", "tp", "--remote", "ghost", "--bots", "random,stepping-random",
            "--groups", "2", "--rounds", "1", "--turn-seconds", "0.4", "--max-timeouts", "0", "--out", out]  # fmt: skip
    proc = await asyncio.create_subprocess_exec(*SKAT, *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    store = EventStore(nc)
    try:

        async def all_running() -> bool:
            for table in tables:
                if not any(isinstance(s.event, PlayerTimedOut) for s in await store.read(table)):
                    return False
            return True

        await _until(all_running, what="a time-out at every table")
        proc.send_signal(signal.SIGINT)
        _, err_bytes = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    err = err_bytes.decode()
    assert proc.returncode == 128 + signal.SIGINT, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted; its 2 open tables are paused"), err
    assert last.endswith(f"resume with: skat tournament --resume tp --out {out} --nats {stack.url}"), err
    logs = {t: [s.event for s in await store.read(t)] for t in tables}
    for table, log in logs.items():
        assert log[-1] == TablePaused(reason="tournament tp interrupted"), (table, log[-3:])
    await asyncio.sleep(3 * 0.4)  # the seat to move would have timed out meanwhile
    for table, log in logs.items():
        assert len(await store.read(table)) == len(log), f"{table} went on while paused"
    code, said, _ = await _skat("pause", "tp", "--nats", stack.url)
    assert code == 0 and said.splitlines() == [f"{t}: already paused" for t in tables]
    # Nobody plays the built-in bots now: resuming the clocks would make them forfeit.
    code, _, err = await _skat("resume", "tp", "--nats", stack.url)
    assert code == 2 and "no runner plays them" in err and "--resume tp" in err, err
    # The remote entrant connects now; --resume resumes the tables and the tournament ends.
    ghost_nc = await nats.connect(stack.url)
    ghost = RemotePlayer(ghost_nc, "ghost", SteppingRandomBot("ghost"))
    await ghost.start()
    try:
        code, said, err = await _skat("tournament", "--nats", stack.url, "--resume", "tp", "--out", out, timeout=120)
    finally:
        await ghost.stop()
        await ghost_nc.close()
    assert code == 0, err
    assert "Resumed 2 paused tables." in said
    for table in tables:
        log = [s.event for s in await store.read(table)]
        assert TableResumed() in log and not any(isinstance(e, TablePaused) for e in log[log.index(TableResumed()) :])
    assert (tmp_path / "runs" / "tp" / "results.json").exists()


async def test_an_interrupt_that_cannot_pause_says_so_within_the_bound() -> None:
    """Best effort, bounded: with the server gone the interrupted line says the clocks run on."""
    from services.connection import ConnectionSettings
    from services.natsserver import free_port
    from skatbus.tournament_cli import PAUSE_WITHIN, _pause_interrupted

    config = TournamentConfig(id="gone", entrants=["a", "b", "c"], rules=Rules(rounds=1, seeger_fabian=True))
    settings = ConnectionSettings((f"nats://127.0.0.1:{free_port()}",))
    loop = asyncio.get_running_loop()
    started = loop.time()
    note = await _pause_interrupted(config, settings, asyncio.Event())
    assert loop.time() - started < PAUSE_WITHIN + 2
    assert note.startswith("; its tables could not be paused (") and "skat pause gone" in note, note
