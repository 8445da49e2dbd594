"""``skat match --remote A B``: a remote candidate's pairs played through real services (a
nats-server and the five service processes), the candidate an SDK player in this process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from nats.aio.client import Client

from protocol.events import TableClosed
from protocol.subjects import hello_subject
from services.natsserver import EmbeddedServer
from services.store import EventStore
from skatbus import sdk
from skatbus.cli import main
from skatbus.match import SKAT, THIRTY_ONE, Match, Outcome, skat_pair, thirty_one_pair
from skatbus.match_services import AsInEngine, pair_of, play_services_match, table_id
from skatbus.sprt import SprtSpec
from skatbus.tournament import is_paused
from tests.bus import Stack

REPO = Path(__file__).resolve().parents[2]
SEED = "remote-match"


@contextlib.asynccontextmanager
async def remote(nc: Client, url: str, player: str, brain: Any) -> AsyncIterator[None]:
    """``player`` played by ``brain`` through the SDK, connected (its hello heard) on entry."""
    hellos = await nc.subscribe(hello_subject(player))
    await nc.flush()
    stop = asyncio.Event()
    playing = asyncio.ensure_future(sdk.play(brain, player, url, stop))
    try:
        await hellos.next_msg(timeout=30)
        yield
    finally:
        await hellos.unsubscribe()
        stop.set()
        await playing


async def _store_log(nc: Client, table: str) -> list[Any]:
    return [s.event for s in await EventStore(nc).read(table)]


# --- the pairs, against the pure engine's -------------------------------------------------------


async def test_a_remote_playing_as_the_engine_gives_the_engines_pairs(
    stack: Stack, nc: Client, nats_server: EmbeddedServer
) -> None:
    # The remote's brain: the heuristic as the pure engine's pair plays it (a bot per table, seeded
    # SEED/i/seat, shown the pure engine's table name): every difference must be the engine's.
    brain = AsInEngine("heuristic", SKAT, SEED, candidate=True)
    match = Match(SKAT, "cand", "stepping-random", SprtSpec(h1=5.0, min_pairs=6), max_pairs=40, seed=SEED)
    async with remote(nc, nats_server.url, "cand", brain):
        played = await play_services_match(nc, match, jobs=2)  # a pair ahead of the test
    result, report = played.result, played.report
    assert result.outcome is Outcome.H1
    assert result.pairs < match.max_pairs
    engine = [skat_pair("heuristic", "stepping-random", SEED, i) for i in range(result.pairs)]
    assert result.diffs == [p.diff for p in engine]
    assert len(set(result.diffs)) > 1  # real pairs, not one figure
    assert (result.games, result.deals) == (sum(p.games for p in engine), sum(p.deals for p in engine))
    assert report.candidate_timeouts == 0 and report.baseline_timeouts == 0 and report.withdrawn == []
    assert report.candidate_moves > 20 * result.pairs and not report.stopped
    # every pair's four tables closed in the store, seated and dealt as the pure engine's pair
    for index, tables in enumerate(p.tables for p in report.played):
        for play, table in tables.items():
            log = await _store_log(nc, table)
            assert isinstance(log[-1], TableClosed) and log[0].seed == f"{SEED}/table-{index}"
            assert [name == "cand" for name in log[0].players] == [play == f"c{s}" for s in range(3)]
    # the pair played ahead is finished or paused (whichever came first), never left running
    assert report.unpaused == [] and all(pair_of(t)[0] == result.pairs for t in report.paused)
    for play in ("b", "c0", "c1", "c2"):
        log = await _store_log(nc, table_id(report.run, result.pairs, play))
        assert not log or isinstance(log[-1], TableClosed) or is_paused(log)


async def test_thirty_one_through_the_services_is_the_engines_too(
    stack: Stack, nc: Client, nats_server: EmbeddedServer
) -> None:
    brain = AsInEngine("heuristic", THIRTY_ONE, SEED, candidate=True)
    match = Match(THIRTY_ONE, "cand31", "random", SprtSpec(h1=0.2, min_pairs=3), max_pairs=20, seed=SEED)
    async with remote(nc, nats_server.url, "cand31", brain):
        played = await play_services_match(nc, match)
    result = played.result
    assert result.outcome is Outcome.H1 and result.pairs == 3
    engine = [thirty_one_pair("heuristic", "random", SEED, i) for i in range(result.pairs)]
    assert result.diffs == [p.diff for p in engine]
    assert (result.games, result.deals) == (sum(p.games for p in engine), sum(p.deals for p in engine))
    assert played.report.candidate_timeouts == 0 and played.report.paused == []


# --- skat match --remote -------------------------------------------------------------------------


async def _skat(*args: str, env: dict[str, str] | None = None) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skatbus.cli", "match", *args,
        cwd=REPO, env={**(env or os.environ), "PYTHONUNBUFFERED": "1"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


def _without_a_server() -> dict[str, str]:
    """The environment, without the server a test run may name (a match then starts its own)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("SKAT_NATS")}


