"""A bot that missed its tournament's one finished announcement still stops: the runner keeps
the end in stream ``SKATEND`` and the bot asks for it when it starts, after a reconnect and
when it has heard nothing for a while (``skatbus.tournament_end``). Over a real nats-server;
the bots are ``skat bot`` processes as their authors start them."""

from __future__ import annotations

import asyncio
import sys

import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from services.natsserver import EmbeddedServer
from skatbus.tournament_end import TournamentEnd, announce_finished, tournament_of_table
from tests.skatbus.test_bot_ends import Proc


def _bot(url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "skatbus.cli", "bot", "random", "--player", "alice", "--nats", url, *extra]


@pytest.mark.timeout(60)
async def test_a_bot_started_after_the_end_stops_at_once(nats_server: EmbeddedServer, nc: Client) -> None:
    await announce_finished(nc, "t-over", "skat", ["alice", "bob"])
    bot = await Proc.start(*_bot(nats_server.url, "--tournament", "t-over"))
    try:
        assert await bot.wait(30) == 0, bot.err[-10:]
    finally:
        await bot.stop()
    assert bot.out == ["skat bot: tournament t-over is over; alice stops\n"], bot.out
    assert not [line for line in bot.err if "Traceback" in line]


@pytest.mark.timeout(60)
async def test_the_json_bot_started_after_the_end_of_its_tournament_stops_too(
    nats_server: EmbeddedServer, nc: Client
) -> None:
    """examples/json_bot.py asks for the kept end itself (one request, as any language can)."""

    async def views(msg: Msg) -> None:  # the views service's part: answer the bot's hello
        await msg.respond(b'{"prompts": 0}')

    await nc.subscribe("skat.hello.alice", cb=views)
    await announce_finished(nc, "t-done", "skat", ["alice"])
    bot = await Proc.start(sys.executable, "examples/json_bot.py", "alice", nats_server.url, "t-done")
    try:
        assert await bot.wait(30) == 0, bot.err[-10:]
    finally:
        await bot.stop()
    assert bot.out == ["tournament t-done is over\n"], (bot.out, bot.err[-5:])


class Relay:
    """A TCP relay in front of the server that can be taken down: ``down()`` drops the
    connections through it and refuses new ones until ``up()``, as a network gone away would."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.refusing = False
        self.links: list[asyncio.StreamWriter] = []
        self.server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"nats://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def start(self) -> Relay:
        self.server = await asyncio.start_server(self._link, "127.0.0.1", 0)
        return self

    async def _link(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.refusing:
            writer.transport.abort()
            return
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.links += [writer, up_writer]

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            try:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            except OSError:
                pass
            finally:
                sink.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def down(self) -> None:
        self.refusing = True
        for writer in self.links:
            writer.transport.abort()
        self.links.clear()

    def up(self) -> None:
        self.refusing = False

    def close(self) -> None:
        self.down()
        if self.server is not None:
            self.server.close()


@pytest.mark.timeout(60)
async def test_a_bot_disconnected_across_the_end_stops_after_reconnecting(
    nats_server: EmbeddedServer, nc: Client
) -> None:
    hellos: list[str] = []

    async def views(msg: Msg) -> None:  # the views service's part: answer the bot's hello
        hellos.append(msg.subject)
        await msg.respond(b'{"prompts": 0}')

    await nc.subscribe("skat.hello.alice", cb=views)
    await nc.flush()
    relay = await Relay(nats_server.port).start()
    bot = await Proc.start(*_bot(relay.url, "--tournament", "t-away"))
    try:
        async with asyncio.timeout(30):
            while not hellos:  # said after every subscription of the bot is in place
                await asyncio.sleep(0.02)
        relay.down()
        await announce_finished(nc, "t-away", "skat", ["alice"])  # while the bot cannot hear it
        assert bot.proc.returncode is None and bot.out == []
        relay.up()
        assert await bot.wait(30) == 0, bot.err[-10:]
    finally:
        await bot.stop()
        relay.close()
    assert bot.out == ["skat bot: tournament t-away is over; alice stops\n"], bot.out
    assert len(hellos) >= 2  # it did reconnect (and said hello again) before it stopped


async def test_a_bot_without_a_tournament_asks_about_its_tables_when_idle(nc: Client) -> None:
    """No ``--tournament``, and the announcement lost on the way: the tournament its prompts
    came from is asked about once the bot has been idle for ``idle`` seconds."""
    assert tournament_of_table("t-261202-1-g0r1") == "t-261202-1"
    assert tournament_of_table("t9-s2t3") == "t9" and tournament_of_table("t9-g3") == "t9"
    assert tournament_of_table("friday") is None
    end = TournamentEnd(nc, "ann", idle=0.2)
    await end.start()
    try:
        assert end._sub is not None
        await end._sub.unsubscribe()  # every message from here on lost
        end.heard("skat.view.ann.t7-s1t2")
        end.heard("skat.view.ann.friday")  # a table of no tournament: nothing to ask about
        assert end.known == {"t7"}
        await announce_finished(nc, "t7", "thirty-one", ["ann", "bob"])
        await announce_finished(nc, "t8", "skat", ["ann"])  # hers, but she never heard of it
        async with asyncio.timeout(10):
            await end.over.wait()
    finally:
        await end.stop()
    assert end.why == "tournament t7 is over" and end.finished == {"t7"}
