"""Seats belong to their players: on the page, and on the bus of the built-in stacks.

- Each seat of ``skat web`` has a token of its own. Seat A's credentials (its token in the
  address, its cookie, or its token under seat B's cookie name), the spectator's and none are
  a 403 on every route of seat B: its page, its event stream (B's hand), its moves and any
  other path under it. Seat A still plays with its own, and B's prompt stays B's to answer.
  So at a Skat table and at a Thirty-one table.
- Beyond loopback (here: ``private``) the spectator token opens the spectator pages and feeds,
  a seat's token does not; the spectator token opens no seat.
- ``/events/tournament/<id>`` on a store without tournaments is a one-line 404, no traceback.
- ``skat play`` and ``skat tournament --human`` run their nats-server with users: a connection
  without credentials is refused, and the private directory of keys is gone afterwards.

No browser: plain HTTP (aiohttp) against a real stack, and the commands as subprocesses.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import stat
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import nats
import pytest

from protocol.skat.rules import Rules
from protocol.thirty_one import ThirtyOneRules
from protocol.wire import OpenTable
from services.connection import ConnectionSettings, open_connection
from services.natsserver import EmbeddedServer
from skatbus.bots import make_bot
from skatbus.player import RemotePlayer
from skatbus.tournament import TournamentLog
from skatbus.web.server import SEAT_COOKIE, WATCH_COOKIE, WebServer
from tests.bus import Stack, open_table
from tests.skatbus.commands import stop_gently

TOKEN = re.compile(r"token=([A-Za-z0-9_-]+)")


def _token(url: str) -> str:
    found = TOKEN.search(url)
    assert found is not None, "no token in the address"
    return found.group(1)


def seat_routes(player: str, table: str) -> list[tuple[str, str]]:
    """Every kind of route under a seat: the page, the event stream, a move, and paths and
    methods no handler serves (which must be refused as well, not merely unknown)."""
    return [
        ("GET", f"/play/{player}"),
        ("GET", f"/events/play/{player}"),
        ("POST", f"/play/{player}/{table}"),
        ("GET", f"/play/{player}/{table}"),
        ("PUT", f"/play/{player}"),
        ("GET", f"/play/{player}/{table}/more"),
        ("POST", f"/events/play/{player}"),
    ]


async def _status(http: aiohttp.ClientSession, method: str, url: str, headers: dict[str, str], body: bytes) -> int:
    async with http.request(method, url, headers=headers, data=body, allow_redirects=False) as r:
        return r.status


async def _messages(
    http: aiohttp.ClientSession, url: str, headers: dict[str, str] | None = None
) -> AsyncIterator[dict[str, Any]]:
    """The messages of an event stream, as they come (the stream must open: 200)."""
    async with http.get(url, headers=headers or {}) as r:
        assert r.status == 200, f"{url}: {r.status}"
        assert r.content_type == "text/event-stream"
        async for line in r.content:
            if line.startswith(b"data: "):
                yield json.loads(line[len(b"data: ") :])


async def _first(
    http: aiohttp.ClientSession,
    url: str,
    wanted: Callable[[dict[str, Any]], bool],
    headers: dict[str, str] | None = None,
    timeout: float = 60.0,
) -> dict[str, Any]:
    async with asyncio.timeout(timeout):
        async for message in _messages(http, url, headers):
            if wanted(message):
                return message
    raise AssertionError(f"{url}: the stream ended without the message")


async def _until(check: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not (value := check()):
        if loop.time() > end:
            raise TimeoutError(f"no {what} within {timeout} s")
        await asyncio.sleep(0.05)
    return value


def _cookies(headers: Any) -> list[dict[str, str]]:
    """The Set-Cookie headers of a response, each as its attributes (lower-case keys)."""
    out = []
    for header in headers.getall("Set-Cookie", []):
        first, *attrs = [part.strip() for part in header.split(";")]
        name, _, value = first.partition("=")
        cookie = {"name": name, "value": value}
        for attr in attrs:
            key, _, val = attr.partition("=")
            cookie[key.lower()] = val or "1"
        out.append(cookie)
    return out


# --- the page ------------------------------------------------------------------------------------


GAMES = {"skat": (Rules(rounds=1, turn_seconds=120), 10), "thirty-one": (ThirtyOneRules(turn_seconds=120), 3)}
"""Per game: the table's rules, and how many cards a hand holds when the seat is not to move."""


