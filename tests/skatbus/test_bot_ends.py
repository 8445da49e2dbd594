"""A remote bot ends when its tournament does: ``skat bot`` (and ``skatbus.sdk.run``) hear the
runner's last announcement on ``skat.public.tournament.<id>`` and stop, saying so in one line;
without a tournament a bot whose server is gone retries with a growing pause and logs a few
lines, not two a second (the issue saw 4,000 lines in 33 minutes); a bot whose ``act`` raises
plays every turn by the default move, one log line each, and no asyncio traceback.

The tournaments are real ones (``skat tournament --remote``) through the services; the bots are
processes started as their authors start them."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from services.natsserver import EmbeddedServer
from skatbus.tournament_end import TournamentEnd, finished_announcement
from tests.bus import Stack

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "SKAT_LOG_LEVEL": "info", "PYTHONUNBUFFERED": "1"}


class Proc:
    """A process whose output lines are collected as they come."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.out: list[str] = []
        self.err: list[str] = []
        self._readers = [
            asyncio.ensure_future(self._read(proc.stdout, self.out)),
            asyncio.ensure_future(self._read(proc.stderr, self.err)),
        ]

    @classmethod
    async def start(cls, *args: str) -> Proc:
        proc = await asyncio.create_subprocess_exec(
            *args, cwd=ROOT, env=ENV, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        return cls(proc)

    @staticmethod
    async def _read(stream: Any, into: list[str]) -> None:
        while line := await stream.readline():
            into.append(line.decode())

    async def until(self, text: str, timeout: float = 60.0) -> None:
        async with asyncio.timeout(timeout):
            while not any(text in line for line in self.err + self.out):
                if self.proc.returncode is not None:
                    raise AssertionError(f"ended ({self.proc.returncode}) before {text!r}: {self.err[-5:]}")
                await asyncio.sleep(0.05)

    async def wait(self, timeout: float = 120.0) -> int:
        async with asyncio.timeout(timeout):
            code = await self.proc.wait()
        await asyncio.gather(*self._readers)
        return code

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.terminate()
            try:
                await self.wait(10)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        for reader in self._readers:
            reader.cancel()

    def events(self, name: str) -> list[dict[str, Any]]:
        out = []
        for line in self.err:
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if doc.get("event") == name:
                out.append(doc)
        return out


def _tournament(url: str, out: Path, *remote: str) -> list[str]:
    return [
        sys.executable, "-m", "skatbus.cli", "tournament", *(a for r in remote for a in ("--remote", r)),
        "--nats", url, "--rounds", "1", "--out", str(out), "--no-web",
    ]  # fmt: skip


@pytest.mark.timeout(180)
async def test_skat_bot_stops_when_its_tournament_is_over(stack: Stack, tmp_path: Path) -> None:
    bot = await Proc.start(
        sys.executable, "-m", "skatbus.cli", "bot", "random", "--player", "alice", "--nats", stack.url
    )
    runner = None
    try:
        await bot.until("bot_started")
        runner = await Proc.start(*_tournament(stack.url, tmp_path, "alice"))
        assert await runner.wait() == 0, runner.err[-10:]
        tid = next(p.name for p in tmp_path.iterdir() if p.is_dir())
        assert await bot.wait(30) == 0, bot.err[-10:]
    finally:
        await bot.stop()
        if runner is not None:
            await runner.stop()
    assert bot.out == [f"skat bot: tournament {tid} is over; alice stops\n"], bot.out
    assert [e["reason"] for e in bot.events("bot_stopped")] == [f"tournament {tid} is over"]
    assert not [line for line in bot.err if "Traceback" in line]


RAISING_BOT = """
import sys

from skatbus.sdk import run


class Broken:
    def act(self, update):
        raise RuntimeError("my bug")


print(run(Broken(), player=sys.argv[1], url=sys.argv[2]) or "stopped by a signal", flush=True)
"""


@pytest.mark.timeout(180)
async def test_an_sdk_bot_that_raises_plays_the_default_and_stops_with_the_tournament(
    stack: Stack, tmp_path: Path
) -> None:
    script = tmp_path / "broken.py"
    script.write_text(RAISING_BOT)
    bot = await Proc.start(sys.executable, str(script), "bea", stack.url)
    runner = None
    try:
        await bot.until("bot_started")
        runner = await Proc.start(*_tournament(stack.url, tmp_path / "runs", "bea"))
        assert await runner.wait() == 0, runner.err[-10:]
        assert await bot.wait(30) == 0, bot.err[-10:]
    finally:
        await bot.stop()
        if runner is not None:
            await runner.stop()
    tid = next(p.name for p in (tmp_path / "runs").iterdir() if p.is_dir())
    assert bot.out == [f"tournament {tid} is over\n"], bot.out
    faults = bot.events("bot_fault")
    assert faults and all(f["fault"] == "raised" and "my bug" in f["error"] for f in faults), faults[:2]
    assert all({"player", "table", "index"} <= set(f) for f in faults)
    assert not [line for line in bot.err if "Task exception" in line or "Traceback" in line], bot.err[-5:]
    results = json.loads((tmp_path / "runs" / tid / "results.json").read_text())
    timeouts = {s["player"]: s.get("timeouts", 0) for s in results["standings"]}
    assert timeouts["bea"] == 0, timeouts  # every turn answered at once, by the default move


@pytest.mark.timeout(120)
async def test_a_bot_whose_server_is_gone_backs_off_and_says_little(tmp_path: Path) -> None:
    server = EmbeddedServer().start()
    bot = await Proc.start(
        sys.executable, "-m", "skatbus.cli", "bot", "random", "--player", "sol", "--nats", server.url
    )
    try:
        await bot.until("bot_started")
        server.stop()
        await bot.until('"attempts": 4', timeout=60)  # 1 + 2 + 4 s between the attempts
    finally:
        await bot.stop()
        server.stop()
    unreachable = bot.events("nats_unreachable")
    assert [e["attempts"] for e in unreachable] == [1, 2, 4], unreachable
    waits = [e["next_try_in"] for e in unreachable]
    assert waits == [1.0, 2.0, 8.0], waits  # doubling (up to 30 s)
    warnings = [line for line in bot.err if '"level": "warning"' in line or '"level": "error"' in line]
    assert len(warnings) <= 6, warnings  # the disconnect and the three above, not one per attempt


# --- who is over when: the bot's side, announcement by announcement ---------------------------


class FakeMsg:
    def __init__(self, tid: str, body: bytes, subject: str | None = None) -> None:
        self.subject = subject or f"skat.public.tournament.{tid}"
        self.data = body


def _open(tid: str, entrants: list[str]) -> bytes:
    return json.dumps({"type": "tournament", "tournament": tid, "entrants": entrants, "open": True}).encode()


async def _feed(end: TournamentEnd, *messages: FakeMsg) -> None:
    for m in messages:
        await end._on_announcement(m)  # type: ignore[arg-type]


async def test_over_once_every_tournament_that_named_it_finished() -> None:
    end = TournamentEnd(None, "ann")  # type: ignore[arg-type]
    await _feed(end, FakeMsg("t1", _open("t1", ["ann"])), FakeMsg("t2", _open("t2", ["ann", "bob"])))
    await _feed(end, FakeMsg("t1", finished_announcement("t1", "skat", ["ann"])))
    assert not end.over.is_set()  # t2 still plays
    await _feed(end, FakeMsg("t3", finished_announcement("t3", "skat", ["bob"])))  # not hers
    assert not end.over.is_set()
    await _feed(end, FakeMsg("t2", finished_announcement("t2", "skat", ["ann", "bob"])))
    assert end.over.is_set() and end.why == "tournament t2 is over"


async def test_a_bot_that_joined_late_hears_the_end_too() -> None:
    end = TournamentEnd(None, "ann")  # type: ignore[arg-type]
    await _feed(end, FakeMsg("t1", finished_announcement("t1", "skat", ["ann"])))
    assert end.over.is_set()


async def test_an_announcement_off_its_own_subject_or_for_another_tournament_is_ignored() -> None:
    end = TournamentEnd(None, "ann", tournament="mine")  # type: ignore[arg-type]
    forged = FakeMsg("mine", finished_announcement("mine", "skat", ["ann"]), subject="skat.public.tournament.other")
    await _feed(end, forged, FakeMsg("other", finished_announcement("other", "skat", ["ann"])))
    await _feed(end, FakeMsg("mine", b"not json"), FakeMsg("mine", b"[1, 2]"))
    assert not end.over.is_set()
    await _feed(end, FakeMsg("mine", finished_announcement("mine", "skat", [])))  # named by --tournament
    assert end.over.is_set() and end.why == "tournament mine is over"
