"""The example transcript in docs/protocol.md: one short deal recorded from a real run."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any, Final

import nats.errors
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.commands import Bid, Pass
from protocol.rules import Rules
from protocol.subjects import (
    ADMIN_OPEN,
    command_subject,
    hello_subject,
    parse_view_subject,
)
from protocol.wire import OpenTable, Reply, Update, decode, encode
from services.connection import ConnectionSettings, SettingsError, from_args, open_connection
from services.connection import add_arguments as add_connection_arguments
from services.main import LocalStack

from ..player import RemotePlayer
from .common import CheckError
from .traffic import Traffic

# --- the transcript for docs/protocol.md ---------------------------------------------------------

TRANSCRIPT_BEGIN: Final = (
    "<!-- transcript:begin (python -m skatbus.check_bot --transcript --write docs/protocol.md) -->"
)
TRANSCRIPT_END: Final = "<!-- transcript:end -->"
TRANSCRIPT_PLAYER: Final = "ann"
TRANSCRIPT_TABLE: Final = "demo"


class _Passer:
    """The transcript's other two seats: never bid, then play the first legal card."""

    def act(self, obs: Update) -> Any:
        legal = obs.view.legal
        return next((a for a in legal if isinstance(a, Pass)), None) or next(
            (a for a in legal if not isinstance(a, Bid)), legal[0]
        )


