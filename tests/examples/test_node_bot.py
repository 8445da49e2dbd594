"""The Node.js example bot (examples/node-bot) plays a whole table with two Python bots through
the real services: JSON updates and commands, hello on connect and on reconnect (pending
prompts are sent again), a clean stop on SIGTERM and SIGINT.

Needs node and npm; ``npm ci`` runs once per session when examples/node-bot/node_modules is
missing or holds another version of the client than package-lock.json. Skipped only when node
or npm is not installed or the npm registry cannot be reached.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from nats.aio.client import Client
from nats.aio.subscription import Subscription

from protocol.events import (
    BidHeld,
    BidMade,
    CardPlayed,
    Discarded,
    GameDeclared,
    KontraSaid,
    Passed,
    PlayerTimedOut,
    ReSaid,
    SkatTaken,
    TableClosed,
)  # fmt: skip
from protocol.skat.rules import Rules
from protocol.skat.table import fold
from protocol.wire import OpenTable
from services.natsserver import EmbeddedServer, free_port
from skatbus.bots import HashedBot
from skatbus.check_bot.relay import Relay
from skatbus.player import RemotePlayer
from tests.bus import Stack, open_table, wait_closed
from tests.node import BOT_DIR

NODE_PLAYER = "nodebot"
PLAYERS = ["ann", NODE_PLAYER, "cyd"]
NODE_SEAT = PLAYERS.index(NODE_PLAYER)
# What a player's command adds to the log, one event per accepted command.
PLAYER_EVENTS = (BidMade, BidHeld, Passed, SkatTaken, Discarded, GameDeclared, KontraSaid, ReSaid, CardPlayed)


def test_strategy_unit_tests(node: str) -> None:
    """``node --test``: the strategy picks a legal action in every phase (no server needed)."""
    done = subprocess.run([node, "--test", "strategy.test.js"], cwd=BOT_DIR, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


async def _first_prompt(sub: Subscription, timeout: float = 15.0) -> dict:
    """The first prompt (a JSON Update with your_turn) that arrives on ``sub``."""
    try:
        async with asyncio.timeout(timeout):
            async for msg in sub.messages:
                update = json.loads(msg.data)
                if update.get("your_turn"):
                    return update  # type: ignore[no-any-return]
    finally:
        await sub.unsubscribe()
    raise AssertionError("the subscription ended")


async def _closed_while_running(
    nc: Client, table: str, proc: subprocess.Popen[bytes], out: Path, timeout: float
) -> list:
    """The table's log once it is closed; fails early (with the bot's output) if the bot dies."""
    closing = asyncio.ensure_future(wait_closed(nc, table, timeout=timeout))
    try:
        while not closing.done():
            if proc.poll() is not None:
                raise AssertionError(f"the node bot exited with {proc.returncode} mid-table:\n{out.read_text()}")
            await asyncio.wait({closing}, timeout=0.1)
        return closing.result()
    finally:
        closing.cancel()


def _bot_lines(out: Path) -> list[dict]:
    lines = []
    for line in out.read_text().splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            lines.append({"event": "raw", "text": line})
    return lines


async def _wait_line(
    out: Path, proc: subprocess.Popen[bytes], event: str, timeout: float = 15.0, **fields: object
) -> dict:
    """The first line of the bot's log with this event (and these fields)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        for line in _bot_lines(out):
            if line.get("event") == event and all(line.get(k) == v for k, v in fields.items()):
                return line
        if proc.poll() is not None or loop.time() > end:
            raise AssertionError(f"no {event} {fields} in the node bot's log:\n{out.read_text()}")
        await asyncio.sleep(0.05)


def _start_bot(node: str, url: str, out: Path, *extra: str) -> subprocess.Popen[bytes]:
    with out.open("wb") as sink:
        return subprocess.Popen(
            [node, "bot.js", "--player", NODE_PLAYER, "--nats", url, *extra],
            cwd=BOT_DIR,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )


async def _stop_bot(proc: subprocess.Popen[bytes], sig: int) -> int:
    """Send ``sig`` to the bot (by PID) and wait for it to exit; kill it if it does not."""
    try:
        os.kill(proc.pid, sig)
        return await asyncio.to_thread(proc.wait, 10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def _open_and_see_first_prompt(nc: Client, table: str, rules: Rules) -> None:
    """Open the table (JSON updates for the node bot) and wait until its first prompt was sent."""
    watch = await nc.subscribe(f"skat.view.{NODE_PLAYER}.{table}")
    await nc.flush()
    opened = OpenTable(table=table, players=PLAYERS, rules=rules, seed=f"seed-{table}", formats={NODE_PLAYER: "json"})
    reply = await open_table(nc, opened)
    assert reply.ok, reply
    first = await _first_prompt(watch)
    assert first["view"]["table"] == table and first["view"]["seat"] == NODE_SEAT and first["view"]["legal"]


def _check_table(log: list, rules: Rules, players: list[RemotePlayer], out: Path) -> int:
    """The log folds, the node bot moved and nobody was timed out; returns the bot's moves."""
    text = out.read_text()
    state = fold(log)  # the whole log folds under the rules
    assert state.closed and isinstance(log[-1], TableClosed)
    assert state.deal_no == rules.deals, (state.deal_no, rules.deals)
    moves = [e for e in log if isinstance(e, PLAYER_EVENTS) and e.seat == NODE_SEAT]
    assert any(isinstance(e, (BidMade, BidHeld, Passed)) for e in moves), text
    assert any(isinstance(e, CardPlayed) for e in moves), text
    timed_out = [e for e in log if isinstance(e, PlayerTimedOut)]
    assert not [e for e in timed_out if e.seat == NODE_SEAT], f"the node bot was timed out:\n{text}"
    assert not timed_out, timed_out
    assert all(not p.rejections for p in players)
    return len(moves)


def _check_bot_log(out: Path, code: int, moves: int) -> list[dict]:
    """The bot exited cleanly, was never refused and counted as many accepted commands as moves."""
    text = out.read_text()
    assert code == 0, f"the node bot exited with {code} after the signal:\n{text}"
    lines = _bot_lines(out)
    events = [line.get("event") for line in lines]
    for bad in ("command_rejected", "update_not_json", "reply_not_json", "strategy_failed", "command_gave_up", "raw"):
        assert bad not in events, text
    assert {"stopping", "closed"} <= set(events), text
    closed = next(line for line in lines if line.get("event") == "closed")
    assert closed["accepted"] == moves and closed["rejected"] == 0, (closed, moves)
    return lines


async def _python_players(nc: Client | dict[str, Client]) -> list[RemotePlayer]:
    """The other two seats, on one connection or (with per-player keys) each on its own."""
    conns = nc if isinstance(nc, dict) else {p: nc for p in PLAYERS}
    players = [RemotePlayer(conns[p], p, HashedBot("node")) for p in PLAYERS if p != NODE_PLAYER]
    for p in players:
        await p.start()
    return players


@pytest.mark.timeout(90)
async def test_node_bot_plays_a_table(stack: Stack, nc: Client, node: str, tmp_path: Path) -> None:
    """The bot starts after its first prompt went out: it gets that prompt only by saying hello."""
    table, rules = "node-t1", Rules(rounds=1, kontra=True, turn_seconds=10)
    players = await _python_players(nc)
    out = tmp_path / "node-bot.log"
    try:
        await _open_and_see_first_prompt(nc, table, rules)
        proc = _start_bot(node, stack.url, out)
        try:
            log = await _closed_while_running(nc, table, proc, out, timeout=45.0)
        finally:
            code = await _stop_bot(proc, signal.SIGTERM)
    finally:
        for p in players:
            await p.stop()
    moves = _check_table(log, rules, players, out)
    lines = _check_bot_log(out, code, moves)
    hello = next(line for line in lines if line.get("event") == "hello")
    assert hello["reason"] == "connect" and hello["reply"] == {"prompts": 1}, out.read_text()


@pytest.mark.timeout(90)
async def test_node_bot_says_hello_again_after_a_reconnect(
    stack: Stack, nats_server: EmbeddedServer, nc: Client, node: str, tmp_path: Path
) -> None:
    """The bot's connection is cut, its first prompt is sent while it is away, and it gets that
    prompt once it is back, by saying hello on the reconnect."""
    table, rules = "node-t2", Rules(rounds=1, turn_seconds=10)
    players = await _python_players(nc)
    proxy = Relay(("127.0.0.1", nats_server.port), free_port())  # check-bot's relay: cuttable
    url = f"nats://127.0.0.1:{proxy.port}"
    await proxy.open()
    out = tmp_path / "node-bot.log"
    try:
        proc = _start_bot(node, url, out)
        try:
            await _wait_line(out, proc, "hello", reason="connect")
            await proxy.cut()
            await _wait_line(out, proc, "disconnected")
            await _open_and_see_first_prompt(nc, table, rules)
            await proxy.open()
            log = await _closed_while_running(nc, table, proc, out, timeout=45.0)
        finally:
            code = await _stop_bot(proc, signal.SIGINT)
    finally:
        await proxy.cut()
        for p in players:
            await p.stop()
    moves = _check_table(log, rules, players, out)
    lines = _check_bot_log(out, code, moves)
    hellos = [line for line in lines if line.get("event") == "hello"]
    assert [h["reason"] for h in hellos] == ["connect", "reconnect"], out.read_text()
    assert hellos[0]["reply"] == {"prompts": 0} and hellos[1]["reply"] == {"prompts": 1}, out.read_text()
    assert "reconnected" in [line.get("event") for line in lines]


@pytest.mark.timeout(120)
async def test_node_bot_plays_over_tls_with_its_own_key(node: str, tmp_path: Path) -> None:
    """`skat auth --tls`: the node bot connects with its NKey seed file and the CA file
    (tls://, --creds, --tls-ca), never a password, and plays its seat; a bot given a key the
    server does not know gets nowhere."""
    from services.auth import SERVICE_USER, write_auth
    from services.connection import open_connection

    auth = write_auth(
        tmp_path / "auth", PLAYERS, store_dir=str(tmp_path / "js"), listen=("127.0.0.1", free_port()), tls=True
    )
    server = EmbeddedServer(config=auth.config, host=auth.host, port=auth.port, tls=True).start()
    stack = Stack(auth.settings(SERVICE_USER, server.url))
    stack.start_all()
    conns: dict[str, Client] = {}
    try:
        admin = await open_connection(auth.settings(SERVICE_USER, server.url))
        conns = {
            p: await open_connection(auth.settings(p, server.url), inbox_prefix=f"_INBOX.{p}")
            for p in PLAYERS
            if p != NODE_PLAYER
        }
        players = await _python_players(conns)
        table, rules = "node-tls", Rules(rounds=1, turn_seconds=10)
        out = tmp_path / "node-bot.log"
        proc = _start_bot(node, server.url, out, "--creds", auth.seed_file(NODE_PLAYER), "--tls-ca", str(auth.ca_file))
        try:
            await _wait_line(out, proc, "hello", reason="connect", timeout=30)
            opened = OpenTable(table=table, players=PLAYERS, rules=rules, seed=table, formats={NODE_PLAYER: "json"})
            reply = await open_table(admin, opened)
            assert reply.ok, reply
            log = await _closed_while_running(admin, table, proc, out, timeout=60.0)
        finally:
            code = await _stop_bot(proc, signal.SIGTERM)
        for p in players:
            await p.stop()
        moves = _check_table(log, rules, players, out)
        lines = _check_bot_log(out, code, moves)
        assert next(line for line in lines if line.get("event") == "connected")["tls"] is True
        assert Path(auth.seed_file(NODE_PLAYER)).read_text().strip() not in out.read_text()

        # A fresh key the configuration does not list: refused, never connected.
        from services.auth import new_seed

        stranger = tmp_path / "stranger.nk"
        stranger.write_bytes(new_seed() + b"\n")
        bad = _start_bot(
            node, server.url, tmp_path / "stranger.log", "--creds", str(stranger), "--tls-ca", str(auth.ca_file)
        )
        try:
            assert await asyncio.to_thread(bad.wait, 20) == 1
        finally:
            if bad.poll() is None:
                await _stop_bot(bad, signal.SIGTERM)
        stranger_lines = _bot_lines(tmp_path / "stranger.log")
        assert [line.get("event") for line in stranger_lines] == ["failed"], stranger_lines
        assert stranger_lines[0]["error"] == "AUTHORIZATION_VIOLATION"
        await admin.close()
    finally:
        for nc in conns.values():
            await nc.close()
        stack.stop()
        server.stop()


def test_node_bot_input_mistakes_are_one_line(node: str, tmp_path: Path) -> None:
    """A missing key file or CA file: one line on stderr, exit 2, no stack trace."""
    for extra in (["--creds", str(tmp_path / "missing.nk")], ["--tls-ca", str(tmp_path / "missing.pem")]):
        done = subprocess.run(
            [node, "bot.js", "--player", "ann", *extra], cwd=BOT_DIR, capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 2, done
        assert len(done.stderr.strip().splitlines()) == 1 and "missing" in done.stderr, done.stderr
