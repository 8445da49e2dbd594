"""Runs have ids of their own and never write over a result; ``--resume`` names exactly one
run; nothing hangs: a server that is not there or refuses the credentials is one line, and
Ctrl-C or SIGTERM stop a tournament (and everything it started) with the line to resume it."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from nats.aio.client import Client

from protocol.skat.rules import Rules
from protocol.tournament import TournamentConfig, TournamentCreated, schedule
from services.auth import write_auth
from services.natsserver import EmbeddedServer, free_port
from skatbus.cli import main
from skatbus.tournament import Progress, TournamentLog, TournamentRefused, format_standings, run_tournament
from skatbus.tournament_cli import add_arguments, config_from, new_id
from tests.bus import Stack

pytestmark = pytest.mark.timeout(120)
SKAT = [sys.executable, "-m", "skatbus.cli"]
ENV = {k: v for k, v in os.environ.items() if not k.startswith("SKAT_NATS")}


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


async def _skat(*argv: str, timeout: float = 60) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(*SKAT, *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


# --- ids ---------------------------------------------------------------------------------------


def test_every_run_of_one_seed_gets_its_own_id_which_hides_the_seed() -> None:
    ids = {config_from(_args()).id for _ in range(50)}
    assert len(ids) == 50
    assert all(re.fullmatch(r"t-\d{6}-\d{6}-[0-9a-f]{16}", i) for i in ids), ids
    secret = config_from(_args("--remote", "ann", "--bots", "random,random"))
    assert secret.seed not in secret.id and len(secret.seed) >= 32
    assert config_from(_args("--id", "mine")).id == "mine"


def test_no_id_carries_anything_of_the_seed() -> None:
    """The finding: the id held 24 bits of the seed's hash, so a weak seed (league-2026) was
    found from the id in 0.02 s. Two runs of one seed in one second share only the time."""
    import hashlib

    now = time.time()
    a, b = new_id(now), new_id(now)
    assert a[:16] == b[:16] and a[16:] != b[16:]
    for seed in ("league-2026", "skatbus"):
        digest = hashlib.sha256(seed.encode()).hexdigest()
        ids = [config_from(_args("--seed", seed)).id for _ in range(20)]
        assert not any(digest[:6] in i for i in ids)


def test_the_seats_are_remote_players_first_then_the_bots_in_order() -> None:
    config = config_from(_args("--remote", "ann:json", "--remote", "bob", "--bots", "heuristic"))
    assert config.entrants == ["ann", "bob", "heuristic"] and config.bots == {"heuristic": "heuristic"}
    assert config.formats == {"ann": "json"}
    # Without --bots, the free seats take the default bots in order.
    assert config_from(_args("--remote", "ann")).entrants == ["ann", "heuristic", "stepping-random"]
    assert config_from(_args("--players", "4")).entrants == ["heuristic", "stepping-random", "random", "random-2"]


async def test_a_result_on_disk_is_never_written_over(nc: Client, tmp_path: Path) -> None:
    config = TournamentConfig(id="done", entrants=["random", "random-2", "random-3"],
                              bots={"random": "random", "random-2": "random", "random-3": "random"})  # fmt: skip
    (tmp_path / "done").mkdir()
    (tmp_path / "done" / "results.json").write_text("{}")
    with pytest.raises(TournamentRefused, match="exists"):
        await run_tournament(nc, config, out_dir=tmp_path, out=io.StringIO())
    assert (tmp_path / "done" / "results.json").read_text() == "{}"
    assert await TournamentLog(nc).read("done") == []  # refused before anything was stored


async def test_an_id_in_the_store_is_refused_and_resume_names_it_exactly(nc: Client, tmp_path: Path) -> None:
    config = TournamentConfig(id="taken", entrants=["a", "b", "c"], rules=Rules(rounds=1, seeger_fabian=True))
    tlog = TournamentLog(nc)
    await tlog.ensure_stream()
    await tlog.append("taken", TournamentCreated(config=config, tables=schedule(config)))
    with pytest.raises(TournamentRefused, match="exists already"):
        await run_tournament(nc, config, out_dir=tmp_path, out=io.StringIO())
    with pytest.raises(TournamentRefused, match="no tournament 'take'"):
        await run_tournament(nc, resume="take", out_dir=tmp_path, out=io.StringIO())


def test_resume_refuses_a_different_configuration_in_one_line(
    nats_server: EmbeddedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_from(_args("--rounds", "2"))

    async def store() -> None:
        from services.connection import open_connection

        nc = await open_connection(nats_server.url)
        tlog = TournamentLog(nc)
        await tlog.ensure_stream()
        await tlog.append(config.id, TournamentCreated(config=config, tables=schedule(config)))
        await nc.close()

    asyncio.run(store())
    base = ["tournament", "--nats", nats_server.url, "--out", str(tmp_path), "--resume", config.id]
    for extra, says in ((["--kontra"], "kontra = False"), (["--rounds", "3"], "rounds = 2"),
                        (["--bots", "random,random,random"], "seats heuristic, stepping-random, random")):  # fmt: skip
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err and "drop --" in err, err
    assert main(["tournament", "--nats", nats_server.url, "--out", str(tmp_path), "--resume", "nosuch"]) == 2
    assert "no tournament 'nosuch'" in capsys.readouterr().err


async def test_two_runs_of_one_seed_keep_both_results_and_time_outs_are_counted(stack: Stack, tmp_path: Path) -> None:
    """The issue's case: a second run of the same seed wrote over the first one's directory.
    And a remote player that never connects is named, counted and warned about."""
    out = str(tmp_path / "runs")
    base = ["tournament", "--nats", stack.url, "--out", out, "--groups", "1", "--rounds", "1"]
    code, first, err = await _skat(*base)
    assert code == 0, err
    first_id = re.search(r"Tournament (t-\S+):", first)
    assert first_id, first
    before = (tmp_path / "runs" / first_id.group(1) / "results.json").read_text()
    code, second, err = await _skat(*base, "--remote", "ghost", "--turn-seconds", "0.2")
    assert code == 0, err
    second_id = re.search(r"Tournament (t-\S+):", second)
    assert second_id and second_id.group(1) != first_id.group(1)
    assert (tmp_path / "runs" / first_id.group(1) / "results.json").read_text() == before
    # The remote player was told where to connect, and its silence is not passed over.
    assert f"Remote player ghost: connect to {stack.url}" in second
    assert "warning: ghost never connected (no hello and no command heard)" in second
    results = json.loads((tmp_path / "runs" / second_id.group(1) / "results.json").read_text())
    ghost = next(s for s in results["standings"] if s["player"] == "ghost")
    assert ghost["timeouts"] > 0 and ghost["answered"] == 0
    assert all(s["timeouts"] == 0 and s["answered"] > 0 for s in results["standings"] if s["player"] != "ghost")
    assert results["warnings"] and results["refused"] == {"heuristic": 0, "stepping-random": 0}
    # A finished run cannot be resumed (its results would be written again).
    code, _, err = await _skat("tournament", "--nats", stack.url, "--out", out, "--resume", first_id.group(1))
    assert code == 2 and "has finished" in err and "Traceback" not in err


# --- nothing hangs -------------------------------------------------------------------------------


def test_no_server_is_one_line_within_the_bound(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"nats://127.0.0.1:{free_port()}"
    started = time.monotonic()
    assert main(["tournament", "--nats", url, "--connect-timeout", "1.5"]) == 1
    took = time.monotonic() - started
    err = capsys.readouterr().err
    assert err == f"skat tournament: cannot reach NATS at {url}: connection refused (tried for 2 s; --nats URL or " \
        "$SKAT_NATS_URL names the server)\n"  # fmt: skip
    assert 1.4 < took < 6


async def test_skat_up_checks_its_server_before_saying_up() -> None:
    url = f"nats://127.0.0.1:{free_port()}"
    code, out, err = await _skat("up", "--nats", url, "--connect-timeout", "1")
    assert code == 1 and "is up" not in out
    assert err.splitlines() == [f"skat up: cannot reach NATS at {url}: connection refused (tried for 1 s; "
                                "--nats URL or $SKAT_NATS_URL names the server)"]  # fmt: skip


@pytest.fixture
def auth_server(tmp_path: Path) -> tuple[EmbeddedServer, Path]:
    written = write_auth(tmp_path / "auth", ["ann"], str(tmp_path / "store"), port=free_port())
    assert written
    from services.auth import load_auth

    auth = load_auth(tmp_path / "auth")
    server = EmbeddedServer(store_dir=auth.store_dir, config=auth.config, host=auth.host, port=auth.port).start()
    yield server, tmp_path / "auth"  # type: ignore[misc]
    server.stop()


async def test_refused_credentials_are_one_line_naming_the_option(auth_server: tuple[EmbeddedServer, Path]) -> None:
    server, _ = auth_server
    for argv in (["tournament", "--nats", server.url], ["bot", "random", "--player", "ann", "--nats", server.url]):
        started = time.monotonic()
        code, _, err = await _skat(*argv)
        lines = [line for line in err.splitlines() if not line.startswith("{")]  # the bot logs its start
        assert code == 1 and len(lines) == 1, err
        assert "refused a connection without credentials (Authorization Violation)" in lines[0]
        assert "--creds FILE" in lines[0] and "Traceback" not in err
        assert time.monotonic() - started < 8  # at once, not after the bound


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
async def test_a_bot_that_cannot_connect_stops_on_a_signal(sig: signal.Signals) -> None:
    url = f"nats://127.0.0.1:{free_port()}"
    proc = await asyncio.create_subprocess_exec(
        *SKAT, "bot", "random", "--player", "ann", "--nats", url, "--connect-timeout", "0",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        while b"waiting_for_nats" not in await asyncio.wait_for(proc.stderr.readline(), 20):
            pass
        proc.send_signal(sig)
        await asyncio.wait_for(proc.wait(), 5)
        assert b"Traceback" not in await proc.stderr.read()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "--ppid", str(pid), "-o", "pid="], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_stops_a_tournament_and_all_it_started_and_says_how_to_resume(
    sig: signal.Signals, tmp_path: Path
) -> None:
    """The built-in stack (a nats-server and five services) is started by the tournament and
    must be gone, by PID, after it exits; the resume line must name this run."""
    out = tmp_path / "runs"
    proc = await asyncio.create_subprocess_exec(
        *SKAT, "tournament", "--groups", "10", "--rounds", "12", "--out", str(out),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    )  # fmt: skip
    children: list[int] = []
    try:
        assert proc.stdout is not None and proc.stderr is not None
        header = ""
        while "/1080 deals" not in (line := (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()):
            header += line
        tid = re.search(r"Tournament (\S+):", header)
        assert tid, header
        children = _children(proc.pid)
        assert len(children) == 6, children  # the server and five services
        proc.send_signal(sig)
        await asyncio.wait_for(proc.wait(), 30)
        err = (await proc.stderr.read()).decode()
        assert proc.returncode == 128 + sig
        # Its tables are paused before the stack stops (a resume resumes them).
        assert re.fullmatch(
            rf"interrupted; its \d+ open tables are paused \(no clock runs meanwhile\); "
            rf"resume with: skat tournament --resume {tid.group(1)} --out {re.escape(str(out))}",
            err.strip().splitlines()[-1],
        ), err
        assert "Traceback" not in err and "KeyboardInterrupt" not in err
        assert [c for c in children if _running(c)] == []
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        for child in children:
            if _running(child):
                os.kill(child, signal.SIGKILL)


# --- what the terminal shows ---------------------------------------------------------------------


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("columns", [40, 80, 200])
def test_the_progress_line_fits_the_terminal(columns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    out = _Tty()
    progress = Progress(1080, out)
    progress.started -= 10
    leaders = "heuristic +42.6  stepping-random -9.9  random -241.3"
    progress.update(216, leaders, "ghost 12 (none answered)")
    line = out.getvalue().rsplit("\r", 1)[1]
    assert len(line) <= columns - 1
    assert line.lstrip("[#.] ").startswith("216/1080 deals  ETA")
    assert ("ghost 12" in line) == (columns >= 80)  # time-outs before the leaders when room is short
    if columns == 200:
        assert leaders in line and line.startswith("[")


def test_the_rate_counts_only_deals_played_by_this_process() -> None:
    """After --resume with 900 deals done before, 100 more in 10 s is 10 deals/s, not 100."""
    progress = Progress(1080, io.StringIO(), already=900)
    progress.started -= 10
    progress.update(1000)
    assert 9.5 < progress.rate() < 10.5
    assert "ETA 8 s" in progress.line()


def test_the_standings_label_the_interval_and_show_time_outs() -> None:
    results = {
        "standings": [
            {"player": "ann", "seeger_fabian": 10, "per_deal": 1.0, "ci95": 2.0, "deals": 10, "declared": 1,
             "won": 1, "by_game": {}, "timeouts": 7, "answered": 0},
        ],
        "warnings": ["ann never answered: all its 7 turns timed out (did its bot connect?)"],
    }  # fmt: skip
    text = format_standings(results)
    assert "95 %" in text.splitlines()[0] and "time-outs" in text.splitlines()[0]
    assert "± 2.0" in text and text.splitlines()[-1].startswith("warning: ann never answered")
