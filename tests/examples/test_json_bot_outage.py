"""examples/json_bot.py keeps the rule docs/bots.md and docs/protocol.md give: the same command
again until it is answered or the deadline has passed, the same command again for a prompt of
that index re-sent after it got no answer, a prompt whose command was answered ignored; and a
lost connection is one line on stderr, not nats-py's tracebacks. Over a real nats-server, with
the test in the services' place."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from services.natsserver import EmbeddedServer
from tests.skatbus.test_bot_ends import Proc

ROOT = Path(__file__).resolve().parents[2]


def _prompt(index: int, deadline: float) -> bytes:
    view = {"table": "demo", "table_game": "skat", "legal": [{"type": "hold"}, {"type": "pass"}]}
    return json.dumps({"view": view, "your_turn": True, "deadline": deadline, "index": index}).encode()


async def _until(check: Any, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.02)


@pytest.mark.timeout(60)
async def test_a_command_that_got_no_answer_is_sent_again_for_the_re_sent_prompt(
    nats_server: EmbeddedServer, nc: Client
) -> None:
    commands: list[bytes] = []
    hellos: list[Msg] = []
    answering = [False]

    async def on_command(msg: Msg) -> None:  # the services: silent at first (an outage), then back
        commands.append(msg.data)
        if answering[0]:
            await nc.publish(msg.reply, json.dumps({"ok": True, "index": json.loads(msg.data)["at"]}).encode())

    async def on_hello(msg: Msg) -> None:
        hellos.append(msg)
        await nc.publish(msg.reply, b'{"prompts": 0}')

    await nc.subscribe("skat.cmd.jo.demo", cb=on_command)
    await nc.subscribe("skat.hello.jo", cb=on_hello)
    await nc.flush()
    bot = await Proc.start(sys.executable, str(ROOT / "examples" / "json_bot.py"), "jo", nats_server.url)
    try:
        await _until(lambda: hellos)
        # A prompt whose deadline (+5 s for the clocks) passes within its first attempt's 2 s.
        await nc.publish("skat.view.jo.demo", _prompt(3, time.time() - 4.5))
        await _until(lambda: commands)
        # The services come back and prompt again: same index, a later deadline.
        answering[0] = True
        await nc.publish("skat.view.jo.demo", _prompt(3, time.time() + 30))
        await _until(lambda: len(commands) >= 2)
        assert commands[1] == commands[0] and json.loads(commands[0]) == {"type": "pass", "at": 3}
        # Answered now: a repeat of the prompt is ignored, the next one answered.
        await nc.publish("skat.view.jo.demo", _prompt(3, time.time() + 30))
        await nc.publish("skat.view.jo.demo", _prompt(5, time.time() + 30))
        await _until(lambda: len(commands) >= 3)
        assert [json.loads(c)["at"] for c in commands] == [3, 3, 5], commands

        # The server goes away and comes back: one line each way, no traceback.
        await asyncio.to_thread(nats_server.stop, False)
        await bot.until("jo: disconnected, reconnecting")
        await asyncio.to_thread(nats_server.start)
        await bot.until("jo: reconnected")
        await _until(lambda: nc.is_connected)  # our side too: the bot plays on
        await nc.publish("skat.view.jo.demo", _prompt(7, time.time() + 30))
        await _until(lambda: len(commands) >= 4)
        assert json.loads(commands[3]) == {"type": "pass", "at": 7}
    finally:
        await bot.stop()
    assert not any("Traceback" in line for line in bot.err), "".join(bot.err)
    assert sum("disconnected" in line for line in bot.err) == 1 and not any("nats error" in line for line in bot.err)
