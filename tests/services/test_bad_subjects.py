"""A command whose table id is no id, because it holds a dot (``skat.cmd.<player>.my.table``, more
tokens than a command subject has), is answered ``bad_subject`` into the sender's own inbox, in
its own encoding, after the sender's rate limit like every command; a tournament's nonce desk
keeps its own subject (``skat.cmd.<player>.tournament.<id>``): the services never answer there.

Before, the services listened on ``skat.cmd.*.*``, which a subject of five tokens does not
match, so such a command got no answer at all: the player could not tell a typo in its table id
from a server that is down."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.skat.commands import Bid
from protocol.wire import Reply, decode, encode
from services.main import wait_ready
from tests.bus import Stack


class Inbox:
    """Every answer that reaches ``_INBOX.<player>.t.>``, by the reply subject it went to."""

    def __init__(self, nc: Client, player: str) -> None:
        self.nc, self.prefix = nc, f"_INBOX.{player}.t"
        self.got: dict[str, list[Msg]] = {}
        self.arrived = asyncio.Event()

    async def start(self) -> None:
        await self.nc.subscribe(f"{self.prefix}.>", cb=self._on)
        await self.nc.flush()

    async def _on(self, msg: Msg) -> None:
        self.got.setdefault(msg.subject.rpartition(".")[2], []).append(msg)
        self.arrived.set()

    async def until(self, *names: str, timeout: float = 10.0) -> None:
        await self.until_true(lambda: all(n in self.got for n in names), timeout)

    async def until_true(self, condition: Callable[[], bool], timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while not condition():
                self.arrived.clear()
                await self.arrived.wait()

    def codes(self) -> list[str]:
        return [json.loads(m.data)["code"] for msgs in self.got.values() for m in msgs]

    def reply(self, name: str) -> str:
        return f"{self.prefix}.{name}"


async def test_a_dot_in_the_table_id_is_answered_bad_subject(stack: Stack, nc: Client) -> None:
    inbox = Inbox(nc, "mallory")
    await inbox.start()
    await nc.publish("skat.cmd.mallory.my.table", encode(Bid(value=18, at=0)), reply=inbox.reply("mp"))
    await nc.publish("skat.cmd.mallory.a.b.c", b'{"type": "bid", "value": 18}', reply=inbox.reply("js"))
    await nc.publish("skat.cmd.mallory.x.y", encode(Bid(value=18)), reply="_INBOX.ann.stolen")  # not hers
    await inbox.until("mp", "js")
    answer: Reply = decode(inbox.got["mp"][0].data, Reply, "msgpack")
    assert (answer.ok, answer.code) == (False, "bad_subject")
    assert "letters, digits" in answer.reason
    as_json = json.loads(inbox.got["js"][0].data)  # a JSON command is answered in JSON
    assert as_json["code"] == "bad_subject" and as_json["ok"] is False
    assert [len(v) for v in inbox.got.values()] == [1, 1]  # one answer each, from one service


async def test_the_nonce_desks_subject_is_left_to_the_desk(stack: Stack, nc: Client) -> None:
    """No desk runs here: the request gets no answer from the services (the dotted command
    sent after it is the barrier: once its answer is in, the services have read both)."""
    inbox = Inbox(nc, "mallory")
    await inbox.start()
    await nc.publish("skat.cmd.mallory.tournament.t-1", b'{"type": "commitment"}', reply=inbox.reply("desk"))
    await nc.publish("skat.cmd.mallory.tournament.t-1.x", b'{"type": "commitment"}', reply=inbox.reply("six"))
    await nc.publish("skat.cmd.mallory.after.it", b'{"type": "pass"}', reply=inbox.reply("barrier"))
    await inbox.until("barrier", "six")
    assert "desk" not in inbox.got
    assert json.loads(inbox.got["six"][0].data)["code"] == "bad_subject"  # six tokens: no desk's


async def test_the_rate_limit_comes_first(nats_server: object, nc: Client) -> None:
    """Beyond her burst (twice the rate), dotted subjects cost the services nothing more: one
    ``rate_limited`` answer, then nothing (they count toward a flood like any command)."""
    stack = Stack(nats_server.url)  # type: ignore[attr-defined]
    stack.env["SKAT_PLAYER_RATE"] = "5"
    stack.start_all()
    try:
        await wait_ready(stack.url)
        inbox = Inbox(nc, "mallory")
        await inbox.start()
        for i in range(40):
            await nc.publish(f"skat.cmd.mallory.t.{i}", b'{"type": "pass"}', reply=inbox.reply(str(i)))
        await nc.flush()
        # The burst's answers, then the one notice (and nothing for the rest: the broker drops it).
        await inbox.until_true(lambda: "rate_limited" in inbox.codes() and inbox.codes().count("bad_subject") >= 8)
        codes = inbox.codes()
        assert codes.count("rate_limited") == 1, codes
        assert set(codes) == {"bad_subject", "rate_limited"} and codes.count("bad_subject") <= 14, codes
        assert all(stack.alive(n) for n in ("dealer", "bidding", "play", "scoring", "views"))
    finally:
        stack.stop()
