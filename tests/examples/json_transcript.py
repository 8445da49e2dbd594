"""The first messages of ``examples/json_bot.py`` at a Skat table, recorded from a real run, for
docs/bots.md ("A JSON bot's first messages"). The bot runs as its author runs it (a process,
nats-py and json only); two built-in bots fill the table; a recording connection sees every
message to and from the bot's player: its hello, its updates, its command and the replies.

    python -m tests.examples.json_transcript --write docs/bots.md   # record it again

``tests/examples/test_bots_md.py`` records it afresh and compares it with the document."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

from nats.aio.msg import Msg

from protocol.skat.rules import Rules
from protocol.wire import OpenTable
from services.connection import open_connection
from services.main import LocalStack
from skatbus.bots import make_bot
from skatbus.player import RemotePlayer
from tests.bus import open_table

ROOT: Final = Path(__file__).resolve().parents[2]
BEGIN: Final = "<!-- json-bot-transcript:begin (python -m tests.examples.json_transcript --write docs/bots.md) -->"
END: Final = "<!-- json-bot-transcript:end -->"
PLAYERS: Final = ["ann", "bob", "cyd"]


async def record(url: str) -> list[str]:
    """The bot's messages up to the reply to its first command, as JSON lines (inbox subjects
    numbered in order of appearance: ``_INBOX.ann.1``, ...)."""
    log: list[tuple[str, str, str, Any]] = []
    recorder = await open_connection(url)
    others = await open_connection(url)

    async def seen(msg: Msg, direction: str) -> None:
        log.append((direction, msg.subject, msg.reply or "", json.loads(msg.data) if msg.data.strip() else None))

    async def sent(msg: Msg) -> None:
        await seen(msg, "send")

    async def received(msg: Msg) -> None:
        await seen(msg, "receive")

    for subject, cb in (
        ("skat.view.ann.*", received),
        ("skat.cmd.ann.*", sent),
        ("skat.hello.ann", sent),
        ("_INBOX.ann.>", received),
    ):
        await recorder.subscribe(subject, cb=cb)
    await recorder.flush()
    bots = [RemotePlayer(others, p, make_bot("heuristic", p)) for p in PLAYERS[1:]]
    for bot in bots:
        await bot.start()
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "json_bot.py"), "ann", url],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        async with asyncio.timeout(30):
            while not any(d == "receive" and s.startswith("_INBOX.") for d, s, _, _ in log):
                await asyncio.sleep(0.02)  # the hello answered: the bot is listening
            request = OpenTable(table="demo", players=PLAYERS, rules=Rules(rounds=1), seed="demo")
            assert (await open_table(recorder, request)).ok
            while not (first := _first_command(log)) or not any(s == first[2] for _, s, _, _ in log):
                await asyncio.sleep(0.02)
    finally:
        proc.terminate()
        proc.wait(10)
        for bot in bots:
            await bot.stop()
        await others.close()
        await recorder.close()
    return _lines(log, first)


def _first_command(log: list[tuple[str, str, str, Any]]) -> tuple[str, str, str, Any] | None:
    return next((e for e in log if e[0] == "send" and e[1].startswith("skat.cmd.")), None)


def _lines(log: list[tuple[str, str, str, Any]], first: tuple[str, str, str, Any]) -> list[str]:
    """Up to the first command's reply; no update after the command's (a later view may pass
    the reply on the way)."""
    at = first[3]["at"]
    inboxes: dict[str, str] = {}

    def inbox(subject: str) -> str:
        if not subject.startswith("_INBOX."):
            return subject
        return inboxes.setdefault(subject, f"_INBOX.ann.{len(inboxes) + 1}")

    out = []
    for direction, subject, reply, data in log:
        if subject.startswith("skat.view.") and data.get("index", 0) > at:
            continue
        line: dict[str, Any] = {direction: inbox(subject)}
        if reply:
            line["reply_to"] = inbox(reply)
        line["data"] = data
        out.append(json.dumps(line, ensure_ascii=False))
        if subject == first[2]:
            break
    return out


def read(path: Path) -> list[str]:
    text = path.read_text()
    block = text[text.index(BEGIN) + len(BEGIN) : text.index(END)]
    return [line for line in block.splitlines() if line.startswith("{")]


def write(path: Path, lines: list[str]) -> None:
    text = path.read_text()
    block = "\n".join([BEGIN, "", "```json", *lines, "```", "", END])
    path.write_text(re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, text, count=1, flags=re.S))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", metavar="FILE.md", help="replace the transcript in this file")
    args = parser.parse_args()

    async def run() -> list[str]:
        async with LocalStack() as url:
            return await record(url)

    lines = asyncio.run(run())
    if args.write:
        write(Path(args.write), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