@pytest.mark.parametrize("game", list(GAMES))
async def test_a_seats_credentials_open_that_seat_alone(game: str, stack: Stack, nats_server: EmbeddedServer) -> None:
    """ann and bob play in the browser, cyd is a bot; at a Skat table and at a Thirty-one
    table. Whoever is prompted first (the victim), the other (the attacker) gets 403 on all of
    the victim's routes, with anything it holds; the victim then answers with its own cookie
    and is heard."""
    nc = await open_connection(nats_server.url)
    web = WebServer(stack.settings, port=0, seats={"ann": stack.settings, "bob": stack.settings})
    cyd = RemotePlayer(nc, "cyd", make_bot("heuristic", "seats/cyd", game))
    rules, hand_size = GAMES[game]
    try:
        await web.start()
        await cyd.start()
        request = OpenTable(table="s1", players=["ann", "bob", "cyd"], rules=rules, game=game, seed="s1")
        reply = await open_table(nc, request)
        assert reply.ok, reply

        def prompted() -> str | None:
            for player in ("ann", "bob"):
                update = web.seats[player].updates.get("s1")
                if update is not None and update.your_turn:
                    return player
            return None

        victim = await _until(prompted, what="prompt for ann or bob")
        attacker = "bob" if victim == "ann" else "ann"
        prompt = web.seats[victim].updates["s1"]
        move = msgspec.json.encode(prompt.view.legal[0])  # one of the victim's legal moves now
        own = _token(web.seat_url(attacker))
        watch = web.spectator_token
        assert own != _token(web.seat_url(victim)) and watch not in (own, _token(web.seat_url(victim)))
        assert len(own) >= 22 and len(watch) >= 22  # at least 128 bits, URL-safe base64

        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
            attempts: list[tuple[str, str, dict[str, str]]] = [
                ("?token=" + own, "its token in the address", {}),
                ("", "its cookie", {"Cookie": f"{SEAT_COOKIE}{attacker}={own}"}),
                ("", "its token under the victim's cookie name", {"Cookie": f"{SEAT_COOKIE}{victim}={own}"}),
                ("?token=" + watch, "the spectator token in the address", {}),
                ("", "the spectator cookie", {"Cookie": f"{WATCH_COOKIE}={watch}"}),
                ("", "nothing", {}),
            ]
            let_in = []
            for query, what, cookie in attempts:
                for method, path in seat_routes(victim, "s1"):
                    headers = {**cookie, "X-Skat": "1", "Content-Type": "application/json"}
                    status = await _status(http, method, web.url + path + query, headers, move)
                    if status != 403:
                        let_in.append((what, method, path, status))
            assert not let_in, f"{attacker}'s credentials opened {victim}'s seat: {let_in}"
            assert web.seats[victim].answered.get("s1") is None, "a move went out for the victim"
            assert web.seats[victim].updates["s1"].index == prompt.index

            # The attacker's own seat opens with its own token: its page, and its hand on its stream.
            async with http.get(web.url + f"/play/{attacker}?token={own}", allow_redirects=False) as r:
                assert r.status == 303 and r.headers["Location"] == f"/play/{attacker}"
                cookies = _cookies(r.headers)
            assert sorted(c["path"] for c in cookies) == [f"/events/play/{attacker}", f"/play/{attacker}"]
            for c in cookies:
                assert c["name"] == SEAT_COOKIE + attacker and c["value"] == own
                assert "httponly" in c and c.get("samesite") == "Strict"
            mine = await _first(
                http,
                web.url + f"/events/play/{attacker}",
                lambda m: m.get("kind") == "seat",
                {"Cookie": f"{SEAT_COOKIE}{attacker}={own}"},
            )
            assert mine["player"] == attacker and mine["game"] == game
            assert len(mine["update"]["view"]["hand"]) == hand_size

        # The victim, as a browser: the address once, then the cookies by their paths.
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
            async with browser.get(web.seat_url(victim)) as r:
                assert r.status == 200 and "token" not in str(r.url)
            theirs = await _first(browser, web.url + f"/events/play/{victim}", lambda m: m.get("kind") == "seat")
            assert theirs["player"] == victim and theirs["update"]["your_turn"]
            async with browser.post(web.url + f"/play/{victim}/s1", data=move, headers={"X-Skat": "1"}) as r:
                assert r.status == 200
                assert (await r.json())["ok"] is True
            assert web.seats[victim].answered.get("s1") == prompt.index
    finally:
        await cyd.stop()
        await web.stop()
        await nc.close()


