"""The rule docs/bots.md gives every bot, kept by ``RemotePlayer`` (the SDK's and the runner's
player): a command is sent again until it is answered or the deadline has passed, a prompt of
its index re-sent with a later deadline (the services back after an outage) extends that, and
one re-sent after the command was given up on gets the same command again. Over a real
nats-server, with the test in the services' place."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.events import DealDealt
from protocol.skat.commands import Bid, Pass
from protocol.skat.views import PlayerView
from protocol.wire import Reply, Update, decode_command, encode
from services.natsserver import EmbeddedServer
from skatbus.player import RemotePlayer


class First:
    def act(self, obs: Any) -> Any:
        return obs.view.legal[0]


def _prompt(table: str, index: int, deadline: float) -> bytes:
    dealt = DealDealt(deal=1, dealer=2, seats=(1, 0, 2), hands=([], [], []), skat=[])
    view = PlayerView(
        table=table, seat=0, players=["ann", "bob", "cyd"], deal=1, phase="bidding", to_move=0,
        hand=[], history=[dealt], legal=[Pass(), Bid(value=18)],  # type: ignore[list-item]
    )  # fmt: skip
    return encode(Update(view=view, your_turn=True, deadline=deadline, index=index))


async def _until(check: Any, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.01)


async def test_a_repeated_prompt_keeps_or_restarts_the_same_command(nats_server: EmbeddedServer, nc: Client) -> None:
    commands: dict[str, list[Any]] = {"given-up": [], "in-flight": []}
    answering = {"given-up": False, "in-flight": False}

    async def services(msg: Msg) -> None:  # silent at first (an outage), then back
        table = msg.subject.rpartition(".")[2]
        command, _ = decode_command(msg.data)
        commands[table].append(command)
        if answering[table]:
            await nc.publish(msg.reply, encode(Reply(ok=True, index=command.at)))

    await nc.subscribe("skat.cmd.ann.*", cb=services)
    ann = RemotePlayer(nc, "ann", First(), request_timeout=0.3)
    await ann.start()
    try:
        await nc.flush()
        # Given up: the deadline (+ the 5 s grace) passes during the first attempt.
        await nc.publish("skat.view.ann.given-up", _prompt("given-up", 3, time.time() - 4.8))
        await _until(lambda: "given-up" in ann._abandoned)
        answering["given-up"] = True
        await nc.publish("skat.view.ann.given-up", _prompt("given-up", 3, time.time() + 30))
        await _until(lambda: len(commands["given-up"]) >= 2)
        # In flight: the repeat with a later deadline comes while the first attempt waits.
        await nc.publish("skat.view.ann.in-flight", _prompt("in-flight", 4, time.time() - 4.8))
        await _until(lambda: commands["in-flight"])
        answering["in-flight"] = True
        await nc.publish("skat.view.ann.in-flight", _prompt("in-flight", 4, time.time() + 30))
        await _until(lambda: len(commands["in-flight"]) >= 2)
        await _until(lambda: not ann._tasks)
    finally:
        await ann.stop()
    assert commands["given-up"] == [Pass(at=3), Pass(at=3)], commands
    assert set(commands["in-flight"]) == {Pass(at=4)}, commands
    assert not ann.rejections and ann.faults == 0