class _ScriptedJsonPlayer:
    """A JSON player as a bot author in any language would write it (raw NATS, JSON only): it
    bids the lowest bid, picks up, discards, declares a grand, plays one card, then resigns;
    and it sends its pickup twice, as after a lost reply, to show the ``stale`` answer. It answers
    one prompt at a time, so that every run sends the same messages."""

    def __init__(self, nc: Client, player: str) -> None:
        self.nc = nc
        self.player = player
        self.n = 0
        self.replies: dict[str, asyncio.Future[bytes]] = {}
        self.played = False
        self.done = asyncio.Event()
        self.prompts: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        self.worker: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.nc.subscribe(f"_INBOX.{self.player}.*", cb=self._on_reply)
        await self.nc.subscribe(f"skat.view.{self.player}.*", cb=self._on_update)
        await self.nc.flush()
        self.worker = asyncio.ensure_future(self._work())

    async def stop(self) -> None:
        if self.worker is not None:
            self.worker.cancel()
            await asyncio.gather(self.worker, return_exceptions=True)

    async def _work(self) -> None:
        while True:
            subject, update = await self.prompts.get()
            await self._answer(subject, update)

    async def _on_reply(self, msg: Msg) -> None:
        future = self.replies.pop(msg.subject, None)
        if future is not None and not future.done():
            future.set_result(msg.data)

    async def request(self, subject: str, body: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        reply = f"_INBOX.{self.player}.{self.n}"
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.replies[reply] = future
        await self.nc.publish(subject, json.dumps(body).encode(), reply=reply)
        return json.loads(await asyncio.wait_for(future, 10.0))  # type: ignore[no-any-return]

    async def _on_update(self, msg: Msg) -> None:
        update = json.loads(msg.data)
        if _ends_the_deal(update):
            self.done.set()
        if update.get("your_turn") and not self.done.is_set():
            self.prompts.put_nowait((msg.subject, update))

    async def _answer(self, subject: str, update: dict[str, Any]) -> None:
        legal: list[dict[str, Any]] = update["view"].get("legal", [])
        types = [a["type"] for a in legal]
        if "bid" in types:
            action = legal[types.index("bid")]
        elif "pickup" in types:
            action = legal[types.index("pickup")]
        elif "declare" in types:
            action = next(
                (a for a in legal if a["type"] == "declare" and a["game"] == "G"), legal[types.index("declare")]
            )
        elif "play" in types and self.played:
            action = {"type": "resign"}
        else:
            action = legal[0]
            self.played = action["type"] == "play"
        command = {**action, "at": update["index"]}
        _, table = parse_view_subject(subject)  # the ids checked, not just the prefix swapped
        cmd_subject = command_subject(self.player, table)
        await self.request(cmd_subject, command)
        if action["type"] == "pickup":
            await self.request(cmd_subject, command)  # the same again, as after a lost reply: stale


async def record_transcript(settings: ConnectionSettings) -> list[str]:
    """One short deal, as the JSON lines of every message the transcript player sends and
    receives (its hello, updates, commands and replies), from a real run against ``settings``."""
    recorder = await open_connection(settings, no_echo=True)
    ann_nc = await open_connection(settings, inbox_prefix=f"_INBOX.{TRANSCRIPT_PLAYER}")
    others = ["bob", "cyd"]
    traffic = Traffic(recorder, TRANSCRIPT_PLAYER)
    players = [RemotePlayer(recorder, p, _Passer()) for p in others]
    ann = _ScriptedJsonPlayer(ann_nc, TRANSCRIPT_PLAYER)
    try:
        await traffic.start()
        for p in players:
            await p.start()
        await ann.start()
        await ann.request(hello_subject(TRANSCRIPT_PLAYER), {"format": "json"})
        request = OpenTable(
            table=TRANSCRIPT_TABLE,
            players=[TRANSCRIPT_PLAYER, *others],
            rules=Rules(rounds=1, turn_seconds=60),
            seed="transcript",
        )
        reply: Reply = decode((await recorder.request(ADMIN_OPEN, encode(request), timeout=10.0)).data, Reply)
        if not reply.ok:
            raise CheckError(f"cannot open the transcript's table: {reply.code}: {reply.reason}")
        await asyncio.wait_for(ann.done.wait(), 60.0)
        await asyncio.wait_for(_every_request_answered(traffic), 10.0)
    finally:
        await ann.stop()
        for p in players:
            await p.stop()
        await traffic.stop()
        await ann_nc.close()
        await recorder.close()
    lines = []
    ended = False
    asked: set[str] = set()
    for direction, subject, reply_to, data in traffic.log:
        body = json.loads(data) if data.strip() else None
        is_update = subject.startswith("skat.view.")
        if ended and (is_update or direction == "send" or subject not in asked):
            continue  # after the deal's end only the replies to what was sent before it
        if direction == "send" and reply_to:
            asked.add(reply_to)
        line: dict[str, Any] = {direction: subject}
        if reply_to:
            line["reply_to"] = reply_to
        line["data"] = body
        lines.append(json.dumps(line, ensure_ascii=False))
        if body is not None and is_update and _ends_the_deal(body):
            ended = True
    return lines


def _ends_the_deal(update: dict[str, Any]) -> bool:
    view = update["view"]
    return view.get("phase") in ("between_deals", "closed") or view.get("deal", 0) > 1


async def _every_request_answered(traffic: Traffic) -> None:
    """Wait until the recorder has seen a reply to every request the player sent: the reply
    to the last command may reach it after the update that ends the deal."""
    while True:
        asked = {reply_to for direction, _, reply_to, _ in traffic.log if direction == "send" and reply_to}
        answered = {subject for direction, subject, _, _ in traffic.log if direction == "receive"}
        if asked <= answered:
            return
        await asyncio.sleep(0.01)


def write_transcript(path: Path, lines: list[str]) -> None:
    """Put ``lines`` between the transcript markers of ``path`` (a markdown file)."""
    text = path.read_text()
    pattern = re.compile(re.escape(TRANSCRIPT_BEGIN) + r".*?" + re.escape(TRANSCRIPT_END), re.S)
    if not pattern.search(text):
        raise CheckError(f"{path}: no transcript markers ({TRANSCRIPT_BEGIN} ... {TRANSCRIPT_END})")
    block = "\n".join([TRANSCRIPT_BEGIN, "", "```json", *lines, "```", "", TRANSCRIPT_END])
    path.write_text(pattern.sub(lambda _: block, text, count=1))


def read_transcript(path: Path) -> list[str]:
    """The transcript lines between the markers of ``path``."""
    text = path.read_text()
    start = text.index(TRANSCRIPT_BEGIN) + len(TRANSCRIPT_BEGIN)
    block = text[start : text.index(TRANSCRIPT_END, start)]
    return [line for line in block.splitlines() if line.startswith("{")]


def transcript_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m skatbus.check_bot --transcript",
        description="Record one short deal as JSON lines (an embedded stack unless --nats).",
    )
    parser.add_argument("--transcript", action="store_true", required=True)
    parser.add_argument("--write", default=None, metavar="FILE.md", help="replace the transcript in this file")
    add_connection_arguments(parser)
    args = parser.parse_args(argv)
    try:
        settings = from_args(args, default=None)
    except SettingsError as exc:
        print(f"transcript: {exc}", file=sys.stderr)
        return 2

    async def main() -> list[str]:
        if settings is not None:
            return await record_transcript(settings)
        async with LocalStack() as url:
            return await record_transcript(ConnectionSettings((url,)))

    try:
        lines = asyncio.run(main())
        if args.write:
            write_transcript(Path(args.write), lines)
            print(f"wrote {len(lines)} lines into {args.write}")
    except (CheckError, OSError, TimeoutError, nats.errors.Error) as exc:  # the user's to mend: one line
        print(f"transcript: {exc}", file=sys.stderr)
        return 2
    else:
        print("\n".join(lines))
    return 0