async def test_a_look_out_of_turn_goes_out_without_the_prompts_position(
    stack: Stack, nats_server: EmbeddedServer
) -> None:
    """Thirty-one with ``throw_down``: a seat may look at its hand while another seat is to
    move (T30, T40). The page's seat offers it (its update lists it), sends it without ``at``
    (the table may move on meanwhile) and is heard; the seat then gets its hand. Anything else
    out of turn is still refused before it reaches the bus."""
    nc = await open_connection(nats_server.url)
    web = WebServer(stack.settings, port=0, seats={"bob": stack.settings})
    try:
        await web.start()
        rules = ThirtyOneRules(throw_down=True, turn_seconds=120)
        request = OpenTable(table="l1", players=["ann", "bob"], rules=rules, game="thirty-one", seed="l1")
        assert (await open_table(nc, request)).ok  # ann (seat 0, to move) never answers
        update = await _until(lambda: web.seats["bob"].updates.get("l1"), what="bob's update")
        assert not update.your_turn and update.view.to_move == 0 and not update.view.hand
        assert [str(a) for a in update.view.legal] == ["look"]
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
            async with browser.get(web.seat_url("bob")) as r:
                assert r.status == 200
            url = web.url + "/play/bob/l1"
            async with browser.post(url, data=b'{"type":"take","source":"stock"}', headers={"X-Skat": "1"}) as r:
                body = await r.json()
                assert body["ok"] is False and body["code"] == "refused"
            async with browser.post(url, data=b'{"type":"look"}', headers={"X-Skat": "1"}) as r:
                body = await r.json()
                assert body["ok"] is True, body
        seen = await _until(lambda: (u := web.seats["bob"].updates["l1"]).view.hand and u, what="bob's hand")
        assert seen.view.looked and len(seen.view.hand) == 3 and seen.view.to_move == 0
        assert not seen.view.legal  # looked once: nothing more to do out of turn
    finally:
        await web.stop()
        await nc.close()