async def test_skat_match_starts_a_stack_waits_for_the_remote_and_accepts_h1(tmp_path: Path) -> None:
    # No --nats: the match starts a local stack, says where to connect and waits; the remote (the
    # SDK's built-in heuristic, seen under the real table names) connects only then.
    out_json = tmp_path / "m.json"
    proc = await _skat(
        "my-bot", "stepping-random", "--remote", "--min-pairs", "6", "--every", "3", "--json", str(out_json),
        env=_without_a_server(),
    )  # fmt: skip
    assert proc.stdout is not None
    head: list[str] = []
    while not head or not head[-1].startswith("Remote player my-bot: connect to "):
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        assert line, f"the match ended before saying where to connect: {head}"
        head.append(line.rstrip("\n"))
    url = head[-1].split()[5].rstrip(",")
    stop = asyncio.Event()
    playing = asyncio.ensure_future(sdk.play(sdk.built_in("heuristic"), "my-bot", url, stop))
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        stop.set()
        await playing
    assert proc.returncode == 0, err.decode()
    lines = head + out.decode().splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    joined = " ".join(line.strip() for line in lines)  # wrapped lines read as one
    assert joined.startswith("SPRT my-bot vs stepping-random at Skat (through the services, my-bot remote): H0 mean")
    assert "Started a local nats-server (nats://127.0.0.1:" in joined
    assert "my-bot connected." in lines
    assert any(line.startswith("pairs 3, deals 9: +") for line in lines)
    assert "H1 accepted: my-bot is better than stepping-random by >= 5 Seeger-Fabian points per deal" in joined
    assert "my-bot: " in joined.rsplit("H1 accepted", 1)[1] and " 0 timed out" in joined.rsplit("H1 accepted", 1)[1]
    result = json.loads(out_json.read_text())
    assert result["outcome"] == "H1" and result["through"] == "services" and result["server"] == url
    assert result["pairs"] == len(result["differences"]) == len(result["services"]["tables"])
    assert result["services"]["candidate_timeouts"] == 0 and result["services"]["candidate_moves"] > 0
    assert sorted(result["services"]["tables"][0]) == ["b", "c0", "c1", "c2"]
    # the local stack went with the command: nobody listens where its server did
    host, _, port = url.removeprefix("nats://").rpartition(":")
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection(host, int(port))


async def test_a_remote_that_never_connects_ends_the_match_after_one_pair(
    stack: Stack, nats_server: EmbeddedServer, tmp_path: Path
) -> None:
    # Each of its moves times out; 2 in a row withdraw it at each of its three tables.
    out_json = tmp_path / "m.json"
    proc = await _skat(
        "ghost", "stepping-random", "--remote", "--nats", nats_server.url, "--turn-seconds", "0.5",
        "--max-timeouts", "2", "--json", str(out_json),
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    text = out.decode()
    assert proc.returncode == 0, err.decode()
    assert "stopped: ghost was withdrawn at " in text and "(2 turns missed in a row)" in text
    assert "inconclusive: no more pairs with neither hypothesis accepted" in text
    result = json.loads(out_json.read_text())
    services = result["services"]
    assert result["outcome"] == "inconclusive" and result["pairs"] == 1
    assert services["candidate_moves"] == 0 and services["candidate_timeouts"] >= 3 * 2
    assert [pair_of(t) for t in services["withdrawn"]] == [(0, "c0"), (0, "c1"), (0, "c2")]
    assert services["paused"] == []  # every table of the pair closed


async def test_sigterm_pauses_the_open_tables(
    stack: Stack, nc: Client, nats_server: EmbeddedServer, tmp_path: Path
) -> None:
    out_json = tmp_path / "m.json"
    proc = await _skat(
        "absent", "stepping-random", "--remote", "--nats", nats_server.url, "--turn-seconds", "60",
        "--json", str(out_json),
    )  # fmt: skip
    assert proc.stdout is not None
    run = ""
    while not run:  # the line naming the tables
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        assert line, "the match ended before naming its tables"
        if line.startswith("Tables m-"):
            run = line.split()[1].split("-<")[0]
    table = f"{run}-0-c0"
    while not await _store_log(nc, table):  # opened, and waiting for the absent remote's move
        await asyncio.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 130, err.decode()
    assert "interrupted: no verdict yet" in out.decode()
    result = json.loads(out_json.read_text())
    assert result["outcome"] == "interrupted" and result["pairs"] == 0
    paused = result["services"]["paused"]
    assert {f"{run}-0-c{s}" for s in range(3)} <= set(paused)
    for name in paused:
        assert is_paused(await _store_log(nc, name))


# --- mistakes ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["heuristic", "random", "--nats", "nats://127.0.0.1:4222"], "--nats is for a --remote candidate"),
        (["heuristic", "random", "--turn-seconds", "5"], "--turn-seconds is for a --remote candidate"),
        (["my-bot", "random"], "unknown bot 'my-bot' for Skat; its built-in bots: "),
        (["my-bot", "random"], "(a remote player? add --remote"),
        (["a.b", "random", "--remote"], "--remote 'a.b': player id"),
        (["my-bot", "nosuchbot", "--remote"], "unknown bot 'nosuchbot'"),
        (["my-bot", "random", "--remote", "--reseed-candidate"], "a --remote one makes its own choices"),
        (["my-bot", "random", "--remote", "--max-timeouts", "0"], "--max-timeouts must be at least 1"),
        (["my-bot", "random", "--remote", "--turn-seconds", "0"], "--turn-seconds must be a number of seconds above 0"),
        (["my-bot", "random", "--remote", "--turn-seconds", "soon"], "--turn-seconds: want a number"),
        (["my-bot", "random", "--remote", "--connect-wait", "-1"], "--connect-wait must be 0 or more"),
    ],
)
def test_a_mistake_is_one_line_and_exit_2(
    args: list[str], says: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKAT_NATS_URL", raising=False)
    code = main(["match", *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("skat match: ") and says in err
