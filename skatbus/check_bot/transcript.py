"""The example transcripts in docs/protocol.md, one per game, each recorded from a real run
(the players are in ``scripted``): a Skat deal, and a Thirty-one game of one deal."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any, Final

import nats.errors

from protocol.subjects import ADMIN_OPEN, hello_subject
from protocol.wire import OpenTable, Reply, decode, encode
from services.connection import ConnectionSettings, SettingsError, from_args, open_connection
from services.connection import add_arguments as add_connection_arguments
from services.main import LocalStack

from ..player import RemotePlayer
from .common import CheckError
from .scripted import SCRIPTS
from .traffic import Traffic

# --- the transcripts for docs/protocol.md -------------------------------------------------------

TRANSCRIPT_BEGIN: Final = (
    "<!-- transcript:begin (python -m skatbus.check_bot --transcript --write docs/protocol.md) -->"
)
TRANSCRIPT_END: Final = "<!-- transcript:end -->"


def markers(game: str = "skat") -> tuple[str, str]:
    """The lines a game's transcript stands between in a markdown file (Skat's are the first
    there were, and keep their words)."""
    if game == "skat":
        return TRANSCRIPT_BEGIN, TRANSCRIPT_END
    return (
        f"<!-- transcript:begin {game} (python -m skatbus.check_bot --transcript --game {game} "
        "--write docs/protocol.md) -->",
        f"<!-- transcript:end {game} -->",
    )


async def record_transcript(settings: ConnectionSettings, game: str = "skat") -> list[str]:
    """One short table of ``game`` (``scripted.SCRIPTS``), as the JSON lines of every message its
    JSON player sends and receives (its hello, updates, commands and replies), from a real run
    against ``settings``: for Skat one deal, for Thirty-one a whole game of one deal."""
    script = SCRIPTS[game]
    player, *others = script.players
    recorder = await open_connection(settings, no_echo=True)
    ann_nc = await open_connection(settings, inbox_prefix=f"_INBOX.{player}")
    traffic = Traffic(recorder, player, default_game=game)
    players = [RemotePlayer(recorder, p, script.other()) for p in others]
    ann = script.player(ann_nc, player)
    try:
        await traffic.start()
        for p in players:
            await p.start()
        await ann.start()
        await ann.request(hello_subject(player), {"format": "json"})
        request = OpenTable(
            table=script.table,
            players=list(script.players),
            rules=script.rules,
            game=game,
            seed=script.seed,
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
            continue  # after the end only the replies to what was sent before it
        if direction == "send" and reply_to:
            asked.add(reply_to)
        line: dict[str, Any] = {direction: subject}
        if reply_to:
            line["reply_to"] = reply_to
        line["data"] = body
        lines.append(json.dumps(line, ensure_ascii=False))
        if body is not None and is_update and ann.ends(body):
            ended = True
    return lines


async def _every_request_answered(traffic: Traffic) -> None:
    """Wait until the recorder has seen a reply to every request the player sent: the reply
    to the last command may reach it after the update that ends the deal."""
    while True:
        asked = {reply_to for direction, _, reply_to, _ in traffic.log if direction == "send" and reply_to}
        answered = {subject for direction, subject, _, _ in traffic.log if direction == "receive"}
        if asked <= answered:
            return
        await asyncio.sleep(0.01)


def write_transcript(path: Path, lines: list[str], game: str = "skat") -> None:
    """Put ``lines`` between ``game``'s transcript markers in ``path`` (a markdown file)."""
    begin, end = markers(game)
    text = path.read_text()
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise CheckError(f"{path}: no transcript markers ({begin} ... {end})")
    block = "\n".join([begin, "", "```json", *lines, "```", "", end])
    path.write_text(pattern.sub(lambda _: block, text, count=1))


def read_transcript(path: Path, game: str = "skat") -> list[str]:
    """The transcript lines between ``game``'s markers in ``path``."""
    begin, end = markers(game)
    text = path.read_text()
    start = text.index(begin) + len(begin)
    block = text[start : text.index(end, start)]
    return [line for line in block.splitlines() if line.startswith("{")]


def transcript_main(argv: list[str]) -> int:
    from ..cli_parser import SkatParser

    parser = SkatParser(
        prog="python -m skatbus.check_bot --transcript",
        description="Record one short deal (Thirty-one: a game of one deal) as JSON lines (an embedded stack "
        "unless --nats).",
    )
    parser.add_argument("--transcript", action="store_true", required=True)
    parser.add_argument("--game", default="skat", choices=tuple(SCRIPTS), help="the game (default skat)")
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
            return await record_transcript(settings, args.game)
        async with LocalStack() as url:
            return await record_transcript(ConnectionSettings((url,)), args.game)

    try:
        lines = asyncio.run(main())
        if args.write:
            write_transcript(Path(args.write), lines, args.game)
            print(f"wrote {len(lines)} lines into {args.write}")
    except (CheckError, OSError, TimeoutError, nats.errors.Error) as exc:  # the user's to mend: one line
        print(f"transcript: {exc}", file=sys.stderr)
        return 2
    else:
        print("\n".join(lines))
    return 0