async def test_the_spectator_token_opens_the_spectator_pages_only(stack: Stack) -> None:
    """Where spectators need a token (beyond loopback; here ``private``), only the spectator
    token opens their pages and feeds, and it opens no seat; the script and the stylesheet
    are the same for everyone."""
    web = WebServer(stack.settings, port=0, seats={"ann": stack.settings}, private=True)
    await web.start()
    spectator_pages = ["/", "/table/t1", "/tournament/tx", "/replay/t1", "/events/lobby", "/events/table/t1"]
    try:
        watch = _token(web.spectator_url)
        seat = _token(web.seat_url("ann"))
        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
            for path in spectator_pages:
                for query, headers in [("", {}), ("?token=" + seat, {}), ("", {"Cookie": f"{SEAT_COOKIE}ann={seat}"})]:
                    assert await _status(http, "GET", web.url + path + query, headers, b"") == 403, path
            for path in ("/static/web.js", "/static/style.css"):
                assert await _status(http, "GET", web.url + path, {}, b"") == 200, path
            for method, path in seat_routes("ann", "t1"):
                for query, headers in [("?token=" + watch, {}), ("", {"Cookie": f"{WATCH_COOKIE}={watch}"})]:
                    headers = {**headers, "X-Skat": "1"}
                    assert await _status(http, method, web.url + path + query, headers, b"{}") == 403, path
            async with http.get(web.spectator_url, allow_redirects=False) as r:  # once: into a cookie
                assert r.status == 303 and r.headers["Location"] == "/"
                (cookie,) = _cookies(r.headers)
            assert cookie["name"] == WATCH_COOKIE and cookie["value"] == watch and cookie["path"] == "/"
            assert "httponly" in cookie and cookie.get("samesite") == "Strict"
            with_cookie = {"Cookie": f"{WATCH_COOKIE}={watch}"}
            async with http.get(web.url + "/", headers=with_cookie) as r:
                assert r.status == 200 and b'data-page="lobby"' in await r.read()
            lobby = await _first(http, web.url + "/events/lobby", lambda m: m.get("kind") == "lobby", with_cookie)
            assert lobby["seats"] == ["ann"]
    finally:
        await web.stop()


async def test_a_tournament_feed_without_tournaments_is_a_404(
    nats_server: EmbeddedServer, caplog: pytest.LogCaptureFixture
) -> None:
    """No SKATTOUR stream (a store no tournament ever ran on): one line and 404, no traceback;
    with the stream, an id it does not hold is a 404 too."""
    web = WebServer(ConnectionSettings((nats_server.url,)), port=0)
    await web.start()
    caplog.set_level(logging.ERROR)
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(web.url + "/events/tournament/tx") as r:
                text = await r.text()
                assert r.status == 404, text
                assert len(text.strip().splitlines()) == 1 and "tx" in text
            nc = await open_connection(nats_server.url)
            try:
                await TournamentLog(nc).ensure_stream()
            finally:
                await nc.close()
            async with http.get(web.url + "/events/tournament/other") as r:
                assert r.status == 404
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR], "a traceback was logged"
    finally:
        await web.stop()


# --- the built-in stacks -------------------------------------------------------------------------


def _nats_server_of(pid: int) -> list[str]:
    """The command line of the nats-server that process ``pid`` started (its child)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(fields[1]) == pid and cmdline and cmdline[0].endswith(b"nats-server"):
            return [part.decode() for part in cmdline if part]
    raise AssertionError(f"process {pid} runs no nats-server")


def _flag(cmd: list[str], flag: str) -> str | None:
    return cmd[cmd.index(flag) + 1] if flag in cmd else None


async def _refuses_strangers(cmd: list[str]) -> None:
    """A connection without credentials to that server is refused before it can subscribe."""

    async def quiet(exc: Exception) -> None:
        pass

    url = f"nats://127.0.0.1:{_flag(cmd, '-p')}"
    with pytest.raises(nats.errors.Error, match="Authorization Violation"):
        stranger = await nats.connect(url, allow_reconnect=False, connect_timeout=5, error_cb=quiet)
        await stranger.subscribe("skat.>")  # what today's stack lets anyone on the machine do
        await stranger.close()


def _private_dir(cmd: list[str]) -> Path:
    config = _flag(cmd, "-c")
    assert config is not None, "the nats-server runs without a configuration (no users)"
    folder = Path(config).parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    seeds = list(folder.glob("*.nk"))
    assert seeds and all(stat.S_IMODE(s.stat().st_mode) == 0o600 for s in seeds)
    return folder


async def _printed(proc: subprocess.Popen[str], pattern: str, count: int = 1) -> list[re.Match[str]]:
    """The first ``count`` matches of ``pattern`` in the command's output (its lines are read
    in a thread; a command that hangs is stopped by the test's ``stop_gently``, which ends the read)."""
    return await asyncio.wait_for(asyncio.to_thread(_lines_until, proc, pattern, count), 180)


def _lines_until(proc: subprocess.Popen[str], pattern: str, count: int = 1) -> list[re.Match[str]]:
    assert proc.stdout is not None
    found: list[re.Match[str]] = []
    for line in proc.stdout:
        match = re.search(pattern, line)
        if match:
            found.append(match)
            if len(found) == count:
                return found
    raise AssertionError(f"the command ended without printing {pattern!r}")


async def test_skat_play_runs_its_server_with_users(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "skatbus.cli", "play", "--listen", "127.0.0.1:0", "--turn-seconds", "120"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "SKAT_LOG_LEVEL": "warning"},
    )
    try:
        (seat,) = await _printed(proc, r"(http://127\.0\.0\.1:\d+/play/you\?token=\S+)")
        cmd = _nats_server_of(proc.pid)
        await _refuses_strangers(cmd)
        keys = _private_dir(cmd)
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
            async with browser.get(seat.group(1)) as r:  # the person's seat still opens
                assert r.status == 200
            message = await _first(browser, seat.group(1).split("/play/")[0] + "/events/play/you", lambda m: True)
            assert message["kind"] in ("seat", "table")
        proc.send_signal(15)
        assert await asyncio.to_thread(proc.wait, 60) in (0, 143)  # stopped by the signal, either way
        assert not keys.exists(), "the keys were left behind"
    finally:
        stop_gently(proc)


async def test_human_tournament_seats_get_their_own_tokens_and_the_server_has_users(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "skatbus.cli", "tournament", "--remote", "ann", "--remote", "bob", "--human"]
        + ["--groups", "1", "--rounds", "1", "--turn-seconds", "120"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "SKAT_LOG_LEVEL": "warning"},
    )
    try:
        found = await _printed(
            proc, r"(\w+) plays in the browser at: (http://127\.0\.0\.1:\d+)/play/(\w+)\?token=(\S+)", 2
        )
        urls = {m.group(1): (m.group(2), m.group(3), m.group(4)) for m in found}
        assert sorted(urls) == ["ann", "bob"] and all(urls[p][1] == p for p in urls)
        base, _, ann = urls["ann"]
        bob = urls["bob"][2]
        assert ann != bob
        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
            assert await _status(http, "GET", f"{base}/events/play/bob?token={ann}", {}, b"") == 403
            assert await _status(http, "GET", f"{base}/play/bob?token={ann}", {}, b"") == 403
            assert await _status(http, "GET", f"{base}/play/ann?token={ann}", {}, b"") == 303
        cmd = _nats_server_of(proc.pid)
        await _refuses_strangers(cmd)
        keys = _private_dir(cmd)
        assert sorted(p.name for p in keys.glob("*.nk")) == ["ann.nk", "bob.nk", "skat-services.nk"]
        proc.send_signal(15)
        assert await asyncio.to_thread(proc.wait, 60) == 143
        assert not keys.exists(), "the keys were left behind"
    finally:
        stop_gently(proc)


async def test_remote_bots_on_the_built_in_stack_get_users_too(tmp_path: Path) -> None:
    """Remote entrants that are bots, not people: the built-in stack still runs with users of its
    own (the log holds every hand and the tournament's seed), each bot's key file printed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "skatbus.cli", "tournament", "--remote", "ann", "--no-web"]
        + ["--groups", "1", "--rounds", "1", "--turn-seconds", "120", "--nonce-seconds", "0"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "SKAT_LOG_LEVEL": "warning"},
    )
    try:
        found = await _printed(proc, r"Remote player ann: connect to (\S+), e\.g\. .* --creds (\S+)")
        assert Path(found[0].group(2)).name == "ann.nk"
        cmd = _nats_server_of(proc.pid)
        await _refuses_strangers(cmd)
        keys = _private_dir(cmd)
        assert sorted(p.name for p in keys.glob("*.nk")) == ["ann.nk", "skat-services.nk"]
        proc.send_signal(15)
        assert await asyncio.to_thread(proc.wait, 60) == 143
        assert not keys.exists(), "the keys were left behind"
    finally:
        stop_gently(proc)
